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

import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

from perfkit.analysis.compare import Cell, ComparisonTable, compare_cells
from perfkit.analysis.core import Metric, RunSet, row_keys, rows_at
from perfkit.analysis.effects._interactions import main_estimand, simple_estimand
from perfkit.formatting import level_text, plain
from perfkit.stats.coding import code_factor
from perfkit.stats.comparison import WELCH
from perfkit.warning import Code, Warn

#: the columns :func:`same_contrast` adds to the simple effects: the A/B row of the same two
#: cells (NaN or empty without one)
AB_COLUMNS = ("ab_ratio", "ab_ratio_ci_low", "ab_ratio_ci_high", "ab_ratio_ci_level",
              "ab_p_value_holm", "ab_holm_family", "ab_verdict")


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


def same_contrast(simple: pd.DataFrame, table: ComparisonTable,
                  per: Sequence[str]) -> pd.DataFrame:
    """The simple effects of a two-factor design (:func:`perfkit.analysis.effects._interactions.
    simple_effects`, compared run against run) with the A/B row of the same two cells beside
    each that has one (the other factor at its low level): :data:`AB_COLUMNS`, and where the
    two differ in interval, p or verdict a note in the row's ``warnings`` saying which family
    makes them differ. Both compare the same runs by the same rule; each is Holm-adjusted, and
    its interval Bonferroni-adjusted, in its own family (the A/B table: every factor at every
    load level; the simple effects: the levels of the other factor), so a row can be
    significant in one and not in the other (Holm 1979), and where the larger family brings the
    rank test's smallest p within a factor of 2 of alpha, Welch's t decides there
    (:func:`perfkit.stats.compare`) and the estimates differ too."""
    rows = {tuple(level_text(v) for v in r.key): r for r in table.rows}
    found: dict[str, list[Any]] = {c: [] for c in AB_COLUMNS}
    warnings = []
    for _, s in simple.iterrows():
        r = rows.get((level_text(s["factor"]), *(level_text(s[c]) for c in per)))
        other, _, level = str(s["at"]).partition("=")
        if r is not None and dict(r.labels).get(f"held_{other}") != level:
            r = None  # the A/B row holds the other factor at another level
        values = _ab_values(r, table.family)
        for col, v in zip(AB_COLUMNS, values, strict=True):
            found[col].append(v)
        same = r is None or (s["effect"], s["ci_low"], s["ci_high"], s["p_value_holm"],
                             s["verdict"]) == (values[0], values[1], values[2], values[4],
                                               values[6])
        welch = r is not None and r.comparison.p_method == WELCH
        warnings.append(tuple(s["warnings"])
                        + (() if same else (_family_note(s, values, welch),)))
    out = simple.assign(**found)
    out["warnings"] = warnings
    return out


def _ab_values(row: Any, family: int) -> tuple:
    if row is None:
        return (math.nan,) * 5 + (None, "")
    c = row.comparison
    return (c.ratio, c.ratio_ci_low, c.ratio_ci_high, c.ratio_ci_level, row.p_adjusted,
            family, row.reported_verdict)


def _family_note(s: pd.Series, values: tuple, welch: bool) -> Warn:
    """Why this simple effect and the A/B row of the same two cells differ: their families
    (``welch``: in the A/B table's, the rank test's floor made Welch's t decide;
    :attr:`Code.AB_FAMILY_DIFFERS`)."""
    ratio, low, high, _, p, family, verdict = values
    return Warn(Code.AB_FAMILY_DIFFERS, factor=str(s["factor"]), at=str(s["at"]),
                family=family, welch=welch, ratio=ratio, low=low, high=high, p_adjusted=p,
                verdict=str(verdict), levels=int(s["holm_family"]))
