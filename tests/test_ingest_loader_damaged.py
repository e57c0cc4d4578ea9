"""Issue 22, ingest: every input a user can give ends in runs or in a ParseError naming the file
and the line, and a number the output does not measure is never reported as one.

Each damaged input is derived here from a real output (tests/fixtures) by the transformation
its test names: one ASCII digit replaced by the Arabic-Indic digit of the same value
(``3`` -> ``U+0663``), a timestamp made out of range, a header renamed, a placeholder ``N/A``
edited into ``0``, a percentile multiplied. Nothing is hand-written.
"""

from __future__ import annotations

import io
import re
import shutil
from pathlib import Path

import pytest
from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogWriter

import perfkit
from perfkit import units
from perfkit.errors import LoadError, ParseError
from perfkit.ingest import fastwrk2, locust, wrk, wrk2
from perfkit.store import hlog
from perfkit.warning import Code, Warn

HERE = Path(__file__).resolve().parent
FIX = HERE / "fixtures"
WRK2_RUN = FIX / "wrk2" / "single" / "normal_tuned_R10000_c50" / "run.stdout"
WRK_RUN = FIX / "wrk" / "single" / "latency_default_c50" / "run.stdout"
LOCUST_STATS = FIX / "locust" / "failures_u30" / "failures_stats.csv"
LOCUST_HISTORY = FIX / "locust" / "clean_u20" / "clean_stats_history.csv"
LOCUST_JSON = FIX / "locust" / "clean_u20" / "run.stdout"
NO_RESPONSE = FIX / "wild" / "locust" / "no_response_within_run"


def arabic_digit(text: str, line_index: int, pattern: str) -> str:
    """``text`` with the first ASCII digit of ``pattern``'s first match on line ``line_index``
    (0-based) replaced by the Arabic-Indic digit of the same value."""
    lines = text.split("\n")
    m = re.search(pattern, lines[line_index])
    assert m, (pattern, lines[line_index])
    at = m.start() + next(i for i, c in enumerate(m.group()) if c.isascii() and c.isdigit())
    line = lines[line_index]
    lines[line_index] = line[:at] + chr(0x0660 + int(line[at])) + line[at + 1:]
    return "\n".join(lines)


def line_of(text: str, needle: str) -> int:
    """0-based index of the first line holding ``needle``."""
    return next(i for i, line in enumerate(text.split("\n")) if needle in line)


def hlog_text() -> str:
    """An interval log written by hdrh's own HistogramLogWriter (three 1 s intervals)."""
    buf = io.StringIO()
    writer = HistogramLogWriter(buf)
    writer.output_log_format_version()
    writer.output_base_time(1795290763000)
    writer.output_legend()
    for i in range(3):
        hist = HdrHistogram(1, 3_600_000_000, 3)
        for v in (120, 980, 1500 + i, 40_000):
            hist.record_value(v)
        writer.output_interval_histogram(hist, 1795290763.0 + i, 1795290764.0 + i)
    return buf.getvalue()


# -- Unicode digits ------------------------------------------------------------------------------
WRK2_CASES = {
    # the case: numpy's text reader raised ValueError at ingest/wrk2.py:221
    "spectrum row": ("0.504     0.100000", r"\d{4,}(?= +\d+\.\d\d$)"),
    "percentile line": ("50.000%", r"\d"),
    "totals line": ("requests in", r"\d+"),
    "Latency row": ("Latency", r"\d+\.\d+ms"),
    "threads line": ("2 threads", r"\d"),
    "spectrum footer": ("#[Max", r"\d+\.\d+"),
}


@pytest.mark.parametrize("case", WRK2_CASES)
def test_a_unicode_digit_in_wrk2_output_is_a_parse_error_at_its_line(case, tmp_path):
    start, pattern = WRK2_CASES[case]
    text = WRK2_RUN.read_text()
    index = line_of(text, start)
    damaged = arabic_digit(text, index, pattern)
    with pytest.raises(ParseError) as info:
        wrk2.parse(damaged, "run.stdout")
    assert info.value.line == index + 1, info.value
    assert fastwrk2.parse_many([(damaged, "run.stdout")]) == [None]  # never a different Run
    (tmp_path / "run.stdout").write_text(damaged)
    with pytest.raises(LoadError) as info:
        perfkit.load(tmp_path, cache=False)
    (error,) = info.value.errors
    assert isinstance(error, ParseError) and error.line == index + 1


