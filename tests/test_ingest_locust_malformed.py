"""Malformed Locust files, each derived in the test from a real fixture (cut where a killed run
would cut it, a column dropped, a value replaced), with the exact line the error must name."""

from __future__ import annotations

import csv
import gzip
import io
import json
import shutil
from pathlib import Path

import pytest

import perfkit
from perfkit.errors import ParseError
from perfkit.ingest import locust
from perfkit.store import hlog
from perfkit.warning import Code

FIXTURES = Path(__file__).resolve().parent / "fixtures"
CLEAN = FIXTURES / "locust" / "clean_u20"
FAILURES = FIXTURES / "locust" / "failures_u30"
PROCS = FIXTURES / "locust" / "processes2_u40"


def _text(path: Path) -> str:
    return path.read_bytes().decode("utf-8")  # byte-faithful: keep Locust's CRLF


def _lines(path: Path) -> list[str]:
    return _text(path).splitlines(keepends=True)


def _raises(parser, text: str, line: int | None, *fragments: str) -> ParseError:
    with pytest.raises(ParseError) as info:
        parser(text, "f")
    err = info.value
    assert err.line == line, str(err)
    for fragment in fragments:
        assert fragment in str(err), str(err)
    assert str(err).startswith(f"f:{line}: expected ")
    return err


def _drop_column(path: Path, column: str) -> str:
    rows = list(csv.reader(io.StringIO(_text(path), newline="")))
    index = rows[0].index(column)
    out = io.StringIO(newline="")
    csv.writer(out).writerows([r[:index] + r[index + 1:] for r in rows])
    return out.getvalue()


def _replace_field(text: str, line: int, column: str, value: str) -> str:
    """``text`` with one field of one (single-line) row replaced, written back by csv."""
    lines = text.splitlines(keepends=True)
    header = next(csv.reader([lines[0]]))
    fields = next(csv.reader([lines[line - 1]]))
    fields[header.index(column)] = value
    out = io.StringIO(newline="")
    csv.writer(out).writerow(fields)
    lines[line - 1] = out.getvalue()
    return "".join(lines)


# -- _stats.csv -------------------------------------------------------------------------------
STATS = CLEAN / "clean_stats.csv"


def test_stats_cut_inside_a_row():
    lines = _lines(STATS)
    _raises(locust.parse_stats_csv, "".join(lines[:2]) + lines[2][:30], 3, "22 fields")


def test_stats_cut_before_the_aggregated_row():
    _raises(locust.parse_stats_csv, "".join(_lines(STATS)[:3]), 4, "Aggregated row")


def test_stats_cut_after_the_header():
    _raises(locust.parse_stats_csv, _lines(STATS)[0], 2, "Aggregated row")


def test_stats_cut_inside_the_last_field():
    text = _text(STATS)
    assert text.endswith(",48\r\n")
    _raises(locust.parse_stats_csv, text[:-3], 4, "ending in a newline")


def test_stats_missing_column_is_named_on_line_1():
    _raises(locust.parse_stats_csv, _drop_column(STATS, "Request Count"), 1, "'Request Count'")


def test_stats_na_request_count_names_its_line():
    text = _replace_field(_text(STATS), 3, "Request Count", "N/A")
    _raises(locust.parse_stats_csv, text, 3, "whole number", "'Request Count'")


def test_stats_non_number_names_its_line():
    text = _replace_field(_text(STATS), 4, "Requests/s", "fast")
    _raises(locust.parse_stats_csv, text, 4, "a number in column 'Requests/s'", "fast")


def test_stats_na_percentiles_become_missing_with_a_note():
    text = _text(STATS)
    for column in ("50%", "66%", "75%", "80%", "90%", "95%", "98%", "99%", "99.9%", "99.99%",
                   "100%"):
        text = _replace_field(text, 2, column, "N/A")
    runs = locust.parse_stats_csv(text, "f")
    assert runs[0].percentiles_ms == {}
    assert runs[1].percentiles_ms[50.0] == 2.0
    assert any(n.code is Code.LOCUST_NA and "line 2" in n["where"] for n in runs[0].notes)


