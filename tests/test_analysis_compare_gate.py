"""``perfkit gate``: the decision rule, exit statuses and outputs, on real bundled runs.

The real cases: the demo history's v07 -> v08 (the upstream went from 10 to 20 ms: a real
regression), its v12 -> v13 (upstream keepalive on: a real improvement), the A/A experiment
(the same configuration in both arms), and 2 vs 2 runs. The rule table itself is checked on
constructed comparison rows, every branch and boundary.
"""

from __future__ import annotations

import json
import math
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import _cli_helpers as _cli
import pytest

from perfkit.analysis import ComparisonRow, metric
from perfkit.analysis.compare import (
    ERROR,
    INCONCLUSIVE,
    PASS,
    REGRESSION,
    classify,
    parse_percent,
    threshold_ratio,
)
from perfkit.stats.comparison import Comparison
from perfkit.vocabulary import GateOutcome, Verdict

REPO = Path(__file__).resolve().parents[1]
H = "data/demo-history"
V07, V08 = f"{H}::label=v07", f"{H}::label=v08"
BOTH = ("--metric", "latency_p99_ms", "--metric", "throughput_rps")


def gate(*argv: str, cwd: Path = REPO) -> tuple[int, str, str]:
    return _cli.run_cli("gate", *argv, cwd=cwd)


def gate_json(*argv: str) -> tuple[int, dict]:
    code, out, err = gate(*argv, "--format", "json")
    return code, json.loads(out)


# -- the rule -------------------------------------------------------------------------------
def _row(verdict: str, ratio: float, low: float, high: float, p_adj: float = 0.01,
         n: int = 10) -> ComparisonRow:
    c = Comparison(n, n, ratio=ratio, ratio_ci_low=low, ratio_ci_high=high, p_value=p_adj,
                   min_attainable_p=1e-5, alpha=0.05, significant=p_adj < 0.05)
    return ComparisonRow((), c, p_adj, verdict)


LAT, THR = metric("latency_p99_ms"), metric("throughput_rps")


@pytest.mark.parametrize(("m", "verdict", "ci", "status", "outcome"), [
    (LAT, Verdict.WORSE, (1.06, 1.20), REGRESSION, GateOutcome.REGRESSION),
    (LAT, Verdict.WORSE, (1.05, 1.20), INCONCLUSIVE, GateOutcome.STRADDLES),  # touches: not beyond
    (LAT, Verdict.WORSE, (1.01, 1.05), PASS, GateOutcome.BELOW_THRESHOLD),  # at the limit: within
    (LAT, Verdict.WORSE, (1.01, 1.08), INCONCLUSIVE, GateOutcome.STRADDLES),
    (LAT, Verdict.NO_CHANGE, (0.97, 1.04), PASS, GateOutcome.NO_REGRESSION),
    (LAT, Verdict.NO_CHANGE, (0.90, 1.10), INCONCLUSIVE, GateOutcome.STRADDLES),
    (LAT, Verdict.BETTER, (0.80, 0.90), PASS, GateOutcome.IMPROVEMENT),
    (LAT, Verdict.NO_CHANGE, (1.06, 1.30), INCONCLUSIVE, GateOutcome.BEYOND_NOT_SIGNIFICANT),
    (THR, Verdict.WORSE, (0.80, 0.94), REGRESSION, GateOutcome.REGRESSION),
    (THR, Verdict.WORSE, (0.96, 0.99), PASS, GateOutcome.BELOW_THRESHOLD),
    (THR, Verdict.NO_CHANGE, (0.93, 1.02), INCONCLUSIVE, GateOutcome.STRADDLES),
    (THR, Verdict.BETTER, (1.10, 1.30), PASS, GateOutcome.IMPROVEMENT),
])
def test_the_rule_is_significance_and_the_whole_ci_beyond_the_threshold(m, verdict, ci, status,
                                                                       outcome):
    limit = threshold_ratio(m, 0.05)
    got = classify(_row(verdict, (ci[0] + ci[1]) / 2, *ci), m, limit)
    assert got[:2] == (status, outcome)


