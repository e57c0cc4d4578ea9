"""The analysis behind the notebooks, checked on the real fixture sweeps against independent
computations (pandas, scipy, the statistics API called directly)."""

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from perfkit.errors import PerfkitError
from perfkit.report.sections import aa, common, effects, latency, overview, scaling
from perfkit.scaling.slo import slo_bracket
from perfkit.stats import compare, percentile_ci_across_runs, quantile_ci
from perfkit.stats.factorial import factorial

FIX = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture(scope="module")
def wrk2():
    return common.load_experiment(str(FIX / "wrk2" / "sweep"))


@pytest.fixture(scope="module")
def wrk():
    return common.load_experiment(str(FIX / "wrk" / "sweep"))


@pytest.fixture(scope="module")
def locust():
    return common.load_experiment(str(FIX / "locust"))


# -- common ------------------------------------------------------------------------------------
def test_select_matches_numbers_as_numbers_and_lists_as_any(wrk2):
    f = wrk2.frame
    assert common.select(f, {"connections": 16.0}).sum() == 24
    assert common.select(f, {"target_rate_rps": [5000, 45000], "profile": "tuned"}).sum() == 12
    with pytest.raises(PerfkitError, match="no column 'conns'"):
        common.select(f, {"conns": 16})


def test_config_labels_and_experiment_factors(wrk2):
    assert wrk2.factors == ["profile"]
    labels = common.config_labels(wrk2.frame, ["profile", "connections"])
    assert set(labels) == {"default, 16", "default, 64", "tuned, 16", "tuned, 64"}


def test_fmt_ci_prints_infinite_sides():
    assert common.fmt_ci(1.2345, 1.1, math.inf, "ms") == "1.23 ms [1.1, inf]"


# -- latency -----------------------------------------------------------------------------------
def test_spectrum_line_and_band_are_one_across_runs_interval(wrk2):
    groups = latency.grouped_runs(wrk2, ["profile"], {"target_rate_rps": 30000,
                                                      "connections": 64})
    assert {k: len(v) for k, v in groups.items()} == {"default": 3, "tuned": 3}
    spec = latency.spectrum_frame(groups, n_resamples=200, seed=3)
    for _, row in spec.sample(6, random_state=1).iterrows():
        ci = percentile_ci_across_runs(groups[row["config"]], row["percentile"], seed=3,
                                       n_resamples=200)
        assert (row["latency_ms"], row["ci_low_ms"], row["ci_high_ms"]) == pytest.approx(
            (ci.estimate_ms, ci.low_ms, ci.high_ms))
    fewest = min(r.histogram.total_count for rs in groups.values() for r in rs)
    assert (1 / (1 - spec["percentile"] / 100) <= fewest / latency.MIN_TAIL_SAMPLES).all()


def test_within_run_intervals_are_the_binomial_ones(wrk2):
    groups = latency.grouped_runs(wrk2, ["profile"], {"target_rate_rps": 5000,
                                                      "connections": 16})
    table = latency.within_run_table(groups, 99.0)
    run = groups["default"][0]
    ci = quantile_ci(run.histogram, 99.0)
    row = table[table["run_id"] == run.run_id].iloc[0]
    assert (row["latency_ms"], row["ci_low_ms"], row["ci_high_ms"]) == (
        ci.estimate_ms, ci.low_ms, ci.high_ms)
    assert row["requests_in_histogram"] == run.histogram.total_count


def test_corrected_and_uncorrected_spectra_come_from_their_own_histograms():
    exp = common.load_experiment(str(FIX / "wrk2" / "single"))
    audit, spec = latency.corrected_vs_uncorrected(exp.runs)
    (run,) = [r for r in exp.runs if r.uncorrected_histogram is not None]
    assert list(audit["run_id"]) == [run.run_id]
    p99 = spec[spec["percentile"] == 99.0].set_index("config")["latency_ms"]
    assert p99["corrected"] == run.histogram.percentile_ms(99.0)
    assert p99["uncorrected"] == run.uncorrected_histogram.percentile_ms(99.0)
    assert p99["corrected"] > p99["uncorrected"]


def test_caveats_name_closed_loop_tools_and_few_runs(wrk):
    groups = latency.grouped_runs(wrk, ["profile"], {"connections": 50})
    table = latency.percentile_table(groups, (99.0,))
    text = " ".join(latency.caveats(groups, table))
    assert "wrk measure(s) in a closed loop" in text
    assert "With 3 run(s) per configuration" in text


