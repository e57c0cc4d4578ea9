"""Across-runs percentile intervals: the run is the unit.

- :func:`cluster_bootstrap_quantile` resamples whole runs, sums their histograms and takes the
  percentile of the sum (Davison and Hinkley, *Bootstrap Methods and their Application*, 1997,
  section 3.8, "multistage sampling"; Field and Welsh, "Bootstrapping clustered data", JRSS B
  69, 2007). It is vectorised: the resample weights are a (B x runs) matrix, the runs'
  cumulative counts a (runs x buckets) matrix, and one matrix product gives every resample's
  cumulative histogram. Only the buckets where the percentile can fall are multiplied.
- :func:`percentile_ci_across_runs` picks the interval that holds its coverage: the cluster
  bootstrap from ``min_runs_bootstrap`` (10) runs with histograms, else a t-interval on the log
  of the per-run percentiles, whose estimand (the geometric mean of per-run percentiles) is
  labelled and warned about. The percentile bootstrap under-covers with few clusters (about
  0.8 at 5 runs; see tests/test_calibration.py).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy import stats as sps

from perfkit.histogram import LAYOUT, LatencyHistogram, check_percentile
from perfkit.model import Run

#: fewest runs for which the percentile cluster bootstrap is used by default
MIN_RUNS_BOOTSTRAP = 10
_CHUNK = 512


@dataclasses.dataclass(frozen=True)
class PercentileCI:
    """A percentile across runs with its interval (milliseconds) and what it estimates."""

    q: float
    estimate_ms: float
    low_ms: float
    high_ms: float
    confidence: float
    method: str
    estimand: str
    n_runs: int
    warnings: tuple[str, ...]


def cluster_bootstrap_quantile(hists: Sequence[LatencyHistogram] | np.ndarray, q: float,
                               n_resamples: int = 2000, confidence: float = 0.95,
                               seed: int | None = 0) -> PercentileCI:
    """Percentile of the pooled requests of all runs, with a cluster-bootstrap interval.

    Parameters
    ----------
    hists : sequence of LatencyHistogram, or 2-d int array
        One histogram per run, or their ``counts`` stacked (runs x ``LAYOUT.counts_len``).
    q : float
        Percentile in (1, 100].
    n_resamples : int
        Bootstrap resamples of runs (with replacement).
    confidence : float
        Coverage of the percentile interval (quantiles (1-c)/2 and (1+c)/2 of the resamples).
    seed : int or None
        Seed of :func:`numpy.random.default_rng`.

    Returns
    -------
    PercentileCI
        ``estimate_ms`` is the percentile of the merged histogram (counts summed, never
        percentiles averaged); each resample's value is chosen exactly as hdrh does.

    Notes
    -----
    Davison and Hinkley (1997), section 3.8. With fewer than 10 runs the percentile interval
    under-covers and a warning says so; :func:`percentile_ci_across_runs` then switches method.
    """
    qf = check_percentile(q)
    counts, warnings = _counts_matrix(hists)
    n_runs = counts.shape[0]
    if n_runs == 0:
        return PercentileCI(qf, math.nan, 0.0, math.inf, confidence, "cluster_bootstrap",
                            _pooled_estimand(qf), 0, tuple(warnings + ["no runs"]))
    _check_confidence(confidence)
    nonzero = np.flatnonzero(counts.any(axis=0))
    first, last = int(nonzero[0]), int(nonzero[-1])
    cum = np.cumsum(counts[:, first:last + 1], axis=1, dtype=np.float64)
    estimate_us = LAYOUT.highest[first + _positions(cum.sum(axis=0)[None, :], qf)[0]]
    rng = np.random.default_rng(seed)
    values = np.empty(n_resamples, dtype=np.float64)
    for start in range(0, n_resamples, _CHUNK):
        size = min(_CHUNK, n_resamples - start)
        weights = _resample_weights(rng, n_runs, size)
        values[start:start + size] = LAYOUT.highest[first + _resampled_positions(cum, weights, qf)]
    tail = (1.0 - confidence) / 2.0
    low_us, high_us = np.quantile(values, [tail, 1.0 - tail])
    if n_runs < MIN_RUNS_BOOTSTRAP:
        warnings.append(f"only {n_runs} runs: the percentile cluster bootstrap under-covers below "
                        f"{MIN_RUNS_BOOTSTRAP} runs (use percentile_ci_across_runs)")
    return PercentileCI(qf, float(estimate_us) / 1000.0, float(low_us) / 1000.0,
                        float(high_us) / 1000.0, confidence, "cluster_bootstrap",
                        _pooled_estimand(qf), n_runs, tuple(warnings))


def percentile_ci_across_runs(per_run: Sequence[Any] | np.ndarray, q: float,
                              confidence: float = 0.95, seed: int | None = 0, *,
                              n_resamples: int = 2000,
                              min_runs_bootstrap: int = MIN_RUNS_BOOTSTRAP,
                              method: str = "auto") -> PercentileCI:
    """The publishable across-runs interval of percentile ``q``, by a method that holds coverage.

    Parameters
    ----------
    per_run : sequence or 2-d int array
        One item per run: a :class:`LatencyHistogram`, a :class:`perfkit.model.Run` (its
        histogram, else its printed percentile), or the run's percentile in milliseconds
        (None/NaN for a run without one). A 2-d array is a counts matrix as in
        :func:`cluster_bootstrap_quantile`.
    q : float
        Percentile in (1, 100].
    confidence, seed, n_resamples :
        As in :func:`cluster_bootstrap_quantile`.
    min_runs_bootstrap : int
        Fewest runs for the cluster bootstrap (default 10).
    method : {"auto", "cluster_bootstrap", "t_log"}
        ``auto`` uses the cluster bootstrap when every run has a histogram and there are at
        least ``min_runs_bootstrap`` runs; otherwise ``t_log``: a Student t interval on the
        log of the per-run percentiles.

    Returns
    -------
    PercentileCI
        ``method`` and ``estimand`` say what was computed. ``t_log`` estimates the geometric
        mean of the per-run percentiles (the typical run), not the pooled percentile; with 5%
        run-to-run spread the two differ by well under the interval's width.

    Notes
    -----
    Runs without a value (failed, not measured) are left out with a warning: the interval then
    describes the runs that finished. Coverage of both methods is measured in
    tests/test_calibration.py.
    """
    qf = check_percentile(q)
    if method not in ("auto", "cluster_bootstrap", "t_log"):
        raise ValueError(f"method must be 'auto', 'cluster_bootstrap' or 't_log', got {method!r}")
    if isinstance(per_run, np.ndarray) and per_run.ndim == 2:
        per_run = [LatencyHistogram.from_counts(row) for row in per_run]
    items = [_coerce(item, qf) for item in per_run]
    n_runs = len(items)
    usable = [i for i in items if isinstance(i, LatencyHistogram) or (math.isfinite(i) and i > 0)]
    all_hists = bool(usable) and all(isinstance(i, LatencyHistogram) for i in usable)
    use_bootstrap = method == "cluster_bootstrap" or (
        method == "auto" and all_hists and len(usable) >= min_runs_bootstrap)
    if use_bootstrap:
        if not all_hists:
            raise ValueError("the cluster bootstrap needs a histogram for every run")
        result = cluster_bootstrap_quantile(usable, qf, n_resamples, confidence, seed)
        if len(usable) < n_runs:
            note = _missing_note(n_runs - len(usable), n_runs, qf)
            result = dataclasses.replace(result, warnings=(note,) + result.warnings,
                                         n_runs=len(usable))
        return result
    values = np.array([i.percentile_ms(qf) if isinstance(i, LatencyHistogram) else i
                       for i in items], dtype=np.float64)
    result = t_log_interval(values, qf, confidence)
    if method == "auto" and len(usable) < min_runs_bootstrap:
        note = (f"{len(usable)} runs: below {min_runs_bootstrap} the cluster bootstrap "
                f"under-covers, so this is a t-interval on log per-run p{qf:g} "
                f"(estimand: {result.estimand})")
        result = dataclasses.replace(result, warnings=(note,) + result.warnings)
    elif method == "auto":
        note = (f"not every run has a histogram: t-interval on log per-run p{qf:g} "
                f"(estimand: {result.estimand})")
        result = dataclasses.replace(result, warnings=(note,) + result.warnings)
    return result


def t_log_interval(values_ms: Sequence[float] | np.ndarray, q: float,
                   confidence: float = 0.95) -> PercentileCI:
    """Student t interval on the log of per-run percentiles; estimates their geometric mean.

    Non-finite or non-positive values (failed runs, missing percentiles) are left out with a
    warning. One run gives (0, inf).
    """
    _check_confidence(confidence)
    v = np.asarray(values_ms, dtype=np.float64).ravel()
    good = np.isfinite(v) & (v > 0)
    warnings: list[str] = []
    if (~good).any():
        warnings.append(_missing_note(int((~good).sum()), len(v), q))
    logs = np.log(v[good])
    n = len(logs)
    estimand = f"geometric mean of per-run p{q:g}"
    if n == 0:
        return PercentileCI(q, math.nan, 0.0, math.inf, confidence, "t_log", estimand, 0,
                            tuple(warnings + ["no runs with a value"]))
    centre = float(logs.mean())
    if n == 1:
        warnings.append("one run: no across-runs interval; run more (>= 5 recommended)")
        return PercentileCI(q, math.exp(centre), 0.0, math.inf, confidence, "t_log", estimand,
                            1, tuple(warnings))
    half = float(sps.t.ppf(0.5 + confidence / 2.0, n - 1) * logs.std(ddof=1) / math.sqrt(n))
    return PercentileCI(q, math.exp(centre), math.exp(centre - half), math.exp(centre + half),
                        confidence, "t_log", estimand, n, tuple(warnings))


# -- internals ---------------------------------------------------------------------------------
def _missing_note(missing: int, n_runs: int, q: float) -> str:
    return (f"{missing} of {n_runs} runs have no usable p{q:g} (failed or not measured) and "
            "were left out: the interval describes the runs that finished")


def _pooled_estimand(q: float) -> str:
    return f"p{q:g} of all requests pooled over runs (the mixture of runs)"


def _coerce(item: Any, q: float) -> LatencyHistogram | float:
    if isinstance(item, LatencyHistogram):
        return item if item.total_count else math.nan
    if isinstance(item, Run):
        if item.histogram is not None and item.histogram.total_count:
            return item.histogram
        value = item.percentiles_ms.get(q)
        return math.nan if value is None else float(value)
    return math.nan if item is None else float(item)


def _counts_matrix(hists: Sequence[LatencyHistogram] | np.ndarray) -> tuple[np.ndarray, list]:
    if isinstance(hists, np.ndarray):
        counts = np.asarray(hists, dtype=np.int64)
        if counts.ndim != 2 or counts.shape[1] > LAYOUT.counts_len:
            raise ValueError("a counts matrix must be runs x LAYOUT.counts_len")
    else:
        rows = [h.counts for h in hists]
        counts = np.vstack(rows) if rows else np.zeros((0, LAYOUT.counts_len), dtype=np.int64)
    empty = counts.sum(axis=1) == 0
    warnings = []
    if empty.any():
        warnings.append(f"{int(empty.sum())} runs have an empty histogram and were left out")
        counts = counts[~empty]
    return counts, warnings


def _ranks(totals: np.ndarray, q: float) -> np.ndarray:
    """hdrh's rank of percentile q among ``totals`` values: max(1, floor(q N / 100 + 0.5))."""
    return np.maximum(np.floor(q * totals / 100.0 + 0.5), 1.0)


