"""``perfkit compare``: golden stdout on the real wrk and wrk2 sweeps, selections and errors.

Paths are given relative to tests/fixtures so the golden files do not depend on the checkout.
On a mismatch the output is written beside the golden file as ``<name>.txt.got`` (gitignored).
"""

from __future__ import annotations

from pathlib import Path

import _cli_helpers as _cli
import pytest

from perfkit.commands.compare import parse_selection

FIXTURES = Path(__file__).parent / "fixtures"
GOLDEN = Path(__file__).parent / "golden" / "cli_compare"


def run_cli(*argv: str) -> tuple[int, str, str]:
    return _cli.run_cli(*argv, cwd=FIXTURES)


def check_golden(name: str, text: str) -> None:
    _cli.check_golden(GOLDEN / f"{name}.txt", text)


WRK_BASE, WRK_NEW = "wrk/sweep::profile=default", "wrk/sweep::profile=tuned"


def test_wrk_sweep_p99_per_connection_level_golden():
    code, out, err = run_cli("compare", WRK_BASE, WRK_NEW)
    assert (code, err) == (0, "")
    check_golden("wrk_sweep_p99_by_connections", out)


def test_three_runs_a_side_print_tilde_and_say_run_more():
    out = run_cli("compare", WRK_BASE, WRK_NEW)[1]
    rows = [line for line in out.splitlines() if line[:3] in ("10 ", "50 ", "100", "200")]
    assert len(rows) == 4 and all("  ~  " in row for row in rows)
    assert "3 vs 3 runs cannot reach p < 0.05 (smallest p 0.10): run more (>= 4 vs 4)" in out
    assert "wrk is closed-loop" in out


def test_pooled_throughput_is_a_significant_change_with_its_ci_golden():
    code, out, _ = run_cli("compare", WRK_BASE, WRK_NEW, "--metric", "throughput_rps",
                           "--by", "none")
    assert code == 0 and "(higher is better)" in out
    check_golden("wrk_sweep_throughput_pooled", out)


def test_wrk2_sweep_ranks_saturated_runs_as_failed_golden():
    code, out, _ = run_cli("compare", "wrk2/sweep::profile=default", "wrk2/sweep::profile=tuned")
    assert code == 0
    assert "base: 1 failed run(s) ranked slower than every finished run" in out
    check_golden("wrk2_sweep_p99_by_connections_and_rate", out)


def test_selection_with_alternatives_and_a_load_level():
    code, out, _ = run_cli("compare", "wrk/sweep::profile=default,connections=10|50",
                           "wrk/sweep::profile=tuned,connections=10|50", "--by", "none")
    assert code == 0 and "6 vs 6" in out


def test_exclude_failed_echoes_the_reason():
    code, out, _ = run_cli("compare", "wrk2/sweep::profile=default,connections=64",
                           "wrk2/sweep::profile=tuned,connections=64",
                           "--exclude-failed", "generator saturated")
    assert code == 0 and "(reason: generator saturated)" in out


def test_parse_selection():
    assert parse_selection("data/x") == ("data/x", {})
    assert parse_selection("d::a=1, b=x|y") == ("d", {"a": ["1"], "b": ["x", "y"]})


@pytest.mark.parametrize("argv,message", [
    (("wrk/sweep::profile=nope", WRK_NEW), "matches no run"),
    (("wrk/sweep::profile", WRK_NEW), "expected column=value"),
    (("wrk/sweep::colour=red", WRK_NEW), "no column 'colour'"),
    ((WRK_BASE, WRK_NEW, "--metric", "latency_p42_ms"), "no column 'latency_p42_ms'"),
    ((WRK_BASE, WRK_NEW, "--by", "colour"), "--by: no column 'colour'"),
    (("no/such/dir", WRK_NEW), "no runs found"),
])
def test_user_errors_exit_1_with_a_message(argv, message):
    code, out, err = run_cli("compare", *argv)
    assert code == 1 and message in err


def test_help_documents_the_selection_syntax_with_examples():
    code, out, _ = run_cli("compare", "--help")
    assert code == 0
    assert "PATH::column=value[,column=value...]" in out
    assert "perfkit compare data/sweep::profile=default data/sweep::profile=tuned" in out
