"""Which columns make the rows of a comparison, one rule for every front end.

``by="auto"``: every load column and design factor that varies across the runs, except

- bookkeeping columns (:data:`~perfkit.analysis.core._experiment.NOT_FACTORS`),
- columns a selection pins to one value,
- columns **confounded with the arms**: whose values in BASE and in NEW do not overlap (each
  arm ran on its own port, URL or profile). Such a column is part of what distinguishes the
  arms, never a row key: splitting on it would leave every row with one side empty. A note
  says so.
- columns **one arm does not record**: absent from, or missing in every run of, one side
  (an arm mixing runs from different sources: a folder of loose wrk outputs has no factors,
  a manifest's run has). Nothing tells which row that arm's runs would belong to; a note
  says so.

``by="none"`` pools every run into one row; a comma-separated list names the columns.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from perfkit.analysis.core._experiment import LOAD_COLUMNS, NOT_FACTORS, RunSet, match
from perfkit.errors import UsageError
from perfkit.formatting import level_text, plain
from perfkit.warning import Code, Warn


def parse_by(by: str | Sequence[str] | None) -> str | list[str]:
    """``"auto"``, ``"none"`` (as ``[]``) or the list of columns ``by`` names."""
    if by is None:
        return []
    if isinstance(by, str):
        text = by.strip().lower()
        if text == "auto":
            return "auto"
        if text in ("none", ""):
            return []
        return [c.strip() for c in by.split(",") if c.strip()]
    return list(by)


def per_endpoint(by: str | Sequence[str] | None) -> bool:
    """Whether rows are split by Locust endpoint: only when ``by`` names ``endpoint``; otherwise
    a Locust run enters an analysis through its ``Aggregated`` row alone."""
    wanted = parse_by(by)
    return wanted != "auto" and "endpoint" in wanted


def row_keys(sides: Sequence[RunSet], by: str | Sequence[str] | None = "auto",
             exclude: Iterable[str] = ()) -> tuple[list[str], list[Warn]]:
    """The row-key columns and the notes explaining what was left out and why."""
    wanted = parse_by(by)
    frames = [s.frame for s in sides]
    both = pd.concat(frames, ignore_index=True)
    if wanted != "auto":
        missing = [c for c in wanted if c not in both]
        if missing:
            raise UsageError(f"--by: no column {missing[0]!r} (columns: "
                             f"{', '.join(map(str, both.columns))})")
        return list(wanted), []
    factors = [f for s in sides for f in s.factors]
    for side in sides:
        factors += [k for r in side.runs for k in r.factors]
    skip = set(exclude) | NOT_FACTORS
    keys: list[str] = []
    notes: list[Warn] = []
    for col in dict.fromkeys([*LOAD_COLUMNS, *factors]):
        if col not in both or col in skip or both[col].astype(str).nunique(dropna=False) < 2:
            continue
        unrecorded = [i for i, f in enumerate(frames) if col not in f or f[col].isna().all()]
        if unrecorded:
            notes.append(_unrecorded_note(col, sides, unrecorded))
            continue
        if len(sides) == 2 and _confounded(sides[0].frame, sides[1].frame, col):
            notes.append(_confounded_note(col, sides))
            continue
        keys.append(col)
    return keys, notes


def _values(frame: pd.DataFrame, col: str) -> set[str]:
    return {level_text(v) for v in frame[col]} if col in frame else set()


def _confounded(base: pd.DataFrame, new: pd.DataFrame, col: str) -> bool:
    a, b = _values(base, col), _values(new, col)
    return bool(a) and bool(b) and not (a & b)


def _confounded_note(col: str, sides: Sequence[RunSet]) -> Warn:
    a, b = (tuple(sorted(_values(s.frame, col))) for s in sides)
    return Warn(Code.COLUMN_DIFFERS_BETWEEN_ARMS, column=col, base=a, new=b)


def _unrecorded_note(col: str, sides: Sequence[RunSet], which: Sequence[int]) -> Warn:
    names = ("base", "new") if len(sides) == 2 else tuple(s.label or "runs" for s in sides)
    return Warn(Code.COLUMN_NOT_RECORDED, column=col, arms=tuple(names[i] for i in which))


def rows_at(rows: RunSet, per: Sequence[str], key: Any) -> RunSet:
    """The runs of ``rows`` whose ``per`` columns have the values ``key`` (a tuple, or one
    value when ``per`` names one column); all of them when ``per`` is empty."""
    if not per:
        return rows
    values = key if isinstance(key, tuple) else (key,)
    mask = np.ones(len(rows), dtype=bool)
    for col, v in zip(per, values, strict=True):
        mask &= match(rows.frame[col], [level_text(v)])
    return rows.subset(mask)


def load_point(rows: RunSet) -> dict[str, Any]:
    """The load columns (:data:`~perfkit.analysis.core._experiment.LOAD_COLUMNS`) that hold one
    value in every run of ``rows``: the load point a comparison without load rows was run at."""
    out = {}
    for col in LOAD_COLUMNS:
        if col in rows.frame and rows.frame[col].notna().all() \
                and rows.frame[col].astype(str).nunique() == 1:
            out[col] = plain(rows.frame[col].iloc[0])
    return out


def split_groups(rows: RunSet, by: Sequence[str]) -> list[tuple[tuple, RunSet]]:
    """``(key, rows)`` per combination of the ``by`` columns, in label order (``[((), rows)]``
    without any): the configurations a scaling fit or an SLO bracket is computed for."""
    if not by:
        return [((), rows)]
    frame = rows.frame[list(by)].drop_duplicates()
    out = []
    for key in sorted((tuple(plain(v) for v in r) for r in frame.itertuples(index=False)),
                      key=lambda k: tuple(str(v) for v in k)):
        mask = np.ones(len(rows), dtype=bool)
        for col, value in zip(by, key, strict=True):
            mask &= match(rows.frame[col], [level_text(value)])
        out.append((key, rows.subset(mask)))
    return out


def by_columns(rows: RunSet, by: Any) -> list[str]:
    """The columns ``by`` names (``"auto"``: the factors that vary in ``rows``), checked."""
    wanted = parse_by(by)
    cols = list(rows.factors) if isinstance(wanted, str) else wanted  # str: "auto"
    missing = [c for c in cols if c not in rows.frame]
    if missing:
        raise UsageError(f"no column {missing[0]!r} to group by")
    return [c for c in cols if rows.frame[c].astype(str).nunique() > 1] \
        if wanted == "auto" else cols
