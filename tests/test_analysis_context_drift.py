"""The drift check (:mod:`perfkit.analysis.context._drift`): a Theil-Sen slope with Sen's interval
and Kendall's test, cross-checked against scipy, calibrated on synthetic series with a known drift
and with outliers (coverage, size and power measured here), and on the bundled sweep whose two
saturated runs made the least-squares trend "inconclusive -5.8% [-66, +163]"."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from perfkit.analysis import load_experiment
from perfkit.analysis.context import _drift as drift
from perfkit.vocabulary import DriftVerdict

ROOT = Path(__file__).resolve().parents[1]
N_RUNS = 48
REPS = 300


def _series(rng, change: float, outliers: int) -> pd.DataFrame:
    """48 runs in order, log residuals drifting by ``change`` (0.10: +10%) from the first run
    to the last, noise sd 0.05, and ``outliers`` runs at +-4 (a saturated run's log residual
    on the bundled sweep is +3.9 to +4.3)."""
    order = np.arange(1.0, N_RUNS + 1)
    y = math.log1p(change) / (N_RUNS - 1) * order + rng.normal(0.0, 0.05, N_RUNS)
    idx = rng.choice(N_RUNS, outliers, replace=False)
    y[idx] += rng.choice([-4.0, 4.0], outliers)
    return pd.DataFrame({"order": order, "residual": y})


def _ols_rejects(res: pd.DataFrame) -> bool:
    return sps.linregress(res["order"], res["residual"]).pvalue < 0.05


def test_theil_sen_is_scipys_slope_and_interval_and_kendalls_p():
    rng = np.random.default_rng(11)
    for n in (6, 12, 48):
        x = np.arange(float(n))
        y = 0.004 * x + rng.normal(0, 0.05, n)
        slope, low, high, p = drift.theil_sen(x, y, 0.95)
        ref = sps.theilslopes(y, x, alpha=0.95)
        assert slope == pytest.approx(ref.slope)
        slopes = np.sort([(y[j] - y[i]) / (x[j] - x[i]) for i in range(n)
                          for j in range(i + 1, n)])
        # Sen's interval: the same order statistics as scipy's, up to its rounding (one step)
        for mine, theirs in ((low, ref.low_slope), (high, ref.high_slope)):
            k, m = np.searchsorted(slopes, [mine, theirs])
            assert abs(int(k) - int(m)) <= 1
        assert p == pytest.approx(sps.kendalltau(x, y, method="asymptotic").pvalue)


def test_the_test_and_the_interval_agree():
    rng = np.random.default_rng(5)
    for _ in range(200):
        res = _series(rng, rng.uniform(-0.1, 0.1), 0)
        d = drift.residual_trend(res)
        excludes = d.ci_low_pct > 0 or d.ci_high_pct < 0
        assert (d.p_value < 0.05) == excludes, d


def test_coverage_and_size_with_outliers():
    # a 10% drift with two wild runs: Sen's interval covers the truth about 95% of the time and
    # the test finds the drift about 9 times in 10; least squares, pulled by the outliers,
    # finds it about 1 time in 25. With no drift, the test keeps its level.
    rng = np.random.default_rng(20261201)
    covered = found = ols_found = false = 0
    for _ in range(REPS):
        res = _series(rng, 0.10, 2)
        d = drift.residual_trend(res)
        covered += d.ci_low_pct <= 10.0 <= d.ci_high_pct
        found += d.verdict == drift.DRIFT and d.change_pct > 0
        ols_found += _ols_rejects(res)
        false += drift.residual_trend(_series(rng, 0.0, 2)).verdict == drift.DRIFT
    assert covered / REPS >= 0.90
    assert found / REPS >= 0.80 and ols_found / REPS <= 0.15
    assert false / REPS <= 0.09


def test_no_drift_within_the_tolerance_is_stated_as_such():
    rng = np.random.default_rng(2)
    d = drift.residual_trend(_series(rng, 0.0, 2))
    assert d.verdict == drift.STABLE and -10 <= d.ci_low_pct <= d.ci_high_pct <= 10


def test_too_few_runs_give_an_unbounded_interval_not_a_verdict_of_no_drift():
    d = drift.residual_trend(pd.DataFrame({"order": [1.0, 2.0, 3.0], "residual": [0.0, 0.1, 0.2]}))
    assert d.ci_low_pct == -100.0 and math.isinf(d.ci_high_pct)
    assert d.verdict == drift.INCONCLUSIVE


def test_the_sweeps_saturated_runs_no_longer_decide_its_drift():
    # two saturated 45k runs (p50 498 ms, and 1050 ms on the 1 s cap) made the least-squares
    # trend "inconclusive -5.8% [-66, +163]"; left out (stated) and with a robust slope the
    # trend is a few percent with an interval within +-10%
    exp = load_experiment(ROOT / "data" / "demo-wrk2-sweep")
    d = drift.check_drift(exp, "latency_p50_ms")
    assert d.left_out == 2 and d.runs == 46
    assert -10 < d.ci_low_pct < d.change_pct < d.ci_high_pct < 10
    everything = drift.drift_residuals(exp.rows(), "latency_p50_ms", ["profile", "connections",
                                                                 "target_rate_rps"])
    robust = drift.residual_trend(everything)  # even with the saturated runs kept
    assert -10 < robust.ci_low_pct and robust.ci_high_pct < 10


def test_the_method_is_stated():
    text = drift.describe_drift()
    assert "Theil-Sen" in text and "Kendall" in text and "failed or saturated" in text


def test_a_rounded_metric_cannot_rule_a_drift_out():
    # Locust rounds response times (a p50 of 2 ms is anything in [1.5, 2.5)): demo-locust's
    # p50 residuals tie in about half the run pairs, Sen's interval shrinks to [0, 0], and
    # "no drift beyond 10%" would claim what no rounded value supports; a zero-width
    # interval is no interval: missing, never printed as "+0% [+0%, +0%]" (issue 21)
    d = drift.check_drift(load_experiment(ROOT / "data" / "demo-locust"), "latency_p50_ms")
    assert math.isnan(d.ci_low_pct) and math.isnan(d.ci_high_pct)
    assert d.verdict == drift.INCONCLUSIVE and "tie exactly in 48% of the run pairs" in d.note
    from perfkit.formatting import fmt_ci
    assert fmt_ci(d.change_pct, d.ci_low_pct, d.ci_high_pct, "%", 2) == "+0% [no CI]"
    continuous = drift.check_drift(load_experiment(ROOT / "data" / "demo-locust"), "throughput_rps")
    assert continuous.verdict == drift.STABLE and continuous.note == ""


def test_the_drift_threat_prints_its_change_as_the_overview_answer_does():
    """One drift, one text: the threat on each page and the overview's answer give the same
    change and interval (2 significant digits), not -8% in one place and -7.8% in the other."""
    from perfkit.analysis import load_experiment
    from perfkit.analysis.context import _drift as drift
    from perfkit.analysis.context import threats
    from perfkit.formatting import fmt_ci

    # demo-wrk-connections drifted (demo-wrk-factorial, re-recorded with counters, did not)
    exp = load_experiment(Path(__file__).resolve().parents[1] / "data" / "demo-wrk-connections")
    # the drift measured, then what a drift does (one sentence of its own)
    threat, about = [t for t in threats(exp) if t.kind == "drift"]
    assert about.text.startswith(f"{exp.name}: randomized order keeps drift")
    for metric in threat.metrics:
        d = drift.check_drift(exp, metric)
        assert f"{metric} {fmt_ci(d.change_pct, d.ci_low_pct, d.ci_high_pct, '%', 2)} " \
            in threat.text


def test_a_wide_drift_interval_is_inconclusive():
    # not significant (p 0.4), but the change's interval [-66%, +163%] reaches far beyond the
    # tolerance: no drift is ruled out
    assert drift.drift_verdict(0.4, -66.0, 163.0) == DriftVerdict.INCONCLUSIVE


def test_a_trend_over_10000_runs_is_from_2000_evenly_spaced_ones_and_says_so():
    """Theil-Sen's pairs grow as the square of the runs (50 million at 10,000): above
    TREND_RUNS runs the trend thins them by position, bounded in memory, and its note says so;
    the subsample is every 5th run here, and it finds the trend put in."""
    import tracemalloc

    rng = np.random.default_rng(6)
    n = 10_000
    order = rng.permutation(n).astype(float)
    res = pd.DataFrame({"order": order, "cell": "a",
                        "residual": 2e-5 * order + 0.05 * rng.standard_normal(n)})
    tracemalloc.start()
    try:
        d = drift.residual_trend(res)
        peak_bytes = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak_bytes < n * n / 2 * 8 / 2  # the slopes alone would be 400 MB
    assert d is not None and d.verdict == DriftVerdict.DRIFT and d.runs == n
    assert d.ci_low_pct < 100 * math.expm1(2e-5 * (n - 1)) < d.ci_high_pct
    assert f"{drift.TREND_RUNS} of the {n} runs" in d.note
    kept = drift.thinned(order)
    assert len(kept) == drift.TREND_RUNS and np.array_equal(np.sort(order[kept]),
                                                            np.arange(0, n, 5))