def test_not_testable_and_no_data_rows():
    c = Comparison(2, 2, ratio=1.1, p_value=0.33, min_attainable_p=1 / 3, alpha=0.05)
    status, outcome, reason = classify(ComparisonRow((), c, 0.33, Verdict.NOT_TESTABLE), LAT, 1.05)
    assert (status, outcome) == (INCONCLUSIVE, GateOutcome.NOT_TESTABLE) and "never reach" in reason
    c = Comparison(0, 3)
    assert classify(ComparisonRow((), c, math.nan, Verdict.NO_DATA), LAT, 1.05)[0] == ERROR


def test_threshold_directions_and_percent_parsing():
    assert threshold_ratio(LAT, 0.05) == pytest.approx(1.05)
    assert threshold_ratio(THR, 0.05) == pytest.approx(0.95)
    assert parse_percent("5%") == pytest.approx(0.05)
    assert parse_percent(" 2.5 % ") == pytest.approx(0.025)
    assert parse_percent("0.05") == pytest.approx(0.05)  # a fraction, as in parameter files
    for bad in ("5", "1", "0%", "100%", "-5%", "-0.05", "five%", "nan", "inf%"):
        with pytest.raises(ValueError, match="expected a percentage"):
            parse_percent(bad)
    with pytest.raises(ValueError, match=r"5 would be 500%: write 5% or 0.05"):
        parse_percent("5")


# -- real runs ------------------------------------------------------------------------------
def test_a_real_regression_gates_to_1_with_its_ratio_and_ci():
    code, data = gate_json(V07, V08, *BOTH)
    assert code == 1 and data["status"] == REGRESSION and data["exit_status"] == 1
    lat, thr = data["rows"]
    assert lat["gate"] == thr["gate"] == REGRESSION
    assert lat["ratio_ci_low"] > 1.05 and lat["ratio"] == pytest.approx(1.501, abs=1e-3)
    assert thr["ratio_ci_high"] < 0.95 and thr["ratio"] == pytest.approx(0.623, abs=1e-3)


def test_the_gate_uses_compares_verdicts_and_numbers():
    jobs = (f"{H}/jobs/07-v07", f"{H}/jobs/08-v08")
    code, out, _ = _cli.run_cli("compare", *jobs, "--format", "json", cwd=REPO)
    compared = json.loads(out)["rows"][0]
    row = gate_json(*jobs)[1]["rows"][0]
    for key in ("ratio", "ratio_ci_low", "ratio_ci_high", "p_value", "verdict"):
        assert row[key] == compared[key]


def test_a_real_improvement_passes_and_a_large_threshold_makes_the_regression_pass():
    code, data = gate_json(f"{H}::label=v12", f"{H}::label=v13", *BOTH)
    assert code == 0 and {r["outcome"] for r in data["rows"]} == {GateOutcome.IMPROVEMENT}
    code, data = gate_json(V07, V08, *BOTH, "--max-regression", "70%")
    assert code == 0
    assert {r["outcome"] for r in data["rows"]} == {GateOutcome.BELOW_THRESHOLD}


def test_an_a_a_pair_gates_to_0():
    code, data = gate_json("data/demo-aa::arm=A", "data/demo-aa::arm=B", "--metric",
                           "latency_p50_ms", "--metric", "throughput_rps",
                           "--max-regression", "10%")
    assert code == 0, data
    assert all(r["verdict"] == Verdict.NO_CHANGE and r["gate"] == PASS for r in data["rows"])


def test_a_ci_straddling_the_threshold_is_inconclusive_with_the_runs_needed():
    code, data = gate_json(f"{H}::label=v06", V07)
    (row,) = data["rows"]
    assert code == 3 and row["outcome"] == GateOutcome.STRADDLES
    assert row["ratio_ci_low"] < 1.05 < row["ratio_ci_high"]
    assert row["runs_per_arm_needed"] == 23 and row["power_needed"] >= 0.8


