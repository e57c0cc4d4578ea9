"""Pure parser for HdrHistogram interval logs (``.hlog``), read with hdrh's own reader.

An interval log holds one compressed histogram per interval and line::

    #[Histogram log format version 1.2]
    #[StartTime: 1795290763.000 (seconds since epoch), ...]
    "StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"
    0.127,1.007,2.769,HISTFAAAAEV42pNpmSz...
    Tag=checkout,0.127,1.007,3.100,HISTFAAAAEV42pNpmSz...

:func:`parse` gives one :class:`~perfkit.model.Run` per tag (untagged lines: ``endpoint`` None)
whose histogram is the sum of that tag's intervals. The log prints no numbers of its own, so the
percentiles (50, 75, 90, 99, 99.9, 99.99, 100), mean, stdev, min and max come from the histogram;
``duration_s`` spans the first interval's start to the last interval's end, and
``throughput_rps`` is the total count over that span.

Units: histograms store integers without a unit. perfkit reads them as **microseconds** unless
a comment line names another unit, ``#[ValueUnit: ns]`` (also ``us``, ``ms``, ``s``): a
perfkit convention, since the format itself has no unit header (Java tools often record
nanoseconds; their ``Interval_Max`` column is then the max divided by 1e6, in ms).

hdrh's :class:`~hdrh.log.HistogramLogReader` (hdrh 0.10) is used for the decoding, with its
quirks handled here, in :class:`_TextLogReader`, :func:`_check_lines` and
:func:`_read_intervals`:

- it only opens files by name: it is fed the text through a line-counting stream instead;
- it silently skips any line that does not look like an interval (a truncated or corrupted
  line simply vanishes): every line is checked first, so a bad one is a ParseError at its line;
- its regexes take any Unicode digit, and ``float()`` reads them: perfkit's take ASCII only;
- it raises ValueError on a ``#[StartTime:`` / ``#[BaseTime:`` it cannot read, skips an interval
  that starts before the StartTime and stops reading at one beyond ``sys.maxsize`` seconds, all
  silently but the first; a time after the year 9999 (``inf`` included) breaks ``datetime``.
  Each of these is a ParseError at its line: every interval line must be the one hdrh read;
- tagged lines (``Tag=NAME,...``) are handled by the reader itself, which strips the tag and
  sets it on the decoded histogram (checked by the tests); an empty tag counts as untagged.
"""

from __future__ import annotations

import io
import math
import os
import re
import zlib
from datetime import UTC, datetime
from typing import Any

import numpy as np
from hdrh.codec import HdrCookieException, HdrHistogramSettingsException, HdrLengthException
from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader

from perfkit.errors import ParseError
from perfkit.histogram import LatencyHistogram
from perfkit.model import Run

TOOL = "hdrh"
LATENCY_SOURCE = "hdr_log"
PERCENTILES = (50.0, 75.0, 90.0, 99.0, 99.9, 99.99, 100.0)
#: multiply a recorded value by this to get microseconds
UNIT_TO_US = {"ns": 0.001, "us": 1.0, "µs": 1.0, "ms": 1000.0, "s": 1_000_000.0}

# ASCII only (re.ASCII): \d would admit any Unicode digit, which hdrh's float() then reads
_NUM = r"\d+(?:\.\d*)?"
_INTERVAL = re.compile(rf"(?:Tag=[^,]*,)?{_NUM},{_NUM},{_NUM},[A-Za-z0-9+/]+=*", re.ASCII)
_UNIT = re.compile(r"#\[?\s*value\s*unit\s*[:=]\s*(ns|us|µs|ms|s)\b",
                   re.IGNORECASE | re.ASCII)
#: what hdrh's reader takes from a ``#[StartTime:`` / ``#[BaseTime:`` line and gives to float()
#: (its own pattern, Unicode digits included: the line is refused unless this is a number)
_HDRH_TIME = re.compile(r"#\[(StartTime|BaseTime): *([\d\.]*)")
_SECONDS = re.compile(r"\d+(?:\.\d*)?|\.\d+", re.ASCII)
#: the last second ``datetime`` can hold (9999-12-31T23:59:59Z): a later time is damage
MAX_TIMESTAMP_S = 253_402_300_799.0
#: what hdrh raises on a payload it cannot decode (base64, zlib, its header checks)
_DECODE_ERRORS = (HdrCookieException, HdrLengthException, HdrHistogramSettingsException,
                  zlib.error, ValueError, TypeError, RuntimeError, IndexError, OverflowError)
