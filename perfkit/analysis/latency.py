"""Latency percentiles of configurations at a load point: which runs count, and a cell's value.

Runs are grouped into configurations by the ``by`` columns (:func:`group_runs`); a
configuration at the selected load point is a cell. Every run gets its status for the
percentile shown (:func:`perfkit.analysis.core._runstatus.percentile_statuses`: among its peers, the
runs of the same factors and load; judged on that percentile's column, else on p99), and a
cell's value follows **one rule**, the one :func:`perfkit.analysis.scaling._scaling.slo_brackets`
applies to the same cell and percentile (so the latency page, the SLO table and the heat map
print the same number):

- ``failed`` runs (the tool failed, every response failed, no value) are left out of the
  estimate, with a warning; the SLO verdict fails their rate;
- ``no data`` runs (their tool never printed the percentile: wrk without ``--latency``, wrk's
  p99.9) are left out too, named, and fail nothing: not measuring is not failing;
- ``saturated`` runs (wrk2 far below its target, or below it with a latency above its kept-up
  peers') keep their measured value: wrk2's corrected latency is the latency at the offered
  rate, queueing included. A warning says the configuration did not sustain the rate there;
  the SLO verdict fails it;
- ``short`` runs (the generator fell slightly short, latency like its peers') keep their
  value, with a warning;
- the value is the across-runs estimate of :func:`perfkit.stats.percentile_ci_across_runs`:
  from 5 runs the **median of the per-run percentiles** (:data:`perfkit.stats.ESTIMAND`) with
  an order-statistic interval; with 2-4 runs the geometric mean of the per-run percentiles
  (the median run's under a log-normal spread) with a t interval on logs and a warning
  (method :data:`perfkit.stats.FEW_RUNS_METHOD`); one run, its value and no interval. Every
  sentence that says which is written from the estimates' own methods
  (:meth:`LatencyTable.value_text`, :func:`perfkit.stats.acrossruns.value_text`).

A spectrum (:func:`spectrum`) applies the rule at every percentile of :data:`SPECTRUM_GRID`
that every run of the configuration holds :data:`~perfkit.stats._perrun.MIN_TAIL_REQUESTS`
requests beyond.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from perfkit.analysis.compare import Cell, ComparisonTable, compare_cells
from perfkit.analysis.core import (
    FAILED,
    NO_DATA,
    NOT_ESTIMABLE_COLUMN,
    PARTIAL,
    SATURATED,
    SHORT,
    RunJudgement,
    RunSet,
    json_records,
    judge_interval,
    load_point,
    metric,
    peer_columns,
    percentile_statuses,
)
from perfkit.formatting import level_text
from perfkit.histogram import LatencyHistogram
from perfkit.model import Run, percentile_column
from perfkit.stats import (
    FEW_RUNS_METHOD,
    PercentileCI,
    per_run_percentiles_ms,
    percentile_ci_across_runs,
)
from perfkit.stats import quantile_ci as quantile_ci  # re-exported: the pages' within-run CI
from perfkit.stats._perrun import MIN_TAIL_REQUESTS
from perfkit.stats.acrossruns import FEW_RUNS, runs_text, value_text
from perfkit.stats.acrossruns import interval_text as interval_text  # re-exported for the pages
from perfkit.stats.coding import code_factor
from perfkit.warning import Code, Warn, texts

#: the rule of :func:`perfkit.stats.percentile_ci_across_runs` for every number of runs
RULE_TEXT = (f"The rule: from {FEW_RUNS} runs per configuration the median of the runs' "
             f"percentiles with an order-statistic interval; with 2-{FEW_RUNS - 1} runs their "
             "geometric mean (the median run's under a log-normal run-to-run spread) with a t "
             "interval on logs; with one run its value and no interval.")
#: percentiles drawn for a spectrum: dense enough for a smooth line on the tail axis
SPECTRUM_GRID = (10.0, 25.0, 50.0, 68.4, 80.0, 90.0, 95.0, 96.8, 98.0, 99.0, 99.5, 99.68, 99.8,
                 99.9, 99.95, 99.968, 99.98, 99.99, 99.995, 99.998, 99.999)
#: each status that is not ``ok``: what it is, and what it does to a cell (its warning)
#: the run statuses an estimate names its runs of (:attr:`Code.ESTIMATE_RUNS_STATUS`)
NAMED_STATUSES = (FAILED, NO_DATA, SATURATED, SHORT, PARTIAL)


def histogram_grid(hist: LatencyHistogram) -> list[float]:
    """The percentiles of :data:`SPECTRUM_GRID` that ``hist`` resolves: at least
    ``MIN_TAIL_REQUESTS`` requests beyond each."""
    top = hist.total_count / MIN_TAIL_REQUESTS
    return [q for q in SPECTRUM_GRID if 1.0 / (1.0 - q / 100.0) <= top]


def spectrum_grid(runs: Sequence[Run]) -> list[float]:
    """Percentiles that every run of ``runs`` resolves (their printed ones without histograms)."""
    hists = [r.histogram for r in runs if r.histogram is not None and r.histogram.total_count]
    if not hists or len(hists) < len(runs):
        return sorted({q for r in runs for q in r.percentiles_ms if q < 100})
    return histogram_grid(min(hists, key=lambda h: h.total_count))


@dataclasses.dataclass(frozen=True)
class ConfigRuns:
    """The runs of one configuration at the load point; ``cells`` the columns of their peers."""

    label: str
    rows: RunSet
    cells: tuple[str, ...]

    @property
    def runs(self) -> tuple[Run, ...]:
        return self.rows.runs

    def statuses(self, q: float) -> list[RunJudgement]:
        """Each run's status for percentile ``q`` (aligned with :attr:`runs`)."""
        return percentile_statuses(self.rows, q, self.cells)

    def items(self, q: float, statuses: Sequence[RunJudgement] | None = None) -> list[Run | None]:
        """What the estimate of percentile ``q`` is built on: each run, None for a failed one
        or one that did not measure it (aligned with :attr:`runs`)."""
        statuses = self.statuses(q) if statuses is None else statuses
        return [None if s.status in (FAILED, NO_DATA) else r
                for r, s in zip(self.runs, statuses, strict=True)]

    def values_ms(self, q: float) -> np.ndarray:
        """Each run's percentile ``q`` (ms) as the estimate uses it
        (:func:`perfkit.stats.per_run_percentiles_ms`: the one the tool printed, else its
        histogram's; NaN for a failed run), aligned with :attr:`runs`: the value a figure
        draws for a run."""
        return per_run_percentiles_ms(self.items(q), q)


