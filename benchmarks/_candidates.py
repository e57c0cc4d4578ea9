"""The candidate across-runs intervals compared in benchmarks/calibration.py (--compare).

Each returns ``(estimand, low_ms, high_ms)``; estimand is ``median`` (the median run's
percentile), ``gm`` (geometric mean of per-run percentiles) or ``pooled`` (the percentile of
all requests of all runs, the mixture).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats as sps

from perfkit.stats import cluster_bootstrap_quantile, median_ci, t_log_interval
from perfkit.stats import simulate as sim
from perfkit.stats.bootstrap import percentiles_us, trimmed_cumulative

B = 999


def candidates(scenario: sim.Scenario, logs: np.ndarray, rng: np.random.Generator,
               seed: int) -> dict[str, tuple[str, float, float]]:
    v = sim.recorded_ms(scenario, logs)
    y = np.log(v)
    exact = median_ci(v)
    t = t_log_interval(v, scenario.q)
    counts = sim.histogram_counts(logs)
    boot = cluster_bootstrap_quantile(counts, scenario.q, n_resamples=500, seed=seed)
    return {
        "exact_order_stats": ("median", exact.low, exact.high),
        "bootstrap_median": ("median", *_boot_median(v, rng)),
        "t_log_gm": ("gm", t.low_ms, t.high_ms),
        "bootstrap_t_gm": ("gm", *np.exp(_boot_t(y, rng))),
        "bca_gm": ("gm", *np.exp(_bca(y, rng))),
        "previous_default_pooled": ("pooled", *_previous_default(counts, scenario.q)),
        "cluster_bootstrap_pooled": ("pooled", boot.low_ms, boot.high_ms),
    }


def _boot_median(v: np.ndarray, rng: np.random.Generator) -> tuple[float, float]:
    m = np.median(v[rng.integers(0, len(v), (B, len(v)))], axis=1)
    lo, hi = np.quantile(m, [0.025, 0.975])
    return float(lo), float(hi)


def _boot_t(y: np.ndarray, rng: np.random.Generator) -> tuple[float, float]:
    """Studentized bootstrap of the mean of logs (Efron and Tibshirani 1993, ch. 12)."""
    n = len(y)
    yb = y[rng.integers(0, n, (B, n))]
    se = y.std(ddof=1) / math.sqrt(n)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (yb.mean(1) - y.mean()) / (yb.std(1, ddof=1) / math.sqrt(n))
    t = t[np.isfinite(t)]
    if len(t) == 0:
        return float(y.mean()), float(y.mean())
    lo, hi = np.quantile(t, [0.025, 0.975])
    return float(y.mean() - hi * se), float(y.mean() - lo * se)


def _bca(y: np.ndarray, rng: np.random.Generator) -> tuple[float, float]:
    """BCa interval of the mean of logs (Efron 1987; jackknife acceleration)."""
    n = len(y)
    m = y[rng.integers(0, n, (B, n))].mean(1)
    z0 = sps.norm.ppf(np.clip((m < y.mean()).mean() + 0.5 * (m == y.mean()).mean(),
                              1e-6, 1 - 1e-6))
    jack = (y.sum() - y) / (n - 1)
    d = jack.mean() - jack
    den = float((d ** 2).sum())
    a = float((d ** 3).sum()) / (6 * den ** 1.5) if den > 0 else 0.0
    z = sps.norm.ppf([0.025, 0.975])
    levels = sps.norm.cdf(z0 + (z0 + z) / (1 - a * (z0 + z)))
    lo, hi = np.quantile(m, levels)
    return float(lo), float(hi)


def _previous_default(counts: np.ndarray, q: float) -> tuple[float, float]:
    """perfkit before issue 13: t on log per-run values, centred at the merged histogram."""
    cum, first = trimmed_cumulative(counts)
    logs = np.log(percentiles_us(cum, first, q) / 1000.0)
    pooled = percentiles_us(cum.sum(axis=0)[None, :], first, q)[0] / 1000.0
    n = len(logs)
    half = sps.t.ppf(0.975, n - 1) * logs.std(ddof=1) / math.sqrt(n)
    return float(pooled * math.exp(-half)), float(pooled * math.exp(half))