_LEGEND = '"StartTimestamp"'
WHAT = "an HdrHistogram interval log"


class _CountingText(io.StringIO):
    """A text stream that knows the 1-based number of the last line read."""

    line = 0

    # the ignore: typeshed's StringIO inherits _IOBase.readline (bytes) as well as str's
    def readline(self, size: int = -1) -> str:  # type: ignore[override]
        text = super().readline(size)
        if text:
            self.line += 1
        return text


class _TextLogReader(HistogramLogReader):
    """hdrh's reader over a string instead of a file name (its only constructor)."""

    input_file: Any

    def __init__(self, text: str):
        super().__init__(os.devnull, HdrHistogram(1, 2, 1))
        self.input_file.close()
        self.input_file = _CountingText(text)

    @property
    def line(self) -> int:
        return self.input_file.line


def _check_lines(text: str, source: str) -> tuple[str, bool, bool, list[int]]:
    """Validate every line; return the value unit, whether it was stated, whether a
    ``#[StartTime:`` or ``#[BaseTime:`` header makes the interval timestamps absolute, and the
    1-based numbers of the interval lines."""
    unit, stated, absolute, intervals = "us", False, False, []
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip("\r")
        if not line.strip() or line.startswith(_LEGEND):
            continue
        if line.startswith("#"):
            m = _UNIT.match(line)
            if m:
                unit, stated = m.group(1).lower().replace("µ", "u"), True
            m = _HDRH_TIME.match(line)
            if m:
                _check_time(m.group(2), m.group(1), source, number, line)
                absolute = True
            continue
        if not _INTERVAL.fullmatch(line):
            raise ParseError(source, number, "an interval line 'start,length,max,HISTF...' "
                             "(optionally 'Tag=NAME,' first)", line)
        intervals.append(number)
    if not intervals:
        raise ParseError(source, text.count("\n") + 1, f"{WHAT} with at least one interval",
                         "end of file")
    return unit, stated, absolute, intervals


def _check_time(token: str, what: str, source: str, line_number: int, line: str) -> None:
    """A ``#[StartTime:`` / ``#[BaseTime:`` value hdrh can read, before the year 10000."""
    if not _SECONDS.fullmatch(token) or not float(token) <= MAX_TIMESTAMP_S:
        raise ParseError(source, line_number, f"a {what} in seconds since the epoch before the "
                         "year 10000, such as 1795290763.000", line)


def _to_latency(hdr: HdrHistogram, unit: str, source: str, line: int) -> LatencyHistogram:
    """The interval histogram in microseconds, refusing values the layout cannot hold."""
    if unit == "us":
        try:
            hist = LatencyHistogram(hdr)
        except IndexError:  # hdrh's add() refuses values beyond the layout
            hist = None
    else:
        items = [(it.value_iterated_to, it.count_added_in_this_iter_step)
                 for it in hdr.get_recorded_iterator()]
        values = np.array([v for v, _ in items], dtype=np.float64) * UNIT_TO_US[unit]
        counts = np.array([c for _, c in items], dtype=np.int64)
        try:
            hist = LatencyHistogram.from_values_us(values, counts)
        except ValueError as exc:
            raise ParseError(source, line, f"latencies in {unit} below 24 h", str(exc)) from exc
    if hist is None or hist.total_count != hdr.get_total_count():
        raise ParseError(source, line, "latencies below 24 h in microseconds (values are read "
                         "as us; add a '#[ValueUnit: ns]' line for a log in ns)",
                         f"max value {hdr.get_max_value()}")
    return hist