@pytest.mark.parametrize(("start", "pattern"), [("Latency ", r"\d+\.\d+ms"), ("99%", r"\d\.")])
def test_a_unicode_digit_in_wrk_output_is_a_parse_error_at_its_line(start, pattern):
    text = WRK_RUN.read_text()
    index = line_of(text, start)
    with pytest.raises(ParseError) as info:
        wrk.parse(arabic_digit(text, index, pattern), "run.stdout")
    assert info.value.line == index + 1


@pytest.mark.parametrize("column", [2, 6, 11])  # Request Count, Min Response Time, 50%
def test_a_unicode_digit_in_a_locust_csv_cell_is_a_parse_error_at_its_row(column):
    text = LOCUST_STATS.read_text()
    cells = rf"(?:[^,]*,){{{column}}}\d"
    with pytest.raises(ParseError) as info:
        locust.parse_stats_csv(arabic_digit(text, 1, cells), "s.csv")
    assert info.value.line == 2 and "column" in info.value.expected


def test_a_unicode_digit_in_a_locust_json_key_is_a_parse_error():
    text = LOCUST_JSON.read_text()
    index = line_of(text, '"response_times"') + 1  # the first bucket, e.g. "1": 2086
    with pytest.raises(ParseError) as info:
        locust.parse_json(arabic_digit(text, index, r'"\d'), "run.stdout")
    assert "response_times" in info.value.found


@pytest.mark.parametrize("start", ["#[BaseTime:", "1795290764"])
def test_a_unicode_digit_in_an_hlog_timestamp_is_a_parse_error_at_its_line(start):
    text = hlog_text()
    index = line_of(text, start)
    with pytest.raises(ParseError) as info:
        hlog.parse(arabic_digit(text, index, r"\d"), "x.hlog")
    assert info.value.line == index + 1


@pytest.mark.parametrize("fn", [units.time_ms, units.number, units.count, units.bytes_,
                                units.duration_s])
@pytest.mark.parametrize("token", ["\u0661.24ms", "1.2\u0664", "\u0661k", "1.0\u2003ms"])
def test_units_refuse_unicode_digits_and_spaces(fn, token):
    with pytest.raises(units.UnitError):
        fn(token)


# -- hlog timestamps -----------------------------------------------------------------------------
@pytest.mark.parametrize(("start", "old", "new"), [
    ("1795290764", "1795290764", "9" * 30),  # OverflowError in datetime.fromtimestamp
    ("1795290764", "1795290764", "300000000000"),  # ValueError: year 11476 is out of range
    ("1795290764", "1795290764", "9" * 400),  # float() gives inf
    ("1795290764", ",1.000", "," + "9" * 400),  # an infinite interval length
    ("#[BaseTime:", "1795290763", "9" * 30),  # every interval beyond the year 9999
    ("#[BaseTime:", "1795290763.000", "1795290763.0.0"),  # hdrh's float() raises ValueError
])
def test_an_hlog_timestamp_out_of_range_is_a_parse_error_at_its_line(start, old, new):
    text = hlog_text()
    index = line_of(text, start)
    lines = text.split("\n")
    lines[index] = lines[index].replace(old, new, 1)
    with pytest.raises(ParseError) as info:
        hlog.parse("\n".join(lines), "x.hlog")
    assert info.value.line == index + 1, info.value


