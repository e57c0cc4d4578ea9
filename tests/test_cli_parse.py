"""`perfkit parse` and `perfkit show`: formats, the record contract, errors and exit codes."""

import csv
import io
import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from _cli_helpers import run_cli

from perfkit.model import RECORD_COLUMNS

FIX = Path(__file__).parent / "fixtures"
U_RUN = FIX / "wrk2/single/uncorrected_U_default_R20000_c50"


def test_json_lines_with_nan_as_null_and_the_contract_columns():
    code, out, err = run_cli("parse", str(FIX / "wrk/single"), "--format", "json")
    assert code == 0 and err == ""
    records = [json.loads(line) for line in out.splitlines()]
    assert len(records) == 8
    for rec in records:
        assert list(rec)[: len(RECORD_COLUMNS)] == list(RECORD_COLUMNS)
        assert rec["latency_p99_9_ms"] is None  # wrk never prints p99.9
        assert rec["endpoint"] is None and rec["latency_source"] == "summary_only"
    assert "NaN" not in out
    timeouts = next(r for r in records if r["source"].endswith("timeouts_slow_upstream/run.stdout"))
    assert timeouts["latency_p50_ms"] is None and timeouts["errors_timeout"] == 40


def test_json_warnings_are_codes_with_words_and_fields_and_csv_has_the_words():
    code, out, _ = run_cli("parse", str(FIX / "wrk/single/timeouts_slow_upstream"), "--format",
                           "json")
    (rec,) = [json.loads(line) for line in out.splitlines()]
    by_code = {w["code"]: w for w in rec["warnings"]}
    assert {"no-latency-samples", "wrk-closed-loop"} <= set(by_code)
    assert by_code["no-latency-samples"]["fields"]["tool"] == "wrk"
    assert by_code["no-latency-samples"]["text"].startswith("wrk recorded no latency samples")
    code, out, _ = run_cli("parse", str(FIX / "wrk/single/timeouts_slow_upstream"), "--format",
                           "csv")
    (row,) = csv.DictReader(io.StringIO(out))
    assert by_code["no-latency-samples"]["text"] in row["warnings"]


def test_wrk2_minus_u_is_one_record_with_uncorrected_columns():
    code, out, _ = run_cli("parse", str(U_RUN), "--format", "json")
    (rec,) = [json.loads(line) for line in out.splitlines()]
    assert code == 0
    assert rec["latency_p99_ms"] == 2.68 and rec["latency_uncorrected_p99_ms"] == 1.2
    assert rec["latency_uncorrected_p50_ms"] == 0.439
    assert rec["latency_uncorrected_p99_9_ms"] == 2.71
    assert rec["target_rate_rps"] == 20000 and rec["throughput_rps"] == 19940.03
    assert rec["histogram_count"] == 197502 and rec["requests"] == 398806