def test_two_vs_two_runs_gate_to_3_with_the_runs_needed():
    code, out, _ = gate(f"{H}::label=v06,repetition=1|2", f"{H}::label=v07,repetition=1|2")
    assert code == 3
    # the headline keeps its CI contract in capitals; the row reads like every other verdict
    assert out.startswith("perfkit gate: INCONCLUSIVE (exit 3")
    assert "inconclusive (not testable)" in out and "2 vs 2 runs can never reach p < 0.05" in out
    assert "runs per arm would resolve +5.0%" in out


@pytest.mark.slow
def test_holm_over_load_levels_can_make_every_row_untestable():
    code, data = gate_json("data/demo-wrk2-sweep::profile=default",
                           "data/demo-wrk2-sweep::profile=tuned")
    assert code == 3 and len(data["rows"]) == 8
    assert {r["outcome"] for r in data["rows"]} == {GateOutcome.NOT_TESTABLE}
    assert all(r["runs_per_arm_needed"] or "more than 200 runs per arm" in r["reason"]
               for r in data["rows"])
    assert all("after Holm over 8 rows" in r["reason"] for r in data["rows"])


def test_a_load_level_without_runs_on_one_side_is_an_error_2():
    code, data = gate_json("data/demo-wrk2-sweep::profile=default,target_rate_rps=5000|15000",
                           "data/demo-wrk2-sweep::profile=tuned,target_rate_rps=15000|30000")
    assert code == 2 and data["status"] == ERROR
    no_data = [(r["target_rate_rps"], r["n_base"], r["n_new"]) for r in data["rows"]
               if r["gate"] == ERROR]
    assert len(no_data) == 4 and set(no_data) == {(5000, 3, 0), (30000, 0, 3)}  # x 2 conns


def test_a_gate_across_different_load_levels_is_an_error_2():
    """docs/ci.md: a load level with no run on one side is ERROR. 16 against 32 connections
    (each arm pinned by its selection) has no level on both sides: every row is an error,
    never a regression or a pass (it was INCONCLUSIVE, exit 3, and REGRESSION elsewhere)."""
    c = "data/demo-wrk-connections"
    code, data = gate_json(f"{c}::connections=16", f"{c}::connections=32")
    assert code == 2 and data["status"] == ERROR and data["rows"]
    assert {r["gate"] for r in data["rows"]} == {ERROR}
    assert {r["outcome"] for r in data["rows"]} == {GateOutcome.DIFFERENT_LOAD}
    assert all("connections: base 16, new 32" in r["reason"] for r in data["rows"])
    code, out, err = gate(f"{c}::connections=16", f"{c}::connections=32", "--by", "none")
    assert code == 2 and "different load levels" in err
    code, data = gate_json(f"{c}::connections=16,profile=default",
                           f"{c}::connections=16,profile=buffered-log")
    assert code in (0, 1, 3) and ERROR not in {r["gate"] for r in data["rows"]}


def test_the_run_order_check_is_printed():
    out = gate(V07, V08)[1]
    assert "the arms were not interleaved" in out and "drift check over the run order" in out


# -- outputs --------------------------------------------------------------------------------
def test_junit_has_a_case_per_metric_failures_skips_and_matches_the_exit(tmp_path):
    code, out, _ = gate(V07, V08, *BOTH, "--format", "junit", "--junit",
                        str(tmp_path / "g.xml"))
    assert code == 1 and (tmp_path / "g.xml").read_text() == out
    root = ET.fromstring(out)
    cases = root.findall("./testsuite/testcase")
    assert [c.get("classname") for c in cases] == ["perfkit.gate.latency_p99_ms",
                                                   "perfkit.gate.throughput_rps"]
    assert all(c.find("failure").get("type") == "regression" for c in cases)
    assert root.get("failures") == "2" and root.get("skipped") == "0"
    code, out, _ = gate(f"{H}::label=v06", V07, "--format", "junit")
    (case,) = ET.fromstring(out).findall("./testsuite/testcase")
    assert code == 3 and case.find("skipped") is not None and case.find("failure") is None
    assert "runs per arm would resolve" in case.find("skipped").get("message")


