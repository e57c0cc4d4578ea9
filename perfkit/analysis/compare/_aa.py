"""The A/A experiment: the same configuration in both arms, so every "difference" is noise.

:func:`aa_calibration` gives, on the real runs of an A/A experiment,

- the **designed comparison**, arm against arm, per metric: :func:`compare_runs`, the same
  table as ``perfkit compare EXP::ARM=A EXP::ARM=B``;
- two empirical **false-positive rates**:

  - *runs as the unit* (perfkit's way): within each load level (the arms pooled: they are one
    configuration), the runs are split at random into two disjoint groups of ``k`` runs
    (seeded), and each split is compared as :func:`compare_runs` compares a row: every run has
    its status from the run-status rule (:mod:`perfkit.analysis.core._runstatus`, judged against
    the level's other runs), failed and saturated runs rank worst where the metric says so
    (:func:`perfkit.analysis.compare._compare.ranked_worst`; a run without a value always does), and
    the verdict rule (:func:`perfkit.analysis.compare._compare.verdict`, one comparison) counts the
    split as significant when it says ``better`` or ``worse``. Its rate should stay near
    ``alpha``. Splits too small to reach alpha are not counted as tested.
  - *requests as the unit* (the common mistake): every pair of runs of a load level is
    compared with a Welch z-test on mean latency that treats each request as an independent
    observation (mean, standard deviation and request count as the tool printed them).
    Failed and saturated runs are left out: their mean is not the server's. Requests inside a
    run are autocorrelated and runs differ by more than request noise, so this test calls most
    A/A pairs "significant".

The splits overlap (200 splits of 20 runs share their runs, and the pairs share runs too), so
a rate is descriptive, not a binomial proportion of independent trials: no interval is given,
since a binomial one would be far too narrow (issue 14). A rate is read against the **size**
its test has when nothing differs (:meth:`AAResult.size`): the exact Mann-Whitney test's
p-values are discrete, so at 5 vs 5 runs and alpha 0.05 it rejects 8 of the 252 rank splits,
a size of 0.0317, not 0.05 (:func:`perfkit.stats.mannwhitney.attainable_size`); the
request-level Welch z-test's is alpha. A rate *holds its size* when it is at most
:data:`HOLDS_FACTOR` x that size, a tolerance for the spread of such a descriptive rate, not a
test.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from perfkit.analysis.compare._compare import (
    BETTER,
    WORSE,
    ComparisonTable,
    cell_runs,
    compare_runs,
    ranked_worst,
    row_labels,
    verdict,
)
from perfkit.analysis.core import (
    Metric,
    RunSet,
    json_records,
    load_point,
    measured_rows,
    metric,
    row_keys,
    run_statuses,
)
from perfkit.errors import UsageError
from perfkit.formatting import level_text
from perfkit.stats import compare
from perfkit.stats._dist import norm_sf
from perfkit.stats.mannwhitney import attainable_size, min_attainable_p, runs_to_reach_alpha
from perfkit.warning import Code, Warn
from perfkit.wording import at_words

#: a rate holds its test's size when it is at most this many times it (a descriptive tolerance)
HOLDS_FACTOR = 2.0
#: the tests whose rates are measured: per-run Mann-Whitney U over k vs k runs, and the
#: request-level Welch z-test over a pair of runs (one run per arm)
MANN_WHITNEY, WELCH_Z = "Mann-Whitney U", "Welch z"
#: the column the request-level test reads (mean, sd and count as the tool printed them)
REQUEST_METRIC = "latency_mean_ms"


@dataclasses.dataclass(frozen=True)
class FalsePositiveRate:
    """One test's empirical false-positive rate: ``significant`` of ``comparisons``.

    ``test`` names the test alone (``"Mann-Whitney U"``), ``runs_per_arm`` the runs each side
    of a comparison holds (5 for 5 vs 5 runs; 1 for the request-level test, run vs run)."""

    test: str
    runs_per_arm: int
    unit: str
    metric: str
    comparisons: int
    significant: int

    @property
    def design(self) -> str:
        """``"5 vs 5 runs"``, ``"run vs run"``: the comparison's design in words."""
        k = self.runs_per_arm
        return "run vs run" if k == 1 else f"{k} vs {k} runs"

    @property
    def rate(self) -> float:
        """The share called significant (NaN when nothing was tested)."""
        return self.significant / self.comparisons if self.comparisons else math.nan


