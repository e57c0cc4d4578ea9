"""HdrHistogram interval logs (``.hlog``): read (:func:`parse`), and written by perfkit
(:func:`interval_log`, :func:`write_run_logs`) with one run per tagged line.

**Writing.**

The report ships each run's latency histogram so that every figure drawn from per-run
percentiles can be rebuilt from the report's own files. The format is HdrHistogram's interval
log (version 1.2), which :func:`parse` and HdrHistogram's own tools read: one
line per run, tagged with its run id, holding the run's whole histogram as one interval, after
a comment line saying what the run printed::

    #[Histogram log format version 1.2]
    #[StartTime: 0.000 (seconds since epoch)]
    #[ValueUnit: us]
    "StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"
    # default_R30000_c64_rep1: wrk2 printed 447,675 requests in 15.00 s ...
    Tag=default_R30000_c64_rep1,10.160,4.840,4.211,HISTFAAAA...

Values are microseconds (``#[ValueUnit: us]``, perfkit's convention); ``Interval_Max`` is in
ms, as HdrHistogram's tools print it. A tag cannot hold a comma or a space: such characters in
a run id are written as ``_``.

**The interval is the run's measurement window** (:func:`measurement_interval`), so that the
log's count over its interval is the rate of the requests it holds. wrk2 records its histogram
only after calibrating: each thread resets it ``CALIBRATE_DELAY_MS`` (10 s) plus 5 ms per
connection of the thread (its connections open 5 ms apart) after it starts, and stops at the
run's end (giltene/wrk2 ``src/wrk.h``, ``src/wrk.c`` ``thread_main`` and ``calibrate``). So
a wrk2 run's interval starts there and ends at its printed runtime: a 15 s run at 64
connections on 2 threads holds the requests of its last 4.84 s. (Interval_Length 15 s, as
before, read a third of the run's rate.) The log's rate is the window's: where the run's rate
was not steady (it fell short before calibrating, or did not sustain the rate) it differs from
the run's whole-run Requests/sec, which the comment line gives beside it.

**The histogram of a wrk2 run is rebuilt from its printed output** (:func:`shipped_histogram`):
the "Detailed Percentile spectrum" gives a bucket per row (the requests between two rows are
placed at the later row's value), and the percentiles printed above it (50% ... 99.999%),
which fall between rows, are placed at their printed values. Read back, its percentiles are
wrk2's printed ones within the printed rounding and one histogram bucket.

**Reading.** An interval log holds one compressed histogram per interval and line::

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
  V1 and V0 (jHiccup 2.0.6 and 2.0.1; :mod:`perfkit.hdrcodec`);
- an interval may start before ``#[StartTime]`` (HdrHistogram's readers skip it; the format has
  no such rule): it is read, and the run says how many did;
- a line that is not an interval or a comment is a ParseError at its line.

**Values as HdrHistogram gives them.** The log's own histograms are summed in their own layout,
and the run's percentiles, mean, standard deviation, minimum and maximum are hdrh's on that sum
(a percentile is the highest value equivalent to its bucket), computed with numpy over the
counts (:mod:`perfkit.store.hdrsum`; hdrh's Python loops took most of a log's time). The
run's ``histogram`` (perfkit's layout, in
microseconds, for merging and bootstrapping) places each of the log's buckets at its highest
equivalent value.

**Units.** Histograms store integers without a unit; perfkit reads them as

- the unit a ``#[ValueUnit: ns]`` line states (``ns``, ``us``, ``ms``, ``s``; a perfkit
  convention), or the ``unit`` the caller gives (``--unit``), which overrides;
- else nanoseconds when every interval's ``Interval_Max`` (which the Java writers print in ms:
  the maximum divided by 1e6) is the histogram's maximum divided by about 1e6: a Java tool's
  nanosecond log (jHiccup writes no unit line); the run says so;
- else microseconds, and the run says "unit assumed: µs".
"""

from __future__ import annotations

import math
import re
import zlib
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from hdrh.codec import HdrCookieException, HdrHistogramSettingsException, HdrLengthException
from hdrh.histogram import HdrHistogram