@dataclasses.dataclass(frozen=True, eq=False)
class RunGroups(Mapping):
    """The configurations compared, read as a mapping ``label -> runs`` in label order."""

    configs: tuple[ConfigRuns, ...]
    by: tuple[str, ...]
    #: the load columns that hold one value in every run compared (``target_rate_rps``,
    #: ``connections``...): the load point, a column of every table of these groups
    load: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    def with_load(self, frame: pd.DataFrame) -> pd.DataFrame:
        """``frame`` with the load point's columns after ``config`` (a table read apart
        from its caption still says at which load its numbers hold)."""
        frame = frame.copy()
        at = list(frame.columns).index("config") + 1 if "config" in frame else 0
        for i, (col, value) in enumerate(self.load.items()):
            if col not in frame:
                frame.insert(at + i, col, [value] * len(frame))
        return frame

    def __getitem__(self, label: str) -> tuple[Run, ...]:
        return self.config(label).runs

    def __iter__(self) -> Iterator[str]:
        return iter(c.label for c in self.configs)

    def __len__(self) -> int:
        return len(self.configs)

    def config(self, label: str) -> ConfigRuns:
        for c in self.configs:
            if c.label == label:
                return c
        raise KeyError(label)

    def to_frame(self, q: float = 99.0) -> pd.DataFrame:
        """Per configuration: its runs, tools, fewest requests, and its runs' statuses at
        percentile ``q``."""
        rows = []
        for c in self.configs:
            counts = [r.histogram.total_count for r in c.runs if r.histogram is not None]
            statuses = [s.status for s in c.statuses(q)]
            rows.append({
                "config": c.label, "runs": len(c.runs),
                "tool": ", ".join(sorted({r.tool for r in c.runs})),
                "requests_min": min((r.requests for r in c.runs if r.requests is not None),
                                    default=None),
                "histogram_requests_min": min(counts) if counts else None,
                "failed_runs": statuses.count(FAILED),
                "saturated_runs": statuses.count(SATURATED),
                "short_runs": statuses.count(SHORT)})
        return self.with_load(pd.DataFrame(rows))

    def notes(self) -> list[Warn]:
        """What the tools and their outputs imply for every latency of these runs."""
        return tool_notes([r for c in self.configs for r in c.runs])


