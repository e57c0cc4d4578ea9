"""The analysis layer on real runs: metrics, selections, failed runs, row keys, verdicts."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import _cli_helpers as _cli
import numpy as np
import pytest

from perfkit.analysis import Selection, compare_runs, load_experiment, metric, run_statuses
from perfkit.analysis.compare import NOT_TESTABLE, runs_per_arm_needed, verdict
from perfkit.analysis.core import (
    FAILED_ERROR_RATIO,
    FIXED_METRICS,
    HIGHER,
    LOWER,
    SATURATED,
    SHORT,
    is_metric,
    latency_moved,
    statuses_by_cell,
)
from perfkit.errors import DataError, UsageError
from perfkit.stats import compare

TESTS = Path(__file__).resolve().parent
FIX = TESTS / "fixtures"
DATA = TESTS.parent / "data"


@pytest.fixture(scope="module")
def wrk2():
    return load_experiment(FIX / "wrk2" / "sweep")


# -- the metric registry ----------------------------------------------------------------------
SUFFIX_RULES = {"_ms": ("ms", LOWER), "_rps": ("req/s", HIGHER), "_bytes_per_s": ("B/s", HIGHER),
                "_ratio": ("", LOWER)}


def _all_metric_columns() -> set[str]:
    columns = set(FIXED_METRICS)
    for exp in ("demo-wrk2-sweep", "demo-wrk2-uncorrected", "demo-locust", "demo-aa"):
        columns |= {c for c in load_experiment(DATA / exp).frame.columns if is_metric(c)}
    return columns


@pytest.mark.parametrize("name", sorted(_all_metric_columns()))
def test_direction_and_unit_agree_with_the_column_suffix(name):
    m = metric(name)
    suffix = next((s for s in SUFFIX_RULES if name.endswith(s)), "")
    unit, better = SUFFIX_RULES.get(suffix, ("", LOWER))  # counts: errors, failures
    assert (m.suffix, m.unit, m.better) == (suffix, unit, better)
    assert m.axis_label.endswith(f"[{unit}]") if unit else m.axis_label == m.label


def test_percentile_columns_are_metrics_and_unknown_names_list_the_known_ones():
    assert metric("latency_p99_9_ms").label == "p99.9 latency"
    assert metric("latency_uncorrected_p50_ms").label == "uncorrected p50 latency"
    with pytest.raises(UsageError, match="no metric .latency_p42. known; metrics: .*throughput"):
        metric("latency_p42")
    with pytest.raises(UsageError, match="in these runs; metrics: latency_p99_ms$"):
        metric("latency_p50_ms", ["tool", "latency_p99_ms"])


# -- selections and analysis rows -------------------------------------------------------------
def test_selection_values_match_numbers_as_numbers(wrk2):
    rows = Selection.parse("x::connections=16.0,target_rate_rps=5000|45000").apply(wrk2)
    assert len(rows) == 12 and set(rows.frame["target_rate_rps"]) == {5000.0, 45000.0}
    assert len(wrk2.rows({"connections": 16, "profile": ["tuned"]})) == 12
    with pytest.raises(UsageError, match="no column 'conns'"):
        wrk2.rows({"conns": 16})
    with pytest.raises(DataError, match="matches no run"):
        Selection.parse("x::profile=nope").apply(wrk2)


def test_a_locust_run_counts_once_by_its_aggregated_row():
    exp = load_experiment(FIX / "locust")
    assert len(exp.frame) > 3  # endpoints and Aggregated rows
    rows = exp.rows()
    assert len(rows) == 3 and rows.frame["is_aggregate"].all()
    assert len(exp.rows(per_endpoint=True)) == len(exp.frame)


# -- the failed-run rule ----------------------------------------------------------------------
def _cell(exp, **where):
    rows = exp.rows(where)
    return rows, run_statuses(rows, metric("latency_p99_ms"))


def test_a_run_whose_most_requests_failed_is_failed_on_latency_and_throughput_only():
    # seeds-worker-connections, base (1024) at 4000 connections: 3 runs where every response
    # failed, and 0004 (99.0% errors, 57 req/s) and 0011 (99.99%, 0.76 req/s), once "ok"
    exp = load_experiment(DATA / "seeds-worker-connections")
    rows = exp.rows({"worker_connections": 1024, "connections": 4000})
    ids = [r.run_id[:4] for r in rows.runs]
    for name in ("throughput_rps", "latency_p99_ms", "latency_mean_ms"):
        statuses = dict(zip(ids, run_statuses(rows, metric(name)), strict=True))
        assert all(s.status == "failed" for s in statuses.values()), name
        assert statuses["0004"].reason == "99.0% of requests failed (>= 50%)"
        assert statuses["0011"].reason == "99.9% of requests failed (>= 50%)"
    # on the error ratio itself they are its measurement: kept, with their values
    statuses = dict(zip(ids, run_statuses(rows, metric("error_ratio")), strict=True))
    assert statuses["0004"].status == statuses["0011"].status == "ok"
    # a run with a few errors is not failed by the rule
    rest = exp.rows({"worker_connections": 1024, "connections": 2000})
    assert 0 < max(rest.values("error_ratio")) < FAILED_ERROR_RATIO
    assert all(s.status == "ok" for s in run_statuses(rest, metric("throughput_rps")))


def test_a_wrk2_run_slightly_short_with_its_peers_latency_is_in_doubt_not_failed(wrk2):
    rows, statuses = _cell(wrk2, profile="tuned", connections=64, target_rate_rps=5000)
    ratios = rows.values("throughput_rps") / 5000
    short = [s for s in statuses if s.status == SHORT]
    assert len(short) == 1 and "0.964 x its target" in short[0].reason
    i = [s.status for s in statuses].index(SHORT)
    assert 0.9 <= ratios[i] < 0.99
    peers = np.delete(rows.values("latency_p99_ms"), i)
    assert latency_moved(rows.values("latency_p99_ms")[i], peers) is False


def test_wrk2_runs_far_short_or_with_a_risen_latency_are_saturated(wrk2):
    for connections, reason in ((64, "the rate was not sustained"),
                                (16, "rose above its peers'")):
        rows, statuses = _cell(wrk2, profile="default", connections=connections,
                               target_rate_rps=45000)
        saturated = [s for s in statuses if s.status == SATURATED]
        assert len(saturated) == 1 and reason in saturated[0].reason


def test_a_row_carries_which_runs_it_ranked_worst_in_cell_order(wrk2):
    from perfkit.analysis.compare import cell_runs

    base, new = (wrk2.rows({"profile": p}) for p in ("default", "tuned"))
    for name in ("latency_p99_ms", "throughput_rps", "error_ratio"):
        m = metric(name)
        table = compare_runs(base, new, m)
        for row in table.rows:
            for side, rows, n_failed in (("base", base, row.comparison.n_failed_base),
                                         ("new", new, row.comparison.n_failed_new)):
                cell = cell_runs(rows, table.keys, row.key)
                flags = getattr(row, f"worst_{side}")
                expected = [s.counts_as_failed and m.failed_is_worst
                            for s in run_statuses(cell, m)]
                assert list(flags) == expected and len(flags) == len(cell)
                assert sum(flags) == n_failed  # every value is there: flags are the failures
    rows = compare_runs(base, new, metric("latency_p99_ms")).rows
    assert sum(sum(r.worst_base) for r in rows) == 2  # the two saturated default runs


def test_statuses_by_cell_use_the_cells_own_peers(wrk2):
    rows = wrk2.rows()
    statuses = statuses_by_cell(rows, metric("latency_p99_ms"),
                                ["profile", "connections", "target_rate_rps"])
    counts = {k: sum(s.status == k for s in statuses) for k in (SATURATED, SHORT)}
    assert counts == {SATURATED: 2, SHORT: 1}
    assert len(statuses) == len(rows) == 48


def test_latency_moved_needs_two_peers_and_a_real_rise():
    assert latency_moved(10.0, np.array([2.0])) is None
    assert latency_moved(10.0, np.array([2.0, 2.1, 1.9])) is True
    assert latency_moved(2.5, np.array([2.0, 2.1, 1.9])) is False  # < 1.5 x
    assert latency_moved(2.5, np.array([1.0, 3.0, 2.0, 5.0])) is False  # within their spread


def test_a_short_run_keeps_its_value_and_the_row_is_repeated_without_it(wrk2):
    base = wrk2.rows({"profile": "default", "connections": 64, "target_rate_rps": 5000})
    new = wrk2.rows({"profile": "tuned", "connections": 64, "target_rate_rps": 5000})
    table = compare_runs(base, new, metric("latency_p99_ms"), by="none")
    (row,) = table.rows
    kept = new.values("latency_p99_ms")
    assert row.comparison.median_new == pytest.approx(np.median(kept))  # not ranked as failed
    assert row.n_short_new == 1 and row.sensitivity is not None
    assert row.sensitivity.n_new == 2
    frame = table.to_frame()
    assert frame["n_short_new"].iloc[0] == 1 and not math.isnan(frame["ratio_without_short"][0])


# -- row keys ---------------------------------------------------------------------------------
def test_a_column_confounded_with_the_arms_is_part_of_the_arm(tmp_path):
    sweep = FIX / "wrk2" / "sweep"
    for arm, profile in (("before", "default"), ("after", "tuned")):
        for run in sweep.glob(f"{profile}_R30000_c64_rep*"):
            shutil.copytree(run, tmp_path / arm / run.name)  # real runs, unedited
    code, out, err = _cli.run_cli("compare", str(tmp_path / "before"), str(tmp_path / "after"))
    assert code == 0 and err == ""
    assert "profile differs between the arms (base: default; new: tuned): it is part of what " \
           "the arms compare, not a row" in out
    body = [ln for ln in out.splitlines() if " vs " in ln and "runs" not in ln]
    assert len(body) == 1 and "3 vs 3" in body[0] and "a side has no runs" not in out


# -- verdicts ---------------------------------------------------------------------------------
def test_holm_over_the_family_can_make_a_clear_difference_untestable():
    c = compare([1.0, 1.1, 1.2, 1.05, 1.15], [1.3, 1.4, 1.25, 1.35, 1.5])  # p = 2/252
    m = metric("latency_p99_ms")
    assert verdict(c, c.p_value * 6, m, family=6) == "worse"  # 6 x 0.0079 = 0.048 < 0.05
    assert verdict(c, min(1, c.p_value * 12), m, family=12) == NOT_TESTABLE
    assert runs_per_arm_needed(0.05, 12) == 6 and runs_per_arm_needed(0.05, 1) == 4


def test_compare_exits_2_when_an_input_file_could_not_be_read(tmp_path):
    sweep = FIX / "wrk" / "sweep"
    for run in sweep.glob("*_c50_rep*"):
        shutil.copytree(run, tmp_path / run.name)
    bad = tmp_path / "default_c50_rep1" / "run.stdout"
    bad.write_text("\n".join(bad.read_text().splitlines()[:4]) + "\n")  # a real output, cut
    code, out, err = _cli.run_cli("compare", f"{tmp_path}::profile=default",
                                  f"{tmp_path}::profile=tuned", "--by", "none")
    assert code == 2 and out == ""  # refused as a whole (issue 30), the file named
    assert err.count("perfkit: error:") == 1 and "run.stdout:" in err
    code, out, err = _cli.run_cli("compare", f"{tmp_path}::profile=default",
                                  f"{tmp_path}::profile=tuned", "--by", "none",
                                  "--skip-unreadable")
    assert code == 0 and "2 vs 3" in out and "run.stdout:" in out  # left out, named


def test_wrk2_aa_runs_slightly_short_are_in_doubt_and_the_medians_stay_bounded():
    # the real wrk2 A/A experiment (10 vs 10 at -R 8000): some runs reached 0.96-0.98 x the
    # target with latencies like their peers'. Ranked as failed they made both medians' CIs
    # infinite; in doubt, they keep their values and the row is repeated without them.
    rows = load_experiment(DATA / "demo-wrk2-aa").rows()
    a, b = rows.where({"arm": "A"}), rows.where({"arm": "B"})
    for side in (a, b):
        statuses = run_statuses(side, metric("latency_p99_ms"))
        ratios = side.values("throughput_rps") / side.values("target_rate_rps")
        for s, r in zip(statuses, ratios, strict=True):
            if s.status == SHORT:
                assert 0.9 <= r < 0.99 and "in doubt" in s.reason
    (row,) = compare_runs(a, b, metric("latency_p99_ms")).rows
    c = row.comparison
    assert row.n_short_base + row.n_short_new >= 2 and row.sensitivity is not None
    assert all(math.isfinite(v) for v in (c.median_base_ci_low, c.median_base_ci_high,
                                          c.median_new_ci_low, c.median_new_ci_high))
    assert row.verdict == "~" and row.sensitivity_verdict == "~"
