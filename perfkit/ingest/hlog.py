"""Pure parser for HdrHistogram interval logs (``.hlog``).

An interval log holds one compressed histogram per interval and line::

    #[Histogram log format version 1.2]
    #[StartTime: 1795290763.000 (seconds since epoch), ...]
    "StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"
    0.127,1.007,2.769,HISTFAAAAEV42pNpmSz...
    Tag=checkout,0.127,1.007,3.100,HISTFAAAAEV42pNpmSz...

:func:`parse` gives one :class:`~perfkit.model.Run` per tag (untagged lines: ``endpoint`` None)
whose histogram is the sum of that tag's intervals. Every line is read here, as HdrHistogram's
format specification describes it (HdrHistogram_py's reader skips lines silently):

- header lines are optional (HdrHistogramJS writes logs without any);
- the payload may be in any of HdrHistogram's encodings: V2 (``HISTF``, decoded by ``hdrh``),
  V1 and V0 (jHiccup 2.0.6 and 2.0.1; :mod:`perfkit.ingest.hdrcodec`);
- an interval may start before ``#[StartTime]`` (HdrHistogram's readers skip it; the format has
  no such rule): it is read, and the run says how many did;
- a line that is not an interval or a comment is a ParseError at its line.

**Values as HdrHistogram gives them.** The log's own histograms are summed in their own layout
(hdrh's ``add``), and the run's percentiles, mean, standard deviation, minimum and maximum are
hdrh's on that sum (a percentile is the highest value equivalent to its bucket). The run's
``histogram`` (perfkit's layout, in microseconds, for merging and bootstrapping) places each of
the log's buckets at its highest equivalent value.

**Units.** Histograms store integers without a unit; perfkit reads them as

- the unit a ``#[ValueUnit: ns]`` line states (``ns``, ``us``, ``ms``, ``s``; a perfkit
  convention), or the ``unit`` the caller gives (``--unit``), which overrides;
- else nanoseconds when every interval's ``Interval_Max`` (which the Java writers print in ms:
  the maximum divided by 1e6) is the histogram's maximum divided by about 1e6: a Java tool's
  nanosecond log (jHiccup writes no unit line); the run says so;
- else microseconds, and the run says "unit assumed: µs".
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

import numpy as np
from hdrh.codec import HdrCookieException, HdrHistogramSettingsException, HdrLengthException
from hdrh.histogram import HdrHistogram

from perfkit.errors import ParseError
from perfkit.histogram import LatencyHistogram
from perfkit.ingest.hdrcodec import CodecError, decode
from perfkit.model import Run
from perfkit.warning import Code, Warn

TOOL = "hdrh"
LATENCY_SOURCE = "hdr_log"
PERCENTILES = (50.0, 75.0, 90.0, 99.0, 99.9, 99.99, 100.0)
#: multiply a recorded value by this to get microseconds
UNIT_TO_US = {"ns": 0.001, "us": 1.0, "µs": 1.0, "ms": 1000.0, "s": 1_000_000.0}
#: recorded values per millisecond (a value in ms is the value divided by this, as hdrh's own
#: scaled output divides)
PER_MS = {"ns": 1e6, "us": 1e3, "ms": 1.0, "s": 1e-3}
#: a layout whose highest trackable value is at least this (more than a day in us) is sized
#: for nanoseconds: HdrHistogram's usual 3.6e12 is an hour in ns, 41 days in us
NS_LAYOUT_HIGHEST = 10**11
UNITS = ("ns", "us", "ms", "s")

# ASCII only (re.ASCII): \d would admit any Unicode digit, which float() then reads
_NUM = r"\d+(?:\.\d*)?"
_INTERVAL = re.compile(
    rf"(?:Tag=([^,]*),)?({_NUM}),({_NUM}),({_NUM}),([A-Za-z0-9+/]+=*)\s*", re.ASCII)
_UNIT = re.compile(r"#\[?\s*value\s*unit\s*[:=]\s*(ns|us|µs|ms|s)\b",
                   re.IGNORECASE | re.ASCII)
_TIME = re.compile(r"#\[(StartTime|BaseTime):\s*(\S*)", re.ASCII)
_SECONDS = re.compile(r"\d+(?:\.\d*)?|\.\d+", re.ASCII)
#: the last second ``datetime`` can hold (9999-12-31T23:59:59Z): a later time is damage
MAX_TIMESTAMP_S = 253_402_300_799.0
#: what decoding a payload can raise (hdrh's V2 decoder, perfkit's V0/V1 one)
_DECODE_ERRORS = (CodecError, HdrCookieException, HdrLengthException,
                  HdrHistogramSettingsException, ValueError, TypeError, RuntimeError,
                  IndexError, OverflowError)
_LEGEND = '"StartTimestamp"'
WHAT = "an HdrHistogram interval log"
#: Java's reader: a timestamp more than a year before StartTime is relative to it
_YEAR_S = 365 * 24 * 3600.0


class _Interval:
    __slots__ = ("tag", "start_s", "length_s", "max_printed", "hist", "line")

    def __init__(self, tag: str | None, start_s: float, length_s: float, max_printed: float,
                 hist: HdrHistogram, line: int):
        self.tag, self.start_s, self.length_s = tag, start_s, length_s
        self.max_printed, self.hist, self.line = max_printed, hist, line


def _read(text: str, source: str) -> tuple[dict, list[_Interval]]:
    """The header facts (unit, StartTime, BaseTime) and every interval, checked line by line."""
    header: dict = {"unit": None, "start": None, "base": None}
    intervals: list[_Interval] = []
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip("\r")
        if not line.strip() or line.startswith(_LEGEND):
            continue
        if line.startswith("#"):
            m = _UNIT.match(line)
            if m:
                header["unit"] = m.group(1).lower().replace("µ", "u")
            m = _TIME.match(line)
            if m:
                header["start" if m.group(1) == "StartTime" else "base"] = _time(
                    m.group(2), m.group(1), source, number, line)
            continue
        m = _INTERVAL.fullmatch(line)
        if m is None:
            raise ParseError(source, number, "an interval line 'start,length,max,HISTF...' "
                             "(optionally 'Tag=NAME,' first)", line)
        try:
            hist = decode(m.group(5))
        except _DECODE_ERRORS as exc:
            raise ParseError(source, number, "a valid compressed histogram (HISTF... base64)",
                             f"{type(exc).__name__}: {exc}") from None
        start, length = float(m.group(2)), float(m.group(3))
        if not start + length <= MAX_TIMESTAMP_S:
            raise ParseError(source, number, "an interval ending before the year 10000 "
                             "(StartTimestamp + Interval_Length, in seconds)", line)
        intervals.append(_Interval(m.group(1) or None, start, length, float(m.group(4)), hist,
                                   number))
    if not intervals:
        raise ParseError(source, text.count("\n") + 1, f"{WHAT} with at least one interval",
                         "end of file")
    return header, intervals


def _time(token: str, what: str, source: str, number: int, line: str) -> float:
    """A ``#[StartTime:`` / ``#[BaseTime:`` value, before the year 10000."""
    token = token.rstrip(",]")
    if not _SECONDS.fullmatch(token) or not float(token) <= MAX_TIMESTAMP_S:
        raise ParseError(source, number, f"a {what} in seconds since the epoch before the "
                         "year 10000, such as 1795290763.000", line)
    return float(token)


