"""HdrHistogram interval logs, written in the test by hdrh's own HistogramLogWriter from
histograms filled in the test, then read back by perfkit.store.hlog."""

from __future__ import annotations

import io

import numpy as np
import pytest
from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogWriter

import perfkit
from perfkit.errors import ParseError
from perfkit.histogram import LatencyHistogram
from perfkit.store import hlog
from perfkit.warning import Code, Warn

START_S = 1795290763.0  # an epoch second of the fixtures' era


def _filled(samples_us: np.ndarray, highest: int = 3_600_000_000) -> HdrHistogram:
    hist = HdrHistogram(1, highest, 3)
    for value in samples_us:
        assert hist.record_value(int(value))
    return hist


def _samples(seed: int, n: int = 2000) -> np.ndarray:
    return np.rint(np.random.default_rng(seed).lognormal(7.0, 1.0, n)) + 1  # us, ~1 ms


def _interval_line(hist: HdrHistogram, start_s: float, tag: str | None = None) -> str:
    """One interval as hdrh's writer prints it; a tag is prefixed as 'Tag=NAME,' the way the
    Java HistogramLogWriter does (hdrh 0.10's writer has no tag support)."""
    buf = io.StringIO()
    HistogramLogWriter(buf).output_interval_histogram(hist, start_s, start_s + 1.0)
    return (f"Tag={tag}," if tag else "") + buf.getvalue()


def _log(intervals: list[tuple[str | None, HdrHistogram, float]], header: str = "start",
         comments: tuple[str, ...] = ()) -> str:
    buf = io.StringIO()
    writer = HistogramLogWriter(buf)
    writer.output_log_format_version()
    if header == "start":
        # writer.output_start_time() is broken in hdrh 0.10 (datetime.iso_format); write the
        # same comment the Java writer writes
        writer.output_comment(f"[StartTime: {START_S:f} (seconds since epoch), x]")
    elif header == "base":
        writer.output_base_time(START_S * 1000)
    for comment in comments:
        writer.output_comment(comment)
    writer.output_legend()
    for tag, hist, start in intervals:
        buf.write(_interval_line(hist, start, tag))
    return buf.getvalue()


def _expected(hists: list[HdrHistogram]) -> LatencyHistogram:
    return LatencyHistogram.merge(LatencyHistogram(h) for h in hists)


def test_untagged_log_reads_back_what_was_written():
    hists = [_filled(_samples(seed)) for seed in range(3)]
    text = _log([(None, h, 0.5 + i) for i, h in enumerate(hists)])
    (run,) = hlog.parse(text, "x.hlog")
    assert run.endpoint is None and run.extra["tag"] is None
    assert run.tool == "hdrh" and run.latency_source == "hdr_log"
    assert run.histogram == _expected(hists)
    assert run.requests == run.histogram_count == 6000
    assert run.extra["intervals"] == 3
    assert run.duration_s == pytest.approx(3.0)
    assert run.throughput_rps == pytest.approx(2000.0)
    assert run.start_utc == "2026-11-21T19:52:43.500+00:00"


def test_percentiles_equal_hdrhs_own_and_the_raw_samples():
    samples = [_samples(seed) for seed in (10, 11)]
    hists = [_filled(s) for s in samples]
    (run,) = hlog.parse(_log([(None, h, 0.5 + i) for i, h in enumerate(hists)]), "x.hlog")
    merged = HdrHistogram(1, 3_600_000_000, 3)
    for h in hists:
        merged.add(h)
    raw = np.sort(np.concatenate(samples))
    for q in hlog.PERCENTILES:
        assert run.percentiles_ms[q] == merged.get_value_at_percentile(q) / 1000.0
        # the sample at HdrHistogram's rank round(q/100 * N), known up to 3 significant digits
        known = raw[max(1, int(q / 100 * len(raw) + 0.5)) - 1] / 1000.0
        assert known <= run.percentiles_ms[q] <= known * 1.001
    assert run.latency_max_ms == pytest.approx(raw.max() / 1000.0, rel=1e-3)
    assert run.latency_mean_ms == pytest.approx(raw.mean() / 1000.0, rel=1e-3)


def test_tagged_lines_give_one_run_per_tag():
    written = {None: [], "checkout": [], "search": []}
    intervals = []
    for i in range(3):
        for j, tag in enumerate(written):
            hist = _filled(_samples(100 + 10 * i + j, 500 + 100 * j))
            written[tag].append(hist)
            intervals.append((tag, hist, 0.5 + i))
    runs = hlog.parse(_log(intervals), "x.hlog")
    assert [r.endpoint for r in runs] == [None, "checkout", "search"]
    for run in runs:
        assert run.histogram == _expected(written[run.endpoint])
        assert run.requests == sum(h.get_total_count() for h in written[run.endpoint])
        assert run.extra["intervals"] == 3