def test_csv_marks_locusts_aggregated_row():
    code, out, _ = run_cli("parse", str(FIX / "locust/clean_u20"), "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 0
    assert [r["endpoint"] for r in rows] == ["/", "/index.html", "Aggregated"]
    assert [r["is_aggregate"] for r in rows] == ["False", "False", "True"]
    assert list(rows[0])[: len(RECORD_COLUMNS)] == list(RECORD_COLUMNS)
    assert rows[2]["requests"] == "11738" and rows[2]["url"] == "http://127.0.0.1:8080"


def test_table_lists_every_run_and_marks_the_aggregate():
    code, out, _ = run_cli("parse", str(FIX / "locust/clean_u20"), str(U_RUN))
    assert code == 0
    assert "Aggregated *" in out and "uncorrected_U_default_R20000_c50" in out
    assert "* Locust's Aggregated row" in out


def test_malformed_file_exits_2_with_path_line_and_still_prints_good_runs(tmp_path):
    shutil.copytree(FIX / "wrk/single/plain_default_c50", tmp_path / "good")
    (tmp_path / "bad").mkdir()
    lines = (U_RUN / "run.stdout").read_text().splitlines(keepends=True)
    (tmp_path / "bad/run.stdout").write_text("".join(lines[:40]))  # killed mid-spectrum
    code, out, err = run_cli("parse", str(tmp_path), "--format", "json")
    assert code == 2
    assert len(out.splitlines()) == 1 and json.loads(out)["source"].endswith("good/run.stdout")
    assert err.startswith(f"perfkit: error: {tmp_path / 'bad/run.stdout'}:41: expected ")
    assert "Traceback" not in err


def test_named_non_tool_file_is_an_error_without_traceback():
    code, out, err = run_cli("parse", str(FIX / "locust/clean_u20/clean.html"))
    assert code == 2 and out == ""
    assert err.startswith("perfkit: error: ") and "not the output of" in err


@pytest.mark.slow
def test_debug_shows_the_traceback_for_errors_raised_by_commands(tmp_path):
    # python -m perfkit is the same program; --debug prints the traceback of a PerfkitError
    bad = tmp_path / "manifest.json"
    bad.write_text("{")
    proc = subprocess.run([sys.executable, "-m", "perfkit", "--debug", "parse", str(tmp_path)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 2
    assert f"{bad}:1: expected a JSON object" in proc.stderr


def test_show_prints_warnings_numbered():
    code, out, _ = run_cli("show", str(FIX / "wrk/single/timeouts_slow_upstream"))
    assert code == 0
    assert "warnings:" in out and "1. " in out
    assert "not a throughput measurement" in out and "missing, not 0" in out


def test_show_says_when_fewer_connections_got_in_than_wrk_opened():
    code, out, _ = run_cli("show", str(FIX / "counters/backlog8-isolated-c256-sockets"))
    assert code == 0
    assert ("  partial: 142 of 256 connections got in (the server accepted 143, 1 of them wrk's "
            "test connection); latencies describe those") in out
    code, out, _ = run_cli("show", str(FIX / "counters/proxy-isolated-c256"))
    assert code == 0 and "partial" not in out and "got in" not in out


def test_help_teaches_with_examples():
    code, out, _ = run_cli("parse", "--help")
    assert code == 0
    assert "examples:" in out and "--format" in out


def test_json_values_are_finite_or_null():
    _, out, _ = run_cli("parse", str(FIX / "wrk2/sweep"), "--format", "json")
    for line in out.splitlines():
        for value in json.loads(line).values():
            assert not (isinstance(value, float) and not math.isfinite(value))


# -- names a reader's tools misread (real Locust runs: tests/fixtures/names/README.md) ---------
def test_csv_neutralises_every_name_a_spreadsheet_would_run_and_keeps_numbers():
    from _cli_helpers import HOSTILE, formula_cells

    code, out, _ = run_cli("parse", str(HOSTILE), "--format", "csv")
    assert code == 0
    assert formula_cells(out) == []
    rows = list(csv.DictReader(io.StringIO(out, newline="")))
    assert len(rows) == 4 * 10  # 4 runs, 9 endpoints and the Aggregated row each
    names = {r["endpoint"] for r in rows}
    assert {"'=HYPERLINK(\"http://example.invalid/\",\"click\")", "'+1+2 plus", "'-2+3 minus",
            "'@SUM(1+1) at", "'\tTAB=1+1", "'\rCR=1+1", "約3倍 page", "a\\|b pipe"} <= names
    assert {r["arm"] for r in rows} == {"'=1+1", "'-2\x1b]0;pwned\x07"}
    # numbers are numbers: the JSON of the same records holds the same values, unprefixed
    code, out, _ = run_cli("parse", str(HOSTILE), "--format", "json")
    records = [json.loads(line) for line in out.splitlines()]
    assert [float(r["latency_mean_ms"]) for r in rows] == [r["latency_mean_ms"] for r in records]
    assert {r["endpoint"] for r in records} == {n.removeprefix("'") for n in names}


def test_show_and_the_table_print_control_characters_as_escapes():
    from _cli_helpers import HOSTILE

    for argv in (("show", str(HOSTILE)), ("parse", str(HOSTILE))):
        code, out, _ = run_cli(*argv)
        assert code == 0
        assert not any(ch in out for ch in "\x1b\x07\r\t"), argv
        assert "esc \\x1b[31mred\\x1b[0m bel \\x07 page" in out
    assert "arm=-2\\x1b]0;pwned\\x07" in run_cli("show", str(HOSTILE))[1]