def test_stats_binary_data_names_its_line():
    lines = _lines(STATS)
    lines[2] = lines[2][:10] + "\x00\x00" + lines[2][10:]
    _raises(locust.parse_stats_csv, "".join(lines), 3, "binary")


# -- _stats_history.csv -----------------------------------------------------------------------
HISTORY = CLEAN / "clean_stats_history.csv"


def test_history_cut_inside_a_row():
    lines = _lines(HISTORY)
    _raises(locust.parse_history_csv, "".join(lines[:29]) + lines[29][:40], 30, "24 fields")


def test_history_missing_timestamp_column():
    _raises(locust.parse_history_csv, _drop_column(HISTORY, "Timestamp"), 1, "'Timestamp'")


def test_history_na_total_count_names_its_line():
    text = _replace_field(_text(HISTORY), 5, "Total Request Count", "N/A")
    _raises(locust.parse_history_csv, text, 5, "'Total Request Count'")


def test_history_cut_at_a_row_boundary_is_a_shorter_history():
    history = locust.parse_history_csv("".join(_lines(HISTORY)[:10]), "f")
    assert len(history.rows) == 9 and history.cumulative_percentiles is False


# -- _failures.csv and _exceptions.csv --------------------------------------------------------
EXCEPTIONS = FAILURES / "failures_exceptions.csv"


def test_exceptions_cut_inside_the_multiline_traceback():
    lines = _lines(EXCEPTIONS)
    assert len(lines) == 10  # header, then one record spanning lines 2-10
    _raises(locust.parse_exceptions_csv, "".join(lines[:5]), 2, "closing quote")


def test_exceptions_second_record_cut_reports_its_physical_line():
    lines = _lines(EXCEPTIONS)
    doubled = lines + lines[1:]  # two records: lines 2-10 and 11-19
    assert len(locust.parse_exceptions_csv("".join(doubled), "f")) == 2
    _raises(locust.parse_exceptions_csv, "".join(doubled[:14]), 11, "closing quote")


def test_exceptions_bad_row_after_multiline_records_reports_its_physical_line():
    lines = _lines(EXCEPTIONS)
    text = "".join(lines + lines[1:]) + "84,only two\r\n"
    _raises(locust.parse_exceptions_csv, text, 20, "4 fields", "2 fields")


def test_failures_non_number_occurrences():
    text = _replace_field(_text(FAILURES / "failures_failures.csv"), 3, "Occurrences", "many")
    _raises(locust.parse_failures_csv, text, 3, "'Occurrences'", "many")


def test_failures_missing_column():
    text = _drop_column(FAILURES / "failures_failures.csv", "Occurrences")
    _raises(locust.parse_failures_csv, text, 1, "'Occurrences'")


def test_header_only_tables_are_empty():
    assert locust.parse_failures_csv(_text(CLEAN / "clean_failures.csv"), "f") == ()
    assert locust.parse_exceptions_csv(_text(CLEAN / "clean_exceptions.csv"), "f") == ()


# -- --json -----------------------------------------------------------------------------------
JSON = CLEAN / "run.stdout"


@pytest.mark.parametrize("fraction", [0.1, 0.5, 0.9, 0.999])
def test_json_cut_mid_line_reports_the_cut_line(fraction):
    text = _text(JSON)
    cut = int(len(text) * fraction)
    while text[cut - 1].isspace():  # cut inside a line, as a killed writer would
        cut += 1
    _raises(locust.parse_json, text[:cut], text.count("\n", 0, cut) + 1, "valid JSON",
            "end of file")


def test_json_cut_inside_the_masters_document_after_the_workers():
    text = _text(PROCS / "run.stdout")
    cut = text.index('"name": "/index.html"')
    _raises(locust.parse_json, text[:cut], text.count("\n", 0, cut) + 1, "valid JSON")


def test_json_object_instead_of_array():
    entry = json.loads(_text(JSON))[0]
    _raises(locust.parse_json, json.dumps(entry, indent=4), 1, "JSON array", "dict")


