"""The value of a latency percentile for a configuration: the median run's, with its interval.

Each run is one replication (the method of independent replications: Law, *Simulation Modeling
and Analysis*, 5th ed., 2015, section 9.4). Each run reports its own percentile; the value
perfkit gives for a configuration is the **median of the per-run percentiles** (:data:`ESTIMAND`):
the percentile of the median run. Its interval comes from order statistics of the per-run
values, interpolated to the nominal coverage (:func:`perfkit.stats.orderstats.
interpolated_median_ci`; Hettmansperger and Sheather 1986).

Why this estimand:

- the same number whether the runs carry histograms (wrk2, Locust, hlog) or only printed
  percentiles (wrk prints p50/75/90/99): only the per-run values enter it;
- distribution-free: the coverage holds whatever the run-to-run spread (5% or 80%), heavy tails,
  pauses that put some runs' p99 inside a stall, or an occasional slow run (a neighbour on the
  host), cases where a t interval on log percentiles or a cluster bootstrap of the pooled
  percentile miss (benchmarks/calibration.py prints the comparison);
- one run at 1000 ms (a SYN retransmit, a saturated run) cannot drag it, unlike a mean;
- it is what :func:`perfkit.stats.compare` tests (medians of per-run values, Mann-Whitney).

Measured coverage of a nominal 95% (benchmarks/calibration.py, 2000 simulations per cell) lies
in [0.93, 0.97] for every scenario of issue 13 at 5, 10 and 30 runs; 5 runs give the range of
the runs, whose coverage is exactly 93.75%. Below 5 runs no order-statistic interval reaches
that coverage: with 2-4 runs the median run's percentile is estimated under a log-normal
run-to-run spread, as the geometric mean of the per-run values with a Student t interval on
their logs (method :data:`FEW_RUNS_METHOD`; value and interval share one centre), and a warning
says so; one run gives no interval, (0, inf).

Diagnostics travel as warnings: a percentile sitting on a jump of the runs' histograms (a pause
mode), runs with too few requests beyond the percentile, a trend with the run order, runs
without a value. ``method="t_log"`` (geometric mean of per-run percentiles, Student t on logs)
and ``method="cluster_bootstrap"`` (the percentile of all requests pooled) estimate other
quantities and say so in ``estimand``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from perfkit.histogram import check_percentile
from perfkit.stats._dist import t_ppf
from perfkit.stats._perrun import MIN_TAIL_REQUESTS, PerRun, per_run, stack_counts
from perfkit.stats.bootstrap import PercentileCI, check_confidence, cluster_bootstrap_quantile
from perfkit.stats.orderstats import interpolated_median_ci
from perfkit.warning import Code, Warn

#: what the default method estimates, for front ends to print next to the value
ESTIMAND = "median of per-run percentiles"
#: below this many runs no order-statistic interval reaches ~95%; the t interval warns
FEW_RUNS = 5
#: the ``method`` of a 2-4 run result: the median runs' estimate with a t interval on logs
FEW_RUNS_METHOD = "median_t_log"
METHODS = ("auto", "order_stats", "t_log", "cluster_bootstrap")
FAILED = ("exclude", "slowest")
#: per-run p(upper)/p(lower) around the percentile above which it sits on a jump (pause mode)
JUMP_RATIO = 4.0
#: level of the Kendall test of a trend of per-run values with the run order
DRIFT_ALPHA = 0.05


def estimand_label(q: float, method: str = "auto") -> str:
    """The ``estimand`` string of a result: ``"median of per-run p99"`` for the default."""
    if method in ("auto", "order_stats"):
        return f"median of per-run p{q:g}"
    if method == "t_log":
        return f"geometric mean of per-run p{q:g}"
    return f"p{q:g} of all requests pooled over runs (the mixture of runs)"


#: what the value of each method is, ``{runs}`` the runs it rests on, ``{what}`` what each
#: run gives ("percentiles", "p99"): the one wording every page and the Methods use
VALUE_WORDS = {
    "order_stats": "the median of the {runs} runs' {what}",
    FEW_RUNS_METHOD: ("the geometric mean of the {runs} runs' {what} (the median run's under a "
                      "log-normal run-to-run spread)"),
    "t_log": "the geometric mean of the {runs} runs' {what}",
    "cluster_bootstrap": "the {what} of all requests pooled over {runs} runs",
}
#: the interval each method gives
INTERVAL_WORDS = {
    "order_stats": "order-statistic intervals",
    FEW_RUNS_METHOD: "Student t intervals on the logs of the runs' values",
    "t_log": "Student t intervals on the logs of the runs' values",
    "cluster_bootstrap": "cluster-bootstrap intervals (runs resampled)",
}


def runs_text(counts: Sequence[int]) -> str:
    lo, hi = min(counts), max(counts)
    return f"{lo}" if lo == hi else f"{lo}-{hi}"


def _methods(found: Iterable[tuple[str, int]]) -> dict[str, list[int]]:
    by: dict[str, list[int]] = {}
    for method, n in found:
        by.setdefault("one_run" if n == 1 else method, []).append(int(n))
    return by


def value_text(found: Iterable[tuple[str, int]], what: str = "percentiles") -> str:
    """What the values of results with these ``(method, n_runs)`` are, in one phrase, each
    method named once: ``"the geometric mean of the 3 runs' percentiles (the median run's under
    a log-normal run-to-run spread)"``, ``"the median of the 5-10 runs' percentiles"``; several
    methods joined by ``"; "``. The wording of :data:`VALUE_WORDS`, so that a caption, a
    caveat and the Methods say what the numbers are, whatever the number of runs."""
    parts = []
    for method, counts in _methods(found).items():
        if method == "one_run":
            parts.append(f"the one run's {what.rstrip('s')}" if len(counts) == 1 else
                         f"each one-run configuration's own {what.rstrip('s')}")
        else:
            words = VALUE_WORDS.get(method, f"method {method} over {{runs}} runs' {{what}}")
            parts.append(words.format(runs=runs_text(counts), what=what))
    return "; ".join(parts) or "no estimate"


def interval_text(found: Iterable[tuple[str, int]]) -> str:
    """The intervals of results with these ``(method, n_runs)``, each method named once
    (:data:`INTERVAL_WORDS`; one run: none)."""
    parts = [("no interval (one run)" if method == "one_run" else INTERVAL_WORDS.get(
        method, f"{method} intervals")) for method in _methods(found)]
    return "; ".join(dict.fromkeys(parts)) or "no interval"


def percentile_ci_across_runs(per_run_items: Sequence[Any] | np.ndarray, q: float,
                              confidence: float = 0.95, seed: int | None = 0, *,
                              n_resamples: int = 2000, method: str = "auto",
                              failed: str = "exclude") -> PercentileCI:
    """The median run's percentile ``q`` with a distribution-free interval across runs.

    Parameters
    ----------
    per_run_items : sequence or 2-d int array
        One item per run: a :class:`LatencyHistogram`, a :class:`perfkit.model.Run` (its
        histogram's percentile, else its printed one), or the run's percentile in milliseconds
        (None/NaN for a run without one). A 2-d array is a counts matrix (runs x
        ``LAYOUT.counts_len``), row r being ``hists[r].counts``.
    q : float
        Percentile in (1, 100]; 0.99 raises.
    confidence : float
        Nominal coverage.
    seed, n_resamples :
        Used by ``method="cluster_bootstrap"`` only.
    method : {"auto", "order_stats", "t_log", "cluster_bootstrap"}
        ``auto`` = ``order_stats``: median of per-run values, interpolated order-statistic
        interval (with 2-4 runs the log-normal estimate, reported as :data:`FEW_RUNS_METHOD`).
        ``t_log``: geometric mean of per-run values, Student t on their logs.
        ``cluster_bootstrap``: :func:`cluster_bootstrap_quantile` (pooled requests; histograms
        only).
    failed : {"exclude", "slowest"}
        Runs without a value: left out (the interval then describes the runs that finished) or,
        for ``order_stats``, ranked slower than every finished run (as ``compare`` does), which
        can make the estimate or its upper bound infinite. A warning says which, either way.

    Returns
    -------
    PercentileCI
        ``estimate_ms`` is the median of the per-run values (:func:`per_run_percentiles_ms`),
        ``estimand`` reads "median of per-run p99", ``method`` "order_stats",
        ``achieved_confidence`` the coverage the interval has (93.75% at 5 runs). With 2-4
        runs the median run's value is estimated under a log-normal spread: the geometric mean
        of the per-run values with a Student t interval on their logs (``method``
        :data:`FEW_RUNS_METHOD`, nominal coverage if they are log-normal; ``estimand`` says
        so) and a warning; one run gives (0, inf) and a warning names the runs needed.

    Notes
    -----
    Hettmansperger and Sheather, Statistics & Probability Letters 4 (1986) 75-79; Conover,
    *Practical Nonparametric Statistics* (1999), section 3.2. Calibrated by simulation in
    tests/test_calibration.py and benchmarks/calibration.py.
    """
    qf = check_percentile(q)
    check_confidence(confidence)
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if failed not in FAILED:
        raise ValueError(f"failed must be one of {FAILED}, got {failed!r}")
    runs = per_run(per_run_items, qf)
    if method == "cluster_bootstrap":
        return _pooled_bootstrap(per_run_items, runs, qf, confidence, seed, n_resamples)
    if method == "t_log":
        if failed != "exclude":
            raise ValueError("failed='slowest' needs method='order_stats': a mean cannot rank")
        result = t_log_interval(runs.values_ms, qf, confidence)
    else:
        result = _order_stats(runs, qf, confidence, failed)
    notes = diagnostics(runs, qf)
    return dataclasses.replace(result, warnings=result.warnings + tuple(notes))


def per_run_percentiles_ms(per_run_items: Sequence[Any] | np.ndarray, q: float) -> np.ndarray:
    """The per-run values the interval is built on (ms, NaN where a run has none), in order.

    Front ends can tabulate these next to the estimate: the estimate is their median.
    """
    return per_run(per_run_items, check_percentile(q)).values_ms.copy()


def t_log_interval(values_ms: Sequence[float] | np.ndarray, q: float,
                   confidence: float = 0.95) -> PercentileCI:
    """Student t interval on the log of per-run percentiles; estimates their geometric mean.

    Non-finite or non-positive values (failed runs, missing percentiles) are left out with a
    warning. One run gives (0, inf). The estimand is not the default one (the median run): a
    single slow run moves it, and with 10% of runs 3x slower it covers 0.55 at 5 runs.
    """
    check_confidence(confidence)
    v = np.asarray(values_ms, dtype=np.float64).ravel()
    good = np.isfinite(v) & (v > 0)
    warnings: list[Warn] = []
    if (~good).any():
        warnings.append(missing_note(int((~good).sum()), len(v), q))
    logs = np.log(v[good])
    estimand = estimand_label(q, "t_log")
    n = len(logs)
    if n == 0:
        return PercentileCI(q, math.nan, 0.0, math.inf, confidence, "t_log", estimand, 0,
                            tuple(warnings + [Warn(Code.NO_RUNS_WITH_VALUE)]), 1.0)
    estimate = math.exp(float(logs.mean()))
    if n == 1:
        warnings.append(Warn(Code.ONE_RUN))
        return PercentileCI(q, estimate, 0.0, math.inf, confidence, "t_log", estimand, 1,
                            tuple(warnings), 1.0)
    if n < FEW_RUNS:
        warnings.append(Warn(Code.FEW_RUNS_T_LOG, runs=n, q=q, few=FEW_RUNS))
    half = float(t_ppf(0.5 + confidence / 2.0, n - 1) * logs.std(ddof=1) / math.sqrt(n))
    centre = float(logs.mean())
    return PercentileCI(q, estimate, math.exp(centre - half), math.exp(centre + half),
                        confidence, "t_log", estimand, n, tuple(warnings), confidence)


def missing_note(missing: int, n_runs: int, q: float) -> Warn:
    return Warn(Code.RUNS_LEFT_OUT, missing=missing, runs=n_runs, q=q)


def diagnostics(runs: PerRun, q: float) -> list[Warn]:
    """Warnings about the per-run values: a jump at the percentile (from the histograms, or
    printed percentiles whose tail differs between runs), thin tails, a drift."""
    notes = []
    modes = _tail_modes(runs, q)
    if modes is not None:
        notes.append(modes)
    if _on_a_jump(runs):
        jumps = runs.jump_ratio[np.isfinite(runs.jump_ratio)]
        lo, hi = runs.jump_percentiles
        k = int((jumps > JUMP_RATIO).sum())
        notes.append(Warn(Code.PERCENTILE_ON_JUMP, q=q, jumps=k, runs=len(jumps), low_q=lo,
                          high_q=hi, ratio=float(jumps.max())))
    thin = runs.tail_requests < MIN_TAIL_REQUESTS
    if thin.any():
        fewest = int(np.nanmin(runs.tail_requests))
        notes.append(Warn(Code.THIN_TAILS, thin=int(thin.sum()), runs=len(thin), q=q,
                          least=MIN_TAIL_REQUESTS, fewest=fewest))
    drift = _drift(runs, q)
    if drift:
        notes.append(drift)
    return notes


# -- internals ---------------------------------------------------------------------------------
def _order_stats(runs: PerRun, q: float, confidence: float, failed: str) -> PercentileCI:
    v = runs.values_ms
    good = np.isfinite(v) & (v > 0)
    warnings: list[Warn] = []
    missing = int((~good).sum())
    if missing and failed == "exclude":
        warnings.append(missing_note(missing, len(v), q))
        v = v[good]
    elif missing:
        warnings.append(Warn(Code.RUNS_RANKED_SLOWEST, missing=missing, runs=len(v), q=q))
        v = np.where(good, v, math.inf)
    estimand = estimand_label(q)
    if len(v) == 0:
        return PercentileCI(q, math.nan, 0.0, math.inf, confidence, "order_stats", estimand, 0,
                            tuple(warnings + [Warn(Code.NO_RUNS_WITH_VALUE)]), 1.0)
    smooth = not (_on_a_jump(runs) or _tail_modes(runs, q))
    m = interpolated_median_ci(v, confidence, interpolate=smooth)
    if 2 <= m.n < FEW_RUNS and np.isfinite(v).all():
        return _few_runs(v, m.estimate, q, confidence, warnings)
    low = max(m.low, 0.0)
    return PercentileCI(q, m.estimate, low, m.high, confidence, "order_stats", estimand, m.n,
                        tuple(warnings) + m.warnings, m.achieved_confidence)


def _few_runs(v: np.ndarray, estimate: float, q: float, confidence: float,
              warnings: list[Warn]) -> PercentileCI:
    """2-4 runs: no order-statistic interval exists. Under a log-normal run-to-run spread the
    median run's percentile is the geometric mean's target, so the value is the geometric mean
    of the per-run values and the interval the t interval on their logs, centred on it (a
    sample median beside a t interval would give a value and an interval about different
    centres); labelled :data:`FEW_RUNS_METHOD`, with a warning."""
    t = t_log_interval(v, q, confidence)
    note = Warn(Code.FEW_RUNS_LOG_NORMAL, runs=len(v), q=q, few=FEW_RUNS)
    estimand = (f"median run's p{q:g}, estimated as the geometric mean of {len(v)} runs "
                "(log-normal)")
    return PercentileCI(q, t.estimate_ms, t.low_ms, t.high_ms, confidence, FEW_RUNS_METHOD,
                        estimand, len(v), tuple(warnings) + (note,), confidence)


def _pooled_bootstrap(items: Any, runs: PerRun, q: float, confidence: float,
                      seed: int | None, n_resamples: int) -> PercentileCI:
    counts, missing = stack_counts(items, runs)
    result = cluster_bootstrap_quantile(counts, q, n_resamples, confidence, seed)
    if missing:
        note = missing_note(missing, len(runs.values_ms), q)
        result = dataclasses.replace(result, warnings=(note,) + result.warnings)
    return result


def _on_a_jump(runs: PerRun) -> bool:
    jumps = runs.jump_ratio[np.isfinite(runs.jump_ratio)]
    return bool(len(jumps) and jumps.max() > JUMP_RATIO)


def _tail_modes(runs: PerRun, q: float) -> Warn | None:
    """Runs without histograms whose printed tails differ in shape: the largest printed
    p(q) / p(shape_q) more than :data:`JUMP_RATIO` times the smallest, as when p99 falls
    inside a pause in some runs and below it in others. Their per-run values then have two
    modes, where interpolating between order statistics loses coverage (0.92-0.94 at 10 runs
    with pauses, benchmarks/calibration.py)."""
    ratios = runs.shape_ratio
    if ratios is None:
        return None
    r = ratios[np.isfinite(ratios) & (ratios > 0)]
    if len(r) < 2 or not r.max() > JUMP_RATIO * r.min():
        return None
    return Warn(Code.PRINTED_TAIL_MODES, q=q, shape_q=runs.shape_q,
                modes=int((r > JUMP_RATIO * r.min()).sum()), runs=len(r),
                ratio=float(r.max()), least=float(r.min()))


def _drift(runs: PerRun, q: float) -> Warn | None:
    order = runs.order
    v = runs.values_ms
    ok = np.isfinite(order) & np.isfinite(v)
    if ok.sum() < FEW_RUNS or len(np.unique(order[ok])) < ok.sum():
        return None

    from scipy import stats as sps  # only where the runs are ordered (issue 33)

    res = sps.kendalltau(order[ok], v[ok])
    if not (res.pvalue < DRIFT_ALPHA):
        return None
    return Warn(Code.PER_RUN_DRIFT, q=q, tau=float(res.statistic), p_value=float(res.pvalue))
