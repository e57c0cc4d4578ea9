"""``perfkit plan``: the power engine's answers for the rows a comparison would have.

The numbers must be those of :mod:`perfkit.stats.power` on the same per-run values (the plan
only chooses the runs, the rows and the Holm family); the engine's calibration is its own test.
"""

from __future__ import annotations

import json
from pathlib import Path

import _cli_helpers as _cli
import numpy as np
import pytest

from perfkit.analysis import load_experiment
from perfkit.formatting import pct_change
from perfkit.stats.power import min_detectable_ratio, power_at_ratio, runs_needed

REPO = Path(__file__).resolve().parents[1]
V07 = "data/demo-history/jobs/07-v07"


def plan(*argv: str) -> tuple[int, str, str]:
    return _cli.run_cli("plan", *argv, cwd=REPO)


def plan_json(*argv: str) -> dict:
    code, out, err = plan(*argv, "--format", "json")
    assert code == 0, err
    return json.loads(out)


def p99(path: str) -> np.ndarray:
    return load_experiment(REPO / path).rows().values("latency_p99_ms")


def test_one_set_of_runs_gives_the_engines_numbers():
    data = plan_json("--metric", "latency_p99_ms", "--detect", "3%", "--from", V07)
    (row,) = data["rows"]
    v = p99(V07)
    need = runs_needed(1.03, v, [])
    now = min_detectable_ratio(v, [], n_base=5, n_new=5)
    power = power_at_ratio(1.03, v, [], n_base=5, n_new=5)
    assert row["runs_per_arm_needed"] == need.runs_per_arm == 36
    assert row["log_sd"] == pytest.approx(need.log_sd)
    assert row["mde_ratio_high"] == pytest.approx(now.ratio_high)
    assert row["power_now"] == pytest.approx(power.power)
    assert (row["n_base"], row["n_new"]) == (5, 5) and data["family"] == 1


def test_two_arms_pool_their_spread_and_throughput_looks_down():
    data = plan_json("--metric", "throughput_rps", "--detect", "5%", "--from",
                     "data/demo-aa::arm=A", "--from", "data/demo-aa::arm=B")
    (row,) = data["rows"]
    assert data["ratio"] == pytest.approx(0.95) and (row["n_base"], row["n_new"]) == (10, 10)
    exp = load_experiment(REPO / "data/demo-aa")
    a, b = (exp.rows({"arm": arm}).values("throughput_rps") for arm in ("A", "B"))
    assert row["runs_per_arm_needed"] == runs_needed(0.95, a, b).runs_per_arm


@pytest.mark.slow
def test_rows_follow_compare_and_holm_over_them_raises_the_runs():
    data = plan_json("--metric", "latency_p99_ms", "--detect", "10%", "--from",
                     "data/demo-wrk2-sweep::profile=default", "--from",
                     "data/demo-wrk2-sweep::profile=tuned")
    assert data["keys"] == ["connections", "target_rate_rps"] and data["family"] == 8
    assert all(r["alpha_adjusted"] == pytest.approx(0.05 / 8) for r in data["rows"])
    one = plan_json("--metric", "latency_p99_ms", "--detect", "10%", "--from",
                    "data/demo-wrk2-sweep::profile=default", "--from",
                    "data/demo-wrk2-sweep::profile=tuned", "--family", "1")
    pairs = [(r["runs_per_arm_needed"], s["runs_per_arm_needed"])
             for r, s in zip(data["rows"], one["rows"], strict=True)
             if r["runs_per_arm_needed"] and s["runs_per_arm_needed"]]
    assert pairs and all(r > s for r, s in pairs)


def test_the_table_says_what_the_current_design_detects():
    code, out, _ = plan("--metric", "latency_p99_ms", "--detect", "3%", "--from", V07)
    assert code == 0
    assert "runs per arm for +3.0%" in out and "36 (power 0.80)" in out
    assert ">= +16.7% or <= -14.0%" in out


@pytest.mark.parametrize("argv", [
    ("--detect", "3", "--from", V07),
    ("--detect", "3%", "--from", V07, "--from", V07, "--from", V07),
    ("--detect", "3%", "--from", V07, "--power", "1.5"),
    ("--detect", "3%", "--from", V07, "--metric", "nope"),
    ("--from", V07),
])
def test_usage_errors_exit_2(argv):
    code, out, err = plan(*argv)
    assert code == 2 and out == ""


def test_a_single_run_has_no_spread():
    code, _, err = plan("--detect", "3%", "--from", "data/demo-history::label=v07,repetition=1")
    assert code == 2 and "needs >= 2 runs" in err


def test_two_sets_of_runs_say_from_which_true_change_the_count_holds():
    """Issue 34, item 6: the runs for the change seen decide it >= 75% of the time only from a
    size of true change (perfkit.stats.planning.decides_from_se); the table and JSON say it."""
    v08 = "data/demo-history/jobs/08-v08"
    code, out, _ = plan("--metric", "latency_p99_ms", "--detect", "3%", "--from", V07,
                        "--from", v08)
    assert code == 0 and "holds from" in out
    (row,) = plan_json("--metric", "latency_p99_ms", "--detect", "3%", "--from", V07,
                       "--from", v08)["rows"]
    assert 1 < row["observed_decides_from"] < row["observed_ratio_planned"]
    assert pct_change(row["observed_decides_from"]) in out
