"""Malformed wrk / wrk2 outputs, all derived in code from real fixtures (never edited files).

Each case names the 1-based line where reading must fail and what the message must expect:
truncation at every section boundary (as when a run is killed), a line cut in the middle,
empty and binary input, another tool's output, two outputs run together, and a spectrum
spliced with another run's footer. The loader must keep the good runs of a directory and
report the bad file.
"""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest

import perfkit
from perfkit.errors import LoadError, ParseError
from perfkit.ingest import wrk, wrk2

FIXTURES = Path(__file__).resolve().parent / "fixtures"
WRK = "wrk/single/latency_default_c50"  # 13 lines
WRK_ERRORS = "wrk/single/connect_errors_fd_limit"  # Socket errors on line 12
WRK_NON2XX = "wrk/single/non2xx_404"  # Non-2xx on line 12
WRK_PLAIN = "wrk/single/plain_default_c50"  # no --latency
WRK2 = "wrk2/single/normal_tuned_R10000_c50"  # 113 lines, inf row on line 106
WRK2_U = "wrk2/single/uncorrected_U_default_R20000_c50"  # 227 lines, -U block from line 117
PARSERS = {"wrk": wrk.parse, "wrk2": wrk2.parse}


def raw(name: str) -> str:
    return (FIXTURES / name / "run.stdout").read_text()


def first_lines(name: str, n: int) -> str:
    """The output of a run killed after its n-th line was written."""
    lines = raw(name).split("\n")
    return "\n".join(lines[:n]) + "\n"


def parse_error(parser: str, text: str) -> ParseError:
    with pytest.raises(ParseError) as info:
        PARSERS[parser](text, "run.stdout")
    return info.value


# (fixture, lines kept, parser, line reported, words the message must contain)
TRUNCATIONS = [
    (WRK, 1, "wrk", 2, "threads and <M> connections"),
    (WRK, 2, "wrk", 3, "Thread Stats"),
    (WRK, 3, "wrk", 4, "'Latency' row"),
    (WRK, 4, "wrk", 5, "'Req/Sec' row"),
    (WRK, 6, "wrk", 7, "50% line"),
    (WRK, 8, "wrk", 9, "90% line"),
    (WRK, 10, "wrk", 11, "requests in"),
    (WRK, 11, "wrk", 12, "'Requests/sec: <rate>'"),
    (WRK, 12, "wrk", 13, "'Transfer/sec: <bytes>'"),
    (WRK_PLAIN, 5, "wrk", 6, "'Latency Distribution' or '<N> requests in"),
    (WRK_ERRORS, 12, "wrk", 13, "'Non-2xx or 3xx responses: N' or 'Requests/sec"),
    (WRK_NON2XX, 12, "wrk", 13, "'Requests/sec: <rate>'"),
    (WRK2, 1, "wrk2", 2, "threads and <M> connections"),
    (WRK2, 4, "wrk2", 5, "Thread Stats"),  # after calibration
    (WRK2, 6, "wrk2", 7, "'Req/Sec' row"),  # mid thread stats
    (WRK2, 8, "wrk2", 9, "50.000% line"),  # after the distribution's title
    (WRK2, 12, "wrk2", 13, "99.900% line"),
    (WRK2, 16, "wrk2", 17, "Detailed Percentile spectrum"),
    (WRK2, 18, "wrk2", 19, "spectrum header"),
    (WRK2, 20, "wrk2", 21, "spectrum row"),
    (WRK2, 60, "wrk2", 61, "spectrum row"),  # mid spectrum
    (WRK2, 106, "wrk2", 107, "#[Mean"),  # before the footer
    (WRK2, 107, "wrk2", 108, "#[Max"),
    (WRK2, 108, "wrk2", 109, "#[Buckets"),
    (WRK2, 109, "wrk2", 110, "requests in"),
    (WRK2, 110, "wrk2", 111, "uncorrected 'Latency Distribution"),  # may be a -U run
    (WRK2, 111, "wrk2", 112, "'Requests/sec: <rate>'"),
    (WRK2, 112, "wrk2", 113, "'Transfer/sec: <bytes>'"),
    (WRK2_U, 116, "wrk2", 117, "requests in"),  # blank line before the -U block, then cut
    (WRK2_U, 117, "wrk2", 118, "50.000% line"),  # -U title only
    (WRK2_U, 170, "wrk2", 171, "spectrum row"),  # mid -U spectrum
    (WRK2_U, 220, "wrk2", 221, "#[Mean"),  # -U footer missing
    (WRK2_U, 224, "wrk2", 225, "requests in"),
]


@pytest.mark.parametrize(("fixture", "kept", "parser", "line", "words"), TRUNCATIONS,
                         ids=[f"{p}-{f.split('/')[-1]}-cut{k}" for f, k, p, _, _ in TRUNCATIONS])
def test_truncated_output_reports_the_line_after_the_last_one(fixture, kept, parser, line,
                                                              words):
    err = parse_error(parser, first_lines(fixture, kept))
    assert err.line == line == kept + 1
    assert words in err.expected
    assert "truncated" in err.expected
    assert str(err).startswith(f"run.stdout:{line}: expected ")