def tool_notes(runs: Sequence[Run]) -> list[Warn]:
    """What the tools and their outputs imply for the latencies of ``runs``: a closed loop
    (coordinated omission), wrk2's histogram of the post-calibration part only."""
    out = []
    closed = sorted({r.tool for r in runs if r.closed_loop})
    if "wrk" in closed:
        out.append(Warn(Code.LATENCIES_WRK_CLOSED_LOOP))
    others = [t for t in closed if t != "wrk"]
    if others:
        out.append(Warn(Code.LATENCIES_CLOSED_LOOP, tools=others))
    partial = [r for r in runs if any(n.code is Code.HISTOGRAM_PARTIAL for n in r.notes)]
    if partial:
        # "N of M": the rows a caveat affects and the page's tables count the same runs
        wrk2 = sum(r.tool == "wrk2" for r in runs)
        out.append(Warn(Code.LATENCIES_HISTOGRAM_PARTIAL, runs=len(partial), wrk2=wrk2))
    return out


def group_runs(rows: RunSet, by: Sequence[str] | str) -> RunGroups:
    """The runs of ``rows`` grouped by their ``by`` values (label ``"tuned, 64"``; no column:
    ``"all runs"``), in label order, each run's peers judged among its factors and load."""
    by = [by] if isinstance(by, str) else list(by)
    cols = [c for c in by if c in rows.frame]
    labels = [", ".join(level_text(v) for v in r) or "all runs"
              for r in rows.frame[cols].itertuples(index=False)] if cols \
        else ["all runs"] * len(rows)
    cells = tuple(peer_columns(rows, cols))
    configs = [ConfigRuns(label, rows.subset([x == label for x in labels]), cells)
               for label in sorted(set(labels))]
    return RunGroups(tuple(configs), tuple(by), load_point(rows))


@dataclasses.dataclass(frozen=True)
class LatencyEstimate:
    """One cell's percentile under the rule, with its runs' status counts."""

    config: str
    ci: PercentileCI
    statuses: tuple[RunJudgement, ...]
    #: each run's percentile (ms) as the estimate uses it, aligned with ``statuses``
    values_ms: tuple[float, ...] = ()

    def count(self, status: str) -> int:
        """Runs of this status (a run whose tool never printed the percentile, wrk's p99.9,
        is ``no data``, not failed)."""
        return sum(s.status == status for s in self.statuses)

    @property
    def not_estimable(self) -> str:
        """Why the interval may not be printed (:func:`perfkit.analysis.core._intervals.judge`:
        ends more than 100x apart, or resting on a saturated run), else ``""``."""
        ci = self.ci
        doubtful = [v for v, s in zip(self.values_ms, self.statuses, strict=False)
                    if s.status == SATURATED]
        return judge_interval(ci.low_ms, ci.high_ms, n_saturated=self.count(SATURATED),
                               n_runs=ci.n_runs, every_run_counts=ci.method == FEW_RUNS_METHOD,
                               doubtful_values=doubtful)

    @property
    def has_data(self) -> bool:
        """False when no run has the percentile (never measured, or every run failed)."""
        return self.ci.n_runs > 0 and self.ci.estimate_ms == self.ci.estimate_ms

    def interval_ms(self) -> tuple[float, float]:
        """The interval as tables print it: missing when not estimable or without data."""
        if self.not_estimable or not self.has_data:
            return float("nan"), float("nan")
        return self.ci.low_ms, self.ci.high_ms

    def to_record(self) -> dict[str, Any]:
        ci = self.ci
        low, high = self.interval_ms()
        data = self.has_data
        return {"config": self.config, "percentile": float(ci.q),
                "n_runs": ci.n_runs if data else None,
                "latency_ms": ci.estimate_ms if data else float("nan"), "ci_low_ms": low,
                "ci_high_ms": high, NOT_ESTIMABLE_COLUMN: self.not_estimable,
                "method": ci.method if data else NO_DATA, "estimand": ci.estimand,
                "n_failed": self.count(FAILED), "n_saturated": self.count(SATURATED),
                "n_short": self.count(SHORT), "warnings": "; ".join(texts(ci.warnings))}


