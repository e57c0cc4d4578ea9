"""wrk2 text output -> :class:`~perfkit.model.Run`.

wrk2 (github.com/giltene/wrk2) prints wrk's report (:mod:`perfkit.ingest._wrkcommon`) plus:

- after ~10 s, one calibration line per thread, after which each thread resets its histograms::

      Thread calibration: mean lat.: 1.196ms, rate sampling interval: 10ms

- with ``--latency``, a latency distribution per histogram (``-U`` adds a second one, of the
  latency measured without correcting for coordinated omission)::

      Latency Distribution (HdrHistogram - Recorded Latency)
     50.000%    1.24ms
      ... 75, 90, 99, 99.9, 99.99, 99.999, 100 ...

      Detailed Percentile spectrum:
           Value   Percentile   TotalCount 1/(1-Percentile)

           0.065     0.000000            1         1.00
           ...
          10.231     1.000000        98765          inf
    #[Mean    =        1.247, StdDeviation   =        0.578]
    #[Max     =       10.224, Total count    =        98765]
    #[Buckets =           27, SubBuckets     =         2048]
    ----------------------------------------------------------

The spectrum (HdrHistogram_c ``hdr_percentiles_print``) is rebuilt into a
:class:`~perfkit.histogram.LatencyHistogram` with :meth:`~LatencyHistogram.from_spectrum` and
checked against its footer: the total count must match exactly, the maximum to the printed
precision, and the mean must lie within the bounds the spectrum allows. A mismatch means the
spectrum is corrupt and raises :class:`~perfkit.errors.ParseError`.
"""

from __future__ import annotations

import math
import re

import numpy as np

from perfkit.histogram import HIGHEST_US, LAYOUT, LatencyHistogram
from perfkit.ingest._wrkcommon import (
    TOTALS,
    Accumulator,
    Cursor,
    missing,
    read_header,
    read_tail,
    read_thread_stats,
)
from perfkit.model import Run
from perfkit.units import calibration_ms, number, time_ms
from perfkit.warning import Code, Warn

#: the percentiles wrk2 prints above each spectrum (wrk.c ``print_hdr_latency``)
WRK2_PERCENTILES = (50.0, 75.0, 90.0, 99.0, 99.9, 99.99, 99.999, 100.0)
_PERCENTILE_LINES = tuple((q, f"the {q:.3f}% line of the latency distribution")
                          for q in WRK2_PERCENTILES)
#: below this share of ``requests`` in the histogram, say so (calibration dropped the rest)
COVERAGE_NOTE_BELOW = 0.5

# ASCII only (re.ASCII): \d would admit any Unicode digit, which int() reads and numpy's text
# reader refuses (see perfkit.ingest._wrkcommon)
_A = re.ASCII
# wrk2's first releases printed "mean lat.: 9747 usec, rate sampling interval: 21 msec"
CALIBRATION = re.compile(
    r"\s*Thread calibration: mean lat\.: ([^,\s]+(?: usec| msec)?), rate sampling interval: "
    r"(\S+?(?: usec| msec)?)\s*$", _A)
DISTRIBUTION = re.compile(r"\s*Latency Distribution \(HdrHistogram - (.*)\)\s*$", _A)
PERCENTILE_ROW = re.compile(r"\s*(\d+\.\d+)%\s+(\S+)\s*$", _A)
BLANK = re.compile(r"\s*$", _A)
SPECTRUM_TITLE = re.compile(r"\s*Detailed Percentile spectrum:\s*$", _A)
SPECTRUM_HEADER = re.compile(
    r"\s*Value\s+Percentile\s+TotalCount\s+1/\(1-Percentile\)\s*$", _A)
SPECTRUM_ROW = re.compile(r"\s*(\d+\.\d+)\s+(\d+\.\d+)\s+(\d+)\s+(\d+\.\d+|inf)\s*$", _A)
# the footer as printed, "#[Mean = ...]"; pasted into Markdown it may lose its "#" or "#[ ]"
FOOTER_MEAN = re.compile(
    r"\s*#?\[?Mean\s*=\s*([^,\s]+), StdDeviation\s*=\s*([^\]\s]+)\]?\s*$", _A)