def test_every_boundary_of_a_wrk_output_is_detected():
    """Cut after each line but the last: always an error, always at the next line."""
    lines = raw(WRK).split("\n")[:-1]
    for kept in range(1, len(lines)):
        assert parse_error("wrk", first_lines(WRK, kept)).line == kept + 1


def test_every_boundary_of_a_wrk2_u_output_is_detected():
    lines = raw(WRK2_U).split("\n")[:-1]
    for kept in range(1, len(lines)):
        assert parse_error("wrk2", first_lines(WRK2_U, kept)).line == kept + 1


def test_a_line_cut_in_the_middle_is_reported_as_found():
    text = raw(WRK)
    cut = text[: text.index("Requests/sec:") + len("Requests/se")]
    err = parse_error("wrk", cut)
    assert err.line == 12
    assert err.found == "Requests/se"
    text2 = raw(WRK2)
    row = "       1.238     0.500000        49388         2.00"
    err2 = parse_error("wrk2", text2[: text2.index(row) + 20])
    assert err2.line == 26 and err2.found == row[:20]
    assert "spectrum row" in err2.expected


@pytest.mark.parametrize("parser", ["wrk", "wrk2"])
@pytest.mark.parametrize("text", ["", "\n", "  \n\n"], ids=["empty", "newline", "blank"])
def test_empty_output(parser, text):
    err = parse_error(parser, text)
    assert err.line == 1
    assert err.found == "an empty output"
    assert "Running <duration> test @ <url>" in err.expected


@pytest.mark.parametrize("parser", ["wrk", "wrk2"])
def test_binary_input_fails_on_line_1(parser):
    data = gzip.compress(raw(WRK).encode(), mtime=0)
    err = parse_error(parser, data.decode("latin-1"))
    assert err.line == 1
    assert "Running <duration> test @ <url>" in err.expected


def test_bytes_are_refused():
    with pytest.raises(TypeError):
        wrk.parse(raw(WRK).encode())


def test_locust_json_given_to_the_wrk_parser():
    text = (FIXTURES / "locust" / "clean_u20" / "run.stdout").read_text()
    err = parse_error("wrk", text)
    assert err.line == 1
    assert err.found == text.split("\n")[0]
    assert "wrk output starting with 'Running" in err.expected


def test_wrk2_output_given_to_the_wrk_parser_stops_at_calibration():
    err = parse_error("wrk", raw(WRK2))
    assert err.line == 3
    assert err.found.strip().startswith("Thread calibration:")
    assert "Thread Stats" in err.expected


def test_wrk_output_given_to_the_wrk2_parser_stops_at_its_distribution():
    err = parse_error("wrk2", raw(WRK))
    assert err.line == 6
    assert err.found == "  Latency Distribution"
    assert "'Latency Distribution (HdrHistogram - Recorded Latency)'" in err.expected


@pytest.mark.parametrize(("fixture", "parser", "line"), [(WRK, "wrk", 14),
                                                          (WRK2, "wrk2", 114)])
def test_two_outputs_run_together(fixture, parser, line):
    err = parse_error(parser, raw(fixture) + raw(fixture))
    assert err.line == line
    assert err.found.startswith("Running ")
    assert "not a second run" in err.expected


def test_spectrum_with_another_runs_footer_is_corrupt():
    """Rows of one run, footer of another: the total count no longer matches."""
    mine = raw(WRK2).split("\n")
    other = raw("wrk2/single/short_11s_calibration").split("\n")
    start = next(i for i, s in enumerate(other) if s.startswith("#[Mean"))
    spliced = mine[:106] + other[start:start + 4] + mine[110:]
    err = parse_error("wrk2", "\n".join(spliced))
    assert err.line == 108
    assert "Total count = 98750" in err.expected
    assert "974" in err.found


def test_windows_line_endings_still_parse():
    text = raw(WRK2_U)
    assert wrk2.parse(text.replace("\n", "\r\n")).percentiles_ms == wrk2.parse(
        text).percentiles_ms


def _copy_run(name: str, to: Path) -> Path:
    to.mkdir(parents=True)
    for f in (FIXTURES / name).iterdir():
        shutil.copy(f, to / f.name)
    return to


@pytest.mark.parametrize(("fixture", "kept", "line"), [(WRK, 11, 12), (WRK2, 60, 61)])
def test_loader_keeps_good_runs_and_reports_the_truncated_one(tmp_path, fixture, kept, line):
    _copy_run(fixture, tmp_path / "good")
    bad = _copy_run(fixture, tmp_path / "killed")
    (bad / "run.stdout").write_text(first_lines(fixture, kept))
    result = perfkit.scan(tmp_path)
    assert [Path(r.source).parent.name for r in result.runs] == ["good"]
    assert len(result.errors) == 1
    err = result.errors[0]
    assert isinstance(err, ParseError)
    assert err.path == str(bad / "run.stdout") and err.line == line
    with pytest.raises(LoadError) as info:
        perfkit.load(tmp_path)
    assert len(info.value.runs) == 1
    assert len(perfkit.load(tmp_path, strict=False)) == 1
