"""``perfkit effects``: golden factorial tables on the real sweeps, coding and errors.

Paths are relative to tests/fixtures; on a mismatch ``<name>.txt.got`` is written (gitignored).
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

import _cli_helpers as _cli
import numpy as np
import pytest

import perfkit
from perfkit.frames import runs_frame

FIXTURES = Path(__file__).parent / "fixtures"
GOLDEN = Path(__file__).parent / "golden" / "cli_effects"
FACTORIAL = Path(__file__).resolve().parents[1] / "data" / "demo-wrk-factorial"


def run_cli(*argv: str) -> tuple[int, str, str]:
    return _cli.run_cli(*argv, cwd=FIXTURES)


def check_golden(name: str, text: str) -> None:
    _cli.check_golden(GOLDEN / f"{name}.txt", text)


def test_wrk_profile_effect_per_connection_level_golden():
    code, out, err = run_cli("effects", "wrk/sweep", "--factors", "profile")
    assert (code, err) == (0, "")
    assert "profile: default -> tuned (default is a baseline label)" in out
    check_golden("wrk_sweep_profile", out)


def test_printed_ratio_is_the_ratio_of_geometric_means_of_the_runs():
    out = run_cli("effects", "wrk/sweep", "--factors", "profile")[1]
    frame = runs_frame(perfkit.load(FIXTURES / "wrk" / "sweep"))
    at10 = frame[frame["connections"] == 10]
    logs = {p: np.log(at10[at10["profile"] == p]["latency_p99_ms"].to_numpy(float))
            for p in ("default", "tuned")}
    ratio = math.exp(logs["tuned"].mean() - logs["default"].mean())  # one factor: exp(2q)
    row = next(line for line in out.splitlines() if line.startswith("10 ") and "profile" in line)
    assert f"{ratio:.3g}" in row


def test_wrk2_two_factor_design_per_offered_rate_golden():
    code, out, _ = run_cli("effects", "wrk2/sweep", "--factors", "profile,connections")
    assert code == 0 and "per target_rate_rps, Holm across levels" in out
    assert "2 wrk2 run(s) did not sustain their offered rate" in out
    assert "1 wrk2 run(s) fell slightly short of their offered rate (in doubt)" in out
    check_golden("wrk2_sweep_profile_connections", out)


def test_linear_effects_golden():
    code, out, _ = run_cli("effects", "wrk/sweep::connections=10|50", "--factors", "profile",
                           "--linear", "--confidence", "0.9")
    assert code == 0 and "additive effects q" in out
    check_golden("wrk_sweep_profile_linear_c10_c50", out)


def test_explicit_levels_invert_the_ratio():
    normal = run_cli("effects", "wrk/sweep::connections=10", "--factors", "profile",
                     "--format", "csv")[1]
    flipped = run_cli("effects", "wrk/sweep::connections=10", "--factors", "profile",
                      "--levels", "profile=tuned:default", "--format", "csv")[1]
    ratio, inverse = (float(next(r for r in csv.DictReader(io.StringIO(out))
                                 if r["term"] == "profile")["ratio"])
                      for out in (normal, flipped))
    assert math.isclose(ratio * inverse, 1, rel_tol=1e-9)
    text = run_cli("effects", "wrk/sweep::connections=10", "--factors", "profile",
                   "--levels", "profile=tuned:default")[1]
    assert "profile: tuned -> default (given)" in text


@pytest.mark.parametrize("argv,status,message", [
    (("wrk/sweep", "--factors", "connections", "--by", "none"), 2, "has 4 levels"),
    (("wrk/sweep", "--factors", "colour"), 2, "no column 'colour'"),
    (("wrk/sweep::connections=10,profile=default", "--factors", "profile"), 2, "has 1 levels"),
    (("wrk/sweep", "--factors", "profile", "--levels", "profile=fast:slow"), 2, "--levels"),
    (("wrk/sweep", "--factors", "profile", "--levels", "profile"), 2, "--levels"),
    (("wrk/sweep", "--factors", ","), 2, "name at least one factor"),
    (("wrk/sweep", "--factors", "profile", "--metric", "latency_p42_ms"), 2, "no metric"),
    (("wrk/sweep", "--factors", "profile", "--confidence", "1"), 2, "--confidence must be"),
    (("wrk/sweep", "--factors", "profile", "--alpha", "-0.1"), 2, "--alpha must be"),
    (("wrk/sweep", "--factors", "profile", "--block", "colour"), 2, "--block: no column"),
    (("wrk/sweep", "--factors", "profile", "--by", "colour"), 2, "--by: no column 'colour'"),
    (("wrk/sweep::profile=none", "--factors", "profile"), 2, "matches no run"),
    (("no/such/dir", "--factors", "profile"), 2, "no runs found"),
])
def test_bad_input_is_one_line_with_status_2(argv, status, message):
    code, out, err = run_cli("effects", *argv)
    assert (code, out) == (status, "") and message in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_help_explains_the_coding_rule_with_examples():
    code, out, _ = run_cli("effects", "--help")
    assert code == 0 and "natural sort order" in out and "perfkit effects data/demo-wrk" in out


def test_ab_csv_holds_one_variable_per_column():
    # was: base=keepalive=none, new=keepalive=keepalive, held_at=cache=none (name=value cells)
    stalls = Path(__file__).resolve().parent / "fixtures" / "stalls"
    code, out, _ = run_cli("effects", str(stalls / "factorial-upstream-backlog100"), "--factors",
                           "keepalive,cache", "--ab", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and len(rows) == 6 and "held_at" not in rows[0]
    assert not [v for r in rows for k, v in r.items() if k != "warnings" and "=" in v]
    found = {(r["factor"], r["base"], r["new"], r["held_keepalive"], r["held_cache"])
             for r in rows}
    assert found == {("keepalive", "none", "keepalive", "", "none"),
                     ("cache", "none", "ram", "none", "")}