def test_json_entry_without_response_times_names_the_entry_line():
    entries = json.loads(_text(FAILURES / "run.stdout"))
    del entries[2]["response_times"]
    text = json.dumps(entries, indent=4)
    third = [i for i, line in enumerate(text.splitlines(), 1) if line == "    {"][2]
    _raises(locust.parse_json, text, third, "'response_times'")


def test_json_count_of_the_wrong_type_names_the_entry_line():
    entries = json.loads(_text(JSON))
    entries[1]["num_requests"] = str(entries[1]["num_requests"])
    text = json.dumps(entries, indent=4)
    second = [i for i, line in enumerate(text.splitlines(), 1) if line == "    {"][1]
    _raises(locust.parse_json, text, second, "'num_requests' is str")


# -- empty, binary, the wrong tool ------------------------------------------------------------
@pytest.mark.parametrize("parser", [locust.parse_stats_csv, locust.parse_history_csv,
                                    locust.parse_failures_csv, locust.parse_exceptions_csv,
                                    locust.parse_json, hlog.parse])
def test_empty_file(parser):
    _raises(parser, "", 1, "an empty file")
    _raises(parser, "\r\n\n", 1, "an empty file")


def test_wrong_tool_outputs():
    stderr = _text(CLEAN / "run.stderr")  # Locust's log, not one of its outputs
    _raises(locust.parse_stats_csv, stderr, 1, "column 'Name'")
    _raises(locust.parse_json, stderr, 1, "valid JSON")
    wrk = FIXTURES / "wrk" / "single" / "latency_default_c50" / "run.stdout"
    _raises(locust.parse_history_csv, _text(wrk), 1, "column 'Timestamp'")
    _raises(locust.parse_json, _text(STATS), 1, "valid JSON")
    _raises(hlog.parse, _text(STATS), 1, "interval line")
    _raises(locust.parse_exceptions_csv, _text(STATS), 1, "column 'Count'")


def test_binary_file_named_explicitly(tmp_path):
    path = tmp_path / "clean_stats.csv"
    path.write_bytes(gzip.compress(STATS.read_bytes()))
    with pytest.raises(perfkit.LoadError) as info:
        perfkit.load(path)
    assert isinstance(info.value.errors[0], ParseError)
    assert "binary" in str(info.value.errors[0])


def test_directory_with_one_bad_run_reports_it_and_loads_the_others(tmp_path):
    bad = tmp_path / "clean_u20"
    shutil.copytree(CLEAN, bad)
    shutil.copytree(FAILURES, tmp_path / "failures_u30")
    history = bad / "clean_stats_history.csv"
    history.chmod(0o644)
    lines = _lines(history)
    history.write_text("".join(lines[:29]) + lines[29][:40], encoding="utf-8", newline="")
    with pytest.raises(perfkit.LoadError) as info:
        perfkit.load(tmp_path)
    (error,) = info.value.errors
    assert isinstance(error, ParseError) and error.line == 30
    assert error.path == str(history)
    assert {r.run_id for r in info.value.runs} == {"failures_u30"}
    assert len(perfkit.load(tmp_path, strict=False)) == 7


def test_a_content_size_whose_rate_overflows_gives_no_transfer_rate_and_says_so():
    """Found by the ingest fuzz (issue 30): Average Content Size 1e308 times Requests/s was an
    infinite transfer_bytes_per_s; the real stats CSV of failures_u30 with that one cell."""
    rows = list(csv.reader((FAILURES / "failures_stats.csv").read_text().splitlines()))
    head = rows[0]
    agg = next(r for r in rows[1:] if r[head.index("Name")] == "Aggregated")
    agg[head.index("Average Content Size")] = "1e308"
    text = "\n".join(",".join(r) for r in rows) + "\n"
    (run,) = [r for r in locust.parse_stats_csv(text, "s.csv") if r.is_aggregate]
    assert run.transfer_bytes_per_s is None and run.throughput_rps > 0
    assert any(n.code is Code.LOCUST_TRANSFER_BEYOND for n in run.notes)
    assert any("Average Content Size x Requests/s is beyond any number" in str(n)
               for n in run.notes)