from perfkit.errors import ParseError
from perfkit.hdrcodec import CodecError, decode
from perfkit.hdrlayout import LAYOUT
from perfkit.histogram import LatencyHistogram
from perfkit.model import Run
from perfkit.store.hdrsum import Summed, summed
from perfkit.warning import Code, Warn

HEADER = ('#[Histogram log format version 1.2]\n#[StartTime: 0.000 (seconds since epoch)]\n'
          '#[ValueUnit: us]\n'
          '"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"\n')
#: wrk2 resets a thread's histograms this long after the thread starts (src/wrk.h) ...
WRK2_CALIBRATE_DELAY_S = 10.0
#: ... plus this per connection of the thread (its connects are staggered 5 ms apart)
WRK2_CONNECT_STAGGER_S = 0.005
#: how each kind of interval was found, in the log's header
HOW = {
    "wrk2": "wrk2 runs: Interval_Length is wrk2's measurement window, StartTimestamp its "
            "start: the printed runtime less the calibration, 10 s + 5 ms x connections per "
            "thread (giltene/wrk2 src/wrk.c thread_main, calibrate); histograms rebuilt from "
            "wrk2's printed output: the Detailed Percentile spectrum (the requests between "
            "two rows at the later row's value) with the printed percentiles placed at their "
            "printed values",
    "run": "other runs: Interval_Length is the run's duration; the histogram is the run's",
}


def tag(name: str) -> str:
    """A run id as an interval-log tag (no comma, whitespace or line break)."""
    return re.sub(r"[,\s]+", "_", str(name)) or "untagged"


def measurement_interval(run: Any) -> tuple[float, float, str]:
    """``(start_s, length_s, kind)`` of the window a run's histogram covers, in seconds from
    the run's start; ``kind`` a key of :data:`HOW`. A wrk2 run (HdrHistogram corrected
    latency) with its runtime, connections and threads known: its window after calibration
    (module docstring); any other run: its whole duration (0 when unknown)."""
    duration = run.duration_s if run.duration_s is not None else math.nan
    if (run.tool == "wrk2" and run.latency_source == "hdr_corrected" and run.connections
            and run.threads and math.isfinite(duration)):
        start = WRK2_CALIBRATE_DELAY_S + WRK2_CONNECT_STAGGER_S * (
            run.connections // run.threads)
        if duration > start:
            return start, duration - start, "wrk2"
    return 0.0, duration if math.isfinite(duration) else 0.0, "run"


def shipped_histogram(run: Any) -> LatencyHistogram:
    """The histogram a log ships for ``run``: a wrk2 run's with its printed percentiles placed
    at their printed values (module docstring), any other run's as it is.

    Each printed percentile ``q`` (below 100) names the value at rank ``max(1, round(q / 100 x
    N))`` (HdrHistogram_c ``hdr_value_at_percentile``); where that rank falls between two
    spectrum rows, that many requests of the later row's bucket are placed at the printed
    value, kept above the earlier row's value and at most the later row's (a value rounded
    beyond them is placed at the nearest end): every row keeps its TotalCount."""
    hist = run.histogram
    if run.tool != "wrk2" or hist is None or not hist.total_count or not run.percentiles_ms:
        return hist
    values = LAYOUT.highest[np.asarray(hist.bucket_indexes)].astype(np.int64)
    cumulative = np.cumsum(np.asarray(hist.bucket_counts, dtype=np.int64))
    total = int(cumulative[-1])
    rows = list(zip(values.tolist(), cumulative.tolist(), strict=True))
    for q, printed_ms in sorted(run.percentiles_ms.items()):
        if not 0 < q < 100 or not math.isfinite(printed_ms):
            continue
        rank = max(1, math.floor(q / 100.0 * total + 0.5))
        i = int(np.searchsorted(cumulative, rank, side="left"))
        if i >= len(cumulative) or cumulative[i] == rank:
            continue  # a row of its own: the spectrum has it exactly
        low = int(values[i - 1]) + 1 if i else 0  # above the row before: it keeps its count
        rows.append((min(max(round(printed_ms * 1000.0), low), int(values[i])), rank))
    rows.sort(key=lambda row: (row[1], row[0]))
    return LatencyHistogram.from_spectrum_us([v for v, _ in rows], [c for _, c in rows])


def _printed(run: Any) -> str:
    """What the run printed, for its comment line."""
    parts = [f"{run.tool} printed"]
    if run.requests is not None and run.duration_s is not None:
        parts.append(f"{run.requests:,} requests in {run.duration_s:.2f} s")
    if run.throughput_rps is not None:
        parts.append(f"({run.throughput_rps:,.2f} req/s over the whole run)")
    return " ".join(parts)


def interval_log(runs: Iterable[Any], comments: Iterable[str] = ()) -> str:
    """The text of an interval log with one tagged line per run (``run_id`` or ``source`` its
    tag; :func:`shipped_histogram` over :func:`measurement_interval`), each after a comment
    with what the run printed; runs without a histogram are left out; ``comments`` become
    ``#`` lines at the top, then how the intervals and histograms were made."""
    lines = [f"# {c}\n" for c in comments]
    body = []
    kinds: dict[str, None] = {}
    for run in runs:
        hist = shipped_histogram(run)
        if hist is None or not hist.total_count:
            continue
        start, length, kind = measurement_interval(run)
        kinds[kind] = None
        name = tag(run.run_id or run.source)
        body.append(f"# {name}: {_printed(run)}; the histogram holds {hist.total_count:,} "
                    f"requests of its window from {start:.3f} s to {start + length:.3f} s "
                    f"({hist.total_count / length:,.2f} req/s)\n" if length > 0 else
                    f"# {name}: {_printed(run)}\n")
        body.append(f"Tag={name},{start:.3f},{length:.3f},{hist.max_us / 1000.0:.3f},"
                    f"{hist.encode()}\n")
    lines += [f"# {HOW[k]}\n" for k in kinds]
    lines.append(HEADER)
    return "".join(lines + body)


def write_run_logs(folder: Path, groups: Mapping[str, Sequence[Any]], stems: Mapping[str, str],
                   about: str = "") -> list[tuple[str, Path]]:
    """Per configuration of ``groups`` (label -> runs), its runs' histograms as one interval
    log ``folder/<stem>.hlog`` (``stems``: label -> file stem), headed by ``about`` and the run
    count; configurations without a histogram get no file. Returns ``(label, path)`` of each
    file written."""
    out = []
    for label, runs in groups.items():
        kept = [r for r in runs if r.histogram is not None and r.histogram.total_count]
        if not kept:
            continue
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{stems[label]}.hlog"
        head = [f"{about}: {label}" if about else str(label),
                f"{len(kept)} runs, one tagged line per run (tag = run id)"]
        path.write_text(interval_log(kept, head), encoding="utf-8")
        out.append((str(label), path))
    return out


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
                  IndexError, OverflowError, zlib.error)
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