def test_junit_stays_well_formed_xml_for_names_with_esc_and_bel(tmp_path):
    # real Locust runs whose request names and arm levels hold ESC, BEL, CR, tabs
    code, out, _ = _cli.run_cli("gate", *_cli.HOSTILE_ARMS, "--by", "endpoint", "--metric",
                                "latency_p50_ms", "--max-regression", "5%", "--format", "junit",
                                "--junit", str(tmp_path / "g.xml"))
    assert code == 3
    for text in (out, (tmp_path / "g.xml").read_text(encoding="utf-8")):
        root = ET.fromstring(text)  # raises on a character XML 1.0 cannot hold
        names = [c.get("name") for c in root.iter("testcase")]
        assert len(names) == 10
        assert "latency_p50_ms endpoint=esc \\x1b[31mred\\x1b[0m bel \\x07 page" in names
        assert "latency_p50_ms endpoint=\rCR=1+1" in names  # legal in XML: kept
        props = {p.get("name"): p.get("value") for p in root.iter("property")}
        assert props["new"].endswith("::arm=-2\\x1b]0;pwned\\x07")


def test_markdown_is_a_job_summary_with_the_rule():
    code, out, _ = gate(V07, V08, "--format", "markdown")
    assert code == 1 and out.startswith("**perfkit gate: REGRESSION (exit 1")
    assert "| metric |" in out and "A change counts as a regression" in out


def test_csv_has_one_row_per_metric_and_level():
    code, out, _ = gate(V07, V08, *BOTH, "--format", "csv")
    lines = out.strip().splitlines()
    assert code == 1 and len(lines) == 3 and lines[0].startswith("metric,")


# -- errors ---------------------------------------------------------------------------------
@pytest.mark.parametrize("argv", [
    (V07, V08, "--max-regression", "5"),
    (V07, V08, "--metric", "no_such_metric"),
    (V07, V08, "--alpha", "2"),
    (V07, f"{H}::no_column=1"),
])
def test_usage_errors_exit_2(argv):
    code, out, err = gate(*argv)
    assert code == 2 and out == "" and err.startswith("perfkit: error:")


def test_data_errors_exit_2(tmp_path):
    code, _, err = gate(V07, "no/such/folder")
    assert code == 2 and "no runs found" in err
    code, _, err = gate(V07, f"{H}::label=v99")
    assert code == 2 and "matches no run" in err


def test_an_unreadable_run_refuses_the_gate_as_a_whole(tmp_path):
    """docs/ci.md: a job with an unreadable run is refused as a whole (exit 2, nothing gated);
    --skip-unreadable gates the others and names it."""
    runs = REPO / H / "jobs/08-v08/runs"
    for d in sorted(runs.iterdir()):
        shutil.copytree(d, tmp_path / d.name)
    stdout = tmp_path / "0005-b05-run" / "stdout.txt"
    stdout.write_text("".join(stdout.read_text().splitlines(keepends=True)[:5]))  # killed run
    code, out, err = gate(V07, str(tmp_path))
    assert code == 2 and out == ""
    [line] = err.splitlines()  # one line per unreadable file, the last saying what was refused
    assert line.startswith("perfkit: error: ") and "stdout.txt:6: expected" in line
    assert "could not be read: nothing gated; --skip-unreadable leaves it out" in line
    code, out, err = gate(V07, str(tmp_path), "--skip-unreadable")
    assert code == 1 and "REGRESSION" in out and "stdout.txt:6: expected" in out


def test_gate_rows_read_like_every_verdict_and_the_ci_contract_is_kept():
    code, out, _ = gate(V07, V08, *BOTH)
    assert code == 1 and out.startswith("perfkit gate: REGRESSION (exit 1; 2 regression)")
    rows = [line for line in out.splitlines() if line.startswith(("latency_p99", "throughput"))]
    assert len(rows) == 2 and all(" regression " in r and "REGRESSION" not in r for r in rows)
    code, out, _ = gate(V07, V08, *BOTH, "--format", "junit")
    for case in ET.fromstring(out).findall("./testsuite/testcase"):
        assert case.find("failure").get("message").startswith("REGRESSION: ")
        assert "gate: REGRESSION: the CI lies beyond" in case.find("system-out").text