def estimate(config: ConfigRuns, q: float, confidence: float = 0.95, seed: int | None = 0,
             n_resamples: int = 2000) -> LatencyEstimate:
    """The rule of the module docstring for one configuration and percentile ``q`` (0-100)."""
    statuses = config.statuses(q)
    items = config.items(q, statuses)
    ci = percentile_ci_across_runs(items, q, confidence, seed, n_resamples=n_resamples)
    values = tuple(float(v) for v in per_run_percentiles_ms(items, q))
    return LatencyEstimate(config.label, ci, tuple(statuses), values)


@dataclasses.dataclass(frozen=True)
class LatencyTable:
    """The percentiles of every configuration (``groups``) under one rule."""

    groups: RunGroups
    estimates: tuple[LatencyEstimate, ...]
    confidence: float
    warnings: tuple[Warn, ...] = ()

    def found(self) -> list[tuple[str, int]]:
        """``(method, n_runs)`` of every estimate: what :func:`perfkit.stats.acrossruns.
        value_text` words."""
        return [(e.ci.method, e.ci.n_runs) for e in self.estimates if e.has_data]

    def value_text(self, what: str = "percentiles") -> str:
        """What these estimates are, each method named once (``"the geometric mean of the 3
        runs' percentiles (the median run's under a log-normal run-to-run spread)"``)."""
        return value_text(self.found(), what)

    def describe(self) -> str:
        """The method, in a sentence a reader can paste into a paper: what the values shown
        are (from the estimates' own methods), then the rule for other run counts."""
        return (f"Latency percentiles were estimated across runs from each run's own "
                f"percentile (requests were never pooled over runs): each value shown is "
                f"{self.value_text()}, with {self.confidence:.0%} "
                f"{interval_text(self.found())}. {RULE_TEXT} Runs that failed were left out; "
                "runs that did not sustain their offered rate were kept and named.")

    def warnings_of(self, e: LatencyEstimate) -> tuple[Warn, ...]:
        """The warnings that travel with one estimate: what its runs' tools imply (a closed
        loop, wrk2's calibration), its runs' statuses and its interval's own (too few runs for
        a distribution-free interval...)."""
        runs = self.groups[e.config]
        return tuple(dict.fromkeys([*tool_notes(runs), *_status_notes(e, runs),
                                    *e.ci.warnings]))

    def block_treatment(self) -> tuple[str, str, bool]:
        """How this result treats an experiment's blocks: what it is, of what, and
        whether it models them (:func:`perfkit.analysis.context._validity.block_treatment`)."""
        return "the across-run percentile intervals", "", False

    def to_frame(self) -> pd.DataFrame:
        """One row per configuration and percentile: the estimate, its interval, method and
        estimand, the runs' status counts and the warnings."""
        cols = ["config", "percentile", "n_runs", "latency_ms", "ci_low_ms", "ci_high_ms",
                NOT_ESTIMABLE_COLUMN, "method", "estimand", "n_failed", "n_saturated",
                "n_short", "warnings"]
        return self.groups.with_load(
            pd.DataFrame([e.to_record() for e in self.estimates], columns=cols))

    def to_dict(self) -> dict[str, Any]:
        return {"by": list(self.groups.by), "confidence": self.confidence,
                "estimand": self.value_text(),
                "warnings": [w.to_dict() for w in self.warnings],
                "selection": json_records(self.groups.to_frame()),
                "percentiles": json_records(self.to_frame())}