@dataclasses.dataclass(frozen=True)
class AAResult:
    """The A/A experiment ``name``: the designed comparisons and the false-positive rates."""

    name: str
    arm: str
    alpha: float
    runs_per_arm: int
    n_splits: int
    seed: int
    n_runs: int
    designed: tuple[ComparisonTable, ...]
    rates: tuple[FalsePositiveRate, ...]
    warnings: tuple[Warn, ...] = ()
    #: the load columns that hold one value in every run (``(("connections", 64), ...)``)
    load_point: tuple[tuple[str, Any], ...] = ()

    def load_text(self) -> str:
        """``"connections = 64, threads = 2"``: the load point of every run (empty if none)."""
        return ", ".join(f"{k} = {level_text(v)}" for k, v in self.load_point)

    def size(self, rate: FalsePositiveRate) -> float:
        """The size ``rate``'s test has at alpha when nothing differs: the exact Mann-Whitney
        test's attainable size at its runs per arm (below alpha: its p-values are discrete),
        alpha for the request-level z-test (module docstring)."""
        if rate.test == MANN_WHITNEY:
            k = rate.runs_per_arm
            return attainable_size(k, k, self.alpha)
        return self.alpha

    def holds_size(self, rate: FalsePositiveRate) -> bool | None:
        """Whether ``rate`` is at most :data:`HOLDS_FACTOR` x its test's :meth:`size` (None:
        nothing tested)."""
        return None if not rate.comparisons else rate.rate <= HOLDS_FACTOR * self.size(rate)

    def holds(self, test: str) -> bool | None:
        """Whether every tested rate of ``test`` holds its size (None: nothing tested)."""
        found = [self.holds_size(r) for r in self.rates if r.test == test and r.comparisons]
        return all(found) if found else None

    def holds_verdict(self, test: str) -> str:
        """The verdict on ``test``'s rates with its rule in the words: ``"holds its size (rate
        <= 2 x 0.0317)"``, ``"exceeds its size (rate > 2 x 0.05)"``, or ``"not tested"``."""
        holds = self.holds(test)
        if holds is None:
            return "not tested"
        size = next(self.size(r) for r in self.rates if r.test == test and r.comparisons)
        rule = f"{HOLDS_FACTOR:g} x {size:.3g}"
        return f"holds its size (rate <= {rule})" if holds else f"exceeds its size (rate > {rule})"

    def holds_rule(self) -> str:
        """The rule behind :meth:`holds_verdict`, for a caption or a caveat."""
        sizes = "; ".join(dict.fromkeys(
            f"{r.test} at {r.design}: {self.size(r):.3g}" for r in self.rates if r.comparisons))
        return (f"a rate holds its test's size when it is at most {HOLDS_FACTOR:g} x the size "
                f"the test has at alpha {self.alpha:g} when nothing differs ({sizes}; an exact "
                "test's discrete p-values keep its size below alpha): a descriptive tolerance "
                "for a rate over overlapping splits, not a test")

    def describe(self) -> str:
        """The method, in a sentence a reader can paste into a paper."""
        k = self.runs_per_arm
        at = f" at {self.load_text()}" if self.load_point else ""
        return (f"On the A/A experiment {self.name} ({self.n_runs} runs{at}, the same "
                f"configuration in both arms of {self.arm}), the empirical false-positive "
                f"rate at alpha {self.alpha:g} was measured over {self.n_splits} seeded random "
                f"splits of the runs into {k} vs {k} (Mann-Whitney U over per-run "
                f"{_names(r.metric for r in self.rates if r.unit == 'run')}, "
                f"failed runs ranked worst) and over every pair of runs with a Welch z-test on "
                f"mean latency that treats requests as independent; the comparisons share "
                f"runs, so the rates are descriptive and carry no binomial interval.")

    def block_treatment(self) -> tuple[str, str, bool]:
        """How this result treats an experiment's blocks: what it is, of what, and
        whether it models them (:func:`perfkit.analysis.context._validity.block_treatment`)."""
        return "the A/A false-positive rates (Mann-Whitney over random splits)", "", False

    def to_frame(self) -> pd.DataFrame:
        """One row per test and metric: ``test, runs_per_arm, unit, metric, comparisons,
        significant, rate, size`` (the test's own size at alpha), ``rate_over_size`` and
        ``holds_size`` (no interval: see the module docstring)."""
        return pd.DataFrame.from_records(
            [{"test": r.test, "runs_per_arm": r.runs_per_arm, "unit": r.unit,
              "metric": r.metric, "comparisons": r.comparisons, "significant": r.significant,
              "rate": r.rate, "size": self.size(r),
              "rate_over_size": r.rate / self.size(r) if r.comparisons else math.nan,
              "holds_size": self.holds_size(r)} for r in self.rates],
            columns=["test", "runs_per_arm", "unit", "metric", "comparisons", "significant",
                     "rate", "size", "rate_over_size", "holds_size"])

    def to_dict(self) -> dict[str, Any]:
        return {"experiment": self.name, "arm": self.arm, "alpha": self.alpha,
                "runs_per_arm": self.runs_per_arm, "n_splits": self.n_splits,
                "seed": self.seed, "n_runs": self.n_runs, "holds_factor": HOLDS_FACTOR,
                "load_point": dict(self.load_point),
                "warnings": [w.to_dict() for w in self.warnings],
                "rates": json_records(self.to_frame()),
                "designed": [t.to_dict() for t in self.designed]}


