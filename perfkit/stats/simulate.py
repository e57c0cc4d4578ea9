"""Synthetic runs for calibrating across-runs statistics by simulation (seeded, vectorised).

The model of one run's request latencies (log microseconds)::

    log L[r, t] = log(median_us) + b_r + drift * r + s * x[r, t]   (+ log(pause_factor) in a pause)

- ``b_r`` is the run effect: normal with sd ``run_sd``; ``"t3"`` Student t with 3 df scaled to
  sd ``run_sd`` (heavy-tailed); ``"slow"`` normal plus, with probability ``slow_share``, a slow
  run ``slow_factor`` times slower (a neighbour on the host, a cold cache);
- ``x[r, t]`` is a stationary AR(1) with coefficient ``phi`` and unit variance: requests inside a
  run are autocorrelated;
- a pause stalls one contiguous stretch of ``U(0, pause_max_fraction)`` of the run's requests,
  multiplying them by ``pause_factor`` (a GC pause, a stalled disk);
- ``drift`` adds a trend with the run's position in the run order (log units per run).

Latencies are rounded to whole microseconds (at least 1) as the histograms record them, and a
run's percentile is taken exactly as hdrh takes it (:func:`run_percentiles_ms`). With
``printed_decimals`` the per-run value is rounded as a tool prints it (wrk: 2 decimals).

:func:`median_run_truth_ms` gives the estimand of
:func:`perfkit.stats.percentile_ci_across_runs` for a scenario, by brute force over many runs.
"""

from __future__ import annotations

import dataclasses
import math
from functools import lru_cache

import numpy as np
from scipy.signal import lfilter

from perfkit.histogram import LAYOUT

RUN_EFFECTS = ("normal", "t3", "slow")


@dataclasses.dataclass(frozen=True)
class Scenario:
    """One data-generating model of a set of runs (see the module docstring)."""

    name: str
    run_sd: float = 0.05
    run_effect: str = "normal"
    slow_share: float = 0.1
    slow_factor: float = 3.0
    within_sd: float = 0.5
    phi: float = 0.9
    requests: int = 20_000
    pause_max_fraction: float = 0.0
    pause_factor: float = 20.0
    drift: float = 0.0
    median_us: float = 1000.0
    q: float = 99.0
    printed_decimals: int | None = None

    def __post_init__(self) -> None:
        if self.run_effect not in RUN_EFFECTS:
            raise ValueError(f"run_effect must be one of {RUN_EFFECTS}, got {self.run_effect!r}")


#: the rows of issue 13's coverage table (AR(1) phi 0.9, within-run log-sd 0.5)
ISSUE_SCENARIOS = (
    Scenario("run-to-run log-sd 0.05"),
    Scenario("run-to-run log-sd 0.3", run_sd=0.3),
    Scenario("run-to-run log-sd 0.6", run_sd=0.6),
    Scenario("pauses: U(0, 2%) of requests x20", pause_max_fraction=0.02),
)

#: what real runs also show
EXTRA_SCENARIOS = (
    Scenario("heavy-tailed run effects (t3, sd 0.3)", run_sd=0.3, run_effect="t3"),
    Scenario("10% of runs 3x slower", run_effect="slow"),
    Scenario("drift 2% per run in run order", drift=0.02),
    Scenario("few requests per run (300)", run_sd=0.3, requests=300),
    Scenario("p99.9 near the histogram resolution (~136 us)", run_sd=0.01, within_sd=0.1,
             median_us=100.0, q=99.9),
    Scenario("wrk printed values (2 decimals, sd 0.01)", run_sd=0.01, within_sd=0.2,
             printed_decimals=2),
    Scenario("pauses, wrk printed percentiles (no histogram)", pause_max_fraction=0.02,
             printed_decimals=2),
)


def run_effects(scenario: Scenario, rng: np.random.Generator, n_runs: int) -> np.ndarray:
    """Log-scale effect of each run, in run order (drift included)."""
    s = scenario
    if s.run_effect == "t3":
        b = s.run_sd * rng.standard_t(3, n_runs) / math.sqrt(3.0)
    else:
        b = s.run_sd * rng.standard_normal(n_runs)
        if s.run_effect == "slow":
            b = b + math.log(s.slow_factor) * (rng.random(n_runs) < s.slow_share)
    return b + s.drift * np.arange(n_runs)


