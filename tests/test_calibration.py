"""Calibration by simulation: do the tests keep their alpha and the intervals their coverage?

The generating model (seeded): log-latency of request t in run r is
``mu + b_r + s * x_t`` with ``b_r ~ N(0, 0.05^2)`` (5% run-to-run spread), ``s = 0.5`` and
``x_t`` a stationary AR(1) with phi = 0.9 and unit variance (requests inside a run are
autocorrelated). The requests of all runs are then a mixture whose log is N(mu, s^2 + 0.05^2),
so its p99 is known analytically.

Measured with these seeds (numbers quoted in perfkit/stats/acrossruns.py; ``pytest -s``
prints them):
- A/A, 5 vs 5 runs, compare() on per-run p50: false-positive rate 0.029 at alpha 0.05 (the
  exact test at 5 vs 5 can only reach p = 0.032 below 0.05); Mann-Whitney on the pooled
  requests of the two arms: 0.90.
- Coverage of the mixture p99 by a nominal 95% interval: percentile_ci_across_runs 0.934 /
  0.950 / 0.953 at 5 / 10 / 30 runs; the plain percentile cluster bootstrap 0.816 / 0.888 /
  0.925.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps
from scipy.signal import lfilter

from perfkit.histogram import LAYOUT
from perfkit.stats import cluster_bootstrap_quantile, compare, percentile_ci_across_runs

PHI = 0.9
WITHIN_SD = 0.5
RUN_SD = 0.05
MU = math.log(1000.0)  # log of 1 ms in microseconds
ALPHA = 0.05
N_SIM = 1000


def _log_latencies(rng: np.random.Generator, runs: int, requests: int) -> np.ndarray:
    """(runs x requests) log-latencies (us) from the model in the module docstring."""
    innov = rng.standard_normal((runs, requests), dtype=np.float32)
    innov *= np.float32(math.sqrt(1 - PHI ** 2))
    start = rng.standard_normal((runs, 1)).astype(np.float32) * np.float32(PHI)
    x, _ = lfilter(np.array([1.0], np.float32), np.array([1.0, -PHI], np.float32), innov,
                   axis=-1, zi=start)
    return MU + RUN_SD * rng.standard_normal((runs, 1)) + WITHIN_SD * x


def _counts(logs: np.ndarray) -> np.ndarray:
    """Histogram counts per run (runs x LAYOUT.counts_len), vectorised."""
    idx = LAYOUT.index_of(np.rint(np.exp(logs)).astype(np.int64))
    runs = logs.shape[0]
    flat = (idx + LAYOUT.counts_len * np.arange(runs)[:, None]).ravel()
    return np.bincount(flat, minlength=runs * LAYOUT.counts_len).reshape(runs, -1)


def _noise(p: float, n: int) -> float:
    return 2 * math.sqrt(p * (1 - p) / n)


@pytest.fixture(scope="module")
def aa_simulation():
    """Per-run p50 of both arms for every simulation; pooled requests of the first 100."""
    rng = np.random.default_rng(20240501)
    p50 = np.empty((N_SIM, 2, 5))
    pooled = []
    for i in range(N_SIM):
        logs = _log_latencies(rng, 10, 10_000)
        p50[i] = np.exp(np.median(logs, axis=1)).reshape(2, 5)
        if i < 100:
            pooled.append(logs.reshape(2, -1))
    return p50, np.array(pooled)


@pytest.mark.slow
def test_aa_false_positive_rate_of_compare_on_per_run_p50_is_at_most_alpha(aa_simulation):
    p50, _ = aa_simulation
    rows = [compare(base, new, alpha=ALPHA).to_dict() for base, new in p50]
    significant = np.array([r["significant"] for r in rows], dtype=object)
    fpr = float(np.mean(significant == True))  # noqa: E712 (None is not a rejection)
    print(f"\nA/A false-positive rate of compare() at 5 vs 5: {fpr:.3f}")
    assert all(r["p_method"] == "exact" for r in rows)
    assert fpr <= ALPHA + _noise(ALPHA, N_SIM)
    # the exact test's real size at 5 vs 5 is P(p <= 0.0317) = 0.0317: not degenerate either
    assert fpr >= 0.0317 - _noise(0.0317, N_SIM)


@pytest.mark.slow
def test_a_rank_test_on_pooled_requests_calls_most_aa_differences_significant(aa_simulation):
    _, pooled = aa_simulation
    p = sps.mannwhitneyu(pooled[:, 0], pooled[:, 1], axis=1, method="asymptotic").pvalue
    fpr = float(np.mean(p < ALPHA))
    print(f"\nA/A false-positive rate of Mann-Whitney on pooled requests: {fpr:.3f}")
    assert fpr > 0.5


def _coverage(runs: int, requests: int = 2000, seed: int = 0) -> tuple[float, float]:
    """Coverage of the mixture p99 by percentile_ci_across_runs and the plain bootstrap."""
    truth_ms = math.exp(MU + sps.norm.ppf(0.99) * math.hypot(WITHIN_SD, RUN_SD)) / 1000.0
    rng = np.random.default_rng(seed + runs)
    hits_auto = hits_boot = 0
    for i in range(N_SIM):
        counts = _counts(_log_latencies(rng, runs, requests))
        auto = percentile_ci_across_runs(counts, 99)
        boot = cluster_bootstrap_quantile(counts, 99, n_resamples=500, seed=i)
        hits_auto += auto.low_ms <= truth_ms <= auto.high_ms
        hits_boot += boot.low_ms <= truth_ms <= boot.high_ms
    return hits_auto / N_SIM, hits_boot / N_SIM


@pytest.mark.slow
def test_the_across_runs_interval_covers_the_mixture_p99_at_30_runs():
    auto, boot = _coverage(30)
    print(f"\ncoverage at 30 runs: across-runs CI {auto:.3f}, percentile cluster bootstrap "
          f"{boot:.3f}")
    assert 0.93 <= auto <= 0.97


@pytest.mark.slow
@pytest.mark.parametrize("runs", [5, 10])
def test_few_runs_keep_their_coverage_where_the_percentile_bootstrap_does_not(runs):
    auto, boot = _coverage(runs)
    print(f"\ncoverage at {runs} runs: across-runs CI {auto:.3f}, percentile cluster bootstrap "
          f"{boot:.3f}")
    assert 0.93 <= auto <= 0.97
    assert boot < auto - _noise(0.95, N_SIM)
    if runs == 5:
        assert boot < 0.90
