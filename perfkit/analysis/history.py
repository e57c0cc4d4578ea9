"""Performance histories: a metric's series over labels (commits, versions), its change points,
and each label gated against the baseline before it.

A history is read from either

- a history store (:mod:`perfkit.analysis.history_store`, written by ``perfkit history add``),
- or a folder of CI jobs with a ``labels.csv`` (columns ``label``, ``time_utc``, ``job_dir``:
  one row per label, the job's runs under ``job_dir`` relative to the folder), as
  ``data/demo-history`` is;

into an :class:`~perfkit.analysis.experiment.Experiment` whose frame has the columns
``label``, ``time_utc``, ``label_index`` (0 = the oldest label) and ``labels_ago`` (0 = the
newest), so a history is also a selection for ``compare`` and ``gate``:
``.perfkit/history::labels_ago=0|1|2`` are the runs of the last three labels.

:func:`analyse` gives, per load level (the load columns that vary; a history's labels are its
only "factor"), every label's runs and median with an order-statistic interval, and the change
points of :func:`perfkit.stats.changepoint.change_points` (E-divisive means on log per-run
values, permutation tests shuffling whole labels). :func:`gates` gates each label against the
labels before it in its segment (for the first label of a segment: the whole previous
segment) with :func:`perfkit.analysis.gate.gate_runs`.
"""

from __future__ import annotations

import csv
import dataclasses
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from perfkit.analysis import history_store as store
from perfkit.analysis import runstatus
from perfkit.analysis.experiment import LOAD_COLUMNS, Experiment, RunSet, load_experiment
from perfkit.analysis.gate import GateResult, gate_runs
from perfkit.analysis.grouping import row_keys
from perfkit.analysis.metrics import Metric
from perfkit.errors import DataError, PerfkitError
from perfkit.formatting import level_text, plain
from perfkit.frames import runs_frame
from perfkit.stats.changepoint import ChangePoints, change_points
from perfkit.stats.orderstats import median_ci

LABELS_CSV = "labels.csv"
LABEL_COLUMNS = ("label", "time_utc", "label_index", "labels_ago")


def is_history(path: str | Path) -> bool:
    """True for a history store, or a folder of jobs with a ``labels.csv``."""
    p = Path(path)
    return store.is_store(p) or (p / LABELS_CSV).is_file()


# -- loading ------------------------------------------------------------------------------------
def load_history(path: str | Path, name: str | None = None) -> Experiment:
    """Every run of the history at ``path``, with the label columns (see the module docstring).

    Runs that cannot be read are kept as ``errors`` (jobs folder), as ``load_experiment`` does.
    """
    p = Path(path)
    if store.is_store(p):
        files, notes = store.label_files(p)
        parts = [(f.label, f.time_utc, store.read_label(f)) for f in files]
        designs = [f.design for f in files]
        errors: list[PerfkitError] = []
    elif (p / LABELS_CSV).is_file():
        parts, errors, designs = _read_jobs(p)
        notes = []
    else:
        raise DataError(f"no history at {p}: expected a history store ({store.MARKER}) or a "
                        f"folder of jobs with {LABELS_CSV}")
    parts = [x for x in parts if x[2]]
    if not parts:
        raise DataError(f"the history at {p} holds no runs")
    order = sorted(range(len(parts)), key=lambda i: (parts[i][1], i))
    runs, columns = [], {c: [] for c in LABEL_COLUMNS}
    for rank, i in enumerate(order):
        label, time_utc, label_runs = parts[i]
        runs.extend(label_runs)
        for col, value in zip(LABEL_COLUMNS, (label, time_utc, rank, len(parts) - 1 - rank),
                              strict=True):
            columns[col].extend([value] * len(label_runs))
    frame = runs_frame(runs)
    for col in LABEL_COLUMNS:
        frame[col] = columns[col]
    design = _common_design(designs)
    design["history"] = {"labels": [parts[i][0] for i in order], "warnings": notes}
    return Experiment(name or p.name, p, tuple(runs), frame, design, tuple(errors))


