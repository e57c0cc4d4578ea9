"""Issue 21, the statistics behind the report's answers: one interval rule, no data as no data,
N* qualified by the host's CPU, one statement of the Holm families, tuned vs default compared,
the history's two numbers explained, factor levels named by their configuration, the stalls a
cap hides stated as a result, and the seeds' verdicts said from the data."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

from perfkit.analysis import intervals, latency, levels, metric, multiplicity
from perfkit.analysis.experiment import load_experiment

DATA = Path(__file__).resolve().parents[1] / "data"


# -- 7: one interval rule ------------------------------------------------------------------------
def test_an_interval_wider_than_100x_or_on_a_saturated_run_is_not_estimable():
    assert intervals.judge(4.39, 32800) == "its ends differ 7.47e+03x (more than 100x)"
    assert intervals.judge(0.547, 1.03) == ""
    assert intervals.judge(1.0, 99.0) == "" and intervals.judge(1.0, 101.0)
    # every run enters a geometric mean: one saturated run of 3 makes it rest on that run
    assert intervals.judge(2.0, 3.0, n_saturated=1, n_runs=3) == \
        "it rests on 1 of 3 run(s) that saturated"
    # order statistics rest on a saturated run only when its value is at or beyond an end
    assert intervals.judge(2.0, 3.0, n_saturated=1, every_run_counts=False,
                           doubtful_values=[2.5]) == ""
    assert intervals.judge(2.0, 3.0, n_saturated=1, every_run_counts=False,
                           doubtful_values=[9.0])
    assert intervals.judge(math.nan, math.nan) == ""  # no interval: nothing to replace


def test_the_slo_and_latency_pages_print_no_interval_of_a_saturated_cell():
    """The demo's 45000 req/s cells: '379 [4.39, 32800]' and '44.9 [0.0345, 58500]' ms, t
    intervals on 3 runs, one saturated: not estimable, with the reason, on both pages."""
    rows = load_experiment(DATA / "demo-wrk2-sweep").rows({"target_rate_rps": 45000})
    table = latency.percentiles(latency.group_runs(rows, ["profile", "connections"]), (99.0,))
    frame = table.to_frame().set_index("config")
    for config in ("default, 16", "default, 64"):
        row = frame.loc[config]
        assert math.isnan(row["ci_low_ms"]) and math.isnan(row["ci_high_ms"])
        assert row["not_estimable"] == "it rests on 1 of 3 run(s) that saturated"
    assert frame.loc["tuned, 64", "not_estimable"] == ""
    assert frame.loc["tuned, 64", "ci_high_ms"] / frame.loc["tuned, 64", "ci_low_ms"] < 100


def test_a_percentile_no_run_measured_is_no_data_not_zero_and_inf():
    """wrk never prints p99.9: the row was 'n runs 0 | ci low 0 | ci high inf | n failed 5'
    and the Methods said 'the median of the 0 runs' percentiles'."""
    rows = load_experiment(DATA / "demo-wrk-factorial").rows({"connections": 16})
    table = latency.percentiles(latency.group_runs(rows, ["keepalive", "cache"]), (99.0, 99.9))
    frame = table.to_frame()
    missing = frame[frame["percentile"] == 99.9]
    assert len(missing) == 4 and (missing["method"] == "no data").all()
    for col in ("n_runs", "latency_ms", "ci_low_ms", "ci_high_ms"):
        assert missing[col].isna().all(), col
    assert (missing["n_failed"] == 0).all()  # a percentile never printed is no failed run
    assert "0 runs" not in table.describe() and "the median of the 5 runs'" in table.describe()


def test_the_factorial_and_comparison_intervals_follow_the_rule():
    from perfkit.analysis.effects import factorial_effects

    rows = load_experiment(DATA / "demo-wrk2-sweep").rows()
    result = factorial_effects(rows, ["profile", "connections"], metric("latency_p99_ms"),
                               by=["target_rate_rps"])
    frame = result.to_frame()
    at45k = frame[(frame["target_rate_rps"] == 45000) & ~frame["term"].isin(["error"])]
    assert len(at45k) == 3 and at45k["ratio_ci_low"].isna().all()
    assert (at45k["not_estimable"] == "it rests on 2 of 12 run(s) that saturated").all()
    printed = frame.dropna(subset=["ratio_ci_low"])
    assert (printed["ratio_ci_high"] / printed["ratio_ci_low"] <= 100).all()


