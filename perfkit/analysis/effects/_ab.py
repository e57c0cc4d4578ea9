"""A/B comparisons of a factorial sweep: each factor's high level against its low level.

:func:`ab_comparisons` compares, at each load level, one factor's high level (``new``) with
its low level (``base``), every other factor held at its low level, run against run
(:func:`perfkit.analysis.compare._compare.compare_cells`): one :class:`ComparisonTable` per metric,
one Holm family. Each row is labelled tidily: ``base`` and ``new`` hold the compared factor's
levels, ``estimand`` what the row estimates (``simple effect of keepalive at cache = none``: not the
factorial's main effect, which averages over the other factors' levels; the factorial's simple
effect of the same contrast, where it reports one, is the same comparison,
:mod:`perfkit.analysis.effects._interactions`), ``held_<factor>`` the level each other factor was
held at (empty for the compared factor itself).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from perfkit.analysis.compare import Cell, ComparisonTable, compare_cells
from perfkit.analysis.core import Metric, RunSet, row_keys, rows_at
from perfkit.analysis.effects._interactions import main_estimand, simple_estimand
from perfkit.formatting import level_text, plain
from perfkit.stats.coding import code_factor


def ab_comparisons(rows: RunSet, factors: Sequence[str], metric: Metric, *, by: Any = "auto",
                   exclude: Sequence[str] = (), alpha: float = 0.05,
                   confidence: float = 0.95) -> ComparisonTable:
    """High vs low level of each factor, the others at their low level, at each load level."""
    per, notes = row_keys([rows], by, [*factors, *exclude])
    coding = {f: code_factor(rows.frame[f], f)[1] for f in factors}
    cells = []
    for factor in factors:
        others = {f: coding[f]["low"] for f in factors if f != factor}
        low, high = (level_text(coding[factor][side]) for side in ("low", "high"))
        held = [(f, coding[f]["low"]) for f in factors if f != factor]
        what = (simple_estimand(factor, held[0][0], held[0][1], factors, held[1:]) if held
                else main_estimand(factor, factors))
        labels = (("base", low), ("new", high), ("estimand", what),
                  *((f"held_{f}", None if f == factor else level_text(coding[f]["low"]))
                    for f in factors))
        for key in _per_levels(rows, per):
            at = rows_at(rows, per, key if len(per) != 1 else key[0]).where(
                {k: level_text(v) for k, v in others.items()})
            cells.append(Cell((factor, *key), at.where({factor: low}), at.where({factor: high}),
                              labels))
    return compare_cells(cells, metric, ("factor", *per),
                         f"{rows.label}: the row's factor at its low level, the others too",
                         f"{rows.label}: the row's factor at its high level, the others at low",
                         alpha=alpha, confidence=confidence, notes=notes)


def _per_levels(rows: RunSet, per: Sequence[str]) -> list[tuple]:
    if not per:
        return [()]
    frame = rows.frame[list(per)].drop_duplicates()

    def order(c: pd.Series) -> pd.Series:
        numeric = pd.to_numeric(c, errors="coerce")
        return numeric if numeric.notna().all() else c.astype(str)

    frame = frame.sort_values(list(per), key=order)
    return [tuple(plain(v) for v in r) for r in frame.itertuples(index=False)]