def _read_intervals(text: str, source: str, unit: str, lines: list[int]
                    ) -> dict[str | None, list]:
    """Each interval line (``lines``: their numbers) decoded by hdrh, in order."""
    reader = _TextLogReader(text)
    by_tag: dict[str | None, list] = {}
    for line in lines:
        try:
            hdr = reader.get_next_interval_histogram()
        except _DECODE_ERRORS as exc:  # _check_lines made sure its timestamps are numbers
            raise ParseError(source, reader.line, "a valid compressed histogram "
                             "(HISTF... base64)", f"{type(exc).__name__}: {exc}") from exc
        if hdr is None or reader.line != line:
            # hdrh skips, silently, an interval before the log's StartTime, and stops at one
            # beyond sys.maxsize seconds
            raise ParseError(source, line, "an interval starting at or after the log's "
                             "StartTime and before the year 10000 (StartTimestamp, plus any "
                             "BaseTime, in seconds)", text.split("\n")[line - 1])
        hist = _to_latency(hdr, unit, source, reader.line)
        interval = (hdr.get_start_time_stamp() / 1000.0, hdr.get_end_time_stamp() / 1000.0)
        if not interval[1] <= MAX_TIMESTAMP_S:  # inf and huge values, which datetime refuses
            raise ParseError(source, reader.line, "an interval ending before the year 10000 "
                             "(StartTimestamp + Interval_Length, plus any BaseTime, in seconds)",
                             f"an end at {interval[1]:.6g} s")
        by_tag.setdefault(hdr.get_tag() or None, []).append((hist, interval))
    reader.close()
    return by_tag


def _finite(value: float) -> float | None:
    return None if math.isnan(value) else value


def parse(text: str, source: str = "<string>") -> list[Run]:
    """One :class:`Run` per tag of an ``.hlog`` interval log (untagged first).

    Parameters
    ----------
    text : str
        The log's text.
    source : str
        Its path, for the runs and for error messages.

    Returns
    -------
    list of Run
        ``tool="hdrh"``, ``latency_source="hdr_log"``, ``endpoint`` the tag (None untagged),
        ``histogram`` the sum of the tag's intervals in microseconds, ``requests`` its count,
        percentiles/mean/stdev/min/max from that histogram (hdrh's definitions), and
        ``extra``: ``tag``, ``intervals``, ``value_unit``, ``interval_start_s`` /
        ``interval_end_s`` (epoch seconds when ``timestamps_absolute``, i.e. the log has a
        ``#[StartTime:`` or ``#[BaseTime:`` header; then ``start_utc`` is set too).
    """
    nul = text.find("\x00")
    if nul >= 0:
        raise ParseError(source, text.count("\n", 0, nul) + 1, f"text ({WHAT})",
                         "binary data (a NUL byte)")
    if not text.strip():
        raise ParseError(source, 1, WHAT, "an empty file")
    unit, stated, absolute, intervals = _check_lines(text, source)
    by_tag = _read_intervals(text, source, unit, intervals)
    tags = sorted(by_tag, key=lambda t: (t is not None, list(by_tag).index(t)))
    return [_run(tag, by_tag[tag], source, unit, stated, absolute) for tag in tags]


def _run(tag: str | None, items: list, source: str, unit: str, stated: bool,
         absolute: bool) -> Run:
    hist = LatencyHistogram.merge([h for h, _ in items])
    begin = min(s for _, (s, _e) in items)
    end = max(e for _, (_s, e) in items)
    duration = end - begin if end > begin else None
    count = hist.total_count
    percentiles = {}
    notes = []
    if count:
        values = hist.percentiles_us(PERCENTILES) / 1000.0
        percentiles = dict(zip(PERCENTILES, (float(v) for v in values), strict=True))
    else:
        notes.append(f"tag {tag!r}: every interval histogram is empty: no latencies")
    if not stated:
        notes.append("the log does not state its value unit: values read as microseconds "
                     "(add '#[ValueUnit: ns]' if the tool recorded nanoseconds)")
    start_utc = None
    if absolute:  # interval timestamps are seconds since the epoch
        start_utc = datetime.fromtimestamp(begin, UTC).isoformat(timespec="milliseconds")
    return Run(
        tool=TOOL, source=source, latency_source=LATENCY_SOURCE, endpoint=tag,
        duration_s=duration, requests=count,
        throughput_rps=None if duration is None else count / duration,
        latency_mean_ms=_finite(hist.mean_us / 1000.0),
        latency_stdev_ms=_finite(hist.stdev_us / 1000.0),
        latency_min_ms=_finite(hist.min_us / 1000.0),
        latency_max_ms=_finite(hist.max_us / 1000.0),
        percentiles_ms=percentiles, histogram=hist, notes=tuple(notes), start_utc=start_utc,
        extra={"tag": tag, "intervals": len(items), "value_unit": unit,
               "interval_start_s": begin, "interval_end_s": end,
               "timestamps_absolute": absolute},
    )
