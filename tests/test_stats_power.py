"""Power and minimum detectable effect: engine against brute force, and calibration.

The calibration test is the fast version of benchmarks/calibration_power.py: pilots drawn from
a known distribution state an 80% detectable ratio, and fresh experiments from the truth at
that ratio must detect it about 80% of the time (within 5 points plus twice the Monte Carlo
error of the mean over pilots).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats as sps

from perfkit.stats import min_detectable_ratio, power_at_ratio, runs_needed
from perfkit.stats.powersim import noether_runs_per_arm, upper_critical_u
from perfkit.warning import Code, Warn


def _scipy_power(n_b: int, n_n: int, shift: float, sd: float, sims: int = 4000,
                 seed: int = 99, alpha: float = 0.05) -> float:
    """Rejection rate of scipy's exact two-sided test on normal log values: independent."""
    rng = np.random.default_rng(seed)
    base = sd * rng.standard_normal((sims, n_b))
    new = sd * rng.standard_normal((sims, n_n)) + shift
    method = "exact" if max(n_b, n_n) <= 25 else "asymptotic"
    p = sps.mannwhitneyu(new, base, axis=1, method=method).pvalue
    return float(np.mean(p < alpha))


def _se(p: float, n: int) -> float:
    return math.sqrt(p * (1 - p) / n)


def test_critical_u_matches_the_exact_null_of_five_versus_five():
    # P(U <= 2) = 4/252: p(23) = 0.0317 < 0.05 and p(22) = 2 * 7/252 = 0.0556
    assert upper_critical_u(5, 5, 0.05) == 23
    assert upper_critical_u(3, 3, 0.05) is None
    assert upper_critical_u(3, 3, 0.11) == 9


@pytest.mark.parametrize("n_b,n_n", [(5, 5), (4, 7), (10, 10), (30, 30)])
def test_power_at_the_stated_ratio_is_the_stated_power_by_scipy(n_b, n_n):
    mde = min_detectable_ratio(n_base=n_b, n_new=n_n, log_sd=0.05, seed=3)
    assert mde.testable and mde.ratio_high > 1 > mde.ratio_low
    for ratio in (mde.ratio_high, mde.ratio_low):
        got = _scipy_power(n_b, n_n, math.log(ratio), 0.05)
        assert abs(got - 0.8) <= 3 * math.hypot(_se(0.8, 4000), mde.mc_se), (ratio, got)


def test_power_at_ratio_agrees_with_scipy():
    got = power_at_ratio(1.08, n_base=6, n_new=6, log_sd=0.05, seed=1)
    ref = _scipy_power(6, 6, math.log(1.08), 0.05)
    assert abs(got.power - ref) <= 3 * math.hypot(got.mc_se, _se(ref, 4000))


def test_normal_spread_is_symmetric_and_more_runs_detect_less():
    mdes = [min_detectable_ratio(n_base=n, n_new=n, log_sd=0.08) for n in (5, 8, 12, 20)]
    highs = [m.ratio_high for m in mdes]
    assert highs == sorted(highs, reverse=True)
    for m in mdes:
        assert math.log(m.ratio_high) == pytest.approx(-math.log(m.ratio_low), rel=0.05)


def test_the_ratio_scales_with_the_spread():
    small = min_detectable_ratio(n_base=6, n_new=6, log_sd=0.05, seed=2)
    large = min_detectable_ratio(n_base=6, n_new=6, log_sd=0.10, seed=2)
    assert math.log(large.ratio_high) == pytest.approx(2 * math.log(small.ratio_high))


def test_five_versus_five_under_holm_over_twelve_is_not_testable():
    # issue 14 item 1: smallest p 0.0079, Holm over 12 rows needs p < 0.0042
    rng = np.random.default_rng(0)
    base, new = rng.lognormal(0, 0.05, 5), rng.lognormal(0, 0.05, 5)
    one = min_detectable_ratio(base, new)
    assert one.testable and one.family_size == 1
    held = min_detectable_ratio(base, new, family_size=12)
    assert not held.testable and held.ratio_high is None and held.regression_ratio is None
    assert held.alpha_adjusted == pytest.approx(0.05 / 12)
    assert held.runs_needed_per_arm == 6
    assert "needs >= 6 runs per arm or fewer comparisons" in held.reason
    assert held.statement.startswith("not testable with 5 vs 5 runs")


def test_three_versus_three_is_not_testable_at_five_percent():
    got = min_detectable_ratio([1.0, 1.1, 1.05], [1.2, 1.0, 1.1])
    assert not got.testable and got.runs_needed_per_arm == 4
    assert "0.1, not below alpha 0.05" in got.reason


