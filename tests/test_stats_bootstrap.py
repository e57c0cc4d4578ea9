"""Across-runs percentile intervals: the cluster bootstrap and the small-n t-interval."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from perfkit.histogram import LAYOUT, LatencyHistogram
from perfkit.model import Run
from perfkit.stats import cluster_bootstrap_quantile, percentile_ci_across_runs, t_log_interval
from perfkit.stats.bootstrap import _resampled_positions


def _runs(n_runs: int, n_requests: int = 3000, seed: int = 1) -> list[LatencyHistogram]:
    rng = np.random.default_rng(seed)
    return [LatencyHistogram.from_values_us(
        np.exp(rng.normal(7.0 + rng.normal(0, 0.05), 0.5, n_requests))) for _ in range(n_runs)]


def test_resampled_positions_equal_explicit_merges():
    hists = _runs(8)
    counts = np.vstack([h.counts for h in hists])
    nz = np.flatnonzero(counts.any(axis=0))
    first = nz[0]
    cum = np.cumsum(counts[:, first:nz[-1] + 1], axis=1, dtype=np.float64)
    rng = np.random.default_rng(5)
    weights = rng.multinomial(8, [1 / 8] * 8, size=60).astype(np.float64)
    # extreme resamples (one run repeated) stress the search's edges
    weights[:8] = np.eye(8) * 8
    for q in (50.0, 99.0, 99.9, 100.0):
        got = _resampled_positions(cum, weights, q) + first
        for row, idx in zip(weights, got, strict=True):
            merged = LatencyHistogram.merge(
                [h for h, w in zip(hists, row, strict=True) for _ in range(int(w))])
            assert LAYOUT.highest[idx] == merged.percentile_us(q)


def test_cluster_bootstrap_estimate_is_the_merged_percentile_and_inside_the_interval():
    hists = _runs(12)
    ci = cluster_bootstrap_quantile(hists, 99, n_resamples=400, seed=2)
    assert ci.estimate_ms == LatencyHistogram.merge(hists).percentile_ms(99)
    assert ci.low_ms <= ci.estimate_ms <= ci.high_ms
    assert ci.method == "cluster_bootstrap" and ci.n_runs == 12
    again = cluster_bootstrap_quantile(hists, 99, n_resamples=400, seed=2)
    assert again == ci


def test_cluster_bootstrap_of_identical_runs_has_no_width():
    one = _runs(1)[0]
    ci = cluster_bootstrap_quantile([one] * 10, 99, n_resamples=100)
    assert ci.low_ms == ci.high_ms == ci.estimate_ms == one.percentile_ms(99)


def test_cluster_bootstrap_accepts_a_counts_matrix():
    hists = _runs(10)
    a = cluster_bootstrap_quantile(hists, 99.9, n_resamples=300, seed=4)
    b = cluster_bootstrap_quantile(np.vstack([h.counts for h in hists]), 99.9, 300, seed=4)
    assert a == b


def test_cluster_bootstrap_refuses_a_fraction_for_a_percentile():
    with pytest.raises(ValueError, match="percentile must be in"):
        cluster_bootstrap_quantile(_runs(3), 0.99)


def test_few_runs_warn_in_the_plain_bootstrap():
    ci = cluster_bootstrap_quantile(_runs(5), 99, n_resamples=100)
    assert any("under-covers" in w for w in ci.warnings)


def test_t_log_interval_matches_scipy_t_interval_on_logs():
    values = np.array([3.1, 2.9, 3.4, 3.0, 3.3])
    ci = t_log_interval(values, 99)
    logs = np.log(values)
    lo, hi = sps.t.interval(0.95, len(values) - 1, loc=logs.mean(), scale=sps.sem(logs))
    assert ci.low_ms == pytest.approx(math.exp(lo), rel=1e-12)
    assert ci.high_ms == pytest.approx(math.exp(hi), rel=1e-12)
    assert ci.estimate_ms == pytest.approx(math.exp(logs.mean()), rel=1e-12)
    assert ci.estimand == "geometric mean of per-run p99"


@pytest.mark.parametrize("n_runs", [3, 5, 12, 30])
def test_with_histograms_the_interval_is_centred_at_the_pooled_percentile(n_runs):
    hists = _runs(n_runs)
    ci = percentile_ci_across_runs(hists, 99)
    pooled = LatencyHistogram.merge(hists).percentile_ms(99)
    logs = np.log([h.percentile_ms(99) for h in hists])
    half = sps.t.ppf(0.975, n_runs - 1) * sps.sem(logs)
    assert ci.method == "t_log" and ci.estimand.startswith("p99 of all requests pooled")
    assert ci.estimate_ms == pooled
    assert ci.low_ms == pytest.approx(pooled * math.exp(-half), rel=1e-12)
    assert ci.high_ms == pytest.approx(pooled * math.exp(half), rel=1e-12)
    assert any("only 3 runs" in w for w in ci.warnings) == (n_runs < 5)


def test_a_counts_matrix_gives_the_same_interval_as_histograms():
    hists = _runs(7)
    a = percentile_ci_across_runs(hists, 99.9)
    b = percentile_ci_across_runs(np.vstack([h.counts for h in hists]), 99.9)
    assert a == b


def test_the_cluster_bootstrap_can_be_asked_for():
    ci = percentile_ci_across_runs(_runs(10), 99, n_resamples=200, method="cluster_bootstrap")
    assert ci.method == "cluster_bootstrap"
    with pytest.raises(ValueError, match="histogram for every run"):
        percentile_ci_across_runs([1.0, 2.0], 99, method="cluster_bootstrap")


def test_printed_per_run_values_estimate_the_geometric_mean():
    ci = percentile_ci_across_runs([2.0 + 0.01 * i for i in range(12)], 99)
    assert ci.method == "t_log" and ci.estimand == "geometric mean of per-run p99"


def test_failed_runs_are_left_out_with_a_warning_never_silently():
    values = [2.0, 2.1, None, 1.9, float("nan"), 2.2]
    ci = percentile_ci_across_runs(values, 99)
    assert ci.n_runs == 4
    assert any("2 of 6 runs have no usable p99" in w for w in ci.warnings)
    hists = _runs(6)
    ci = percentile_ci_across_runs([*hists, None, LatencyHistogram()], 99)
    assert ci.n_runs == 6 and "2 of 8 runs have no usable p99" in ci.warnings[0]


def test_runs_give_their_histogram_else_their_printed_percentile():
    hist = _runs(1)[0]
    with_hist = Run(tool="wrk2", source="x", latency_source="hdr_corrected", histogram=hist)
    printed = Run(tool="wrk", source="y", latency_source="summary_only",
                  percentiles_ms={99: 4.0})
    ci = percentile_ci_across_runs([with_hist, printed], 99)
    assert ci.method == "t_log" and ci.n_runs == 2
    assert ci.estimate_ms == pytest.approx(math.sqrt(hist.percentile_ms(99) * 4.0))


def test_one_run_has_no_across_runs_interval():
    ci = percentile_ci_across_runs([3.0], 99)
    assert (ci.low_ms, ci.high_ms) == (0.0, math.inf)
    assert any("one run" in w for w in ci.warnings)