def _common_design(designs: Sequence[dict]) -> dict:
    """The design entries every job shares (repetitions, warm-up, ...), for the Methods."""
    if not designs:
        return {}
    keys = set.intersection(*(set(d) for d in designs))
    return {k: designs[0][k] for k in sorted(keys)
            if k not in ("name", "description", "history")
            and all(d[k] == designs[0][k] for d in designs)}


def _read_jobs(folder: Path) -> tuple[list[tuple[str, str, list]], list[PerfkitError],
                                      list[dict]]:
    path = folder / LABELS_CSV
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in ("label", "time_utc", "job_dir") if c not in (reader.fieldnames
                                                                            or [])]
        if missing:
            raise DataError(f"{path}:1: expected columns label, time_utc, job_dir, found "
                            f"{', '.join(reader.fieldnames or []) or 'none'}")
        rows = list(reader)
    parts, errors, designs, seen = [], [], [], set()
    for line, row in enumerate(rows, start=2):
        label, job = (row.get("label") or "").strip(), (row.get("job_dir") or "").strip()
        if not label or label in seen:
            raise DataError(f"{path}:{line}: expected a new label, found {label!r}")
        seen.add(label)
        job_path = folder / job
        if not job or not job_path.is_dir():
            raise DataError(f"{path}:{line}: expected a job folder, found {job!r}")
        try:
            when = store.utc_text(row.get("time_utc"), "time_utc")
        except PerfkitError:
            raise DataError(f"{path}:{line}: expected an ISO 8601 time_utc, found "
                            f"{row.get('time_utc')!r}") from None
        exp = load_experiment(job_path)
        errors.extend(exp.errors)
        designs.append(dict(exp.design or {}))
        parts.append((label, when, list(exp.runs)))
    return parts, errors, designs


def labels_of(history: Experiment) -> list[str]:
    """The labels of a history in series order."""
    return list(history.design["history"]["labels"])


def history_rows(history: Experiment, where: dict | None = None) -> RunSet:
    """The analysis rows (one per run; Locust: its Aggregated row) matching ``where``."""
    return history.rows(where)


# -- the series and its change points ---------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Point:
    """One label of a series: its runs, the failed ones left out, and their median with an
    order-statistic interval of coverage ``coverage`` (the requested level from 6 runs; below
    that the range of the runs, whose coverage is 1 - 2^(1-n))."""

    label: str
    time_utc: str
    n_runs: int
    n_failed: int
    median: float
    ci_low: float
    ci_high: float
    coverage: float
    values: tuple[float, ...]


@dataclasses.dataclass(frozen=True)
class Series:
    """The series of one load level (``key``: values of the analysis' ``keys``)."""

    key: tuple[Any, ...]
    points: tuple[Point, ...]
    change: ChangePoints

    def segment_of(self, label: str) -> int | None:
        """Index in ``change.segments`` of the segment holding ``label`` (None if left out)."""
        names = list(self.change.labels)
        if label not in names:
            return None
        i = names.index(label)
        return next(k for k, s in enumerate(self.change.segments) if s.start <= i < s.end)


