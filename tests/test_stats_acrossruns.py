"""percentile_ci_across_runs: the median run's percentile, one number whatever the input kind."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from _values import median_run_value
from scipy import stats as sps

from perfkit.histogram import LatencyHistogram
from perfkit.model import Run
from perfkit.stats import (
    ESTIMAND,
    estimand_label,
    interpolated_median_ci,
    median_ci,
    per_run_percentiles_ms,
    percentile_ci_across_runs,
)
from perfkit.stats import simulate as sim
from perfkit.warning import Code, Warn


def codes(ci) -> set[Code]:
    return {w.code for w in ci.warnings}


def _runs(n_runs: int, n_requests: int = 3000, seed: int = 1) -> list[LatencyHistogram]:
    rng = np.random.default_rng(seed)
    return [LatencyHistogram.from_values_us(
        np.exp(rng.normal(7.0 + rng.normal(0, 0.2), 0.5, n_requests))) for _ in range(n_runs)]


def _printed(hist: LatencyHistogram, q: float = 99.0, **kw) -> Run:
    return Run(tool="wrk", source="x", latency_source="summary_only",
               percentiles_ms={q: hist.percentile_ms(q)}, **kw)


def _hs_reference(x: np.ndarray, c: float = 0.95) -> tuple[float, float]:
    """Hettmansperger-Sheather (1986) written out: d = deepest order with coverage >= c."""
    x = np.sort(x)
    n = len(x)

    def g(d):  # coverage of (x_(d), x_(n-d+1))
        return 1 - 2 * sps.binom.cdf(d - 1, n, 0.5)

    d = 1
    while g(d + 1) >= c:
        d += 1
    i = (g(d) - c) / (g(d) - g(d + 1))
    lam = (n - d) * i / (d + (n - 2 * d) * i)
    return (1 - lam) * x[d - 1] + lam * x[d], (1 - lam) * x[n - d] + lam * x[n - d - 1]


def test_the_estimate_is_the_median_of_per_run_percentiles_with_hs_bounds():
    hists = _runs(12)
    ci = percentile_ci_across_runs(hists, 99)
    per = np.array([h.percentile_ms(99) for h in hists])
    assert ci.estimate_ms == np.median(per)
    assert (ci.low_ms, ci.high_ms) == pytest.approx(_hs_reference(per), rel=1e-12)
    assert ci.method == "order_stats" and ci.estimand == "median of per-run p99"
    assert ci.estimand == estimand_label(99) and ESTIMAND == "median of per-run percentiles"
    assert ci.achieved_confidence == 0.95 and ci.n_runs == 12 and ci.warnings == ()
    assert per_run_percentiles_ms(hists, 99) == pytest.approx(per)


def test_histograms_counts_runs_and_printed_values_give_the_same_number():
    hists = _runs(9)
    per = [h.percentile_ms(99) for h in hists]
    with_hist = [Run(tool="wrk2", source=f"r{i}", latency_source="hdr_corrected", histogram=h)
                 for i, h in enumerate(hists)]
    results = [percentile_ci_across_runs(items, 99) for items in (
        hists, np.vstack([h.counts for h in hists]), with_hist, [_printed(h) for h in hists],
        per)]
    assert all(r == results[0] for r in results)


def test_a_run_gives_its_printed_percentile_else_its_histograms():
    hist = _runs(1)[0]
    both = Run(tool="wrk2", source="x", latency_source="hdr_corrected", histogram=hist,
               percentiles_ms={99: 4.0})
    assert per_run_percentiles_ms([both], 99)[0] == 4.0
    assert per_run_percentiles_ms([both], 99.9)[0] == hist.percentile_ms(99.9)
    printed_only = Run(tool="wrk", source="y", latency_source="summary_only",
                       percentiles_ms={99: 4.0})
    assert math.isnan(per_run_percentiles_ms([printed_only], 99.9)[0])


def test_the_interval_shrinks_as_runs_are_added():
    rng = np.random.default_rng(3)
    def width(n):
        m = interpolated_median_ci(rng.lognormal(0, 0.3, n))
        return m.high - m.low

    widths = {n: np.mean([width(n) for _ in range(4000)]) for n in (5, 6, 8, 10, 15, 20, 30)}
    assert list(widths.values()) == sorted(widths.values(), reverse=True)


def test_five_runs_give_their_range_with_its_exact_coverage():
    ci = percentile_ci_across_runs([3.0, 1.0, 2.0, 5.0, 4.0], 99)
    assert (ci.estimate_ms, ci.low_ms, ci.high_ms) == (3.0, 1.0, 5.0)
    assert ci.achieved_confidence == 0.9375
    assert Warn(Code.MEDIAN_CI_RANGE, runs=5, coverage=0.9375) in ci.warnings
    assert "93.75%" in str(Warn(Code.MEDIAN_CI_RANGE, runs=5, coverage=0.9375))


def test_few_runs_fall_back_to_a_t_interval_on_logs_and_say_so():
    values = [2.0, 2.2, 2.1]
    ci = percentile_ci_across_runs(values, 99)
    logs = np.log(values)
    lo, hi = sps.t.interval(0.95, 2, loc=logs.mean(), scale=sps.sem(logs))
    # the value is the interval's own centre: the geometric mean (the median of a log-normal)
    assert ci.estimate_ms == pytest.approx(math.exp(logs.mean()), rel=1e-12)
    assert ci.method == "median_t_log"
    assert ci.estimand.startswith("median run's p99, estimated as the geometric mean of 3 runs")
    assert (ci.low_ms, ci.high_ms) == pytest.approx((math.exp(lo), math.exp(hi)), rel=1e-12)
    assert math.sqrt(ci.low_ms * ci.high_ms) == pytest.approx(ci.estimate_ms, rel=1e-12)
    assert Warn(Code.FEW_RUNS_LOG_NORMAL, runs=3, q=99.0, few=5) in ci.warnings


def test_one_run_has_no_across_runs_interval():
    ci = percentile_ci_across_runs([3.0], 99)
    assert ci.estimate_ms == 3.0 and (ci.low_ms, ci.high_ms) == (0.0, math.inf)
    (none,) = [w for w in ci.warnings if w.code is Code.MEDIAN_CI_NONE]
    assert (none["runs"], none["confidence"], none["need"]) == (1, 0.95, 5)


def test_ties_keep_the_exact_closed_interval():
    values = [1.0, 1.01, 1.0, 1.02, 1.0, 1.01, 1.0, 1.0, 1.03, 1.0]
    ci = interpolated_median_ci(values)
    exact = median_ci(values)
    assert (ci.low, ci.high) == (exact.low, exact.high) == (1.0, 1.02)  # x_(2), x_(9)
    assert ci.achieved_confidence == pytest.approx(1 - 2 * sps.binom.cdf(1, 10, 0.5))


def test_failed_runs_are_left_out_or_ranked_slowest_never_silently():
    values = [2.0, 2.1, None, 1.9, float("nan"), 2.2]
    ci = percentile_ci_across_runs(values, 99)
    assert ci.n_runs == 4
    assert ci.estimate_ms == pytest.approx(median_run_value([2.0, 2.1, 1.9, 2.2]))
    assert Warn(Code.RUNS_LEFT_OUT, missing=2, runs=6, q=99.0) in ci.warnings
    slow = percentile_ci_across_runs(values + [2.3, 2.4], 99, failed="slowest")
    assert slow.n_runs == 8 and slow.estimate_ms == pytest.approx(2.25)
    assert slow.high_ms == math.inf and Code.RUNS_RANKED_SLOWEST in codes(slow)
    hists = _runs(6)
    ci = percentile_ci_across_runs([*hists, None, LatencyHistogram()], 99)
    assert ci.n_runs == 6 and ci.warnings[0] == Warn(Code.RUNS_LEFT_OUT, missing=2, runs=8,
                                                     q=99.0)
    with pytest.raises(ValueError, match="failed"):
        percentile_ci_across_runs(values, 99, failed="zero")


def test_a_slow_run_does_not_drag_the_median_run():
    fast = [3.0, 3.1, 2.9, 3.05, 2.95, 3.02, 2.98, 3.01, 2.99]
    ci = percentile_ci_across_runs([*fast, 1000.0], 99)  # one run on a 1 s SYN retry
    gm = percentile_ci_across_runs([*fast, 1000.0], 99, method="t_log")
    assert ci.estimate_ms == pytest.approx(3.005) and ci.high_ms < 3.2
    assert gm.estimate_ms > 5 and gm.estimand == "geometric mean of per-run p99"


def test_a_percentile_inside_a_pause_mode_is_warned():
    scenario = sim.ISSUE_SCENARIOS[3]
    counts = sim.histogram_counts(sim.log_latencies_us(scenario, np.random.default_rng(5), 5))
    ci = percentile_ci_across_runs(counts, 99)
    assert Code.PERCENTILE_ON_JUMP in codes(ci)
    steady = sim.histogram_counts(sim.log_latencies_us(sim.ISSUE_SCENARIOS[1],
                                                       np.random.default_rng(5), 5))
    assert Code.PERCENTILE_ON_JUMP not in codes(percentile_ci_across_runs(steady, 99))


def _wrk_runs(scenario: sim.Scenario, n: int, seed: int) -> list[Run]:
    """Runs as wrk gives them: p50/75/90/99 printed with 2 decimals, no histogram."""
    logs = sim.log_latencies_us(scenario, np.random.default_rng(seed), n)
    printed = {q: np.round(sim.run_percentiles_ms(logs, q), 2) for q in (50.0, 75.0, 90.0, 99.0)}
    return [Run(tool="wrk", source=f"run{i}", latency_source="summary_only",
                percentiles_ms={q: float(v[i]) for q, v in printed.items()}) for i in range(n)]


def test_printed_percentiles_whose_tails_differ_between_runs_give_the_exact_interval():
    """Issue 34: with pauses, p99 falls inside the stall in some runs and below it in others;
    from printed percentiles the interpolated interval covered 0.92-0.94 at 10 runs. The runs'
    p99 / p90 tells them apart: the exact order statistics, and a coded warning."""
    pauses = dataclasses.replace(sim.ISSUE_SCENARIOS[3], requests=4000)
    runs = _wrk_runs(pauses, 10, seed=3)
    values = [r.percentiles_ms[99.0] for r in runs]
    ci = percentile_ci_across_runs(runs, 99)
    (modes,) = [w for w in ci.warnings if w.code is Code.PRINTED_TAIL_MODES]
    assert (modes["q"], modes["shape_q"], modes["runs"]) == (99.0, 90.0, 10)
    assert modes["ratio"] > 4 * modes["least"] and 1 <= modes["modes"] < 10
    exact = interpolated_median_ci(values, interpolate=False)
    assert (ci.low_ms, ci.high_ms) == (exact.low, exact.high)
    assert ci.achieved_confidence == pytest.approx(exact.achieved_confidence)
    bare = percentile_ci_across_runs(values, 99)  # the values alone cannot show it
    assert Code.PRINTED_TAIL_MODES not in codes(bare) and bare.high_ms < ci.high_ms
    steady = _wrk_runs(dataclasses.replace(sim.ISSUE_SCENARIOS[1], requests=4000), 10, seed=3)
    quiet = percentile_ci_across_runs(steady, 99)
    assert Code.PRINTED_TAIL_MODES not in codes(quiet)
    assert (quiet.low_ms, quiet.high_ms) == pytest.approx(
        (percentile_ci_across_runs([r.percentiles_ms[99.0] for r in steady], 99).low_ms,
         percentile_ci_across_runs([r.percentiles_ms[99.0] for r in steady], 99).high_ms))


def test_runs_with_few_requests_beyond_the_percentile_are_warned():
    hists = _runs(6, n_requests=500)  # 5 requests beyond p99 per run
    ci = percentile_ci_across_runs(hists, 99)
    (thin,) = [w for w in ci.warnings if w.code is Code.THIN_TAILS]
    assert (thin["least"], thin["fewest"], thin["q"]) == (10, 5, 99.0)
    printed = [_printed(h, requests=500) for h in hists]
    assert Code.THIN_TAILS in codes(percentile_ci_across_runs(printed, 99))
    assert Code.THIN_TAILS not in codes(percentile_ci_across_runs(hists, 90))


def test_a_trend_with_the_run_order_is_warned_when_the_order_is_known():
    hists = _runs(8, seed=2)
    per = sorted(h.percentile_ms(99) for h in hists)
    by_value = sorted(hists, key=lambda h: h.percentile_ms(99))
    runs = [_printed(h, order=i) for i, h in enumerate(by_value)]
    ci = percentile_ci_across_runs(runs, 99)
    assert ci.estimate_ms == np.median(per)
    (drift,) = [w for w in ci.warnings if w.code is Code.PER_RUN_DRIFT]
    assert drift["tau"] > 0 and "rises with the run order" in str(drift)
    shuffled = [_printed(h, order=i) for i, h in enumerate(hists)]
    assert Code.PER_RUN_DRIFT not in codes(percentile_ci_across_runs(shuffled, 99))
    assert Code.PER_RUN_DRIFT not in codes(percentile_ci_across_runs(per, 99))
    stamped = [_printed(h, start_utc=f"2024-05-01T10:{i:02d}:00Z") for i, h in
               enumerate(by_value)]
    assert Code.PER_RUN_DRIFT in codes(percentile_ci_across_runs(stamped, 99))


def test_the_simulated_runs_report_what_their_histograms_report():
    scenario = sim.Scenario("check", run_sd=0.3, requests=5000)
    logs = sim.log_latencies_us(scenario, np.random.default_rng(1), 4)
    counts = sim.histogram_counts(logs)
    for q in (50.0, 99.0, 99.9):
        hist_values = [LatencyHistogram.from_counts(c).percentile_ms(q) for c in counts]
        assert sim.run_percentiles_ms(logs, q) == pytest.approx(hist_values, rel=0, abs=0)


def test_unknown_method_or_fraction_is_refused():
    with pytest.raises(ValueError, match="method"):
        percentile_ci_across_runs([1.0, 2.0], 99, method="bca")
    with pytest.raises(ValueError, match="percentile must be in"):
        percentile_ci_across_runs([1.0, 2.0], 0.99)
    with pytest.raises(ValueError, match="failed='slowest' needs"):
        percentile_ci_across_runs([1.0, 2.0], 99, method="t_log", failed="slowest")
