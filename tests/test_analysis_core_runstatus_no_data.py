"""A metric a run never measured is "no data" for that (run, metric) pair, not a failed run.

Real runs only: the bundled A/A experiment (wrk with --latency prints p50-p99, never p99.9),
the shared wrk fixture run without --latency (no percentiles at all), and the wild fixtures
whose tools measured and recorded nothing (they stay failed).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import _cli_helpers as _cli
import numpy as np
import pytest

import perfkit
from perfkit.analysis import compare_runs, load_experiment, metric
from perfkit.analysis.compare import NO_DATA_GATE, gate_runs, plan_runs
from perfkit.analysis.core import FAILED, NO_DATA, Selection, run_statuses, unmeasured_reason
from perfkit.analysis.latency import group_runs, percentiles
from perfkit.errors import DataError
from perfkit.vocabulary import Verdict
from perfkit.warning import Code, Warn

#: the demo factorial as first recorded, with the upstream's queue of 100: its 1 s stalls
#: (tests/fixtures/stalls/README.md)
STALLS = Path(__file__).resolve().parent / "fixtures" / "stalls"
REPO = Path(__file__).resolve().parents[1]
AA = REPO / "data" / "demo-aa"
PLAIN = REPO / "tests" / "fixtures" / "wrk" / "single" / "plain_default_c50"
WITH_LATENCY = REPO / "tests" / "fixtures" / "wrk" / "single" / "latency_default_c50"
WILD = REPO / "tests" / "fixtures" / "wild"
P99, P99_9 = metric("latency_p99_ms"), metric("latency_p99_9_ms")


def _run(path: Path) -> perfkit.Run:
    (run,) = perfkit.load(path, cache=False)
    return run


def _arm(name: str):
    return Selection.parse(f"{AA}::arm={name}").apply(load_experiment(AA))


@pytest.fixture(scope="module")
def mixed(tmp_path_factory) -> Path:
    """Arm B of the A/A experiment, with a wrk run made without --latency beside its runs."""
    root = tmp_path_factory.mktemp("mixed")
    for run in sorted((AA / "runs").glob("*arm=B")):
        shutil.copytree(run, root / run.name)
    shutil.copytree(PLAIN, root / PLAIN.name)
    return root


@pytest.mark.parametrize(("path", "name", "reason"), [
    (PLAIN, "latency_p99_ms", "wrk without --latency prints no percentiles"),
    (WITH_LATENCY, "latency_p99_9_ms", "wrk prints p50-p99 only"),
    (WITH_LATENCY, "latency_uncorrected_p99_ms", "wrk prints no uncorrected latency"),
    (WILD / "wrk2" / "shorter_than_calibration_1s", "latency_uncorrected_p99_ms",
     "wrk2 printed no uncorrected latency (it needs -U and --latency)"),
    (WITH_LATENCY, "latency_p99_ms", ""),  # measured
    # measured and recorded nothing (placeholders), or no request completed: failed, not "no data"
    (WILD / "wrk2" / "upstream_hangs_before_calibration", "latency_p99_ms", ""),
    (WILD / "wrk" / "all_timeouts", "latency_p99_ms", ""),
    (WILD / "wrk2" / "all_timeouts_no_latency", "latency_p99_ms", ""),
])
def test_the_one_rule_tells_not_measured_from_failed(path, name, reason):
    got = unmeasured_reason(_run(path), metric(name))
    assert got.startswith(reason) if reason else got == ""


def test_a_run_without_the_metric_is_no_data_and_a_failed_one_stays_failed():
    runs = [_run(PLAIN), _run(WILD / "wrk2" / "upstream_hangs_before_calibration")]
    rows = load_experiment(PLAIN).rows()
    assert [s.status for s in run_statuses(rows, P99)] == [NO_DATA]
    assert not run_statuses(rows, P99)[0].counts_as_failed
    hung = load_experiment(WILD / "wrk2" / "upstream_hangs_before_calibration").rows()
    assert [s.status for s in run_statuses(hung, P99)] == [FAILED]
    assert runs[0].requests and runs[1].requests  # both served requests


def test_compare_on_a_percentile_the_tool_never_prints_is_no_data_not_every_run_failed():
    table = compare_runs(_arm("A"), _arm("B"), P99_9)
    (row,) = table.rows
    assert row.verdict == Verdict.NO_DATA and row.unmeasured
    assert Code.NO_FINISHED_RUN not in {w.code for w in row.warnings}
    assert Warn(Code.RUNS_UNMEASURED, side="base", runs=10, metric="latency_p99_9_ms",
                reason="wrk prints p50-p99 only") in row.warnings
    assert row.comparison.n_failed_base == row.comparison.n_failed_new == 0


def test_gate_of_a_metric_nobody_measured_exits_3_with_no_data_never_1_or_2():
    result = gate_runs(_arm("A"), _arm("B"), [P99_9], 0.05)
    assert [g.status for g in result.rows] == [NO_DATA_GATE]
    assert result.exit_status == 3
    assert "wrk prints p50-p99 only" in result.rows[0].reason
    code, out, _ = _cli.run_cli("gate", f"{AA}::arm=A", f"{AA}::arm=B", "--metric",
                                "latency_p99_9_ms")
    assert code == 3 and "perfkit gate: NO DATA (exit 3" in out
    from perfkit.present import gate as present_gate

    xml = present_gate.junit(result)
    assert 'skipped="1"' in xml and 'errors="0"' in xml and "<skipped message=\"NO DATA" in xml


def test_an_arm_mixing_sources_loads_and_its_unmeasured_run_is_left_out(mixed):
    new = load_experiment(mixed).rows(label="mixed")
    table = compare_runs(_arm("A"), new, P99, by="none")
    (row,) = table.rows
    assert (row.comparison.n_base, row.comparison.n_new) == (10, 10)
    assert row.comparison.n_failed_new == 0 and not any(row.worst_new)
    assert len(row.worst_new) == 11  # aligned with every run of the side
    assert row.n_unmeasured == (0, 1)
    assert any(w.code is Code.RUNS_UNMEASURED and (w["runs"], w["metric"]) == (1, P99.name)
               for w in row.warnings)
    # the same with the rows found automatically: the column only one arm records is no row
    auto = compare_runs(_arm("A"), new, P99)
    assert Warn(Code.COLUMN_NOT_RECORDED, column="profile", arms=("base",)) in auto.warnings
    code, out, err = _cli.run_cli("compare", f"{AA}::arm=A", str(mixed), "--by", "none")
    assert code == 0 and "Traceback" not in err and "10 vs 10" in out


def test_the_unmeasured_run_is_no_data_on_the_other_pages(mixed):
    rows = load_experiment(mixed).rows()
    plan = plan_runs([rows], P99, 0.05, by="none", n_sim=200)
    assert (plan.rows[0].n_base, plan.rows[0].n_new) == (10, 10)
    assert Code.RUNS_UNMEASURED in {w.code for w in plan.rows[0].warnings}
    table = percentiles(group_runs(rows, []), (99.0,))
    (e,) = table.estimates
    assert (e.count(FAILED), e.count(NO_DATA), e.ci.n_runs) == (0, 1, 10)
    assert any(w.code is Code.ESTIMATE_RUNS_STATUS and w["status"] == NO_DATA
               for w in table.warnings_of(e))


def test_effects_and_plan_say_why_when_no_run_measured_the_metric():
    exp = load_experiment(STALLS / "factorial-upstream-backlog100")
    from perfkit.analysis.effects import factorial_effects

    with pytest.raises(DataError, match="no run measured latency_p99_9_ms: wrk prints p50-p99"):
        factorial_effects(exp.rows(), ["keepalive", "cache"], P99_9)
    with pytest.raises(DataError, match=r"no run measured latency_p99_9_ms.*p50-p99 only"):
        plan_runs([_arm("A"), _arm("B")], P99_9, 0.05, by="none", n_sim=200)


def test_history_points_leave_unmeasured_runs_out_instead_of_ranking_them_worst(mixed):
    from perfkit.analysis.history._history import _point

    rows = load_experiment(mixed).rows()
    rows = type(rows)(rows.frame.assign(time_utc="t"), rows.runs, rows.label, rows.factors)
    point = _point(rows, "x", P99, 0.95)
    assert (point.n_runs, point.n_failed) == (10, 0)
    assert np.isfinite(point.ci_high)
    assert Code.RUNS_UNMEASURED in {w.code for w in point.warnings}