# -- Locust percentile headers -------------------------------------------------------------------
@pytest.mark.parametrize("path", [LOCUST_STATS, LOCUST_HISTORY])
@pytest.mark.parametrize("new", ["900%", "100.5%", "50.0%"])
def test_a_locust_percentile_header_outside_0_100_or_twice_is_refused(path, new):
    """The issue: ``900%`` became ``latency_p900_ms``. (``90%`` renamed in the header.)"""
    lines = path.read_text().split("\n")
    lines[0] = lines[0].replace(",90%,", f",{new},") if new != "50.0%" else lines[0].replace(
        ",66%,", ",50.0%,")
    parser = locust.parse_stats_csv if path == LOCUST_STATS else locust.parse_history_csv
    with pytest.raises(ParseError) as info:
        parser("\n".join(lines), path.name)
    assert info.value.line == 1 and info.value.found == new


# -- zeros where nothing was measured ------------------------------------------------------------
def test_zeros_edited_into_a_locust_run_without_requests_are_missing(tmp_path):
    """no_response_within_run: 0 requests, N/A percentiles. N/A edited into 0 everywhere."""
    for name in ("locust_stats.csv", "locust_stats_history.csv", "manifest.json"):
        text = (NO_RESPONSE / name).read_text()
        (tmp_path / name).write_text(text.replace("N/A", "0"))
    # without the --json output (it prints []), the numbers come from the CSV
    (run,) = perfkit.load(tmp_path, cache=False)
    assert run.requests == 0 and dict(run.percentiles_ms) == {}
    assert run.latency_mean_ms is run.latency_max_ms is run.latency_min_ms is None
    assert run.extra["latency_median_ms"] is None and run.extra["content_size_mean_bytes"] is None
    assert run.throughput_rps == 0.0 and run.transfer_bytes_per_s == 0.0  # real zeros
    note = next(w for w in run.warnings if w.code is Code.PRINTED_ZERO_PLACEHOLDER)
    assert "percentiles_ms[50]" in note["fields"] and "percentiles_ms[100]" in note["fields"]
    assert note["because"] == "no-request"
    rows = run.extra["history"]
    assert rows and all(r["latency_p50_ms"] is None and r["latency_p100_ms"] is None
                        for r in rows)
    assert Code.LOCUST_HISTORY_UNMEASURED in {w.code for w in run.warnings}


def test_the_real_locust_run_without_requests_loads_as_no_measurement():
    (run,) = perfkit.load(NO_RESPONSE, cache=False)
    assert (run.requests, run.failures, run.histogram_count) == (0, 0, 0)
    assert dict(run.percentiles_ms) == {} and run.latency_mean_ms is None
    assert Code.NO_REQUEST_COMPLETED in {w.code for w in run.warnings}


def test_zeros_beside_a_real_percentile_of_a_wrk_run_without_samples_are_missing():
    """wild/wrk/all_timeouts prints every percentile as 0.00us; its 99% edited to 4.62ms."""
    text = (FIX / "wild" / "wrk" / "all_timeouts" / "stdout.txt").read_text()
    run = wrk.parse(text.replace("99%    0.00us", "99%    4.62ms"), "stdout.txt")
    assert dict(run.percentiles_ms) == {99.0: 4.62}
    assert Warn(Code.PERCENTILES_WITHOUT_SAMPLES, fields=["percentiles_ms[99]"]) in run.warnings


def test_a_zero_mean_edited_into_an_empty_wrk2_histogram_is_missing():
    """wild/wrk2/all_timeouts_short: Total count 0, Mean -nan edited into 0.000."""
    text = (FIX / "wild" / "wrk2" / "all_timeouts_short" / "stdout.txt").read_text()
    damaged = re.sub(r"Mean    =\s+-nan", "Mean    =        0.000", text)
    assert damaged != text
    run = wrk2.parse(damaged, "stdout.txt")
    assert run.extra["hdr"]["mean_ms"] is None and run.extra["hdr"]["max_ms"] is None


