"""``perfkit compare``: golden stdout on the real wrk and wrk2 sweeps, selections and errors.

Paths are given relative to tests/fixtures so the golden files do not depend on the checkout.
On a mismatch the output is written beside the golden file as ``<name>.txt.got`` (gitignored).
"""

from __future__ import annotations

import math
from pathlib import Path

import _cli_helpers as _cli
import pytest

from perfkit.analysis import Selection

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


def test_three_runs_a_side_are_not_testable_and_say_run_more():
    out = run_cli("compare", WRK_BASE, WRK_NEW)[1]
    rows = [line for line in out.splitlines() if line[:3] in ("10 ", "50 ", "100", "200")]
    assert len(rows) == 4 and all("  not testable  " in row for row in rows)
    # Holm over the 4 rows: 4 x 2/C(2n, n) < 0.05 from n = 5 (4 vs 4 would do alone)
    assert ("3 vs 3 runs cannot reach p < 0.05 (smallest p 0.10): run more (>= 5 vs 5 for Holm "
            "over 4 comparisons)") in out
    assert "wrk is closed-loop" in out


def test_the_run_more_footnote_of_an_8_row_table_names_the_runs_holm_needs():
    out = run_cli("compare", "wrk2/sweep::profile=default", "wrk2/sweep::profile=tuned")[1]
    assert "Holm over 8 rows" in out and "(>= 4 vs 4)" not in out
    need = next(n for n in range(2, 20) if 8 * 2 / math.comb(2 * n, n) < 0.05)
    assert need == 6
    assert f"run more (>= {need} vs {need} for Holm over 8 comparisons)" in out


def test_pooled_throughput_is_a_significant_change_with_its_ci_golden():
    code, out, _ = run_cli("compare", WRK_BASE, WRK_NEW, "--metric", "throughput_rps",
                           "--by", "none")
    assert code == 0 and "(higher is better, req/s)" in out
    check_golden("wrk_sweep_throughput_pooled", out)


def test_wrk2_sweep_ranks_saturated_runs_as_failed_and_keeps_a_short_one_golden():
    code, out, _ = run_cli("compare", "wrk2/sweep::profile=default", "wrk2/sweep::profile=tuned")
    assert code == 0
    # default at 45000 req/s: 0.889 x and 0.916 x the target with the latency up: saturated,
    # ranked with the failed runs, and said once (not also "1 failed run(s)")
    assert "base: 1 run(s) saturated (ranked with the failed runs)" in out
    assert "failed run(s) ranked slower" not in out
    assert "the rate was not sustained" in out and "rose above its peers'" in out
    # tuned at 5000 req/s, 64 connections: 0.964 x with a p99 like its peers': in doubt, kept
    assert "new: 1 run(s) in doubt, kept with their values" in out
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
    assert Selection.parse("data/x").where == {}
    sel = Selection.parse("d::a=1, b=x|y")
    assert (sel.path, sel.where, sel.pinned) == ("d", {"a": ["1"], "b": ["x", "y"]}, ["a"])


@pytest.mark.parametrize("argv,status,message", [
    (("wrk/sweep::profile=nope", WRK_NEW), 2, "matches no run"),
    (("no/such/dir", WRK_NEW), 2, "no runs found"),
    (("wrk/sweep::profile", WRK_NEW), 2, "expected column=value"),
    (("wrk/sweep::colour=red", WRK_NEW), 2, "no column 'colour'"),
    (("::profile=tuned", WRK_NEW), 2, "expected PATH"),
    ((WRK_BASE, WRK_NEW, "--metric", "latency_p42_ms"), 2, "no metric 'latency_p42_ms'"),
    ((WRK_BASE, WRK_NEW, "--metric", "profile"), 2, "metrics: "),
    ((WRK_BASE, WRK_NEW, "--by", "colour"), 2, "--by: no column 'colour'"),
    ((WRK_BASE, WRK_NEW, "--alpha", "1.5"), 2, "--alpha must be in (0, 1)"),
    ((WRK_BASE, WRK_NEW, "--alpha", "0"), 2, "--alpha must be in (0, 1)"),
    ((WRK_BASE, WRK_NEW, "--confidence", "95"), 2, "--confidence must be in (0, 1)"),
    ((WRK_BASE, WRK_NEW, "--format", "xml"), 2, "invalid choice: 'xml'"),
])
def test_bad_input_is_one_line_with_status_2(argv, status, message):
    code, out, err = run_cli("compare", *argv)
    assert (code, out) == (status, "") and message in err
    assert "Traceback" not in err and message in err.strip().splitlines()[-1]


def test_help_documents_the_selection_syntax_with_examples():
    code, out, _ = run_cli("compare", "--help")
    assert code == 0
    assert "PATH::column=value[,column=value...]" in out
    assert "perfkit compare data/sweep::profile=default data/sweep::profile=tuned" in out


def test_markdown_shows_html_in_an_endpoint_name_as_text():
    run = str(FIXTURES / "names" / "html_endpoint_name")  # a real Locust run, named with HTML
    code, out, _ = run_cli("compare", run, run, "--by", "endpoint", "--format", "markdown")
    assert code == 0
    assert "| &lt;img src=x onerror=alert(1)> &amp;amp; &lt;b>page&lt;/b> |" in out
    assert "<img" not in out and "<b>" not in out
    code, out, _ = run_cli("compare", run, run, "--by", "endpoint")  # the text table keeps it
    assert "<img src=x onerror=alert(1)> &amp; <b>page</b>" in out