@dataclasses.dataclass(frozen=True)
class HistoryAnalysis:
    """A metric over a history: one :class:`Series` per load level."""

    name: str
    metric: Metric
    keys: tuple[str, ...]
    series: tuple[Series, ...]
    confidence: float
    alpha: float
    warnings: tuple[str, ...] = ()

    def describe(self) -> str:
        method = self.series[0].change.method if self.series else ""
        return (f"The history of {self.metric.label} ({self.name}) was analysed label by label "
                f"(one value per run; each label's median with a distribution-free "
                f"order-statistic interval, {self.confidence:.0%} from 6 runs, else the range "
                f"of its runs); change points: {method}.")

    def to_frame(self) -> pd.DataFrame:
        """One row per load level and label: runs, median with interval, segment, change."""
        u = self.metric.suffix
        records = []
        for s in self.series:
            starts = {c.label: c for c in s.change.change_points}
            for p in s.points:
                seg = s.segment_of(p.label)
                rec: dict[str, Any] = {"metric": self.metric.name}
                rec.update({k: plain(v) for k, v in zip(self.keys, s.key, strict=True)})
                rec.update({"label": p.label, "time_utc": p.time_utc, "n_runs": p.n_runs,
                            "n_failed": p.n_failed, f"median{u}": p.median,
                            f"ci_low{u}": p.ci_low, f"ci_high{u}": p.ci_high,
                            "ci_coverage": p.coverage,
                            "segment": math.nan if seg is None else seg + 1,
                            "change_point": p.label in starts})
                records.append(rec)
        frame = pd.DataFrame.from_records(records)
        if "segment" in frame:
            frame["segment"] = frame["segment"].astype("Int64")
        return frame

    def change_frame(self) -> pd.DataFrame:
        """One row per change point: where, the ratio after/before with its CI, p-values."""
        u = self.metric.suffix
        records = []
        for s in self.series:
            for c in s.change.change_points:
                rec: dict[str, Any] = {"metric": self.metric.name}
                rec.update({k: plain(v) for k, v in zip(self.keys, s.key, strict=True)})
                rec.update({"position": c.index, "label": c.label,
                            "label_before": c.label_before, "ratio": c.ratio,
                            "ratio_ci_low": c.ratio_ci_low, "ratio_ci_high": c.ratio_ci_high,
                            "p_value": c.p_value, "p_value_adjacent": c.p_value_adjacent,
                            f"median_before{u}": c.median_before,
                            f"median_after{u}": c.median_after,
                            "n_labels_before": c.n_labels_before,
                            "n_labels_after": c.n_labels_after,
                            "direction": self.metric.verdict(c.ratio),
                            "warnings": "; ".join(c.warnings)})
                records.append(rec)
        columns = ["metric", *self.keys, "position", "label", "label_before", "ratio",
                   "ratio_ci_low", "ratio_ci_high", "p_value", "p_value_adjacent",
                   f"median_before{u}", f"median_after{u}", "n_labels_before",
                   "n_labels_after", "direction", "warnings"]
        return pd.DataFrame.from_records(records, columns=columns)

    def to_dict(self) -> dict[str, Any]:
        def records(frame: pd.DataFrame) -> list[dict]:
            return [{k: (None if v is None or v is pd.NA or (isinstance(v, float)
                                                             and math.isnan(v)) else plain(v))
                     for k, v in r.items()} for r in frame.to_dict(orient="records")]
        return {"history": self.name, "metric": self.metric.name, "unit": self.metric.unit,
                "better": self.metric.better, "keys": list(self.keys),
                "confidence": self.confidence, "alpha": self.alpha,
                "method": self.describe(), "warnings": list(self.warnings),
                "series": records(self.to_frame()),
                "change_points": records(self.change_frame())}


def series_keys(history: Experiment, rows: RunSet, by: Any = "auto") -> list[str]:
    """The columns a history's series are split by: by default the load columns that vary."""
    if by != "auto":
        keys, _ = row_keys([rows], by)
        return keys
    return [c for c in LOAD_COLUMNS if c in rows.frame
            and rows.frame[c].astype(str).nunique(dropna=False) > 1]


def analyse(history: Experiment, metric: Metric, *, by: Any = "auto",
            where: dict | None = None, alpha: float = 0.05, confidence: float = 0.95,
            permutations: int = 199, seed: int = 0) -> HistoryAnalysis:
    """The series of ``metric`` per load level with its change points (module docstring)."""
    rows = history_rows(history, where)
    if metric.name not in rows.frame:
        raise DataError(f"no column {metric.name!r} in the history {history.name}")
    keys = series_keys(history, rows, by)
    labels = labels_of(history)
    series = []
    for key in _levels(rows, keys):
        part = _where(rows, keys, key)
        points = [_point(part.subset(part.frame["label"].eq(label).to_numpy()), label, metric,
                         confidence) for label in labels]
        points = [p for p in points if p is not None]
        cps = change_points([list(p.values) for p in points], [p.label for p in points],
                            alpha=alpha, permutations=permutations, confidence=confidence,
                            lower_is_better=metric.lower_is_better, seed=seed)
        series.append(Series(key, tuple(points), cps))
    notes = list(history.design["history"].get("warnings", []))
    return HistoryAnalysis(history.name, metric, tuple(keys), tuple(series), confidence, alpha,
                           tuple(notes))