def _latency(native: Summed, unit: str, source: str, line: int) -> LatencyHistogram:
    """``native`` in perfkit's layout (us), each bucket at its highest equivalent value."""
    top, counts = native.highest_equivalent()
    if not len(top):
        return LatencyHistogram()
    try:
        return LatencyHistogram.from_values_us(top.astype(np.float64) * UNIT_TO_US[unit], counts)
    except ValueError as exc:
        raise ParseError(source, line, f"latencies below 24 h (values read as {unit}; add a "
                         "'#[ValueUnit: ns]' line or use --unit for a log in ns)",
                         f"max value {native.max()}: {exc}") from None


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
    native = summed([iv.hist for iv in items])
    hist = _latency(native, unit, source, items[-1].line)
    spans, absolute = _absolute(items, header)
    begin = min(s for s, _ in spans)
    end = max(e for _, e in spans)
    duration = end - begin if end > begin else None
    count = native.total
    per_ms = PER_MS[unit]
    percentiles: dict[float, float] = {}
    notes: list[Warn] = []
    mean = stdev = low = high = None
    if count:
        percentiles = {q: native.percentile(q) / per_ms for q in PERCENTILES}
        mean, stdev = native.mean() / per_ms, native.stddev() / per_ms
        low, high = native.min() / per_ms, native.max() / per_ms
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
               "hdr_layout": {"lowest": native.layout.lowest_trackable_value,
                              "highest": native.layout.highest_trackable_value,
                              "significant_figures": native.layout.significant_figures}},
    )