# -- scaling -----------------------------------------------------------------------------------
def test_heat_map_cells_are_medians_of_runs(wrk2):
    frame, _ = scaling.runs_with_config(wrk2, ["profile"])
    grid = scaling.heat_tables(frame, "latency_p99_ms", "profile")["tuned"]
    runs = frame[(frame["profile"] == "tuned") & (frame["connections"] == 64)
                 & (frame["target_rate_rps"] == 30000)]["latency_p99_ms"]
    assert grid.loc[64, 30000] == pytest.approx(float(np.median(runs)))
    assert grid.shape == (2, 4)


def test_slo_brackets_are_those_of_the_statistics_api(wrk2):
    frame, runs = scaling.runs_with_config(wrk2, ["profile", "connections"])
    brackets, verdicts = scaling.slo_tables(frame, runs, 5.0, n_resamples=200)
    sel = [r for r in runs if r.factors["profile"] == "default" and r.connections == 16]
    direct = slo_bracket(sel, 5.0, n_resamples=200, seed=0)
    row = brackets[brackets["config"] == "default, 16"].iloc[0]
    assert (row["last_pass_rps"], row["first_fail_rps"]) == direct.bracket
    assert len(verdicts) == 16 and set(verdicts["verdict"]) <= {"pass", "fail", "inconclusive"}


def test_scaling_model_follows_the_number_of_concurrency_levels(wrk):
    frame, _ = scaling.runs_with_config(wrk, ["profile"], {"profile": "tuned"})
    (usl,) = scaling.fit_scaling(frame, "connections", n_resamples=50)
    assert usl.fit.model == "usl"
    three = frame[frame["connections"] != 200]
    (amdahl,) = scaling.fit_scaling(three, "connections", n_resamples=50)
    assert amdahl.fit.model == "amdahl" and "Amdahl's law only" in amdahl.reason
    two = frame[frame["connections"].isin([10, 50])]
    (none,) = scaling.fit_scaling(two, "connections", n_resamples=50)
    assert none.fit is None and "no scaling model" in none.reason
    table = scaling.scaling_table([usl, none])
    assert set(table[table["config"] == "tuned"]["parameter"]) >= {"sigma", "kappa", "gamma"}


def test_littles_law_summary_is_x_times_r_over_n(wrk):
    frame, _ = scaling.runs_with_config(wrk, ["profile"])
    summary = scaling.littles_summary(scaling.littles_table(frame))
    sub = frame[(frame["profile"] == "default") & (frame["connections"] == 100)]
    ratio = sub["throughput_rps"] * sub["latency_mean_ms"] / 1000 / 100
    row = summary[(summary["config"] == "default") & (summary["concurrency"] == 100)].iloc[0]
    assert row["median_ratio"] == pytest.approx(float(np.median(ratio)))


# -- effects -------------------------------------------------------------------------------------
def holm(p):
    order = np.argsort(p)
    adjusted = np.empty(len(p))
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p) - rank) * p[i]))
        adjusted[i] = running
    return adjusted


def test_ab_comparisons_say_not_enough_runs_and_are_holm_adjusted(wrk):
    frame = effects.runs_for_analysis(wrk)
    ab = effects.ab_table(frame, ["profile"], ["latency_p99_ms", "throughput_rps"],
                          per="connections")
    assert len(ab) == 8
    assert (ab["verdict"] == "not enough runs (3 vs 3)").all()  # 3 vs 3 cannot reach 0.05
    np.testing.assert_allclose(ab["p_value_holm"], holm(ab["p_value"].to_numpy()))
    sub = frame[frame["connections"] == 10]
    direct = compare(sub[sub["profile"] == "default"]["throughput_rps"].to_numpy(float),
                     sub[sub["profile"] == "tuned"]["throughput_rps"].to_numpy(float),
                     lower_is_better=False).iloc[0]
    row = ab[(ab["per_level"] == 10) & (ab["metric"] == "throughput_rps")].iloc[0]
    assert row["p_value"] == direct["p_value"] and row["ratio"] == direct["ratio"]
    assert any("cannot reach" in n for n in effects.ab_notes(ab))


def test_factorial_effects_match_the_statistics_api_and_variation_sums_to_100(wrk2):
    frame = effects.runs_for_analysis(wrk2)
    table = effects.effects(frame, ["profile", "connections"], "latency_p99_ms",
                            per="target_rate_rps")
    direct = factorial(frame, ["profile", "connections"], "latency_p99_ms",
                       by="target_rate_rps")
    np.testing.assert_allclose(table["ratio"], direct["ratio"])
    totals = table.groupby("by")["variation_pct"].sum()
    np.testing.assert_allclose(totals, 100.0)
    rows = effects.forest_rows(table, "target_rate_rps")
    assert set(rows["label"]) == {"profile", "connections", "profile × connections"}
    assert effects.coding_text(table) == "profile: default -> tuned; connections: 16 -> 64"