def test_base_time_header_makes_timestamps_absolute():
    (run,) = hlog.parse(_log([(None, _filled(_samples(5)), 2.0)], header="base"), "x.hlog")
    assert run.extra["timestamps_absolute"] is True
    assert run.extra["interval_start_s"] == pytest.approx(START_S + 2.0)


def test_without_time_headers_timestamps_stay_relative_and_unit_is_noted():
    (run,) = hlog.parse(_log([(None, _filled(_samples(6)), 0.5)], header="none"), "x.hlog")
    assert run.start_utc is None and run.extra["timestamps_absolute"] is False
    assert run.extra["value_unit"] == "us"
    assert Warn(Code.HLOG_UNIT, unit="us") in run.notes


def test_value_unit_header_converts_nanoseconds():
    samples = _samples(7)
    in_ns = _filled(samples * 1000, highest=3_600_000_000_000)
    text = _log([(None, in_ns, 0.5)], comments=("[ValueUnit: ns]",))
    (run,) = hlog.parse(text, "x.hlog")
    (reference,) = hlog.parse(_log([(None, _filled(samples), 0.5)]), "y.hlog")
    assert run.extra["value_unit"] == "ns" and Code.HLOG_UNIT not in {n.code for n in run.notes}
    assert run.requests == reference.requests
    for q in hlog.PERCENTILES:
        assert run.percentiles_ms[q] == pytest.approx(reference.percentiles_ms[q], rel=2e-3)


def test_nanoseconds_known_by_their_maxima_and_layout():
    """hdrh's writer prints Interval_Max = max / 1e6 (ns to ms); with a layout sized for ns
    (highest 1e12: 11 days in us) the log is read in ns and says why."""
    huge = _filled(np.array([10**11, 2 * 10**11]), highest=10**12)  # 100 s in ns
    (run,) = hlog.parse(_log([(None, huge, 0.5)]), "x.hlog")
    assert run.extra["value_unit"] == "ns"
    assert [n.get("given") for n in run.notes if n.code is Code.HLOG_UNIT] == [None]
    assert run.latency_max_ms == huge.get_max_value() / 1e6


def test_nanoseconds_read_as_microseconds_beyond_24_h_is_an_error():
    huge = _filled(np.array([10**11, 2 * 10**11]), highest=10**12)  # 100 s in ns
    text = _log([(None, huge, 0.5)])
    with pytest.raises(ParseError) as info:
        hlog.parse(text, "x.hlog", unit="us")
    assert info.value.line == text.count("\n") and "ValueUnit: ns" in str(info.value)


def test_loads_through_perfkit_load(tmp_path):
    path = tmp_path / "latency.hlog"
    path.write_text(_log([(None, _filled(_samples(8)), 0.5), ("A", _filled(_samples(9)), 0.5)]))
    runs = perfkit.load(path)
    assert [r.endpoint for r in runs] == [None, "A"]
    assert all(r.source == str(path) for r in runs)


# -- malformed, derived from a written log -----------------------------------------------------
def _written_lines() -> list[str]:
    hists = [_filled(_samples(seed)) for seed in (20, 21, 22)]
    return _log([(None, h, 0.5 + i) for i, h in enumerate(hists)]).splitlines(keepends=True)


def _raises(text: str, line: int, fragment: str) -> None:
    with pytest.raises(ParseError) as info:
        hlog.parse(text, "x.hlog")
    assert info.value.line == line, str(info.value)
    assert fragment in str(info.value)


@pytest.mark.parametrize("keep", [40, 68, 100])
def test_interval_cut_inside_its_histogram(keep):
    lines = _written_lines()  # 1 version, 2 start time, 3 legend, 4-6 intervals
    _raises("".join(lines[:4]) + lines[4][:keep], 5, "valid compressed histogram")


def test_interval_whose_deflated_data_fails_its_check():
    """A histogram whose zlib checksum does not match (a flipped byte: the fuzzer's find) is a
    ParseError at its line, not zlib's exception."""
    import base64

    lines = _written_lines()
    body, payload = lines[4].rstrip("\n").rsplit(",", 1)
    raw = bytearray(base64.b64decode(payload))
    raw[-1] ^= 0xFF  # the last byte of the deflated stream's Adler-32
    lines[4] = f"{body},{base64.b64encode(bytes(raw)).decode()}\n"
    _raises("".join(lines), 5, "valid compressed histogram")


def test_interval_cut_inside_its_numbers():
    lines = _written_lines()
    _raises("".join(lines[:5]) + lines[5][:6], 6, "interval line")


def test_log_cut_before_the_first_interval():
    _raises("".join(_written_lines()[:3]), 4, "at least one interval")


def test_garbage_line_between_intervals():
    lines = _written_lines()
    lines.insert(4, "Killed\n")
    _raises("".join(lines), 5, "interval line")


def test_binary_and_empty():
    lines = _written_lines()
    _raises("".join(lines[:4]) + "\x00" + "".join(lines[4:]), 5, "binary")
    _raises("", 1, "an empty file")
