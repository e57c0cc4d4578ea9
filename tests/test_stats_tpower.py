"""The factorial's minimum detectable effect: the noncentral t power of its t test on logs,
checked against scipy's noncentral t where that is accurate and against a simulation of the
design fitted by :func:`perfkit.stats.factorial` itself."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from perfkit.stats import factorial
from perfkit.stats.tpower import (
    approximate_noncentrality,
    min_detectable_effect,
    noncentrality,
    power_at,
)


@pytest.mark.parametrize("df, alpha", [(12, 0.05), (12, 0.05 / 3), (8, 0.025), (30, 0.01)])
def test_power_matches_scipys_noncentral_t(df, alpha):
    lam = noncentrality(df, alpha, 0.8)
    crit = sps.t.ppf(1 - alpha / 2, df)
    scipy_power = sps.nct.sf(crit, df, lam) + sps.nct.cdf(-crit, df, lam)
    assert scipy_power == pytest.approx(0.8, abs=1e-6)
    assert power_at(lam, df, crit) == pytest.approx(0.8, abs=1e-8)
    # the textbook approximation is close from a dozen df, and low at few
    assert approximate_noncentrality(df, alpha) == pytest.approx(lam, rel=0.02)
    assert approximate_noncentrality(4, alpha) < noncentrality(4, alpha)


def _design(reps: int) -> pd.DataFrame:
    """A 2^2 design in ``reps`` complete blocks, coded -1/+1."""
    a = np.tile([-1, 1, -1, 1], reps)
    b = np.tile([-1, -1, 1, 1], reps)
    return pd.DataFrame({"a": a, "b": b, "block": np.repeat(np.arange(reps), 4)})


@pytest.mark.slow
def test_a_design_at_its_detectable_ratio_rejects_80_percent_of_the_time():
    # the demo's design at one load level: 2^2 x 5 runs in 5 blocks, 12 error df; Holm over
    # 3 levels, so alpha 0.05 / 3 at the first step; log sd 0.1 between runs
    reps, sd, family, alpha = 5, 0.1, 3, 0.05
    design = _design(reps)
    n, df = len(design), 3 * (reps - 1)
    se_log_ratio = 2 * sd / math.sqrt(n)  # log ratio = 2q, se(q) = sd / sqrt(n) (+-1 coding)
    tcrit = sps.t.ppf(0.975, df)
    mde = min_detectable_effect(math.exp(-tcrit * se_log_ratio), math.exp(tcrit * se_log_ratio),
                                df, alpha=alpha, family_size=family)
    assert mde.testable and mde.alpha_adjusted == pytest.approx(alpha / family)
    assert mde.low == pytest.approx(1 / mde.high)
    rng = np.random.default_rng(20240611)
    rejected, sims = 0, 1500
    for _ in range(sims):
        log_y = (math.log(mde.high) / 2) * design["a"] + rng.normal(0, sd, n) \
            + 0.05 * design["block"]
        table = factorial(design.assign(y=np.exp(log_y)), ["a", "b"], "y", block="block",
                          variance="pooled")  # the exact noncentral t: Jain's pooled t
        p = float(table.loc[table["term"] == "a", "p_value"].iloc[0])
        rejected += p < alpha / family
    power = rejected / sims
    assert power == pytest.approx(0.8, abs=0.035)  # Monte Carlo se 0.010


@pytest.mark.slow  # a simulation: 2,000 data sets
def test_the_detectable_ratio_of_the_robust_t_holds_its_power_when_cells_differ():
    """The factorial's default t (HC2, Satterthwaite df) with the demo's spreads at 16
    connections (cell log sds 0.061, 0.041, 0.249, 0.518), 5 runs per cell: the detectable
    ratio read off an interval with the design's true standard error and Welch df is
    detected about 80% of the time (the robust t is an approximation here)."""
    reps, family, alpha = 5, 3, 0.05
    design = _design(reps)
    sds = np.array([0.061, 0.041, 0.249, 0.518])
    cell = ((design["a"] > 0) + 2 * (design["b"] > 0)).to_numpy()
    per_cell = (2 / 4) ** 2 * sds ** 2 / reps       # var of the log ratio's cell terms
    se_log_ratio = math.sqrt(per_cell.sum())
    df = per_cell.sum() ** 2 / (per_cell ** 2 / (reps - 1)).sum()  # Welch-Satterthwaite
    tcrit = sps.t.ppf(0.975, df)
    mde = min_detectable_effect(math.exp(-tcrit * se_log_ratio), math.exp(tcrit * se_log_ratio),
                                df, alpha=alpha, family_size=family)
    rng = np.random.default_rng(20260611)
    rejected, sims = 0, 1500
    for _ in range(sims):
        log_y = (math.log(mde.high) / 2) * design["a"] + rng.normal(0, 1, len(cell)) * sds[cell]
        table = factorial(design.assign(y=np.exp(log_y)), ["a", "b"], "y")
        rejected += float(table.loc[table["term"] == "a", "p_value"].iloc[0]) < alpha / family
    assert rejected / sims == pytest.approx(0.8, abs=0.035)  # Monte Carlo se 0.010


def test_an_additive_effect_is_stated_in_its_unit_and_a_missing_interval_says_why():
    mde = min_detectable_effect(-2.0, 2.0, 4, log=False, unit="ms")
    assert mde.high == pytest.approx(-mde.low) and mde.high > 2.0
    assert mde.statement.startswith("could detect ±") and " ms at 80% power" in mde.statement
    none = min_detectable_effect(math.nan, math.nan, 4)
    assert not none.testable and "no finite interval" in none.statement
    assert "no degrees of freedom" in min_detectable_effect(0.5, 2.0, 0).statement


def test_a_noncentrality_is_remembered_by_its_inputs_and_found_once(tmp_path, monkeypatch):
    """Issue 33: the root is solved once per (df, alpha, power), kept beside the run store; a
    second process reads it (the same float) and needs no root finder."""
    from perfkit.stats import _simcache, tpower

    monkeypatch.setattr(_simcache, "_MEMO", {})
    _simcache.use_directory(tmp_path)
    try:
        solved = tpower._solve_noncentrality(7.3, 0.05 / 3, 0.8)
        assert noncentrality(7.3, 0.05 / 3, 0.8) == solved
        # one file for the root (the t quantiles it read are kept beside it, one file)
        assert [f.name for f in tmp_path.iterdir() if f.name != _simcache.VALUES_FILE] == [
            _simcache.key("noncentrality", "Gauss-Legendre 256", 7.3, 0.05 / 3, 0.8)]

        def fail(*args):
            raise AssertionError("solved again")

        monkeypatch.setattr(tpower, "_solve_noncentrality", fail)
        monkeypatch.setattr(_simcache, "_MEMO", {})  # a new process: the file alone
        assert noncentrality(7.3, 0.05 / 3, 0.8) == solved
        assert noncentrality(7.3, 0.05 / 3, 0.8) == solved
    finally:
        _simcache.use_directory(None)
