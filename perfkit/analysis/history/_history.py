"""Performance histories: a metric's series over labels (commits, versions), its change points,
and each label gated against the baseline before it.

A history is read from either

- a history store (:mod:`perfkit.store.history`, written by ``perfkit history add``),
- or a folder of CI jobs with a ``labels.csv`` (columns ``label``, ``time_utc``, ``job_dir``:
  one row per label, the job's runs under ``job_dir`` relative to the folder), as
  ``data/demo-history`` is;

(:mod:`perfkit.analysis.history._load`) into an
:class:`~perfkit.analysis.core._experiment.Experiment` whose frame has the columns ``label``,
``time_utc``, ``label_index`` (0 = the oldest label) and ``labels_ago`` (0 = the newest), so a
history is also a selection for ``compare`` and ``gate``: ``.perfkit/history::labels_ago=0|1|2`` are
the runs of the last three labels.

:func:`analyse` gives, per load level (the load columns that vary; a history's labels are its
only "factor"), every label's runs and median with an order-statistic interval, and the change
points of :func:`perfkit.stats.changepoint.change_points` (E-divisive means on log per-run
values, permutation tests shuffling whole labels). :func:`gates` gates each label against the
labels before it in its segment (for the first label of a segment: the whole previous
segment) with :func:`perfkit.analysis.compare._gate.gate_runs`; :func:`latest_gates` picks, at every
load level, the gate of its newest label.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from perfkit.analysis.compare import GateResult, gate_runs, ranked_worst
from perfkit.analysis.core import (
    LOAD_COLUMNS,
    Experiment,
    Metric,
    RunSet,
    load_point,
    measured_rows,
    row_keys,
    run_statuses,
)
from perfkit.analysis.history._load import (
    history_rows,
    labels_of,
)
from perfkit.errors import DataError
from perfkit.formatting import level_text, plain
from perfkit.stats.changepoint import ChangePoints, change_points, newest_unseen
from perfkit.stats.orderstats import median_ci, min_n_for_finite_ci
from perfkit.stats.recent import RecentStep, recent_step
from perfkit.vocabulary import HistoryVerdict, Verdict
from perfkit.warning import Code, Warn, texts


# -- the series and its change points ---------------------------------------------------------
def median_runs_needed(confidence: float = 0.95) -> int:
    """The fewest runs whose median has an interval at ``confidence`` under the rule of
    ``compare`` and ``gate`` (:func:`perfkit.stats.orderstats.median_ci`): 6 at 95%."""
    return min_n_for_finite_ci(0.5, confidence)


@dataclasses.dataclass(frozen=True)
class Point:
    """One label of a series: its runs and their median with the order-statistic interval of
    :func:`perfkit.stats.orderstats.median_ci`, the rule of ``compare`` and ``gate`` for a
    median of runs (exact order statistics whose coverage reaches the nominal level, from 6
    runs at 95%; no interval below: NaN bounds, and a warning naming the runs needed),
    ``coverage`` the coverage it achieves.

    Runs that did not measure the metric are left out (``n_runs`` counts the others) and
    named in ``warnings`` (:func:`perfkit.analysis.core._runstatus.measured_rows`). Failed and
    saturated runs follow the comparison's rule
    (:func:`perfkit.analysis.compare._compare.ranked_worst`): where failing makes the metric worse
    they rank worst in the median and its interval (``n_failed``), else they keep their value; a run
    without a value ranks worst. ``values`` are the finished runs' positive values (the change
    points take their logs); ``warnings`` say what the interval covers."""

    label: str
    time_utc: str
    n_runs: int
    n_failed: int
    median: float
    ci_low: float
    ci_high: float
    coverage: float
    values: tuple[float, ...]
    warnings: tuple[Warn, ...] = ()


@dataclasses.dataclass(frozen=True)
class Series:
    """The series of one load level (``key``: values of the analysis' ``keys``), its change
    points and the test of a step in its newest labels (``recent``:
    :func:`perfkit.stats.recent.recent_step`, which the change points cannot make there)."""

    key: tuple[Any, ...]
    points: tuple[Point, ...]
    change: ChangePoints
    recent: RecentStep | None = None

    def unseen(self) -> Warn | None:
        """Why a step in the newest labels cannot show as a change point, with the labels it
        would need (:func:`perfkit.stats.changepoint.newest_unseen`), and what tests them
        instead (``windows``: the windows tried; ``untested``: why none could be); None when
        the change points can see it."""
        found = newest_unseen(len(self.change.labels), self.change.alpha,
                              self.change.min_labels)
        r = self.recent
        if found is None or r is None:
            return found
        return Warn(found.code, **dict(found.fields), windows=r.windows if r.tested else None,
                    untested=None if r.tested else r.reason)

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
    warnings: tuple[Warn, ...] = ()
    #: the load columns that hold one value in every analysed run (``(("connections", 16),)``):
    #: the load point of every series, beside the varying ``keys``
    load: tuple[tuple[str, Any], ...] = ()

    def describe(self) -> str:
        method = self.series[0].change.method if self.series else ""
        return (f"The history of {self.metric.label} ({self.name}) was analysed label by label "
                f"(one value per run; each label's median of runs with its distribution-free "
                f"order-statistic interval, as perfkit compare and gate give it (Conover "
                f"1999, section 3.2): exact order statistics covering at least "
                f"{self.confidence:.0%}, none below {median_runs_needed(self.confidence)} runs; "
                f"failed runs ranked worst where failing makes the metric worse); change "
                f"points: {method}.")

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
        """One row per change point: where, the ratio after/before with its CI, p-values, and
        its support (``weak`` when the ratio has no interval excluding 1; ``warnings`` say
        why)."""
        u = self.metric.suffix
        records = []
        for s in self.series:
            for c in s.change.change_points:
                rec: dict[str, Any] = {"metric": self.metric.name}
                rec.update({k: plain(v) for k, v in zip(self.keys, s.key, strict=True)})
                rec.update({"position": c.index, "label": c.label,
                            "label_before": c.label_before,
                            "estimand": change_estimand(s, c),
                            "ratio": c.ratio,
                            "ratio_ci_low": c.ratio_ci_low, "ratio_ci_high": c.ratio_ci_high,
                            "p_value": c.p_value, "p_value_adjacent": c.p_value_adjacent,
                            f"median_before{u}": c.median_before,
                            f"median_after{u}": c.median_after,
                            "n_labels_before": c.n_labels_before,
                            "n_labels_after": c.n_labels_after,
                            "direction": self.metric.verdict(c.ratio),
                            "support": c.support, "warnings": "; ".join(texts(c.warnings))})
                records.append(rec)
        columns = ["metric", *self.keys, "position", "label", "label_before", "estimand", "ratio",
                   "ratio_ci_low", "ratio_ci_high", "p_value", "p_value_adjacent",
                   f"median_before{u}", f"median_after{u}", "n_labels_before",
                   "n_labels_after", "direction", "support", "warnings"]
        return pd.DataFrame.from_records(records, columns=columns)

    def recent_frame(self) -> pd.DataFrame:
        """One row per series: the test of a step in its newest labels
        (:attr:`Series.recent`): the window tried, the labels before it, the ratio of their
        geometric means with its (Bonferroni) interval, p, and the verdict (``change``, ``no
        change``, or ``not testable`` with the reason and the labels needed); with other
        metrics, ``p_value_holm`` over the ``holm_family`` of them, the verdict's p, and the
        ``adjustment`` in words (:meth:`RecentStep.holm_note`)."""
        records = []
        for s in self.series:
            r = s.recent
            if r is None:
                continue
            rec: dict[str, Any] = {"metric": self.metric.name}
            rec.update({k: plain(v) for k, v in zip(self.keys, s.key, strict=True)})
            rec.update({"newest_labels": _span(list(dict.fromkeys([r.first_label,
                                                                    r.last_label])))
                        if r.tested else "", "n_newest": r.k if r.tested else math.nan,
                        "against": _span(list(dict.fromkeys(r.before))) if r.tested else "",
                        "n_against": r.n_before if r.tested else math.nan,
                        "ratio": r.ratio, "ratio_ci_low": r.ratio_ci_low,
                        "ratio_ci_high": r.ratio_ci_high, "ratio_ci_level": r.level,
                        "p_value": r.p_value, "windows": r.windows, "df": r.df,
                        "p_value_holm": r.p_holm, "holm_family": r.family,
                        "verdict": recent_verdict(r),
                        "adjustment": str(r.holm_note() or ""),
                        "reason": str(r.reason) if r.reason else "",
                        "labels_needed": r.labels_needed, "unseen": str(s.unseen() or "")})
            records.append(rec)
        return pd.DataFrame.from_records(records)

    def to_dict(self) -> dict[str, Any]:
        def records(frame: pd.DataFrame) -> list[dict]:
            return [{k: (None if v is None or v is pd.NA or (isinstance(v, float)
                                                             and math.isnan(v)) else plain(v))
                     for k, v in r.items()} for r in frame.to_dict(orient="records")]
        return {"history": self.name, **self.metric.to_dict(), "keys": list(self.keys),
                "confidence": self.confidence, "alpha": self.alpha,
                "method": self.describe(), "warnings": [w.to_dict() for w in self.warnings],
                "series": records(self.to_frame()),
                "change_points": records(self.change_frame()),
                "recent": records(self.recent_frame())}


def segment_span(series: Series, label: str) -> str:
    """The labels of the segment holding ``label``: ``v08..v12``."""
    k = series.segment_of(label)
    if k is None:
        return label
    seg = series.change.segments[k]
    return _span([seg.first_label, seg.last_label]) if seg.n_labels > 1 else seg.first_label


def change_estimand(series: Series, c: Any) -> str:
    """What a change point's ratio compares: ``level of v08..v12 over that of v01..v07
    (Hodges-Lehmann ratio of the labels' geometric means)``."""
    return (f"level of {segment_span(series, c.label)} over that of "
            f"{segment_span(series, c.label_before)} (Hodges-Lehmann ratio of the labels' "
            f"{'geometric means' if series.change.ci_unit == 'label' else 'runs'})")


def change_and_gate(analysis: HistoryAnalysis, items: Sequence[HistoryGate]) -> pd.DataFrame:
    """One row per change point with the gate of the same label: the two numbers a history
    gives for one change, each with what it estimates, and why they differ.

    The change point's ratio is the shift of the level (every label of the segment it starts
    against every label of the segment before); the gate's is the label's own runs against
    its baseline's runs (the question a CI job asks on the day). They differ when the label
    sits above or below its new segment's level, or the runs before drifted: the level's
    shift is the size of the change, the gate the label's verdict."""
    u = analysis.metric.suffix
    gated = {(tuple(g.key), g.label): g for g in items}
    records = []
    for s in analysis.series:
        medians = {p.label: p.median for p in s.points}
        for c in s.change.change_points:
            g = gated.get((tuple(s.key), c.label))
            gate_row = g.result.rows[0] if g is not None and g.result.rows else None
            row = gate_row.row if gate_row is not None else None
            rec: dict[str, Any] = {"metric": analysis.metric.name}
            rec.update({k: plain(v) for k, v in zip(analysis.keys, s.key, strict=True)})
            gate_ratio = row.comparison.ratio if row is not None else math.nan
            rec.update({
                "label": c.label,
                "change_point_estimand": change_estimand(s, c),
                "change_point_ratio": c.ratio, "change_point_ratio_ci_low": c.ratio_ci_low,
                "change_point_ratio_ci_high": c.ratio_ci_high,
                "gate_estimand": (f"{c.label}'s runs over those of {_span(g.baseline)} "
                                  "(Hodges-Lehmann ratio of runs)" if g is not None else ""),
                "gate_ratio": gate_ratio,
                "gate_ratio_ci_low": row.comparison.ratio_ci_low if row else math.nan,
                "gate_ratio_ci_high": row.comparison.ratio_ci_high if row else math.nan,
                f"label_median{u}": medians.get(c.label, math.nan),
                f"segment_median{u}": c.median_after,
                f"baseline_median{u}": c.median_before,
                "why_they_differ": _why_differ(c, g, medians, u, analysis.metric.unit)})
            records.append(rec)
    return pd.DataFrame.from_records(records)


def _why_differ(c: Any, g: HistoryGate | None, medians: dict, u: str, unit: str) -> str:
    if g is None:
        return "no gate of this label"
    mine, level = medians.get(c.label, math.nan), c.median_after
    where = ("above" if mine > level else "below") if mine == mine and level == level else ""
    at = (f"{c.label}'s median ({mine:.3g} {unit}) lies {where} its segment's "
          f"({level:.3g} {unit})" if where else "")
    parts = [f"the change point sizes the shift of the level (every label of the new segment "
             f"against every label before it); the gate compares {c.label}'s runs alone with "
             f"the runs of {_span(g.baseline)}", at]
    return "; ".join(p for p in parts if p)


def series_verdict(series: Series) -> HistoryVerdict:
    """Where the series' metric changed: ``change`` when a change point is supported (its
    ratio's interval excludes 1) or the newest labels stepped (:attr:`Series.recent`),
    ``weak change`` when every one found is weakly supported, ``no change`` when none was
    found."""
    points = series.change.change_points
    if any(c.supported for c in points) or (series.recent and series.recent.significant):
        return HistoryVerdict.CHANGE
    return HistoryVerdict.WEAK_CHANGE if points else HistoryVerdict.NO_CHANGE


def recent_verdict(recent: RecentStep) -> str:
    """A recent-step test's verdict: ``change`` (significant), ``no change``, or ``not
    testable`` (too few labels before the newest: :attr:`RecentStep.reason`)."""
    if not recent.tested:
        return Verdict.NOT_TESTABLE
    return HistoryVerdict.CHANGE if recent.significant else HistoryVerdict.NO_CHANGE


def series_keys(history: Experiment, rows: RunSet, by: Any = "auto") -> list[str]:
    """The columns a history's series are split by: by default the load columns that vary."""
    if by != "auto":
        keys, _ = row_keys([rows], by)
        return keys
    return [c for c in LOAD_COLUMNS if c in rows.frame
            and rows.frame[c].astype(str).nunique(dropna=False) > 1]


def analyse(history: Experiment, metric: Metric, *, by: Any = "auto",
            where: dict | None = None, alpha: float = 0.05, confidence: float = 0.95,
            permutations: int = 199, seed: int = 0,
            levels: dict[tuple, float] | None = None) -> HistoryAnalysis:
    """The series of ``metric`` per load level with its change points (module docstring).
    ``levels`` gives a load level's (a series key's) change points a level of their own
    (:func:`perfkit.analysis.history._metrics.analyse_metrics`: Holm over the metrics); the
    others, and every recent-step test, are at ``alpha``."""
    rows = history_rows(history, where)
    if metric.name not in rows.frame:
        raise DataError(f"no column {metric.name!r} in the history {history.name}")
    keys = series_keys(history, rows, by)
    labels = labels_of(history)
    series = []
    for key in _levels(rows, keys):
        part = _where(rows, keys, key)
        at = part.frame.groupby("label", sort=False, dropna=False).indices
        found = [_point(_take(part, np.asarray(at[label])), label, metric, confidence)
                 for label in labels if label in at]
        points = [p for p in found if p is not None]
        cps = change_points([list(p.values) for p in points], [p.label for p in points],
                            alpha=(levels or {}).get(key, alpha), permutations=permutations,
                            confidence=confidence,
                            lower_is_better=metric.lower_is_better, seed=seed)
        used = [p for p in points if p.values]  # the labels the change points analysed
        recent = recent_step([p.values for p in used], [p.label for p in used],
                             [c.index for c in cps.change_points], alpha=alpha)
        series.append(Series(key, tuple(points), cps, recent))
    notes = list(history.design["history"].get("warnings", []))
    notes += _point_notes(metric, series)
    notes += [u for u in (s.unseen() for s in series) if u]
    fixed = tuple((k, v) for k, v in load_point(rows).items() if k not in keys)
    return HistoryAnalysis(history.name, metric, tuple(keys), tuple(series), confidence, alpha,
                           tuple(dict.fromkeys(notes)), fixed)


def _levels(rows: RunSet, keys: Sequence[str]) -> list[tuple]:
    if not keys:
        return [()]
    levels = rows.frame[list(keys)].drop_duplicates()
    return sorted((tuple(plain(v) for v in r) for r in levels.itertuples(index=False)),
                  key=lambda t: tuple((0, v) if isinstance(v, int | float) else (1, str(v))
                                      for v in t))


def _where(rows: RunSet, keys: Sequence[str], key: tuple) -> RunSet:
    return rows.where({k: [level_text(v)] for k, v in zip(keys, key, strict=True)})


def _take(rows: RunSet, positions: np.ndarray) -> RunSet:
    """The rows at ``positions`` (ascending), as :meth:`RunSet.subset` of their mask gives
    them: one label's runs taken by their positions, not by a mask over every run, so that a
    series of L labels costs O(runs), not O(L x runs)."""
    return RunSet(rows.frame.iloc[positions].reset_index(drop=True),
                  tuple(rows.runs[i] for i in positions), rows.label, rows.factors)


def _point(rows: RunSet, label: str, metric: Metric, confidence: float) -> Point | None:
    if not len(rows):
        return None
    time_utc = str(rows.frame["time_utc"].iloc[0])
    rows, unmeasured = measured_rows(rows, metric)
    if not len(rows):
        return Point(label, time_utc, 0, 0, math.nan, math.nan, math.nan, math.nan, (),
                     tuple(unmeasured))
    values = rows.values(metric.name)
    worst = ranked_worst(run_statuses(rows, metric), metric) | ~np.isfinite(values)
    kept = worst | (values > 0)  # a finished value <= 0 has no log: left out, as before
    ranked = np.where(worst, math.inf if metric.lower_is_better else -math.inf, values)[kept]
    finished = values[kept & ~worst]
    if not len(ranked):
        return Point(label, time_utc, len(rows), int(worst.sum()), math.nan, math.nan,
                     math.nan, math.nan, (), tuple(unmeasured))
    ci = median_ci(ranked, confidence)
    none = ci.low == -math.inf and ci.high == math.inf  # too few runs for any interval
    return Point(label, time_utc, len(rows), int(worst.sum()), ci.estimate,
                 math.nan if none else ci.low, math.nan if none else ci.high,
                 math.nan if none else ci.achieved_confidence,
                 tuple(float(v) for v in finished), (*ci.warnings, *unmeasured))


def _point_notes(metric: Metric, series: Sequence[Series]) -> list[Warn]:
    """What the points' intervals cover, and how failed runs entered them, once per kind."""
    found: dict[Warn, list[str]] = {}
    for s in series:
        for p in s.points:
            for w in p.warnings:
                found.setdefault(w, []).append(p.label)
    notes = [Warn(Code.OF_LABELS, labels=tuple(dict.fromkeys(labels)), warning=w)
             for w, labels in found.items()]
    failed = [p.label for s in series for p in s.points if p.n_failed]
    if failed:
        notes.append(Warn(Code.LABELS_RUNS_FAILED,
                          runs=sum(p.n_failed for s in series for p in s.points),
                          labels=tuple(dict.fromkeys(failed)), metric=metric.name))
    return notes


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


def latest_gates(items: Sequence[HistoryGate]) -> list[HistoryGate]:
    """At every load level, the gate of its newest gated label (in the order of ``items``, as
    :func:`gates` lists them: one per load level, whatever its verdict)."""
    newest: dict[tuple, HistoryGate] = {}
    for item in items:
        newest[tuple(item.key)] = item  # gates lists each level's labels in series order
    return list(newest.values())


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