def log_latencies_us(scenario: Scenario, rng: np.random.Generator, n_runs: int) -> np.ndarray:
    """(runs x requests) log-latencies in microseconds, rows in run order."""
    s = scenario
    innov = rng.standard_normal((n_runs, s.requests)) * math.sqrt(1.0 - s.phi ** 2)
    start = rng.standard_normal((n_runs, 1)) * s.phi
    x, _ = lfilter([1.0], [1.0, -s.phi], innov, axis=-1, zi=start)
    logs = math.log(s.median_us) + run_effects(s, rng, n_runs)[:, None] + s.within_sd * x
    if s.pause_max_fraction > 0:
        lengths = np.rint(rng.uniform(0.0, s.pause_max_fraction, n_runs) * s.requests)
        starts = rng.integers(0, s.requests - lengths + 1)
        t = np.arange(s.requests)
        stalled = (t >= starts[:, None]) & (t < (starts + lengths)[:, None])
        logs += math.log(s.pause_factor) * stalled
    return logs


def latencies_us(logs: np.ndarray) -> np.ndarray:
    """Whole microseconds (>= 1), as the histograms record them."""
    return np.maximum(np.rint(np.exp(logs)), 1.0)


def histogram_counts(logs: np.ndarray) -> np.ndarray:
    """Counts matrix (runs x ``LAYOUT.counts_len``) of each run's histogram."""
    idx = LAYOUT.index_of(latencies_us(logs).astype(np.int64))
    runs = logs.shape[0]
    flat = (idx + LAYOUT.counts_len * np.arange(runs)[:, None]).ravel()
    return np.bincount(flat, minlength=runs * LAYOUT.counts_len).reshape(runs, -1)


def run_percentiles_ms(logs: np.ndarray, q: float) -> np.ndarray:
    """Each run's percentile ``q`` (ms), identical to its histogram's ``percentile_ms(q)``.

    hdrh takes the value at rank ``max(1, floor(q N / 100 + 0.5))`` and reports the highest
    value of its bucket; buckets are monotone in value, so the order statistic's bucket is it.
    """
    n = logs.shape[1]
    rank = max(1, math.floor(q * n / 100.0 + 0.5))
    kth = np.partition(latencies_us(logs), rank - 1, axis=1)[:, rank - 1]
    return LAYOUT.highest[LAYOUT.index_of(kth.astype(np.int64))].astype(np.float64) / 1000.0


def recorded_ms(scenario: Scenario, logs: np.ndarray, q: float | None = None) -> np.ndarray:
    """Per-run percentile as the runs report it (printed rounding applied when set)."""
    values = run_percentiles_ms(logs, scenario.q if q is None else q)
    if scenario.printed_decimals is not None:
        values = np.round(values, scenario.printed_decimals)
    return values


@lru_cache(maxsize=64)
def median_run_truth_ms(scenario: Scenario, n_runs: int = 20_000, seed: int = 7,
                        q: float | None = None) -> tuple[float, float]:
    """The estimand (median over runs of the recorded per-run percentile) and its MC error.

    Drift is left out: for a drifting scenario the estimand of ``n`` runs is this value times
    ``exp(drift * (n - 1) / 2)`` (the median run of the window), see :func:`window_truth_ms`.
    The error is the asymptotic sd of a sample median, 1 / (2 f(m) sqrt(N)), from a density
    estimate at the median.
    """
    steady = dataclasses.replace(scenario, drift=0.0)
    rng = np.random.default_rng(seed)
    chunk = max(1, min(n_runs, 4_000_000 // steady.requests))
    values = np.concatenate([recorded_ms(steady, log_latencies_us(steady, rng, m), q)
                             for m in _chunks(n_runs, chunk)])
    median = float(np.median(values))
    lo, hi = np.quantile(values, [0.45, 0.55])
    density = 0.1 / (hi - lo) if hi > lo else math.inf
    return median, 1.0 / (2.0 * density * math.sqrt(n_runs))


def window_truth_ms(scenario: Scenario, n: int, q: float | None = None,
                    truth_runs: int = 20_000) -> float:
    """The estimand for ``n`` runs in order: the steady value shifted by half the drift."""
    steady = median_run_truth_ms(scenario, n_runs=truth_runs, q=q)[0]
    return steady * math.exp(scenario.drift * (n - 1) / 2.0)


def _chunks(total: int, size: int) -> list[int]:
    return [min(size, total - i) for i in range(0, total, size)]