def percentiles(groups: RunGroups, qs: Sequence[float] = (50.0, 99.0, 99.9),
                confidence: float = 0.95, seed: int | None = 0,
                n_resamples: int = 2000) -> LatencyTable:
    """Every configuration's percentiles ``qs`` (0-100) under the rule."""
    found = [estimate(c, float(q), confidence, seed, n_resamples)
             for c in groups.configs for q in qs]
    return LatencyTable(groups, tuple(found), confidence, _warnings(groups, found))


def spectrum(groups: RunGroups, confidence: float = 0.95, seed: int | None = 0,
             n_resamples: int = 2000) -> LatencyTable:
    """Every configuration's spectrum: the rule at each percentile of its
    :func:`spectrum_grid`."""
    found = [estimate(c, q, confidence, seed, n_resamples)
             for c in groups.configs for q in spectrum_grid(c.runs)]
    return LatencyTable(groups, tuple(found), confidence, _warnings(groups, found))


def _status_notes(e: LatencyEstimate, runs: Sequence[Run]) -> list[Warn]:
    out = []
    for status in NAMED_STATUSES:
        named = tuple((str(r.run_id or r.source), s.reason)
                      for r, s in zip(runs, e.statuses, strict=True) if s.status == status)
        if named:
            out.append(Warn(Code.ESTIMATE_RUNS_STATUS, config=e.config, status=status,
                            runs=named, of=len(e.statuses)))
    return out


def _warnings(groups: RunGroups, found: Sequence[LatencyEstimate]) -> tuple[Warn, ...]:
    out = groups.notes()
    for e in found:
        out += _status_notes(e, groups[e.config])
    few = [(e.ci.method, e.ci.n_runs) for e in found if e.ci.method == FEW_RUNS_METHOD]
    if few:
        out.append(Warn(Code.ESTIMATES_FEW_RUNS, runs=runs_text([n for _, n in few]),
                        estimate=value_text(few), least=FEW_RUNS))
    return tuple(dict.fromkeys(out))


def compare_configs(groups: RunGroups, q: float = 99.0, *, alpha: float = 0.05,
                    confidence: float = 0.95) -> ComparisonTable | None:
    """The two configurations of ``groups`` compared on percentile ``q`` by the comparison
    rule (:func:`perfkit.analysis.compare._compare.compare_cells`: Hodges-Lehmann ratio, Moses
    interval, exact Mann-Whitney U, run statuses): the base is the configuration whose label
    means "not applied" (``default``, ``off``: :mod:`perfkit.stats.coding`'s rule), else the
    first. With too few runs to reach ``alpha`` the row's verdict is ``not testable`` and
    :meth:`~perfkit.analysis.compare._compare.ComparisonTable.not_testable_note` says how many runs
    per arm would be needed (3 vs 3 runs: the smallest p is 0.1, so 4 per arm). None unless there
    are exactly two configurations."""
    if len(groups.configs) != 2:
        return None
    labels = [c.label for c in groups.configs]
    coded = code_factor(pd.Series(labels), "configuration")[1]
    base, new = (groups.config(coded["low"]), groups.config(coded["high"]))
    column = percentile_column(q)
    name = column if column in base.rows.frame else None
    if name is None:
        return None
    base_rows = dataclasses.replace(base.rows, label=base.label)
    new_rows = dataclasses.replace(new.rows, label=new.label)
    return compare_cells([Cell((), base_rows, new_rows)], metric(name), (), base.label,
                         new.label, alpha=alpha, confidence=confidence)
