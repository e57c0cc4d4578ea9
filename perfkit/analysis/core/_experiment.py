"""Experiments and selections: which runs an analysis sees, chosen one way for every front end.

- :func:`load_experiment` loads a folder of runs once (errors kept, not raised) into an
  :class:`Experiment`: its Runs and their tidy frame, aligned row for row, and its design.
- :class:`Selection` is the ``PATH::column=value|value2,column=value`` syntax of the CLI; the
  report's ``select: {column: value}`` parameters mean the same (:func:`match`: numbers compare
  as numbers, so ``64`` matches 64.0; a list or ``a|b`` accepts any of its values).
- :meth:`Experiment.rows` applies the **analysis-row rule**: a Locust run counts once, by its
  ``Aggregated`` row (the per-endpoint rows are parts of it), unless the analysis is per
  endpoint.
- :data:`NOT_FACTORS` are the bookkeeping columns (repetition, block, order, ...) that number
  runs and are never factors or row keys.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from perfkit.errors import DataError, PerfkitError, UsageError
from perfkit.frames import runs_frame
from perfkit.ingest import scan
from perfkit.ingest.refusal import folder_without_runs
from perfkit.model import Run
from perfkit.store.design import DESIGN_NAME, read_design
from perfkit.units import ascii_number

#: run bookkeeping recorded in manifests: never a factor, never a row key
NOT_FACTORS = frozenset({"rep", "repetition", "replicate", "block", "order", "seed", "run",
                         "arm_order", "position_in_block", "cell"})
#: columns that set the load of a run: candidates for row keys, never tuning factors
LOAD_COLUMNS = ("endpoint", "connections", "users", "threads", "target_rate_rps")


@dataclasses.dataclass(frozen=True)
class RunSet:
    """Runs chosen for one analysis: ``frame`` (one row per run) and ``runs`` aligned with it.

    ``label`` names the choice (a selection's text, an experiment's name); ``factors`` the
    design's factor columns present in the frame.
    """

    frame: pd.DataFrame
    runs: tuple[Run, ...]
    label: str = ""
    factors: tuple[str, ...] = ()

    def __len__(self) -> int:
        return len(self.runs)

    def subset(self, mask: np.ndarray | pd.Series | Sequence[bool], label: str | None = None
               ) -> RunSet:
        """The rows where ``mask`` is True (frame re-indexed from 0)."""
        keep = np.asarray(mask, dtype=bool)
        runs = tuple(r for r, k in zip(self.runs, keep, strict=True) if k)
        return RunSet(self.frame[keep].reset_index(drop=True), runs,
                      self.label if label is None else label, self.factors)

    def where(self, filters: Mapping[str, Any] | None) -> RunSet:
        """The rows matching every ``{column: value or [values]}`` (see :func:`match`)."""
        return self.subset(select_mask(self.frame, filters))

    def values(self, column: str) -> np.ndarray:
        """``column`` as floats (NaN where missing)."""
        return pd.to_numeric(self.frame[column], errors="coerce").to_numpy(dtype=float)


@dataclasses.dataclass(frozen=True)
class Experiment:
    """One experiment folder, loaded: every row of every run, its design and the load errors."""

    name: str
    path: Path
    runs: tuple[Run, ...]
    frame: pd.DataFrame
    design: Mapping[str, Any]
    errors: tuple[PerfkitError, ...]

    @property
    def factors(self) -> list[str]:
        """Factor names, in the order the design (or the first run) lists them."""
        names: list[str] = []
        design_factors = self.design.get("factors") if self.design else None
        if isinstance(design_factors, Mapping):
            names.extend(str(k) for k in design_factors)
        for run in self.runs:
            names.extend(str(k) for k in run.factors if str(k) not in names)
        return [n for n in names if n not in NOT_FACTORS and n in self.frame]

    @property
    def tools(self) -> list[str]:
        return sorted(self.frame["tool"].dropna().unique().tolist()) if len(self.frame) else []

    def all_rows(self) -> RunSet:
        return RunSet(self.frame, self.runs, self.name, tuple(self.factors))

    def rows(self, where: Mapping[str, Any] | None = None, per_endpoint: bool = False,
             label: str | None = None) -> RunSet:
        """The analysis rows matching ``where``: one per run (Locust: its Aggregated row), or
        with ``per_endpoint`` every Locust endpoint row as well."""
        mask = select_mask(self.frame, where) & analysis_row_mask(self.frame, per_endpoint)
        out = self.all_rows().subset(mask)
        return dataclasses.replace(out, label=label if label is not None else self.name)


def analysis_row_mask(frame: pd.DataFrame, per_endpoint: bool = False) -> np.ndarray:
    """True for the rows an analysis counts: every non-Locust run, and Locust's Aggregated rows
    (all Locust rows when ``per_endpoint``)."""
    if per_endpoint or "is_aggregate" not in frame or not len(frame):
        return np.ones(len(frame), dtype=bool)
    locust = frame["tool"].eq("locust").to_numpy()
    aggregate = frame["is_aggregate"].astype(object).eq(True).to_numpy()
    return ~locust | aggregate


def load_experiment(path: str | os.PathLike, name: str | None = None) -> Experiment:
    """Load the runs under ``path`` (an experiment folder, a run folder or a file).

    Files that cannot be parsed do not stop the analysis: their errors are kept in ``errors``
    (a front end reports them). No run at all raises :class:`DataError`.
    """
    p = Path(path)
    result = scan(p)
    if not result.runs:
        problems = "; ".join(str(e) for e in result.errors[:3]) or (
            folder_without_runs(str(p)) if p.is_dir() else "no tool output found")
        raise DataError(f"no runs found under {p}: {problems}")
    runs = tuple(sorted(result.runs, key=_run_key))
    frame = runs_frame(runs)
    design_path = p / DESIGN_NAME if p.is_dir() else None
    design: Mapping[str, Any] = {}
    if design_path is not None and design_path.is_file():
        design, _ = read_design(design_path)
    return Experiment(name or p.name, p, runs, frame, design, tuple(result.errors))


def _run_key(run: Run) -> tuple:
    return (run.order if run.order is not None else math.inf, run.run_id or run.source,
            run.endpoint or "")


# -- selections ---------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Selection:
    """``PATH::column=value|value2,column=value``: a path and the column values to keep."""

    text: str
    path: str
    filters: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @classmethod
    def parse(cls, text: str) -> Selection:
        path, sep, spec = text.partition("::")
        filters: list[tuple[str, tuple[str, ...]]] = []
        if sep:
            for part in filter(None, (p.strip() for p in spec.split(","))):
                key, eq, value = part.partition("=")
                if not eq or not key.strip():
                    raise UsageError(f"selection {text!r}: expected column=value, found {part!r}")
                filters.append((key.strip(), tuple(v.strip() for v in value.split("|"))))
        if not path:
            raise UsageError(f"selection {text!r}: expected PATH or PATH::column=value")
        if sep and not filters:
            raise UsageError(f"selection {text!r}: expected column=value after '::', found "
                             f"nothing (to select every run, give {path!r} alone)")
        return cls(text, path, tuple(filters))

    @property
    def where(self) -> dict[str, list[str]]:
        return {k: list(v) for k, v in self.filters}

    @property
    def pinned(self) -> list[str]:
        """Columns this selection fixes to one value (they never make rows)."""
        return [k for k, v in self.filters if len(v) == 1]

    def apply(self, experiment: Experiment, per_endpoint: bool = False) -> RunSet:
        """The experiment's analysis rows this selection keeps; none raises DataError."""
        for key, _ in self.filters:
            if key not in experiment.frame:
                raise UsageError(f"selection {self.text!r}: no column {key!r} (columns: "
                                 f"{', '.join(map(str, experiment.frame.columns))})")
        rows = experiment.rows(self.where, per_endpoint, label=self.text)
        if not len(rows):
            raise DataError(f"selection {self.text!r} matches no run")
        return rows