@pytest.mark.parametrize("name, ci, reason", [
    ("throughput_rps", (0.97, 1.10), "the CI stays above -5.0%"),
    ("latency_p99_ms", (0.90, 1.04), "the CI stays below +5.0%")])
def test_a_pass_says_which_side_of_the_threshold_the_ci_stays(name, ci, reason):
    m = metric(name)
    c = Comparison(10, 10, ratio=1.0, ratio_ci_low=ci[0], ratio_ci_high=ci[1], p_value=0.5,
                   min_attainable_p=1e-5, alpha=0.05, significant=False)
    row = ComparisonRow((), c, 0.5, Verdict.NO_CHANGE)
    status, _, why = classify(row, m, threshold_ratio(m, 0.05))
    assert status == PASS and why == reason


def test_a_threshold_is_5_percent_or_0_05_on_the_command_line():
    outs = [gate(V07, V08, "--max-regression", given, "--format", "json")
            for given in ("5%", "0.05")]
    assert outs[0][0] == outs[1][0] == 1 and outs[0][1] == outs[1][1]
    assert json.loads(outs[0][1])["max_regression"] == pytest.approx(0.05)


def _drifting_aa(design: str, seed: int, drift_log: float = math.log(1.2),
                 change_log: float = 0.0):
    """The bundled A/A experiment's first 20 runs in order, their p99 set to
    ``4 exp(drift x position / 19 + 0.05 z)`` (NEW's times ``exp(change_log)``); BASE the first
    ten and NEW the last ten (``base then new``) or every other run (``interleaved``)."""
    import numpy as np

    from perfkit.analysis import load_experiment
    from perfkit.analysis.core import RunSet
    from perfkit.frames import runs_frame

    runs = load_experiment(REPO / "data" / "demo-aa").rows().runs[:20]
    runs = tuple(r.replace(order=i + 1, start_utc=f"2026-01-01T00:00:{i:02d}.000Z")
                 for i, r in enumerate(runs))
    rng = np.random.default_rng(seed)
    position = np.arange(20)
    is_new = position >= 10 if design == "base then new" else position % 2 == 1
    values = 4.0 * np.exp(drift_log * position / 19 + 0.05 * rng.standard_normal(20)
                          + change_log * is_new)
    rows = RunSet(runs_frame(runs).assign(latency_p99_ms=values), runs)
    return rows.subset(~is_new, "base"), rows.subset(is_new, "new")


def test_a_change_the_drift_could_have_made_is_inconclusive_not_a_regression():
    """Issue 34: an A/A with +20% drift over the run order, the base runs then the new ones,
    exited 1 in 31% of the audit's gates (the drift note beside it, the exit code without
    it). The gate now takes the drift's part off the change: without it the interval
    straddles +5%, so the row is inconclusive (exit 3), the drift named and the fix given.
    The same seed exited 1 before. A real +30% change in interleaved arms stays a regression."""
    from perfkit.analysis.compare import gate_runs

    p99 = metric("latency_p99_ms")
    base, new = _drifting_aa("base then new", seed=4)
    result = gate_runs(base, new, [p99], 0.05, by="none", n_sim=100)
    (row,) = result.rows
    assert result.exit_status == 3 and row.status == INCONCLUSIVE
    assert row.outcome == GateOutcome.DRIFT and row.row.drift is not None
    assert "could be drift" in row.reason and "straddles +5.0%" in row.reason
    assert "interleave the arms" in row.reason
    assert "(could be drift: interleave the arms) is inconclusive" in result.describe()
    base, new = _drifting_aa("interleaved", seed=4, drift_log=0.0, change_log=math.log(1.3))
    real = gate_runs(base, new, [p99], 0.05, by="none", n_sim=100)
    assert real.exit_status == 1 and real.rows[0].outcome == GateOutcome.REGRESSION