# -- 8: claims qualified -------------------------------------------------------------------------
def test_n_star_says_it_is_the_whole_box_when_the_host_cpu_was_saturated():
    from perfkit.analysis.scaling import scaling_fits

    rows = load_experiment(DATA / "demo-wrk-connections").rows()
    fits = scaling_fits(rows, metric("throughput_rps"), by=["profile"], n_resamples=50)
    default = next(r for r in fits.results if r.key == ("default",))
    assert default.fit.n_star is not None
    assert (default.host.known, default.host.busy, default.host.cpus) == (24, 23, 2)
    assert default.peak_scope == ("the whole box's peak, not the server's: client and server "
                                  "share 2 cores (host CPU >= 90% in 23 of 24 runs)")
    frame = fits.to_frame().set_index("profile")
    assert frame.loc["default", "peak_scope"] == default.peak_scope
    assert frame.loc["buffered-log", "peak_scope"] == ""  # no peak claimed, nothing to scope


def test_tuned_vs_default_is_compared_and_3_vs_3_runs_say_what_they_need():
    rows = load_experiment(DATA / "demo-wrk2-sweep").rows({"target_rate_rps": 30000,
                                                           "connections": 64})
    table = latency.compare_configs(latency.group_runs(rows, ["profile"]), 99.0)
    assert (table.base, table.new) == ("default", "tuned")
    (row,) = table.rows
    assert row.verdict == "not testable" and row.comparison.min_attainable_p == pytest.approx(0.1)
    assert table.not_testable_note() == ("1 of 1 comparisons not testable: 3 vs 3 runs cannot "
                                         "reach p < 0.05; >= 4 runs per arm would")
    assert row.comparison.ratio == pytest.approx(0.796, abs=1e-3)  # Hodges-Lehmann, -20.4%


def test_the_holm_families_are_stated_once_as_data():
    from perfkit.report.sections import common, effects

    rows = common.load_experiment("demo-wrk-factorial", str(DATA)).rows({})
    metrics = ["latency_p99_ms", "throughput_rps"]
    ab = effects.ab_tables(rows, ["keepalive", "cache"], metrics, "connections")
    res = effects.factorials(rows, ["keepalive", "cache"], metrics, "connections")
    frame = multiplicity.families(ab, res)
    sizes = frame.groupby("analysis")["tests"].agg(list).to_dict()
    # throughput's interaction at 256 connections gives two families of simple effects
    assert sizes == {"A/B": [6, 6], "factorial": [3] * 6, "simple effects": [2, 2]}
    text = multiplicity.statement(frame)
    assert text.startswith("Holm's adjustment is applied within each family at alpha 0.05, "
                           "never across families")
    assert "A/B: one family per metric: every row of its table (2 families of 6 tests " \
           "each)" in text


def test_the_history_explains_its_two_numbers_for_one_change():
    from perfkit.analysis import history

    h = history.load_history(DATA / "demo-history")
    a = history.analyse(h, metric("latency_p99_ms"))
    both = history.change_and_gate(a, history.gates(h, a, 0.05)).set_index("label")
    v08 = both.loc["v08"]
    assert v08["change_point_ratio"] == pytest.approx(1.392, abs=1e-3)  # +39.2%
    assert v08["gate_ratio"] == pytest.approx(1.481, abs=1e-3)          # +48.1%
    assert v08["change_point_estimand"].startswith("level of v08..v12 over that of v01..v07")
    assert v08["gate_estimand"].startswith("v08's runs over those of v01..v07")
    assert "v08's median (43.1 ms) lies above its segment's (40.7 ms)" in v08["why_they_differ"]


# -- 5: factors named by what changed ------------------------------------------------------------
def test_each_factor_level_is_its_recorded_configuration_difference():
    exp = load_experiment(DATA / "demo-wrk-factorial")
    frame = levels.level_changes(exp)
    keep = frame[frame["factor"] == "keepalive"].set_index("setting")
    assert (keep.loc["keepalive_timeout", "low_value"], keep.loc["keepalive_timeout",
                                                                 "high_value"]) == ("65", "300")
    assert keep.loc["keepalive_requests", "low_value"] == "not set (nginx's default 1000)"
    assert keep.loc["keepalive_requests", "high_value"] == "100000"
    assert keep.loc["keepalive", "high_value"] == "32"                 # upstream keepalive
    assert keep.loc["proxy_http_version", "high_value"] == "1.1"
    assert (keep["where"] == "every level of cache").all()
    cache = frame[frame["factor"] == "cache"].set_index("setting")
    assert cache.loc["proxy_cache", "high_value"] == "perfkit_cache"
    assert cache.loc["proxy_cache", "low_value"] == "not set"
    back = levels.backend(exp)
    assert back.upstream_delay_ms == (10.0,) and back.proxied_runs == 60
    assert 1100 < back.bytes_per_response < 1300
    assert "answers every request after 10 ms" in back.text()


