"""The latency page's rule (perfkit.analysis.latency): run statuses, not the raw saturation flag;
failed runs left out; one value per cell, the same as the SLO table's, on the bundled sweep."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _values import median_run_value

from perfkit.analysis import RunSet, load_experiment
from perfkit.analysis.latency import compare_configs, group_runs, percentiles
from perfkit.analysis.scaling import slo_brackets
from perfkit.frames import runs_frame
from perfkit.report.sections import latency, scaling
from perfkit.vocabulary import RunStatus, Verdict
from perfkit.warning import Code, Warn

#: the demo factorial as first recorded, with the upstream's queue of 100: its 1 s stalls
#: (tests/fixtures/stalls/README.md)
STALLS = Path(__file__).resolve().parent / "fixtures" / "stalls"
DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.fixture(scope="module")
def sweep():
    return load_experiment(DATA / "demo-wrk2-sweep")


def _selection(sweep, **where):
    return latency.selection_table(latency.grouped_runs(sweep, ["profile"], where)) \
        .set_index("config")


def test_the_page_counts_runs_by_status_saturated_vs_short(sweep):
    # tuned at 5000 req/s, 64 connections: one run achieved 0.964 x its target with its
    # peers' latency: the raw flag (achieved < 0.99 x target) calls it saturated, the run
    # status calls it short (kept, in doubt)
    cell = sweep.rows({"profile": "tuned", "target_rate_rps": 5000, "connections": 64})
    assert sum(r.below_target for r in cell.runs) == 1
    table = _selection(sweep, target_rate_rps=5000, connections=64)
    assert table.loc["tuned", ["saturated_runs", "short_runs", "failed_runs"]].tolist() \
        == [0, 1, 0]
    # default at 45000 req/s, 64 connections: 0.889 x its target, below 0.9: saturated
    table = _selection(sweep, target_rate_rps=45000, connections=64)
    assert table.loc["default", ["saturated_runs", "short_runs"]].tolist() == [1, 0]
    groups = latency.grouped_runs(sweep, ["profile"], {"target_rate_rps": 45000,
                                                       "connections": 64})
    caveats = latency.caveats(latency.percentiles(groups, (99.0,)))
    (saturated,) = [c for c in caveats if c.code is Code.ESTIMATE_RUNS_STATUS
                    and c["status"] == RunStatus.SATURATED]
    assert (saturated["config"], saturated["of"]) == ("default", 3)
    assert [rid for rid, _ in saturated["runs"]] == ["default_R45000_c64_rep2"]
    short = latency.caveats(latency.percentiles(latency.grouped_runs(
        sweep, ["profile"], {"target_rate_rps": 5000, "connections": 64}), (99.0,)))
    statuses = [(c["config"], c["status"], len(c["runs"])) for c in short
                if c.code is Code.ESTIMATE_RUNS_STATUS]
    assert statuses == [("tuned", RunStatus.SHORT, 1)]


def test_every_cell_of_the_page_is_the_slo_tables_estimate(sweep):
    verdicts = scaling.slo(sweep.rows(), ["profile", "connections"], 5.0, 99.0, 0.95,
                           seed=1).verdicts_frame()
    assert len(verdicts) == 16
    for _, v in verdicts.iterrows():
        groups = latency.grouped_runs(sweep, ["profile"], {
            "profile": v["profile"], "connections": v["connections"],
            "target_rate_rps": v["rate_rps"]})
        (row,) = latency.percentile_table(groups, (99.0,)).to_dict("records")
        page = (row["latency_ms"], row["ci_low_ms"], row["ci_high_ms"], row["method"],
                row["not_estimable"])
        slo = (v["estimate_ms"], v["ci_low_ms"], v["ci_high_ms"], v["method"],
               v["not_estimable"])
        # missing on both (an interval not estimable: 45000 req/s with a saturated run)
        assert all(a == b or (a != a and b != b) for a, b in zip(page, slo, strict=True))


def test_a_failed_run_is_left_out_of_the_cell_on_both_pages(sweep):
    cell = sweep.rows({"profile": "tuned", "target_rate_rps": 15000, "connections": 16})
    runs = list(cell.runs)
    slowest = int(np.argmax([r.percentiles_ms[99.0] for r in runs]))
    runs[slowest] = dataclasses.replace(runs[slowest], exit_code=1)
    rows = RunSet(runs_frame(runs), tuple(runs), "cell", cell.factors)
    others = [r.percentiles_ms[99.0] for i, r in enumerate(runs) if i != slowest]
    table = percentiles(group_runs(rows, ["profile"]), (99.0,))
    (e,) = table.estimates
    assert e.ci.n_runs == 2 and e.ci.estimate_ms == pytest.approx(median_run_value(others))
    assert e.to_record()["n_failed"] == 1
    assert any(w.code is Code.ESTIMATE_RUNS_STATUS and w["status"] == RunStatus.FAILED
               and (len(w["runs"]), w["of"]) == (1, 3) for w in table.warnings)
    (bracket,) = slo_brackets(rows, 5.0, by=["profile"]).brackets
    (verdict,) = bracket.bracket.rates
    assert verdict.verdict == "fail"
    assert verdict.reason == Warn(Code.RATE_RUNS_FAILED, failed=1, runs=3)
    assert verdict.estimate_ms == e.ci.estimate_ms and verdict.n_runs == 3


def test_the_result_serializes_with_its_warnings(sweep):
    groups = group_runs(sweep.rows({"target_rate_rps": 30000, "connections": 64}), ["profile"])
    table = percentiles(groups, (99.0,))
    out = table.to_dict()
    # 3 runs: the geometric mean (the median run's under a log-normal spread), said so
    assert out["estimand"] == table.value_text()
    assert out["estimand"].startswith("the geometric mean of the 3 runs' percentiles")
    assert [r["config"] for r in out["percentiles"]] == ["default", "tuned"]
    assert any(w["code"] == "estimates-few-runs" and w["text"].startswith(
        "With 3 runs per configuration") for w in out["warnings"])
    assert out["estimand"] in table.describe()


def test_the_heat_map_cell_is_the_slo_estimate_and_the_latency_pages(sweep):
    grids = scaling.heat_tables(scaling.slo(sweep.rows(), ["profile", "connections"], 5.0,
                                            99.0, 0.95, seed=1))
    for profile in ("default", "tuned"):
        for conns in (16, 64):
            groups = latency.grouped_runs(sweep, ["profile"], {
                "profile": profile, "connections": conns, "target_rate_rps": 45000})
            (row,) = latency.percentile_table(groups, (99.0,)).to_dict("records")
            assert grids[profile].loc[conns, 45000] == row["latency_ms"]


def test_a_failed_run_leaves_the_heat_map_cell_as_it_leaves_the_latency_page(sweep):
    rows = sweep.rows()
    runs = list(rows.runs)
    cell = [i for i, r in enumerate(runs) if r.factors["profile"] == "tuned"
            and r.connections == 16 and r.target_rate_rps == 15000]
    slowest = max(cell, key=lambda i: runs[i].percentiles_ms[99.0])
    runs[slowest] = dataclasses.replace(runs[slowest], exit_code=1)
    broken = RunSet(runs_frame(runs), tuple(runs), "broken", rows.factors)
    grid = scaling.heat_tables(scaling.slo(broken, ["profile", "connections"], 5.0))["tuned"]
    others = [runs[i].percentiles_ms[99.0] for i in cell if i != slowest]
    assert grid.loc[16, 15000] == pytest.approx(median_run_value(others))
    printed = [runs[i].percentiles_ms[99.0] for i in cell]
    assert np.median(printed) != pytest.approx(median_run_value(others))  # the old value
    cell_rows = broken.where({"profile": "tuned", "connections": 16, "target_rate_rps": 15000})
    (e,) = percentiles(group_runs(cell_rows, ["profile"]), (99.0,)).estimates
    assert e.ci.estimate_ms == grid.loc[16, 15000]


def test_every_latency_table_names_its_load_point_in_columns():
    """A CSV read apart from its caption still says at which load its numbers hold: the load
    columns that hold one value in every run compared are columns of each table."""
    from perfkit.report.sections import common, latency

    exp = common.load_experiment("demo-wrk2-sweep", "")
    where = {"target_rate_rps": 30000, "connections": 64}
    groups = latency.grouped_runs(exp, ["profile"], where)
    table = latency.percentiles(groups, (50.0, 99.0))
    within = latency.within_run_table(groups, 99.0, 0.95)
    for frame in (table.to_frame(), groups.to_frame(),
                  latency.spread_summary(within, table, 99.0)):
        assert list(frame.columns[:3]) == ["config", "connections", "threads"]
        assert (frame["target_rate_rps"] == 30000).all() and (frame["connections"] == 64).all()
    # a load column that varies is a row key of its own, never written as one value
    mixed = latency.grouped_runs(exp, ["profile", "connections"], {"target_rate_rps": 30000})
    assert "connections" not in mixed.load and mixed.load["target_rate_rps"] == 30000


def _cell(frame: pd.DataFrame, **where) -> pd.DataFrame:
    mask = np.ones(len(frame), bool)
    for k, v in where.items():
        mask &= (frame[k] == v).to_numpy()
    return frame[mask]


def test_one_estimand_one_value_per_cell_on_the_slo_and_latency_pages(sweep, demo_slo):
    frame = sweep.rows().frame
    verdicts = demo_slo.verdicts_frame()
    assert {e.split(",")[0] for e in verdicts["estimand"]} <= {"median of per-run p99",
                                                              "median run's p99"}
    for (profile, conns), cell in verdicts.groupby(["profile", "connections"]):
        for rate, est in zip(cell["rate_rps"], cell["estimate_ms"], strict=True):
            printed = _cell(frame, profile=profile, connections=conns,
                            target_rate_rps=rate)["latency_p99_ms"]
            assert est == pytest.approx(median_run_value(printed), rel=0.01), (profile, rate)
    where = {"target_rate_rps": 30000, "connections": 64}
    groups = latency.grouped_runs(sweep, ["profile"], where)
    table = latency.percentile_table(groups, (99,))
    for _, r in table.iterrows():
        slo_value = _cell(verdicts, profile=r["config"], connections=64, rate_rps=30000)
        assert r["latency_ms"] == pytest.approx(float(slo_value["estimate_ms"].iloc[0]))
        assert r["estimand"] == slo_value["estimand"].iloc[0]
    assert "30000" in latency.load_point(where) and "64" in latency.load_point(where)


def test_the_slo_and_latency_pages_print_no_interval_of_a_saturated_cell():
    """The demo's 45000 req/s cells: '379 [4.39, 32800]' and '44.9 [0.0345, 58500]' ms, t
    intervals on 3 runs, one saturated: not estimable, with the reason, on both pages."""
    rows = load_experiment(DATA / "demo-wrk2-sweep").rows({"target_rate_rps": 45000})
    table = percentiles(group_runs(rows, ["profile", "connections"]), (99.0,))
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
    rows = load_experiment(STALLS / "factorial-upstream-backlog100").rows({"connections": 16})
    table = percentiles(group_runs(rows, ["keepalive", "cache"]), (99.0, 99.9))
    frame = table.to_frame()
    missing = frame[frame["percentile"] == 99.9]
    assert len(missing) == 4 and (missing["method"] == RunStatus.NO_DATA).all()
    for col in ("n_runs", "latency_ms", "ci_low_ms", "ci_high_ms"):
        assert missing[col].isna().all(), col
    assert (missing["n_failed"] == 0).all()  # a percentile never printed is no failed run
    assert "0 runs" not in table.describe() and "the median of the 5 runs'" in table.describe()


def test_tuned_vs_default_is_compared_and_3_vs_3_runs_say_what_they_need():
    rows = load_experiment(DATA / "demo-wrk2-sweep").rows({"target_rate_rps": 30000,
                                                           "connections": 64})
    table = compare_configs(group_runs(rows, ["profile"]), 99.0)
    assert (table.base, table.new) == ("default", "tuned")
    (row,) = table.rows
    assert row.verdict == Verdict.NOT_TESTABLE
    assert row.comparison.min_attainable_p == pytest.approx(0.1)
    assert table.not_testable_note() == ("1 of 1 comparisons not testable: 3 vs 3 runs cannot "
                                         "reach p < 0.05; >= 4 runs per arm would")
    assert row.comparison.ratio == pytest.approx(0.796, abs=1e-3)  # Hodges-Lehmann, -20.4%