def unit_from_maxima(intervals: list[_Interval]) -> str | None:
    """``"ns"`` when every interval's printed ``Interval_Max`` is its histogram's maximum
    divided by about 1e6 (the Java writers' default: ns to ms) and the histograms' layout is
    sized for nanoseconds (:data:`NS_LAYOUT_HIGHEST`; a microsecond log written with the default
    ratio has maxima in seconds, and a layout for us); ``"us"`` when divided by about 1e3;
    else None.

    "About": within a factor of 2, which bucket precision and the printed decimals never
    exceed, and which 1e3 and 1e6 are far apart from."""
    votes = set()
    for iv in intervals:
        top = iv.hist.get_max_value()
        if not top or not iv.max_printed:
            continue
        ratio = top / iv.max_printed
        votes.add("ns" if 5e5 <= ratio <= 2e6 else "us" if 500 <= ratio <= 2000 else "?")
    if len(votes) != 1 or "?" in votes:
        return None
    vote = votes.pop()
    if vote == "ns" and min(iv.hist.highest_trackable_value
                            for iv in intervals) < NS_LAYOUT_HIGHEST:
        return None
    return vote


def _unit(header: dict, intervals: list[_Interval], given: str | None
          ) -> tuple[str, Warn | None]:
    """The value unit and the note that says where it came from (None: stated in the log)."""
    if given is not None:
        if given not in PER_MS:
            raise ValueError(f"unit must be one of {', '.join(UNITS)}, not {given!r}")
        return given, Warn(Code.HLOG_UNIT, unit=given, given=True)
    if header["unit"] is not None:
        return header["unit"], None
    evidence = unit_from_maxima(intervals)
    if evidence == "ns":
        return "ns", Warn(Code.HLOG_UNIT, unit="ns",
                          highest=intervals[0].hist.highest_trackable_value)
    return "us", Warn(Code.HLOG_UNIT, unit="us")


def _merged(hists: list[HdrHistogram]) -> HdrHistogram:
    """The sum of ``hists`` in the first one's layout (hdrh's ``add``), wide enough for all."""
    first = hists[0]
    highest = max(h.highest_trackable_value for h in hists)
    total = HdrHistogram(first.lowest_trackable_value, highest,
                         first.significant_figures)
    for h in hists:
        if h.get_total_count():
            total.add(h)
    return total