# -- A/A -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(("hits", "n"), [(0, 20), (3, 50), (20, 20), (9, 190)])
def test_clopper_pearson_matches_scipy(hits, n):
    expected = sps.binomtest(hits, n).proportion_ci(method="exact")
    assert aa.clopper_pearson(hits, n) == pytest.approx((expected.low, expected.high))


def test_request_level_test_flags_runs_that_differ_beyond_request_noise():
    frame = pd.DataFrame({"latency_mean_ms": [1.00, 1.01, 1.30], "latency_stdev_ms": [0.5] * 3,
                          "requests": [100000, 100000, 100000]})
    # z for 1.00 vs 1.01: 0.01 / sqrt(2 * 0.25 / 1e5) = 4.47 -> significant; all pairs are
    assert aa.pooled_request_false_positive_rate(frame) == (3, 3)
    few = frame.assign(requests=[10, 10, 10])
    assert aa.pooled_request_false_positive_rate(few) == (0, 3)


def test_run_level_splits_of_identical_runs_are_never_significant():
    assert aa.split_false_positive_rate(np.full(10, 2.0), 5, n_splits=20) == (0, 20)
    hits, n = aa.split_false_positive_rate(np.arange(10.0), 5, n_splits=50, seed=4)
    assert n == 50 and hits == aa.split_false_positive_rate(np.arange(10.0), 5, n_splits=50,
                                                             seed=4)[0]


def test_designed_aa_comparison_needs_two_arms(wrk):
    frame = effects.runs_for_analysis(wrk)
    table = aa.designed_comparison(frame, "profile", ["throughput_rps"])
    assert list(table["base"]) == ["profile=default"] and table["n_base"].iloc[0] == 12
    with pytest.raises(ValueError, match="exactly two levels"):
        aa.designed_comparison(frame, "connections", ["throughput_rps"])


# -- overview ------------------------------------------------------------------------------------
def test_design_table_describes_the_sweep(wrk):
    row = overview.design_table([wrk]).iloc[0]
    assert row["runs"] == 24 and row["tool"] == "wrk"
    assert row["factors"] == "profile: default, tuned"
    assert row["load"].startswith("connections: 10, 50, 100, 200")
    assert row["repetitions"] == 3


def test_drift_residuals_are_centred_per_cell_and_the_trend_is_recovered(wrk2):
    drift = overview.drift_frame([wrk2], "latency_p50_ms")
    assert len(drift) == 48
    np.testing.assert_allclose(drift.groupby("cell")["residual"].sum(), 0.0, atol=1e-12)
    synthetic = pd.DataFrame({"experiment": "s", "order": np.arange(1.0, 21.0)})
    synthetic["residual"] = 0.01 * synthetic["order"] + np.tile([0.001, -0.001], 10)
    trend = overview.drift_trend(synthetic).iloc[0]
    fit = sps.linregress(synthetic["order"], synthetic["residual"])
    assert trend["change_first_to_last_pct"] == pytest.approx(100 * (math.exp(19 * fit.slope)
                                                                     - 1))
    assert trend["p_value"] < 1e-10


def test_quality_counts_runs_with_failures(locust):
    quality = overview.quality_frame([locust])
    summary = overview.quality_summary(quality, [locust]).iloc[0]
    assert summary["runs"] == 3  # the Aggregated row of each Locust run
    assert summary["error_ratio_over_0.01"] == 2  # failures_u30 and processes2_u40
    series = overview.locust_series(locust)
    assert set(series["run_id"]) == {"clean_u20", "failures_u30", "processes2_u40"}
    assert (series["endpoint"] == "Aggregated").all()


def test_headline_lists_the_largest_significant_effects_first(wrk2):
    frame = effects.runs_for_analysis(wrk2)
    tables = [effects.effects(frame, ["profile", "connections"], m, per="target_rate_rps")
              for m in ("latency_p99_ms", "throughput_rps")]
    found = effects.headline(pd.DataFrame(), tables, "target_rate_rps", alpha=0.05)
    ratios = [float(v.split(" ")[0][1:]) for k, v in found.items() if k != "effects"
              and k != "other significant effects"]
    assert ratios and len(ratios) <= effects.MAX_HEADLINE_EFFECTS
    sizes = [abs(math.log(r)) for r in ratios]
    assert sizes == sorted(sizes, reverse=True)


def test_scaling_headline_groups_configurations_without_a_peak(wrk):
    frame, _ = scaling.runs_with_config(wrk, ["profile"])
    three = frame[frame["connections"] != 200]
    results = scaling.fit_scaling(three, "connections", n_resamples=20)
    found = scaling.headline(pd.DataFrame(columns=["config"]), results, 5.0, 99.0)
    assert list(found) == ["peak concurrency N*, every configuration"]
    assert "Amdahl's law only" in found["peak concurrency N*, every configuration"]
