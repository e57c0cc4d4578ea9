"""The A/A experiment: the same configuration in both arms, so every "difference" is noise.

Two empirical false-positive rates are measured on the real runs:

- **runs as the unit** (perfkit's way): the runs are split at random into two disjoint groups
  of ``k`` runs (seeded), and :func:`perfkit.stats.compare` (exact Mann-Whitney U over per-run
  values) tests each split. Its rate should stay at or below ``alpha``.
- **requests as the unit** (the common mistake): every pair of runs is compared with a Welch
  z-test on mean latency that treats each request as an independent observation (mean,
  standard deviation and request count as the tool printed them). Requests inside a run are
  autocorrelated and runs differ by more than request noise, so this test calls most A/A
  pairs "significant".

Splits overlap (200 splits of 20 runs share their runs), so the rates are descriptive, not
independent trials: no binomial interval is given, since one would be far too narrow.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats as sps

from perfkit.analysis import ComparisonTable, RunSet, compare_runs, metric
from perfkit.errors import UsageError
from perfkit.formatting import level_text
from perfkit.report.nb import Answer
from perfkit.stats import compare


def designed_comparisons(rows: RunSet, arm: str, metrics: Sequence[str],
                         alpha: float = 0.05) -> list[ComparisonTable]:
    """The A/A comparison as designed (first arm level vs second), one table per metric: the
    same analysis as ``perfkit compare EXP::ARM=A EXP::ARM=B``."""
    levels = sorted(rows.frame[arm].dropna().unique().tolist(), key=str)
    if len(levels) != 2:
        raise UsageError(f"A/A needs exactly two levels of {arm!r}, found {levels}")
    a, b = (rows.where({arm: level_text(lv)}) for lv in levels)
    a = RunSet(a.frame, a.runs, f"{rows.label}::{arm}={level_text(levels[0])}", a.factors)
    b = RunSet(b.frame, b.runs, f"{rows.label}::{arm}={level_text(levels[1])}", b.factors)
    return [compare_runs(a, b, metric(m, rows.frame.columns), exclude=[arm], alpha=alpha)
            for m in metrics]


def split_false_positive_rate(values: np.ndarray, k: int, alpha: float = 0.05,
                              n_splits: int = 200, seed: int = 0,
                              lower_better: bool = True) -> tuple[int, int]:
    """(significant, tested) over ``n_splits`` random disjoint k-vs-k splits of ``values``."""
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    if len(values) < 2 * k:
        return 0, 0
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(n_splits):
        order = rng.permutation(len(values))
        r = compare(values[order[:k]], values[order[k:2 * k]], alpha,
                    lower_is_better=lower_better)
        hits += bool(r.p_value < alpha)
    return hits, n_splits


def pooled_request_false_positive_rate(frame: pd.DataFrame, alpha: float = 0.05
                                       ) -> tuple[int, int]:
    """(significant, tested) over every pair of runs, Welch z on mean latency per request."""
    cols = ["latency_mean_ms", "latency_stdev_ms", "requests"]
    usable = frame.dropna(subset=cols)
    usable = usable[(usable["requests"].astype(float) > 1)]
    m = usable["latency_mean_ms"].astype(float).to_numpy()
    s = usable["latency_stdev_ms"].astype(float).to_numpy()
    n = usable["requests"].astype(float).to_numpy()
    hits = tested = 0
    for i, j in itertools.combinations(range(len(usable)), 2):
        se = math.sqrt(s[i] ** 2 / n[i] + s[j] ** 2 / n[j])
        if se <= 0:
            continue
        p = 2 * sps.norm.sf(abs(m[i] - m[j]) / se)
        hits += bool(p < alpha)
        tested += 1
    return hits, tested


def false_positive_rates(frame: pd.DataFrame, metrics: Sequence[str], alpha: float = 0.05,
                         k: int = 5, n_splits: int = 200, seed: int = 0) -> pd.DataFrame:
    """One row per test: ``test, unit, metric, comparisons, significant, rate, rate_ci_low,
    rate_ci_high`` (see the module docstring)."""
    rows = []
    for name in metrics:
        m = metric(name, frame.columns)
        hits, tested = split_false_positive_rate(frame[name].to_numpy(dtype=float), k, alpha,
                                                 n_splits, seed, m.lower_is_better)
        rows.append(_rate_row(f"Mann-Whitney U, {k} vs {k} runs", "run", name, hits, tested))
    hits, tested = pooled_request_false_positive_rate(frame, alpha)
    rows.append(_rate_row("Welch z, run vs run", "request", "latency_mean_ms", hits, tested))
    return pd.DataFrame(rows)


def _rate_row(test: str, unit: str, metric: str, hits: int, tested: int) -> dict:
    return {"test": test, "unit": unit, "metric": metric, "comparisons": tested,
            "significant": hits, "rate": hits / tested if tested else math.nan}


def answers(rates: pd.DataFrame, alpha: float, n_runs: int) -> list[Answer]:
    """The A/A false-positive rates: near alpha for runs as the unit, far above it for
    requests. The splits share runs, so no binomial interval is given (they are not
    independent trials)."""
    out = []
    for test, group in rates[rates["comparisons"] > 0].groupby("test", sort=False):
        near = bool((group["rate"] <= 2 * alpha).all())
        parts = ", ".join(f"{r['metric']} {r['rate']:.2f}" for _, r in group.iterrows())
        counts = sorted(set(int(c) for c in group["comparisons"]))
        out.append(Answer(f"A/A false-positive rate, {test}",
                          f"{parts} of {'/'.join(map(str, counts))} comparisons at alpha "
                          f"{alpha:g}", "holds alpha" if near else "does not hold alpha",
                          f"{n_runs} runs",
                          ("the comparisons share runs: a rate, not a binomial proportion; no "
                           "interval is given",)))
    return out
