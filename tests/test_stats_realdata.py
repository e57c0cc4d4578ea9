"""The statistics on real runs: the wrk and wrk2 sweeps in tests/fixtures (default vs tuned)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

import perfkit
from perfkit.frames import runs_frame
from perfkit.stats import compare, factorial, percentile_ci_across_runs, quantile_ci
from perfkit.warning import Code, Warn

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="module")
def wrk_runs():
    return perfkit.load(FIXTURES / "wrk" / "sweep")


@pytest.fixture(scope="module")
def wrk2_runs():
    return perfkit.load(FIXTURES / "wrk2" / "sweep")


def _cell(frame: pd.DataFrame, **where) -> pd.DataFrame:
    mask = np.ones(len(frame), dtype=bool)
    for key, value in where.items():
        mask &= (frame[key] == value).to_numpy()
    return frame[mask]


def test_wrk_default_vs_tuned_p99_at_50_connections_is_too_few_runs(wrk_runs):
    frame = runs_frame(wrk_runs)
    base = _cell(frame, profile="default", connections=50)["latency_p99_ms"]
    new = _cell(frame, profile="tuned", connections=50)["latency_p99_ms"]
    c = compare(base, new)
    row = c.to_dict()
    assert (row["n_base"], row["n_new"]) == (3, 3)
    assert row["significant"] is None
    assert any(w.code is Code.TOO_FEW_RUNS and (w["n_base"], w["n_new"]) == (3, 3)
               for w in c.warnings)
    assert row["p_value"] == pytest.approx(sps.mannwhitneyu(new, base, method="exact").pvalue)
    assert row["median_base"] == pytest.approx(4.01) and row["median_new"] == pytest.approx(2.52)


def test_a_saturated_wrk2_run_ranks_as_the_slowest(wrk2_runs):
    frame = runs_frame(wrk2_runs)
    base = _cell(frame, profile="default", connections=64, target_rate_rps=45000.0)
    new = _cell(frame, profile="tuned", connections=64, target_rate_rps=45000.0)
    saturated = base["below_target"].astype(bool).to_numpy()
    assert saturated.sum() == 1
    c = compare(base["latency_p99_ms"], new["latency_p99_ms"], failed_base=saturated)
    assert c.n_failed_base == 1
    assert Warn(Code.FAILED_RANKED_WORST, side="base", runs=1, lower_is_better=True) \
        in c.warnings


def test_across_runs_p99_of_three_real_wrk2_runs_is_their_log_normal_median(wrk2_runs):
    cell = [r for r in wrk2_runs if r.factors["profile"] == "tuned" and r.connections == 16
            and r.target_rate_rps == 30000]
    ci = percentile_ci_across_runs(cell, 99)
    printed = [r.percentiles_ms[99.0] for r in cell]  # 2.36, 3.38, 3.34 ms
    assert ci.n_runs == 3 and ci.method == "median_t_log"
    assert ci.estimand.startswith("median run's p99, estimated as the geometric mean of 3 runs")
    # 3 runs: the median run under a log-normal spread, the geometric mean of the printed values
    assert ci.estimate_ms == pytest.approx(float(np.exp(np.log(printed).mean())), rel=1e-12)
    assert ci.low_ms < ci.estimate_ms < ci.high_ms
    assert Code.FEW_RUNS_LOG_NORMAL in {w.code for w in ci.warnings}
    # the same number from the runs frame (printed values) and from the Runs
    frame_values = runs_frame(cell)["latency_p99_ms"]
    assert percentile_ci_across_runs(frame_values, 99) == ci
    # p99.99 is printed too; a percentile wrk2 did not print comes from the rebuilt histogram
    hist_values = [r.histogram.percentile_ms(95) for r in cell]
    assert percentile_ci_across_runs(cell, 95).estimate_ms == pytest.approx(
        float(np.exp(np.log(hist_values).mean())), rel=1e-12)


def test_within_run_quantile_ci_of_a_real_wrk2_run(wrk2_runs):
    run = next(r for r in wrk2_runs if r.run_id == "tuned_R30000_c16_rep1")
    ci = quantile_ci(run.histogram, 99.9)
    assert ci.n_requests == run.histogram.total_count
    assert ci.low_ms <= run.histogram.percentile_ms(99.9) <= ci.high_ms
    assert ci.label == "assumes independent requests"


def test_wrk_profile_effect_per_connection_level_with_holm(wrk_runs):
    frame = runs_frame(wrk_runs)
    table = factorial(frame, ["profile"], "latency_p99_ms", by="connections")
    assert table.attrs["coding"]["profile"]["low"] == "default"
    assert list(table["by"].unique()) == [10, 50, 100, 200]
    at10 = table[(table["by"] == 10) & (table["term"] == "profile")].iloc[0]
    logs = np.log(_cell(frame, connections=10).set_index("profile")["latency_p99_ms"])
    gm_ratio = np.exp(logs["tuned"].mean() - logs["default"].mean())
    assert at10["ratio"] == pytest.approx(gm_ratio)
    assert at10["p_value_holm"] >= at10["p_value"]


def test_wrk2_profile_by_connections_design_per_offered_rate(wrk2_runs):
    frame = runs_frame(wrk2_runs)
    table = factorial(frame, ["profile", "connections"], "latency_p99_ms", by="target_rate_rps")
    assert set(table["term"]) == {"profile", "connections", "profile:connections", "error"}
    assert table.attrs["df_error"][5000.0] == 8
    at5k = table[(table["by"] == 5000.0)].set_index("term")
    cells = _cell(frame, target_rate_rps=5000.0).assign(
        log_p99=lambda f: np.log(f["latency_p99_ms"])).groupby(
        ["profile", "connections"])["log_p99"].mean()
    q_profile = (cells["tuned"].sum() - cells["default"].sum()) / 4
    assert at5k.loc["profile", "effect"] == pytest.approx(q_profile)
    assert at5k["variation_pct"].sum() == pytest.approx(100)