FOOTER_MAX = re.compile(
    r"\s*#?\[?Max\s*=\s*([^,\s]+), Total count\s*=\s*(\d{1,18})\]?\s*$", _A)
FOOTER_BUCKETS = re.compile(
    r"\s*#?\[?Buckets\s*=\s*(\d{1,18}), SubBuckets\s*=\s*(\d{1,18})\]?\s*$", _A)
#: a line a person writes for lines left out ("...", "…")
ELISION = re.compile(r"\s*(?:\.\.\.+|\u2026)\s*$")
# possessive quantifiers: a row either matches or the fast path gives up, never backtracks
# at most 8 digits of ms (wrk2's 24 h limit is 86400000.000 ms) and 18 of count (< 2**63):
# numpy's text reader would saturate a longer integer silently
_ROW = r" *+\d{1,8}+\.\d{3} ++\d\.\d{6} ++\d{1,18}+ ++"
FAST_ROWS = re.compile(rf"(?:{_ROW}\d++\.\d{{2}}\n)*+{_ROW}inf(?=\n|$)", _A)
DASHES = re.compile(r"\s*-{10,}\s*$", _A)
_MAX_TEXT = re.compile(r"\d+\.\d+", _A)

CORRECTED = "Recorded Latency"
UNCORRECTED = "Uncorrected Latency"
ROW_EXPECTED = ("a spectrum row 'Value Percentile TotalCount 1/(1-Percentile)' "
                "(the last one ending in 'inf')")


def parse(text: str, source: str = "<string>") -> Run:
    """Parse the standard output of one wrk2 run.

    Parameters
    ----------
    text : str
        wrk2's standard output, as written.
    source : str
        Where it came from (a path), used in ``Run.source`` and in error messages.

    Returns
    -------
    Run
        ``tool="wrk2"``, ``latency_source="hdr_corrected"``. With ``--latency``:
        ``percentiles_ms`` (the eight printed ones) and ``histogram`` (rebuilt from the
        spectrum: it covers only the requests after calibration); with ``-U`` also
        ``uncorrected_percentiles_ms`` and ``uncorrected_histogram``. ``extra`` holds the
        thread statistics, the calibration lines and the spectrum footers (``hdr``,
        ``hdr_uncorrected``). ``tool_version`` and ``target_rate_rps`` are not printed: the
        loader fills them from the run's manifest.

    Raises
    ------
    perfkit.errors.ParseError
        At the 1-based line where the output stops following wrk2's format (a truncated
        output included), or where a spectrum disagrees with its own footer.
    """
    cur = Cursor(text, source)
    acc = Accumulator()
    read_header(cur, acc, "wrk2")
    _read_calibration(cur, acc)
    read_thread_stats(cur, acc, "wrk2", before="'Thread calibration: ...' or ")
    blocks: dict[str, dict] = {}
    while (kind := _next_block(cur, blocks)) is not None:
        blocks[kind] = _read_block(cur, acc, kind)
    if UNCORRECTED in blocks:
        expected = ""
    elif CORRECTED in blocks:
        expected = "the uncorrected 'Latency Distribution (HdrHistogram - ...)' or "
    else:
        expected = "'Latency Distribution (HdrHistogram - Recorded Latency)' or "
    read_tail(cur, acc, expected)
    _store_blocks(acc, blocks)
    return acc.run("wrk2", source, "hdr_corrected")