# -- Locust p100 above its max -------------------------------------------------------------------
def test_a_locust_p100_far_above_its_max_is_warned_about():
    """The issue: a p100 60x the max gave no warning. (The Aggregated row's 100% x 60.)"""
    text = LOCUST_STATS.read_text()
    lines = text.split("\n")
    index = next(i for i, line in enumerate(lines) if line.startswith(",Aggregated,"))
    cells = lines[index].split(",")
    cells[-1] = str(int(cells[-1]) * 60)
    lines[index] = ",".join(cells)
    runs = locust.parse_stats_csv("\n".join(lines), "s.csv")
    assert not any(w.code is Code.PERCENTILE_ABOVE_MAX for r in runs[:-1] for w in r.warnings)
    (warning,) = [w for w in runs[-1].warnings if w.code is Code.PERCENTILE_ABOVE_MAX]
    assert warning["q"] == 100.0 and warning["rounded"] is True


def test_locust_rounding_alone_is_not_warned_about():
    """Every real Locust row: its percentiles may pass the unrounded max by Locust's rounding
    (``/ [content check]``: 100% 56 beside max 55.67), never by more."""
    runs = locust.parse_stats_csv(LOCUST_STATS.read_text(), "s.csv")
    assert any(r.percentiles_ms[100.0] > r.latency_max_ms for r in runs)
    assert not any(w.code is Code.PERCENTILE_ABOVE_MAX for r in runs for w in r.warnings)


# -- warnings on the Run objects -----------------------------------------------------------------
def _swap_percentiles(text: str) -> str:
    """The 50% and 99% values of a wrk or wrk2 distribution swapped (out of order)."""
    p50 = re.search(r"^ +50(?:\.000)?% +(\S+)", text, re.MULTILINE)
    p99 = re.search(r"^ +99(?:\.000)?% +(\S+)", text, re.MULTILINE)
    out = text[:p50.start(1)] + p99.group(1) + text[p50.end(1):p99.start(1)]
    return out + p50.group(1) + text[p99.end(1):]


@pytest.mark.parametrize("source", [WRK2_RUN, WRK_RUN, LOCUST_STATS])
def test_warnings_ride_on_loaded_runs_parsed_or_from_the_cache(source, tmp_path):
    """Out-of-order percentiles: the warning is on the Run of perfkit.load, the same when the
    run comes from the run store."""
    run_dir = tmp_path / "runs" / "one"
    run_dir.mkdir(parents=True)
    for f in source.parent.iterdir():
        if f.name.endswith(("_stats.csv", ".stdout", "meta.json")):
            shutil.copy(f, run_dir / f.name)
    target = run_dir / source.name
    text = target.read_text()
    if source == LOCUST_STATS:  # the Aggregated row's 50% and 99% cells swapped
        lines = text.split("\n")
        i = next(k for k, line in enumerate(lines) if line.startswith(",Aggregated,"))
        cells = lines[i].split(",")
        cells[11], cells[18] = cells[18], cells[11]
        lines[i] = ",".join(cells)
        damaged = "\n".join(lines)
        (run_dir / "run.stdout").unlink()  # the CSV alone (the --json output would win)
    else:
        damaged = _swap_percentiles(text)
    target.write_text(damaged)
    fresh = perfkit.load(tmp_path / "runs", cache=True)
    cached = perfkit.load(tmp_path / "runs", cache=True)
    assert (tmp_path / "runs" / ".perfkit" / "cache").is_dir()
    for a, b in zip(fresh, cached, strict=True):
        assert a.warnings == b.warnings and a.same_as(b)
    damaged_runs = [r for r in fresh if r.is_aggregate or r.tool != "locust"]
    # the loader keeps the two values out, its note holding the problem (Code.KEPT_OUT)
    problems = [[w["warning"] for w in r.warnings if w.code is Code.KEPT_OUT]
                for r in damaged_runs]
    assert damaged_runs and all(
        any(w.code is Code.PERCENTILES_DECREASE and (w["field"], w["q2"]) == ("percentiles_ms",
                                                                            99.0)
            for w in found)
        for found in problems)


def test_the_run_store_hash_is_documented_as_a_guard_against_damage_not_tampering():
    from perfkit.store import runcache as cache

    readme = " ".join((HERE.parent / "README.md").read_text().split())
    assert "guard against damage" in readme and "not against tampering" in readme
    doc = " ".join(cache.__doc__.split())
    assert "detect damage" in doc and "no guard against tampering" in doc