def _positions(cum: np.ndarray, q: float) -> np.ndarray:
    """Index of the first bucket whose cumulative count reaches the rank, per row."""
    ranks = _ranks(cum[:, -1], q)
    return (cum < ranks[:, None]).sum(axis=1)


def _resample_weights(rng: np.random.Generator, n_runs: int, size: int) -> np.ndarray:
    """How often each run is drawn in each resample (size x n_runs)."""
    picks = rng.integers(0, n_runs, size=(size, n_runs))
    flat = (picks + n_runs * np.arange(size)[:, None]).ravel()
    return np.bincount(flat, minlength=size * n_runs).reshape(size, n_runs).astype(np.float64)


def _resampled_positions(cum: np.ndarray, weights: np.ndarray, q: float) -> np.ndarray:
    """Bucket index of percentile q in every resample, multiplying only a window of buckets.

    The pooled percentile lies between the smallest and the largest per-run percentile, so
    only those buckets (plus a guard column each side) are multiplied; a resample whose rank
    falls outside the window (possible only through rounding of ranks) is redone in full.
    """
    per_run = _positions(cum, q)
    lo = max(int(per_run.min()) - 2, 0)
    hi = min(int(per_run.max()) + 2, cum.shape[1] - 1)
    ranks = _ranks(weights @ cum[:, -1], q)
    window = weights @ cum[:, lo:hi + 1]
    pos = (window < ranks[:, None]).sum(axis=1)
    out = lo + pos
    redo = ((pos == 0) & (lo > 0)) | (pos > hi - lo)
    if redo.any():
        full = weights[redo] @ cum
        out[redo] = (full < ranks[redo, None]).sum(axis=1)
    return out


def _check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), e.g. 0.95; got {confidence!r}")