def _read_calibration(cur: Cursor, acc: Accumulator) -> None:
    """``Thread calibration`` lines. wrk2 calibrates as soon as its histogram's mean is not 0,
    and the mean of an empty histogram is NaN, not 0: it then prints NaN cast to an integer,
    ``mean lat.: 9223372036854776.000ms``. A mean beyond wrk2's 24 h range is that placeholder."""
    calibration = []
    while m := cur.take_if(CALIBRATION):
        mean: float | None
        mean = cur.convert(calibration_ms, m.group(1), "a latency such as 1.196ms")
        if not mean <= HIGHEST_US / 1000:
            acc.notes.append(Warn(Code.CALIBRATION_OUT_OF_RANGE, token=m.group(1)))
            mean = None
        calibration.append({
            "mean_latency_ms": mean,
            "rate_sampling_interval_ms": cur.convert(calibration_ms, m.group(2),
                                                     "an interval such as 10ms"),
        })
    if calibration:
        acc.extra["calibration"] = calibration


def _next_block(cur: Cursor, blocks: dict) -> str | None:
    """Consume the title of the next latency distribution and return its kind, or None."""
    start = cur.pos
    cur.skip_blanks(counted=False)  # wrk2 prints one before each distribution
    m = cur.take_if(DISTRIBUTION)
    if m is None:
        if cur.peek() is not None:
            cur.pos = start  # blank lines end at something else: let the caller report it
        return None
    title = m.group(1)
    kind = CORRECTED if title == CORRECTED else (
        UNCORRECTED if title.startswith(UNCORRECTED) else None)
    if kind is None or kind in blocks or (kind == CORRECTED and UNCORRECTED in blocks):
        raise cur.error("the recorded latency distribution, then at most one uncorrected one",
                        cur.pos - 1)
    return kind


def _read_block(cur: Cursor, acc: Accumulator, kind: str) -> dict:
    field = "percentiles_ms" if kind == CORRECTED else "uncorrected_percentiles_ms"
    percentiles: dict[float, float] = {}
    for q, expected in _PERCENTILE_LINES:
        m = cur.take(PERCENTILE_ROW, expected)
        if float(m.group(1)) != q:
            raise cur.error(expected, cur.pos - 1)
        value = cur.convert(time_ms, m.group(2), "a latency such as 1.24ms")
        if math.isfinite(value):
            percentiles[q] = value
        else:  # a placeholder (-nanus) or inf: missing, with a note naming it
            acc.printed(f"{field}[{q:g}]", value, m.group(2), "latency")
    cur.blank_expected()
    if (line := cur.peek()) is not None and not SPECTRUM_TITLE.match(line) and (
            FOOTER_MEAN.match(line) or DASHES.match(line) or TOTALS.match(line)
            or ELISION.match(line)):
        return _without_spectrum(cur, acc, field, percentiles)
    cur.take(SPECTRUM_TITLE, "'Detailed Percentile spectrum:'")
    cur.take(SPECTRUM_HEADER, "the spectrum header 'Value Percentile TotalCount 1/(1-Percentile)'")
    cur.blank_expected()
    values_us, counts = _read_rows(cur)
    footer, where = _read_footer(cur)
    hist = _check_and_build(cur, values_us, counts, footer, where)
    if hist is None:
        acc.notes.append(Warn(Code.HISTOGRAM_EMPTY, field=field, kind=kind.lower()))
        percentiles = {}
    return {"percentiles": percentiles, "histogram": hist, "footer": footer}


def _without_spectrum(cur: Cursor, acc: Accumulator, field: str,
                      percentiles: dict[float, float]) -> dict:
    """A distribution whose spectrum was left out when it was pasted (its footer may stay):
    the printed percentiles, and no histogram, noted."""
    footer: dict = {}
    cur.take_if(ELISION)
    if (line := cur.peek()) is not None and FOOTER_MEAN.match(line):
        footer, _ = _read_footer(cur)
    else:
        cur.take_if(DASHES)
    acc.notes.append(Warn(Code.SPECTRUM_LEFT_OUT, field=field))
    return {"percentiles": percentiles, "histogram": None, "footer": footer}