def test_directions_follow_lower_is_better():
    lat = min_detectable_ratio(n_base=5, n_new=5, log_sd=0.05)
    rps = min_detectable_ratio(n_base=5, n_new=5, log_sd=0.05, lower_is_better=False)
    assert lat.regression_ratio == lat.ratio_high and rps.regression_ratio == rps.ratio_low
    assert "could have detected >= +" in lat.statement and "at 80% power" in lat.statement


def test_runs_needed_is_the_first_design_that_reaches_the_power():
    got = runs_needed(1.05, log_sd=0.05, seed=4)
    n = got.runs_per_arm
    assert n is not None and got.power_stated >= 0.8
    before = power_at_ratio(1.05, n_base=n - 1, n_new=n - 1, log_sd=0.05, seed=4)
    assert before.power < 0.8
    # Noether's large-sample formula agrees within a few runs at this size
    assert got.noether_runs_per_arm == pytest.approx(n, rel=0.15)
    assert noether_runs_per_arm(0.05, math.log(1.05), 0.05, 0.8) == got.noether_runs_per_arm


def test_runs_needed_beyond_the_limit_is_none_with_a_warning():
    got = runs_needed(1.01, log_sd=0.1, max_runs=40)
    assert got.runs_per_arm is None and got.power_stated is None
    assert got.warnings[0] == Warn(Code.MORE_RUNS_THAN, runs=40)
    assert got.noether_runs_per_arm > 1000


def test_observed_values_give_the_spread_and_warn_about_failures_and_ties():
    base = [10.0, 10.5, None, 9.8, 10.2]
    new = [10.1, 10.1, 9.9, float("nan"), 10.4]
    got = min_detectable_ratio(base, new, n_sim=500)
    logs = [np.log([10.0, 10.5, 9.8, 10.2]), np.log([10.1, 10.1, 9.9, 10.4])]
    resid = np.concatenate([v - v.mean() for v in logs])
    assert got.log_sd == pytest.approx(math.sqrt(np.sum(resid ** 2) / 6))
    assert (got.n_base, got.n_new) == (4, 4)
    assert Warn(Code.RUNS_LEFT_OUT_OF_SPREAD, side="base", runs=1) in got.warnings
    assert Warn(Code.TIED_VALUES) in got.warnings
    assert Code.SPREAD_FEW_DF not in {w.code for w in got.warnings}
    json.dumps(got.to_dict())


def test_bad_input_is_refused_with_the_reason():
    with pytest.raises(ValueError, match="> 0"):
        min_detectable_ratio([1.0, 0.0, 2.0], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="not both"):
        min_detectable_ratio([1.0, 2.0], [1.0, 2.0], log_sd=0.1)
    with pytest.raises(ValueError, match="both sides"):
        min_detectable_ratio([1.0, 2.0])
    with pytest.raises(ValueError, match=">= 2 runs"):
        min_detectable_ratio([1.0], [2.0])
    with pytest.raises(ValueError, match="alpha"):
        min_detectable_ratio(n_base=5, n_new=5, log_sd=0.1, alpha=0)
    with pytest.raises(ValueError, match="family_size"):
        min_detectable_ratio(n_base=5, n_new=5, log_sd=0.1, family_size=0)
    with pytest.raises(ValueError, match="ratio"):
        runs_needed(-1.0, log_sd=0.1)


def test_same_seed_same_answer():
    rng = np.random.default_rng(5)
    base, new = rng.lognormal(0, 0.07, 6), rng.lognormal(0, 0.07, 6)
    assert min_detectable_ratio(base, new, seed=7) == min_detectable_ratio(base, new, seed=7)


def _achieved(n: int, shift: float, sd: float, rng: np.random.Generator, sims: int) -> float:
    u_hi = upper_critical_u(n, n, 0.05)
    base = sd * rng.standard_normal((sims, n))
    new = sd * rng.standard_normal((sims, n)) + shift
    ranks = np.argsort(np.argsort(np.concatenate([new, base], axis=1), axis=1), axis=1) + 1
    u = ranks[:, :n].sum(axis=1) - n * (n + 1) // 2
    return float(np.mean((u >= u_hi) | (u <= n * n - u_hi)))


def test_stated_80_percent_is_achieved_on_fresh_samples_from_the_truth():
    rng = np.random.default_rng(20240611)
    n, sd, pilots = 5, 0.07, 150
    got = []
    for i in range(pilots):
        base, new = np.exp(sd * rng.standard_normal(n)), np.exp(sd * rng.standard_normal(n))
        mde = min_detectable_ratio(base, new, n_sim=1000, seed=i)
        got.append(_achieved(n, math.log(mde.ratio_high), sd, rng, 1000))
    mean, err = float(np.mean(got)), 2 * float(np.std(got, ddof=1)) / math.sqrt(pilots)
    print(f"\nstated 0.80, achieved {mean:.3f} +- {err:.3f} over {pilots} pilots of 5 vs 5")
    assert abs(mean - 0.8) <= 0.05 + err