def _levels(rows: RunSet, keys: Sequence[str]) -> list[tuple]:
    if not keys:
        return [()]
    levels = rows.frame[list(keys)].drop_duplicates()
    return sorted((tuple(plain(v) for v in r) for r in levels.itertuples(index=False)),
                  key=lambda t: tuple((0, v) if isinstance(v, int | float) else (1, str(v))
                                      for v in t))


def _where(rows: RunSet, keys: Sequence[str], key: tuple) -> RunSet:
    return rows.where({k: [level_text(v)] for k, v in zip(keys, key, strict=True)})


def _point(rows: RunSet, label: str, metric: Metric, confidence: float) -> Point | None:
    if not len(rows):
        return None
    values = rows.values(metric.name)
    failed = np.array([s.counts_as_failed for s in runstatus.run_statuses(rows, metric)])
    ok = values[np.isfinite(values) & ~failed & (values > 0)]
    time_utc = str(rows.frame["time_utc"].iloc[0])
    n = len(ok)
    if n >= 6 or n == 0:
        ci = median_ci(ok, confidence) if n else None
        low, high = (ci.low, ci.high) if ci else (math.nan, math.nan)
        est = ci.estimate if ci else math.nan
        coverage = ci.achieved_confidence if ci else math.nan
    else:
        est = float(np.median(ok))
        low, high = (float(ok.min()), float(ok.max())) if n > 1 else (math.nan, math.nan)
        coverage = 1 - 2.0 ** (1 - n) if n > 1 else math.nan
    return Point(label, time_utc, len(rows), len(rows) - n, est, low, high, coverage,
                 tuple(float(v) for v in ok))


# -- gates over the history -------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class HistoryGate:
    """One label gated against its baseline labels (``baseline``: first and last label)."""

    key: tuple[Any, ...]
    label: str
    baseline: tuple[str, ...]
    result: GateResult


def gates(history: Experiment, analysis: HistoryAnalysis, max_regression: float, *,
          where: dict | None = None, n_sim: int = 2000, seed: int = 0) -> list[HistoryGate]:
    """Each label (after the first) against the labels before it in its segment; the first
    label of a segment against the whole previous segment (the baseline a CI job had)."""
    rows = history_rows(history, where)
    out = []
    for s in analysis.series:
        part = _where(rows, analysis.keys, s.key)
        names = [p.label for p in s.points]
        for i in range(1, len(names)):
            base_labels = _baseline(s, names, i)
            if not base_labels:
                continue
            base = part.subset(part.frame["label"].isin(base_labels).to_numpy(),
                               label=_span(base_labels))
            new = part.subset(part.frame["label"].eq(names[i]).to_numpy(), label=names[i])
            result = gate_runs(base, new, [analysis.metric], max_regression,
                               alpha=analysis.alpha, by="none", confidence=analysis.confidence,
                               n_sim=n_sim, seed=seed)
            out.append(HistoryGate(s.key, names[i], tuple(base_labels), result))
    return out


def _baseline(series: Series, names: list[str], i: int) -> list[str]:
    seg = series.segment_of(names[i - 1])
    if seg is None:
        return names[:i]
    start = series.change.segments[seg].first_label
    return names[names.index(start):i]


def _span(labels: Sequence[str]) -> str:
    return labels[0] if len(labels) == 1 else f"{labels[0]}..{labels[-1]}"


def gates_frame(items: Sequence[HistoryGate], keys: Sequence[str]) -> pd.DataFrame:
    """One row per gated label: the load level, the label, its baseline, the gate's row."""
    frames = []
    for g in items:
        f = g.result.to_frame().drop(columns=list(keys), errors="ignore")
        head = {k: plain(v) for k, v in zip(keys, g.key, strict=True)}
        head.update({"label": g.label, "baseline": _span(g.baseline),
                     "n_baseline_labels": len(g.baseline)})
        for i, (k, v) in enumerate(head.items()):
            f.insert(1 + i, k, v)
        frames.append(f)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