def _latency(hdr: HdrHistogram, unit: str, source: str, line: int) -> LatencyHistogram:
    """``hdr`` in perfkit's layout (us), each bucket at its highest equivalent value."""
    counts = np.ctypeslib.as_array(hdr.counts)[:hdr.counts_len].astype(np.int64)
    idx = np.flatnonzero(counts)
    if not len(idx):
        return LatencyHistogram()
    top = np.array([hdr.get_highest_equivalent_value(hdr.get_value_from_index(int(i)))
                    for i in idx], dtype=np.float64)
    try:
        return LatencyHistogram.from_values_us(top * UNIT_TO_US[unit], counts[idx])
    except ValueError as exc:
        raise ParseError(source, line, f"latencies below 24 h (values read as {unit}; add a "
                         "'#[ValueUnit: ns]' line or use --unit for a log in ns)",
                         f"max value {hdr.get_max_value()}: {exc}") from None


def parse(text: str, source: str = "<string>", unit: str | None = None) -> list[Run]:
    """One :class:`Run` per tag of an ``.hlog`` interval log (untagged first).

    Parameters
    ----------
    text : str
        The log's text.
    source : str
        Its path, for the runs and for error messages.
    unit : str, optional
        The unit of the recorded values (``ns``, ``us``, ``ms``, ``s``), overriding the log's
        ``#[ValueUnit]`` line and the evidence of its maxima.

    Returns
    -------
    list of Run
        ``tool="hdrh"``, ``latency_source="hdr_log"``, ``endpoint`` the tag (None untagged),
        ``requests`` the count, percentiles/mean/stdev/min/max as hdrh gives them on the sum of
        the tag's intervals, ``histogram`` that sum in perfkit's layout (us), and ``extra``:
        ``tag``, ``intervals``, ``value_unit``, ``interval_start_s`` / ``interval_end_s``
        (epoch seconds when ``timestamps_absolute``: the log has a ``#[StartTime:`` or
        ``#[BaseTime:`` header; then ``start_utc`` is set too).
    """
    nul = text.find("\x00")
    if nul >= 0:
        raise ParseError(source, text.count("\n", 0, nul) + 1, f"text ({WHAT})",
                         "binary data (a NUL byte)")
    if not text.strip():
        raise ParseError(source, 1, WHAT, "an empty file")
    header, intervals = _read(text, source)
    value_unit, unit_note = _unit(header, intervals, unit)
    by_tag: dict[str | None, list[_Interval]] = {}
    for iv in intervals:
        by_tag.setdefault(iv.tag, []).append(iv)
    tags = sorted(by_tag, key=lambda t: (t is not None, list(by_tag).index(t)))
    return [_run(tag, by_tag[tag], source, value_unit, unit_note, header) for tag in tags]


def _absolute(items: list[_Interval], header: dict) -> tuple[list[tuple[float, float]], bool]:
    """Each interval's (start, end) in seconds, and whether they are epoch seconds.

    As HdrHistogram's readers: with a BaseTime, timestamps are relative to it; with only a
    StartTime, they are relative to it when more than a year before it, else absolute."""
    base, start = header["base"], header["start"]
    if base is None and start is not None:
        base = start if items[0].start_s < start - _YEAR_S else 0.0
    offset = base or 0.0
    spans = [(iv.start_s + offset, iv.start_s + iv.length_s + offset) for iv in items]
    return spans, base is not None or start is not None


def _run(tag: str | None, items: list[_Interval], source: str, unit: str,
         unit_note: Warn | None, header: dict) -> Run:
    native = _merged([iv.hist for iv in items])
    hist = _latency(native, unit, source, items[-1].line)
    spans, absolute = _absolute(items, header)
    begin = min(s for s, _ in spans)
    end = max(e for _, e in spans)
    duration = end - begin if end > begin else None
    count = native.get_total_count()
    per_ms = PER_MS[unit]
    percentiles: dict[float, float] = {}
    notes: list[Warn] = []
    mean = stdev = low = high = None
    if count:
        percentiles = {q: native.get_value_at_percentile(q) / per_ms for q in PERCENTILES}
        mean, stdev = native.get_mean_value() / per_ms, native.get_stddev() / per_ms
        low, high = native.get_min_value() / per_ms, native.get_max_value() / per_ms
    else:
        notes.append(Warn(Code.HLOG_EMPTY, tag=tag))
    if unit_note:
        notes.append(unit_note)
    before = sum(1 for s, _ in spans if header["start"] is not None and s < header["start"])
    if before:
        notes.append(Warn(Code.HLOG_BEFORE_START, intervals=before))
    start_utc = None
    if absolute:
        start_utc = datetime.fromtimestamp(begin, UTC).isoformat(timespec="milliseconds")
    return Run(
        tool=TOOL, source=source, latency_source=LATENCY_SOURCE, endpoint=tag,
        duration_s=duration, requests=count,
        throughput_rps=None if duration is None else count / duration,
        latency_mean_ms=mean, latency_stdev_ms=stdev, latency_min_ms=low,
        latency_max_ms=high, percentiles_ms=percentiles, histogram=hist, notes=tuple(notes),
        start_utc=start_utc,
        extra={"tag": tag, "intervals": len(items), "value_unit": unit,
               "interval_start_s": begin, "interval_end_s": end,
               "timestamps_absolute": absolute,
               "hdr_layout": {"lowest": native.lowest_trackable_value,
                              "highest": native.highest_trackable_value,
                              "significant_figures": native.significant_figures}},
    )