def designed_comparisons(rows: RunSet, arm: str, metrics: Sequence[str],
                         alpha: float = 0.05) -> list[ComparisonTable]:
    """The A/A comparison as designed (first arm level vs second), one table per metric: the
    same analysis as ``perfkit compare EXP::ARM=A EXP::ARM=B``."""
    levels = _arm_levels(rows, arm)
    a, b = (rows.where({arm: level_text(lv)}) for lv in levels)
    a = RunSet(a.frame, a.runs, f"{rows.label}::{arm}={level_text(levels[0])}", a.factors)
    b = RunSet(b.frame, b.runs, f"{rows.label}::{arm}={level_text(levels[1])}", b.factors)
    return [compare_runs(a, b, metric(m, rows.frame.columns), exclude=[arm], alpha=alpha)
            for m in metrics]


def aa_calibration(rows: RunSet, arm: str, metrics: Sequence[str], *, alpha: float = 0.05,
                   k: int = 5, n_splits: int = 200, seed: int = 0) -> AAResult:
    """The designed comparisons and false-positive rates of an A/A experiment (module
    docstring); ``rows`` are its analysis rows, ``arm`` the column naming the arms."""
    if k < 1 or n_splits < 1:
        raise UsageError(f"A/A: expected k >= 1 and n_splits >= 1, got {k} and {n_splits}")
    designed = designed_comparisons(rows, arm, metrics, alpha)
    keys, _ = row_keys([rows], "auto", [arm])
    cells = [cell_runs(rows, keys, key) for key in row_labels([rows], keys)]
    found: list[FalsePositiveRate] = []
    notes: list[Warn] = []
    for name in metrics:
        m = metric(name, rows.frame.columns)
        hits = tested = 0
        for cell in cells:
            cell, unmeasured = measured_rows(cell, m, _at(cell, keys).strip())
            notes += unmeasured
            if not len(cell):
                continue
            worst = ranked_worst(run_statuses(cell, m), m)
            h, t = split_false_positive_rate(cell.values(name), k, m, alpha, n_splits, seed,
                                             worst)
            hits, tested = hits + h, tested + t
            notes += _worst_note(cell, worst, name, keys)
        found.append(FalsePositiveRate(MANN_WHITNEY, k, "run", name, tested, hits))
    hits = tested = 0
    for cell in cells:
        kept = ~np.array([s.counts_as_failed for s in run_statuses(cell, _request_metric())],
                         dtype=bool)
        h, t = pooled_request_false_positive_rate(cell.frame[kept], alpha)
        hits, tested = hits + h, tested + t
        if not kept.all():
            notes.append(Warn(Code.AA_LEFT_OUT_OF_REQUEST_TEST, runs=int((~kept).sum()),
                              where=_where(cell, keys)))
    found.append(FalsePositiveRate(WELCH_Z, 1, "request", REQUEST_METRIC, tested, hits))
    notes += _size_notes(cells, k, alpha)
    notes.append(Warn(Code.AA_SPLITS_SHARE_RUNS, splits=n_splits))
    return AAResult(rows.label, arm, alpha, k, n_splits, seed, len(rows), tuple(designed),
                    tuple(found), tuple(dict.fromkeys(notes)), tuple(load_point(rows).items()))