def _read_rows(cur: Cursor) -> tuple[np.ndarray, np.ndarray]:
    """Spectrum rows up to the one ending in ``inf``: values (us) and cumulative counts."""
    parsed = _read_rows_fast(cur)
    if parsed is None:
        parsed = _read_rows_by_line(cur)
    v, c = parsed
    down = (v[1:] < v[:-1]) | (c[1:] < c[:-1])
    if down.any():
        raise cur.error("spectrum rows non-decreasing in Value and TotalCount",
                        cur.pos - len(v) + int(down.argmax()) + 1)
    if len(v) and v[-1] > HIGHEST_US:
        raise cur.error(f"a Value of at most {HIGHEST_US / 1000:.3f} ms (wrk2's 24 h limit)",
                        cur.pos - 1)
    return v, c


def _read_rows_fast(cur: Cursor) -> tuple[np.ndarray, np.ndarray] | None:
    """The common case in one regex over the whole table; None sends it to the careful path."""
    if cur.pos >= len(cur.lines):
        return None
    start = cur.offset(cur.pos)
    m = FAST_ROWS.match(cur.text, start)
    if m is None:
        return None
    block = m.group()
    # The regex checked every row: four columns, Value with exactly 3 decimals, the last row
    # ending in inf. Without the points every token is an integer (Value in us), so numpy's C
    # text reader takes the whole table at once; the inf column is not used.
    try:
        table = np.fromstring(block[:-3].replace(".", ""), dtype=np.int64, sep=" ")
    except ValueError:  # anything numpy cannot read: the careful path names the line
        return None
    table = np.append(table, 0).reshape(-1, 4)
    cur.pos += block.count("\n") + 1
    return table[:, 0], table[:, 2]


def _read_rows_by_line(cur: Cursor) -> tuple[np.ndarray, np.ndarray]:
    """Row by row, so that a bad row is reported at its own line."""
    values: list[int] = []
    counts: list[int] = []
    lines = cur.lines
    while True:
        line = lines[cur.pos] if cur.pos < len(lines) else None
        if line is not None and not values and FOOTER_MEAN.match(line):
            break  # an empty histogram may print no row at all
        m = None if line is None else SPECTRUM_ROW.match(line)
        if m is None:
            raise cur.error(ROW_EXPECTED)
        cur.pos += 1
        if len(m.group(1)) > 12 or len(m.group(3)) > 18:
            raise cur.error(f"a Value of at most {HIGHEST_US / 1000:.3f} ms and a TotalCount "
                            "below 10**18", cur.pos - 1)
        values.append(_milli_to_micro(m.group(1)))
        counts.append(int(m.group(3)))
        if m.group(4) == "inf":
            break
    return np.array(values, dtype=np.int64), np.array(counts, dtype=np.int64)


def _milli_to_micro(token: str) -> int:
    """``'1.238'`` (ms, printed with 3 decimals) -> 1238 us, exactly."""
    whole, _, frac = token.partition(".")
    return int(whole) * 1000 + int((frac + "000")[:3])


def _read_footer(cur: Cursor) -> tuple[dict, dict]:
    """The footer's numbers, and where they were printed (line indexes, for errors)."""
    m = cur.take(FOOTER_MEAN, "the spectrum footer '#[Mean = ..., StdDeviation = ...]'")
    mean = cur.convert(number, m.group(1), "a mean in ms")
    stdev = cur.convert(number, m.group(2), "a standard deviation in ms")
    where = {"mean_line": cur.pos - 1}
    m = cur.take(FOOTER_MAX, "the spectrum footer '#[Max = ..., Total count = ...]'")
    max_ = cur.convert(number, m.group(1), "a maximum in ms")
    where.update(max_line=cur.pos - 1, max_text=m.group(1))
    footer = {"mean_ms": missing(mean), "stdev_ms": missing(stdev), "max_ms": missing(max_),
              "total_count": int(m.group(2))}
    m = cur.take(FOOTER_BUCKETS, "the spectrum footer '#[Buckets = ..., SubBuckets = ...]'")
    footer["buckets"], footer["sub_buckets"] = int(m.group(1)), int(m.group(2))
    cur.take_if(DASHES)  # wrk2 prints it; a paste may leave it out
    return footer, where


