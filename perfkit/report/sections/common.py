"""Loading an experiment for a notebook: its runs, its tidy frame, its design and its factors."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from perfkit.errors import PerfkitError
from perfkit.frames import runs_frame
from perfkit.ingest import scan
from perfkit.model import Run
from perfkit.report import paths

#: run bookkeeping that is never a factor
NOT_FACTORS = ("rep", "repetition", "block", "order", "arm_order")


@dataclasses.dataclass(frozen=True)
class Experiment:
    """One experiment folder, loaded: ``runs`` (perfkit.Run), ``frame`` (one row per run)."""

    name: str
    path: Path
    runs: tuple[Run, ...]
    frame: pd.DataFrame
    design: Mapping[str, Any]
    errors: tuple[str, ...]

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


def load_experiment(name: str, data_root: str | None = None) -> Experiment:
    """Load ``<data_root>/<name>`` (see :func:`perfkit.report.paths.data_dir`).

    Files that cannot be parsed do not stop the notebook: their errors are kept in ``errors``
    for the data-quality section. An experiment without a single run raises.
    """
    path = paths.data_dir(name, data_root or None)
    result = scan(path)
    if not result.runs:
        problems = "; ".join(str(e) for e in result.errors[:3]) or "no tool output found"
        raise PerfkitError(f"experiment {name!r} ({path}) holds no runs: {problems}")
    runs = tuple(sorted(result.runs, key=_run_key))
    frame = runs_frame(runs)
    frame.insert(0, "experiment", name)
    design_path = path / "experiment.yaml"
    design = yaml.safe_load(design_path.read_text()) if design_path.is_file() else {}
    return Experiment(name, path, runs, frame, design or {},
                      tuple(str(e) for e in result.errors))


def _run_key(run: Run) -> tuple:
    return (run.order if run.order is not None else math.inf, run.run_id or run.source,
            run.endpoint or "")


def select(frame: pd.DataFrame, where: Mapping[str, Any] | None) -> pd.Series:
    """Boolean mask of the rows whose columns equal every value in ``where``.

    Numbers compare as numbers (``{"connections": 64}`` matches 64.0); a list matches any of
    its values. An unknown column raises, naming the columns there are.
    """
    mask = pd.Series(True, index=frame.index)
    for column, wanted in (where or {}).items():
        if column not in frame:
            raise PerfkitError(f"select: no column {column!r} (columns: "
                               f"{', '.join(map(str, frame.columns))})")
        values = wanted if isinstance(wanted, list) else [wanted]
        col = frame[column]
        hit = pd.Series(False, index=frame.index)
        for v in values:
            if isinstance(v, int | float) and pd.api.types.is_numeric_dtype(col):
                hit |= np.isclose(col.astype(float), float(v))
            else:
                hit |= col.astype(str) == str(v)
        mask &= hit
    return mask


def config_labels(frame: pd.DataFrame, columns: Sequence[str]) -> pd.Series:
    """One readable label per row: the values of ``columns`` joined, ``"tuned, 64"``.

    Legends and tables name the columns (``"profile, connections"``) once, so the labels stay
    short; no column gives ``"all runs"``.
    """
    columns = [c for c in columns if c in frame]
    if not columns:
        return pd.Series("all runs", index=frame.index)
    return frame[columns].apply(
        lambda row: ", ".join(_fmt_level(row[c]) for c in columns), axis=1).astype(str)


def _fmt_level(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def fmt_ci(estimate: float, low: float, high: float, unit: str = "", digits: int = 3) -> str:
    """``"1.23 ms [1.10, 1.41]"``; an infinite side prints as ``inf`` (too few to bound it)."""
    def f(v: float) -> str:
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return "n/a"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return f"{v:.{digits}g}"

    suffix = f" {unit}" if unit else ""
    return f"{f(estimate)}{suffix} [{f(low)}, {f(high)}]"


def round_sig(frame: pd.DataFrame, digits: int = 3) -> pd.DataFrame:
    """Floats rounded to ``digits`` significant digits (stable text for output-checked cells)."""
    out = frame.copy()
    for col in out.columns:
        if pd.api.types.is_float_dtype(out[col]):
            out[col] = [v if not np.isfinite(v) or v == 0 else
                        float(f"{v:.{digits}g}") for v in out[col].astype(float)]
    return out


def text_table(frame: pd.DataFrame, digits: int = 3) -> str:
    """A plain-text table of ``frame`` with floats to ``digits`` significant digits (stable text
    for output-checked cells: 30000 prints as ``30000``, missing as ``nan``)."""
    from perfkit.report.nb import format_number

    shown = frame.copy()
    for col in shown.columns:
        if pd.api.types.is_float_dtype(shown[col]):
            shown[col] = [("nan" if pd.isna(v) else format_number(v, digits))
                          for v in shown[col]]
    return shown.to_string(index=False)