def split_false_positive_rate(values: Sequence[float] | np.ndarray, k: int, m: Metric,
                              alpha: float = 0.05, n_splits: int = 200, seed: int = 0,
                              worst: Sequence[bool] | np.ndarray | None = None
                              ) -> tuple[int, int]:
    """(significant, tested) over ``n_splits`` random disjoint k-vs-k splits of ``values``.

    ``worst`` flags runs ranked worst whatever their value (:func:`ranked_worst`); a NaN
    value (a run without one) is ranked worst too, as :func:`perfkit.stats.compare` does. A
    split is significant when the verdict rule says ``better`` or ``worse``; with too few runs
    for two groups, or groups too small to reach alpha, nothing is tested: ``(0, 0)``.
    """
    values = np.asarray(values, dtype=float)
    worst = np.zeros(len(values), bool) if worst is None else np.asarray(worst, dtype=bool)
    if len(values) < 2 * k or not min_attainable_p(k, k) < alpha:
        return 0, 0
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(n_splits):
        order = rng.permutation(len(values))
        a, b = order[:k], order[k:2 * k]
        c = compare(values[a], values[b], alpha, lower_is_better=m.lower_is_better,
                    failed_base=worst[a], failed_new=worst[b])
        hits += verdict(c, c.p_value, m) in (BETTER, WORSE)
    return hits, n_splits


def pooled_request_false_positive_rate(frame: pd.DataFrame, alpha: float = 0.05
                                       ) -> tuple[int, int]:
    """(significant, tested) over every pair of runs, Welch z on mean latency per request."""
    cols = [REQUEST_METRIC, "latency_stdev_ms", "requests"]
    if any(c not in frame for c in cols):
        return 0, 0
    usable = frame.dropna(subset=cols)
    usable = usable[(usable["requests"].astype(float) > 1)]
    m = usable[REQUEST_METRIC].astype(float).to_numpy()
    s = usable["latency_stdev_ms"].astype(float).to_numpy()
    n = usable["requests"].astype(float).to_numpy()
    hits = tested = 0
    for i, j in itertools.combinations(range(len(usable)), 2):
        se = math.sqrt(s[i] ** 2 / n[i] + s[j] ** 2 / n[j])
        if se <= 0:
            continue
        p = 2 * norm_sf(abs(m[i] - m[j]) / se)
        hits += bool(p < alpha)
        tested += 1
    return hits, tested


def _arm_levels(rows: RunSet, arm: str) -> list[Any]:
    if arm not in rows.frame:
        raise UsageError(f"A/A: no column {arm!r} naming the arms")
    levels = sorted(rows.frame[arm].dropna().unique().tolist(), key=str)
    if len(levels) != 2:
        raise UsageError(f"A/A needs exactly two levels of {arm!r}, found {levels}")
    return levels


def _request_metric() -> Metric:
    return metric(REQUEST_METRIC)


def _worst_note(cell: RunSet, worst: np.ndarray, name: str, keys: Sequence[str]) -> list[Warn]:
    n = int((worst | np.isnan(cell.values(name))).sum())
    if not n:
        return []
    return [Warn(Code.AA_RANKED_WORST, metric=name, where=_where(cell, keys), runs=n)]


def _where(cell: RunSet, keys: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """The load level of ``cell``: ``(column, level)`` per key."""
    return tuple((k, level_text(cell.frame[k].iloc[0])) for k in keys)


def _at(cell: RunSet, keys: Sequence[str]) -> str:
    return at_words(_where(cell, keys))


def _size_notes(cells: Sequence[RunSet], k: int, alpha: float) -> list[Warn]:
    out = []
    if not min_attainable_p(k, k) < alpha:
        out.append(Warn(Code.AA_NOT_TESTED, runs=k, alpha=alpha,
                        need=runs_to_reach_alpha(alpha)))
    small = [len(c) for c in cells if len(c) < 2 * k]
    if small:
        out.append(Warn(Code.AA_LEVELS_NOT_SPLIT, levels=len(small), least=2 * k))
    return out


def _names(metrics) -> str:
    """``a, b and c`` of the distinct metric names."""
    names = list(dict.fromkeys(metrics))
    return " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names) or \
        "values"