# -- 11: the result behind an artefact; one verdict column ---------------------------------------
def test_the_stalls_a_cap_hides_are_a_result_of_their_own():
    from perfkit.report.sections import common, effects

    rows = common.load_experiment("demo-wrk-factorial", str(DATA)).rows({})
    (table,) = effects.ab_tables(rows, ["keepalive", "cache"], ["latency_p99_ms"],
                                 "connections")
    frame = table.to_frame().set_index(["factor", "connections"])
    cache = frame.loc[("cache", 256)]
    assert cache["verdict"] == "artefact of the 1000 ms cap"   # one verdict column
    assert "reported_verdict" not in frame
    assert (cache["stalled_runs_base"], cache["stalled_runs_new"]) == (4, 0)
    # Fisher's exact test on 4/5 against 0/5 runs: 10/210 = 0.0476, Holm over the two
    # capped rows: the stalls are stated, and not called gone at alpha 0.05
    assert cache["stall_p_value_holm"] == pytest.approx(2 * 10 / 210)
    keep = frame.loc[("keepalive", 256)]
    assert (keep["stalled_runs_base"], keep["stalled_runs_new"]) == (4, 5)
    # the fewer stalls with the cache where keepalive is on, in the simple effects
    (thr,) = effects.factorials(rows, ["keepalive", "cache"], ["throughput_rps"],
                                "connections")
    simple = thr.simple_frame().set_index(["factor", "at_level"])
    assert simple.loc[("cache", "keepalive"), "stalls"].startswith(
        "runs stalled on the 1000 ms cap: 5 of 5 -> 0 of 5 (Fisher's exact test on runs, "
        "Holm p 0.016): fewer stalled runs")
    notes = table.run_notes_frame()
    assert len(notes) and notes["run_id"].is_unique is False  # one run per row: a run per cap
    assert set(notes.columns) == {"metric", "factor", "connections", "side", "run_id", "kind",
                                  "detail"}


def test_the_variation_frame_marks_a_main_effect_split_from_an_interaction():
    from perfkit.report.sections import common, effects

    rows = common.load_experiment("demo-wrk-factorial", str(DATA)).rows({})
    (result,) = effects.factorials(rows, ["keepalive", "cache"], ["throughput_rps"],
                                   "connections")
    frame = result.variation_frame().set_index(["connections", "term"])
    assert frame.loc[(256, "keepalive"), "in_interaction"]
    assert not frame.loc[(64, "keepalive"), "in_interaction"]  # no interaction at 64
    assert not frame.loc[(256, "keepalive:cache"), "in_interaction"]


# -- 11: the seeds' verdicts ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def seeds():
    from perfkit.report.sections import seeds as section

    return {r.claim["claim_id"]: r for r in section.analyse(str(DATA)).results}


def test_000_1_says_the_repeat_did_not_reach_the_claims_regime(seeds):
    """The re-recorded repeat (issue 25) overflowed the base arm's listen queue (128) at 1000
    connections: the spikes' cause is there, but no run of either arm kept its offered
    rate, so the repeat did not reach the claim's regime, and says so from the data."""
    r = seeds["000-1"]
    assert r.verdict == "inconclusive"
    assert re.match(r"the repeat did not reach the claim's regime \(no run kept its offered "
                    r"rate: all 10 runs reached only 0\.9\d\d-0\.9\d\d x their target\); "
                    r"its comparison: ", r.reason), r.reason
    base = load_experiment(DATA / "seeds-backlog").rows(
        {"accept_queue": 128, "connections": 1000}).frame
    assert (base["tcp_listen_overflows"] > 0).any()  # so no "no 1 s spikes" gap is claimed


def test_000_2_and_004_4_name_both_changes(seeds):
    guide, repeat = seeds["000-2"].reason, seeds["004-4"].reason
    # 000-2's repeat never showed the guide's 1 s spikes in its base arm
    assert guide.startswith("the repeat did not reach the claim's regime (the base arm shows no "
                            "1 s spikes where the published values have them (0 of 5 runs "
                            "with a latency on the 1000 ms cap))")
    assert "the write-up changed keep-alive-requests -> 10000 and upstream-keepalive-requests" \
        in guide
    assert "the repeat changes client_keepalive (default -> tuned): keepalive_timeout 65 -> " \
           "300; keepalive_requests not set (nginx's default 1000) -> 100000" in guide
    assert repeat.startswith("the write-up changed access_log off -> access_log ... "
                             "buffer=256k flush=10s")
    assert "the repeat changes access_log (unbuffered -> buffered)" in repeat


def test_published_values_are_one_configuration_per_row():
    from perfkit.analysis.seeds_published import published_values

    frame = published_values(DATA / "seeds")
    one = frame[frame["claim_id"] == "000-1"]
    assert list(one["configuration"]) == ["suite-1-default", "suite-3-somaxconn"]
    assert not frame["published_value"].str.contains(r"^\s*suite-\d", regex=True).any()
    quoted = frame[(frame["claim_id"] == "004-2") & (frame["configuration"] == "")]
    assert list(quoted["published_value"]) == ["'almost 19x'"]
    assert np.all(frame.groupby(["claim_id", "configuration"]).size() == 1)