def _check_and_build(cur: Cursor, values_us: np.ndarray, counts: np.ndarray, footer: dict,
                     where: dict) -> LatencyHistogram | None:
    """Rebuild the histogram and prove it against the footer (count, max, mean)."""
    total = footer["total_count"]
    last = int(counts[-1]) if len(counts) else 0
    if last != total:
        raise cur.error(f"Total count = {last}, the spectrum's last TotalCount "
                        "(the spectrum disagrees with its footer)", where["max_line"])
    if total == 0:  # an empty histogram: "Max = 0.000", "Mean = -nan" (or 0) are placeholders
        footer["max_ms"] = footer["mean_ms"] = footer["stdev_ms"] = None
        return None
    idx = LAYOUT.index_of(values_us)
    deltas = np.diff(counts, prepend=0)
    if not _MAX_TEXT.fullmatch(where["max_text"]):
        raise cur.error("a Max in ms with 3 decimals", where["max_line"])
    footer_max_us = _milli_to_micro(where["max_text"])
    # wrk2's HdrHistogram_c prints the lowest value equivalent to the maximum; newer ones the
    # highest. Either way it names the bucket of the last row.
    if footer_max_us not in (int(LAYOUT.lowest[idx[-1]]), int(LAYOUT.highest[idx[-1]])):
        raise cur.error(f"Max = {LAYOUT.lowest[idx[-1]] / 1000:.3f} (the bucket of the "
                        "spectrum's last row)", where["max_line"])
    _check_mean(cur, idx, deltas, footer["mean_ms"], where["mean_line"])
    # _read_rows checked the rows (with their line numbers): build without checking again
    return LatencyHistogram._from_checked_spectrum(values_us, deltas, idx)


def _check_mean(cur: Cursor, idx: np.ndarray, deltas: np.ndarray, mean: float | None,
                line_index: int) -> None:
    """The printed mean must lie between the means the spectrum allows.

    HdrHistogram's mean weights each bucket's count by its median-equivalent value. The counts
    between two rows lie in the buckets after the earlier row's bucket up to the later row's
    bucket, so the true mean is bounded by placing them all at one end or the other.
    """
    low_idx = idx.copy()
    low_idx[1:] = np.minimum(idx[:-1] + 1, idx[1:])
    total = float(deltas.sum())
    low = float(np.dot(deltas, LAYOUT.median[low_idx])) / total / 1000.0
    high = float(np.dot(deltas, LAYOUT.median[idx])) / total / 1000.0
    half_digit = 0.0005 + 1e-9  # printed with 3 decimals
    if mean is None or not low - half_digit <= mean <= high + half_digit:
        raise cur.error(f"a Mean between {low:.3f} and {high:.3f} ms, as the spectrum allows",
                        line_index)


def _store_blocks(acc: Accumulator, blocks: dict[str, dict]) -> None:
    for kind, prefix, key in ((CORRECTED, "", "hdr"),
                              (UNCORRECTED, "uncorrected_", "hdr_uncorrected")):
        block = blocks.get(kind)
        if block is None:
            continue
        acc.fields[f"{prefix}percentiles_ms"] = block["percentiles"]
        acc.fields[f"{prefix}histogram"] = block["histogram"]
        acc.extra[key] = block["footer"]
    block = blocks.get(CORRECTED)
    requests = acc.fields.get("requests")
    # the footer's Total count equals the rebuilt histogram's (checked in _check_and_build)
    held = None if block is None or block["histogram"] is None else block["footer"]["total_count"]
    if held is not None and requests and held < COVERAGE_NOTE_BELOW * requests:
        acc.notes.append(Warn(Code.HISTOGRAM_PARTIAL, held=held, requests=requests))