def select_mask(frame: pd.DataFrame, where: Mapping[str, Any] | None) -> np.ndarray:
    """Boolean mask of the rows whose columns match every entry of ``where``.

    Values may be given as text (the CLI) or typed (the report's parameters); an unknown
    column raises :class:`UsageError` naming the columns there are.
    """
    mask = np.ones(len(frame), dtype=bool)
    for column, wanted in (where or {}).items():
        if column not in frame:
            raise UsageError(f"select: no column {column!r} (columns: "
                             f"{', '.join(map(str, frame.columns))})")
        values = list(wanted) if isinstance(wanted, list | tuple) else [wanted]
        mask &= match(frame[column], values)
    return mask


def match(column: pd.Series, values: Sequence[Any]) -> np.ndarray:
    """True where ``column`` equals one of ``values``: as text, or as numbers when both are."""
    text = column.astype(str).to_numpy()
    hit = np.isin(text, [str(v) for v in values])
    numbers = [_number(v) for v in values]
    numeric = [v for v in numbers if v is not None]
    if numeric and pd.api.types.is_numeric_dtype(column):
        col = pd.to_numeric(column, errors="coerce").to_numpy(dtype=float)
        for v in numeric:
            hit |= np.isclose(col, v, rtol=1e-12, atol=0.0)
    return hit


def _number(value: Any) -> float | None:
    """``value`` as a number, if it is one or text of one in ASCII digits (a selection's
    ``connections=\u0661\u0666`` is no 16)."""
    if isinstance(value, bool):
        return None
    try:
        return float(ascii_number(value) if isinstance(value, str) else value)
    except (TypeError, ValueError):
        return None
