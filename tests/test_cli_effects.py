"""``perfkit effects``: golden factorial tables on the real sweeps, coding and errors.

Paths are relative to tests/fixtures; on a mismatch ``<name>.txt.got`` is written (gitignored).
"""

from __future__ import annotations

import math
from pathlib import Path

import _cli_helpers as _cli
import pytest

import perfkit
from perfkit.frames import runs_frame
from perfkit.stats import factorial

FIXTURES = Path(__file__).parent / "fixtures"
GOLDEN = Path(__file__).parent / "golden" / "cli_effects"


def run_cli(*argv: str) -> tuple[int, str, str]:
    return _cli.run_cli(*argv, cwd=FIXTURES)


def check_golden(name: str, text: str) -> None:
    _cli.check_golden(GOLDEN / f"{name}.txt", text)


def test_wrk_profile_effect_per_connection_level_golden():
    code, out, err = run_cli("effects", "wrk/sweep", "--factors", "profile")
    assert (code, err) == (0, "")
    assert "profile: default -> tuned (default means not applied)" in out
    check_golden("wrk_sweep_profile", out)


def test_printed_ratio_is_the_api_ratio():
    out = run_cli("effects", "wrk/sweep", "--factors", "profile")[1]
    frame = runs_frame(perfkit.load(FIXTURES / "wrk" / "sweep"))
    table = factorial(frame, ["profile"], "latency_p99_ms", by="connections")
    ratio = table[(table["by"] == 10) & (table["term"] == "profile")]["ratio"].iloc[0]
    row = next(line for line in out.splitlines() if line.startswith("10 ") and "profile" in line)
    assert f"{ratio:.3g}" in row


def test_wrk2_two_factor_design_per_offered_rate_golden():
    code, out, _ = run_cli("effects", "wrk2/sweep", "--factors", "profile,connections")
    assert code == 0 and "per target_rate_rps, Holm across levels" in out
    assert "3 saturated run(s) kept" in out
    check_golden("wrk2_sweep_profile_connections", out)


def test_linear_effects_golden():
    code, out, _ = run_cli("effects", "wrk/sweep::connections=10|50", "--factors", "profile",
                           "--linear", "--confidence", "0.9")
    assert code == 0 and "additive effects q" in out
    check_golden("wrk_sweep_profile_linear_c10_c50", out)


def test_explicit_levels_invert_the_ratio():
    normal = run_cli("effects", "wrk/sweep::connections=10", "--factors", "profile")[1]
    flipped = run_cli("effects", "wrk/sweep::connections=10", "--factors", "profile",
                      "--levels", "profile=tuned:default")[1]
    ratio = float(next(ln for ln in normal.splitlines() if ln.startswith("profile")).split()[1])
    inverse = float(next(ln for ln in flipped.splitlines() if ln.startswith("profile")).split()[1])
    assert math.isclose(ratio * inverse, 1, rel_tol=0.01)
    assert "profile: tuned -> default (given)" in flipped


@pytest.mark.parametrize("argv,message", [
    (("wrk/sweep", "--factors", "connections", "--by", "none"), "has 4 levels"),
    (("wrk/sweep", "--factors", "colour"), "no column 'colour'"),
    (("wrk/sweep::connections=10,profile=default", "--factors", "profile"), "has 1 levels"),
    (("wrk/sweep", "--factors", "profile", "--levels", "profile=fast:slow"), "--levels"),
])
def test_user_errors_exit_1_with_a_message(argv, message):
    code, _, err = run_cli("effects", *argv)
    assert code == 1 and message in err


def test_help_explains_the_coding_rule_with_examples():
    code, out, _ = run_cli("effects", "--help")
    assert code == 0 and "natural sort order" in out and "perfkit effects data/sweep" in out
