"""The fast path for wrk2 outputs of the common shape, many files at once.

:func:`parse_many` reads each output with one regex over the whole text (:data:`OUTPUT`) and
then rebuilds and checks every spectrum of every file in a few numpy operations on one
concatenated table, so the per-file cost is a regex match, some float() calls and the Run.
Anything unusual (a placeholder such as ``-nan`` other than a Req/Sec row's, which it reads as
the careful parser does; an empty histogram, a calibration on an empty histogram, a unit other
than us/ms/s, CRLF, Lua output, a spectrum that disagrees with its footer, any damage) does not
match or fails a check, and that file gets ``None``: the caller parses it with the careful line
parser (:func:`perfkit.ingest.wrk2.parse`), which gives the same Run or the ``path:line`` error.
``tests/test_fastpath.py`` checks that both paths give
equal Runs on every fixture and on fuzzed inputs.

The conversions are those of :mod:`perfkit.units` (``float('1.24' + 'e-3')`` is its
correctly rounded fast path), restricted to the tokens the regex admits.
"""

from __future__ import annotations

import re
import typing
from collections.abc import Sequence

import numpy as np

from perfkit.histogram import HIGHEST_US, LAYOUT, LatencyHistogram
from perfkit.ingest.wrk2 import COVERAGE_NOTE_BELOW, WRK2_PERCENTILES
from perfkit.model import FrozenMap, Run, built_run
from perfkit.store.lazymap import LazyMap
from perfkit.warning import Code, Warn

# every pattern is ASCII-only (re.ASCII), as the careful parser's: \d would admit any Unicode
# digit, which int() and float() read
_NUM = r"\d{1,15}\.\d{1,6}"
_TIME = rf"({_NUM})(us|ms|s)"
_INT = r"(\d{1,18})"
#: the eight printed percentiles (WRK2_PERCENTILES), each a (value, unit) pair of groups
_PERCENT_ROWS = "".join(rf" *+{re.escape(f'{q:.3f}')}% ++{_TIME} ?\n" for q in WRK2_PERCENTILES)
_SPECTRUM_HEAD = (
    _PERCENT_ROWS +
    r"\n  Detailed Percentile spectrum:\n"
    r"       Value   Percentile   TotalCount 1/\(1-Percentile\)\n\n"
)
#: the start of an output, up to the first spectrum row
HEAD = re.compile(
    r"Running (\d{1,6}(?:\.\d+)?)(us|ms|s) test @ (\S+)\n"
    rf"  {_INT} threads and {_INT} connections\n"
    # a calibration mean of 8+ digits (>= 10**7 ms, near the histogram's 24 h limit) does not
    # match: the careful parser decides it
    r"((?:  Thread calibration: mean lat\.: \d{1,7}\.\d{3}ms, rate sampling interval: "
    r"\d{1,9}ms\n)*)"
    r"  Thread Stats   Avg      Stdev     Max   \+/- Stdev\n"
    rf"    Latency +{_TIME} +{_TIME} +{_TIME} +({_NUM})%\n"
    # Req/Sec -nan -nan: no per-thread rate sample (a saturated run's, a short run's)
    rf"    Req/Sec +(?:({_NUM})(k|M|G|T)? +({_NUM})(k|M|G|T)?|-nan +-nan) +({_NUM})(k|M|G|T)? "
    rf"+({_NUM})%\n"
    r"  Latency Distribution \(HdrHistogram - Recorded Latency\)\n" + _SPECTRUM_HEAD, re.ASCII)
#: the uncorrected distribution's start (-U), up to its first spectrum row
U_HEAD = re.compile(
    r"\n  Latency Distribution \(HdrHistogram - Uncorrected Latency \(measured without "
    r"taking delayed starts into account\)\)\n" + _SPECTRUM_HEAD, re.ASCII)
#: a spectrum's footer, after its last row
FOOTER = re.compile(
    rf"\n#\[Mean    = +({_NUM}), StdDeviation   = +({_NUM})\]\n"
    rf"#\[Max     = +(\d{{1,8}}\.\d{{3}}), Total count    = +{_INT}\]\n"
    rf"#\[Buckets = +{_INT}, SubBuckets     = +{_INT}\]\n"
    r"-{58}\n", re.ASCII)
#: the end of an output, after the last distribution
TAIL = re.compile(
    rf"  {_INT} requests in {_TIME}, ({_NUM})(B|KB|MB|GB|TB) read\n"
    rf"(?:  Socket errors: connect {_INT}, read {_INT}, write {_INT}, timeout {_INT}\n)?"
    rf"(?:  Non-2xx or 3xx responses: {_INT}\n)?"
    rf"Requests/sec: +({_NUM})\n"
    rf"Transfer/sec: +({_NUM})(B|KB|MB|GB|TB)\n?", re.ASCII)
_CALIBRATION = re.compile(r"mean lat\.: (\d+\.\d{3})ms, rate sampling interval: (\d+)ms",
                          re.ASCII)
_TIME_EXP = {"us": "e-3", "ms": "", "s": "e3"}
_DURATION_EXP = {"us": "e-6", "ms": "e-3", "s": ""}
_METRIC_EXP = {None: "", "k": "e3", "M": "e6", "G": "e9", "T": "e12"}
_BINARY = {"B": 1, "KB": 1024, "MB": 1024**2, "GB": 1024**3, "TB": 1024**4}

# A spectrum row is printed with "%12.3f %12f %12d %12.2f\n" (HdrHistogram_c, CLASSIC): 52
# bytes. Rows of exactly that layout are checked and read as a byte matrix, all files at once.
ROW_BYTES = 52
_SPACE, _DOT, _NL = ord(" "), ord("."), ord("\n")
#: (first, last) byte of each right-aligned integer part; decimals checked separately
_INT_PARTS = ((0, 8), (13, 18), (26, 38), (39, 48))
_DIGIT_COLS = (9, 10, 11, 19, 20, 21, 22, 23, 24)
_INF = np.frombuffer(b"         inf", dtype=np.uint8)
#: bytes every row has in the same place: the separators, the points, the newline
_FIXED_COLS = np.array([8, 12, 18, 25, 38, 51])
_FIXED_BYTES = np.array([_DOT, _SPACE, _DOT, _SPACE, _SPACE, _NL], dtype=np.uint8)
# Numbers are read eight digits at a time: eight bytes of a row as one little-endian uint64,
# combined pairwise (2, 4, then 8 digits) by three multiply-and-shift steps. A space's low
# nibble is 0, so a right-aligned field's leading spaces read as zeros; the layout checks above
# reject any other byte before a number is used.
_ALL_EIGHT = np.uint64(0x0F0F0F0F0F0F0F0F)
#: the last four bytes of a word (its first four belong to the field before)
_LAST_FOUR = np.uint64(0x0F0F0F0F00000000)
#: the last three bytes of a word (``dddd.ddd``: the decimals after the point)
_LAST_THREE = np.uint64(0x0F0F0F0000000000)
_PAIRS = (np.uint64(10 * 2**8 + 1), np.uint64(8))
_QUADS = (np.uint64(0x00FF00FF00FF00FF), np.uint64(100 * 2**16 + 1), np.uint64(16))
_OCTETS = (np.uint64(0x0000FFFF0000FFFF), np.uint64(10_000 * 2**32 + 1), np.uint64(32))


#: the four eight-byte words of a row that hold its numbers (unaligned uint64 fields): the
#: Value's integer part and (last three bytes) decimals, the TotalCount's first four digits
#: (last four bytes) and its last eight
_WORDS = np.dtype({"names": ["value", "decimals", "count_high", "count_low"],
                   "formats": ["<u8"] * 4, "offsets": [0, 4, 22, 30], "itemsize": ROW_BYTES})


def _eight_digits(words: np.ndarray, keep: np.uint64 = _ALL_EIGHT) -> np.ndarray:
    """The number printed in each eight-byte word (digits, leading spaces), as int64.

    ``keep`` masks the low nibbles of the bytes that belong to the number."""
    v = words & keep
    v *= _PAIRS[0]
    v >>= _PAIRS[1]
    for mask, multiplier, shift in (_QUADS, _OCTETS):
        v &= mask
        v *= multiplier
        v >>= shift
    return v.view(np.int64)  # at most 10**8 - 1: the same number as a signed integer


class _Parsed:
    """One output's fields before its histograms exist (filled in by the batch step)."""

    __slots__ = ("source", "fields", "head", "blocks")

    def __init__(self, source: str, fields: dict, head: tuple, blocks: list):
        self.source = source
        self.fields = fields
        self.head = head  # the header's groups: what ``extra`` is built from, on first use
        self.blocks = blocks


class _Block:
    """One distribution: its printed percentiles, its spectrum rows and its footer."""

    __slots__ = ("pairs", "rows", "total", "mean_ms", "max_text", "footer")

    def __init__(self, pairs: Sequence[str], rows: str, footer: tuple):
        self.pairs = pairs  # the printed percentiles' (value, unit) texts
        self.rows = rows
        self.footer = footer  # Mean, StdDeviation, Max, Total count, Buckets, SubBuckets
        self.total = int(footer[3])
        self.mean_ms = float(footer[0])
        self.max_text = footer[2]


def _percentiles(pairs: Sequence[str]) -> dict[float, float]:
    """The printed percentiles (ms) of a distribution's eight (value, unit) texts."""
    exp = _TIME_EXP
    return {q: float(v + exp[u])
            for q, v, u in zip(WRK2_PERCENTILES, pairs[0::2], pairs[1::2], strict=True)}


def _distribution(text: str, start: int, pairs: Sequence[str]) -> tuple[_Block | None, int]:
    """One distribution from its spectrum's first row at ``start``: (block, end) or (None, 0).

    ``pairs`` are its eight printed percentiles' (value, unit) texts. An empty histogram
    (placeholders) or rows not in the usual layout give None."""
    end = text.find("#", start) - 1  # "#" is rare: found faster than "\n#[Mean"
    f = FOOTER.match(text, end) if end >= 0 else None
    if f is None or end <= start or (end - start + 1) % ROW_BYTES:
        return None, 0
    block = _Block(pairs, text[start:end], f.groups())
    return (None if block.total == 0 else block), f.end()


def match(text: str, source: str) -> _Parsed | None:
    """The fields of one output of the usual shape, or None for the careful parser."""
    m = HEAD.match(text)
    if m is None:
        return None
    g = m.groups()
    if float(g[10]) == 0:  # Latency max 0: no sample recorded (placeholders)
        return None
    block, pos = _distribution(text, m.end(), g[20:36])
    blocks = [block]
    u = U_HEAD.match(text, pos) if block is not None else None
    if u is not None:
        block, pos = _distribution(text, u.end(), u.groups())
        blocks.append(block)
    tail = TAIL.fullmatch(text, pos) if block is not None else None
    if tail is None:
        return None
    t = tail.groups()
    errors = [0, 0, 0, 0] if t[5] is None else [int(x) for x in t[5:9]]
    exp = _TIME_EXP
    fields = {
        "url": g[2], "threads": int(g[3]), "connections": int(g[4]),
        "latency_mean_ms": float(g[6] + exp[g[7]]), "latency_stdev_ms": float(g[8] + exp[g[9]]),
        "latency_max_ms": float(g[10] + exp[g[11]]),
        "requests": int(t[0]), "duration_s": float(t[1] + _DURATION_EXP[t[2]]),
        "bytes_read": float(t[3]) * _BINARY[t[4]],
        "errors_connect": errors[0], "errors_read": errors[1], "errors_write": errors[2],
        "errors_timeout": errors[3], "non_2xx_3xx": 0 if t[9] is None else int(t[9]),
        "throughput_rps": float(t[10]),
        "transfer_bytes_per_s": float(t[11]) * _BINARY[t[12]],
    }
    return _Parsed(source, fields, g, blocks)


#: the header's groups ``extra`` is built from (requested duration, calibration, thread stats)
_EXTRA_GROUPS = slice(0, 20)


def _extra(groups: tuple[tuple, tuple]) -> dict:
    """What a wrk2 Run keeps in ``extra``, as the careful parser gives it: the requested
    duration, the calibration lines, the per-thread stats and each histogram's footer.

    ``groups``: the header's match groups and the footers' (:func:`match`)."""
    g, footers = groups
    extra: dict = {"requested_duration_s": float(g[0] + _DURATION_EXP[g[1]])}
    calibration = tuple(FrozenMap(mean_latency_ms=float(mean),
                                  rate_sampling_interval_ms=float(interval))
                        for mean, interval in _CALIBRATION.findall(g[5]))
    if calibration:
        extra["calibration"] = calibration
    no_rate = g[13] is None  # Req/Sec -nan -nan: the row is missing, as the careful parser has it
    extra["thread_stats"] = FrozenMap(
        latency_within_stdev_pct=float(g[12]),
        req_per_thread_avg_rps=None if no_rate else float(g[13] + _METRIC_EXP[g[14]]),
        req_per_thread_stdev_rps=None if no_rate else float(g[15] + _METRIC_EXP[g[16]]),
        req_per_thread_max_rps=None if no_rate else float(g[17] + _METRIC_EXP[g[18]]),
        req_per_thread_within_stdev_pct=None if no_rate else float(g[19]))
    for f, key in zip(footers, ("hdr", "hdr_uncorrected"), strict=False):
        extra[key] = FrozenMap(mean_ms=float(f[0]), stdev_ms=float(f[1]), max_ms=float(f[2]),
                               total_count=int(f[3]), buckets=int(f[4]),
                               sub_buckets=int(f[5]))
    return extra


def _is_digit(x: np.ndarray) -> np.ndarray:
    return (x >= 48) & (x <= 57)


def _right_aligned(digit: np.ndarray, space: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """Rows whose bytes ``lo:hi`` are spaces then at least one digit (``%12d``-style).

    ``digit``/``space`` say which bytes of the transposed byte matrix (one row per column of
    text) are digits/spaces: each test is one vector operation over all rows of all files."""
    d, sp = digit[lo:hi], space[lo:hi]
    return ((d | sp).all(axis=0) & d[-1]
            & (~d[:-1] | d[1:]).all(axis=0))  # after a digit, only digits


def _rows(texts: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Value (us) and TotalCount of every row of every spectrum, and which rows break the
    layout ``%12.3f %12f %12d %12.2f`` (the last row of a spectrum: ``inf``)."""
    raw = "\n".join(texts) + "\n"
    try:
        data = raw.encode("ascii")
    except UnicodeEncodeError:
        data = raw.encode("ascii", "replace")  # a non-ASCII byte becomes "?" and fails below
    c = np.ascontiguousarray(np.frombuffer(data, dtype=np.uint8).reshape(-1, ROW_BYTES).T)
    digit = _is_digit(c)
    space = c == _SPACE
    ok = (c[_FIXED_COLS] == _FIXED_BYTES[:, None]).all(axis=0)
    ok &= digit[list(_DIGIT_COLS)].all(axis=0)
    for lo, hi in _INT_PARTS[:3]:
        ok &= _right_aligned(digit, space, lo, hi)
    lengths = np.array([(len(t) + 1) // ROW_BYTES for t in texts], dtype=np.int64)
    is_last = np.zeros(c.shape[1], dtype=bool)
    is_last[np.cumsum(lengths) - 1] = True
    inf = (c[39:51] == _INF[:, None]).all(axis=0)
    f4 = (_right_aligned(digit, space, *_INT_PARTS[3]) & (c[48] == _DOT) & digit[49]
          & digit[50])
    ok &= np.where(is_last, inf, f4)
    words = np.frombuffer(data, dtype=_WORDS)
    value = _eight_digits(words["value"]) * 1000 + _eight_digits(words["decimals"], _LAST_THREE)
    count = (_eight_digits(words["count_high"], _LAST_FOUR) * 100_000_000
             + _eight_digits(words["count_low"]))
    return value, count, ~ok


def _histograms(blocks: list[_Block]) -> list[LatencyHistogram | None]:
    """Every spectrum rebuilt and checked against its footer, in one set of numpy operations.

    The checks are :func:`perfkit.ingest.wrk2._check_and_build`'s: rows non-decreasing, the
    last row within 24 h, its TotalCount equal to the footer's, the footer's Max naming the
    last row's bucket, the printed Mean within the bounds the spectrum allows. A block that
    fails gets None (its file goes to the careful parser, which reports the line).
    """
    texts = [b.rows for b in blocks]
    lengths = np.array([(len(t) + 1) // ROW_BYTES for t in texts], dtype=np.int64)
    v, c, bad_rows = _rows(texts)
    n = len(v)
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    ends = starts + lengths - 1
    seg = np.repeat(np.arange(len(blocks)), lengths)
    first = np.zeros(n, dtype=bool)
    first[starts] = True
    down = np.zeros(n, dtype=bool)
    down[1:] = ((v[1:] < v[:-1]) | (c[1:] < c[:-1])) & ~first[1:]
    bad = np.bincount(seg[down | bad_rows], minlength=len(blocks)) > 0
    totals = np.array([b.total for b in blocks], dtype=np.int64)
    bad |= (c[ends] != totals) | (v[ends] > HIGHEST_US)
    # rows of a bad block (dropped below) may hold anything: keep the indexing safe
    v_ok = np.where((v < 0) | (v > HIGHEST_US) | bad_rows, 0, v)
    idx = LAYOUT.index_of(v_ok)
    deltas = np.empty_like(c)
    deltas[0] = c[0]
    np.subtract(c[1:], c[:-1], out=deltas[1:])
    deltas[starts] = c[starts]
    max_us = np.array([int(b.max_text.replace(".", "")) for b in blocks], dtype=np.int64)
    last = idx[ends]
    bad |= (max_us != LAYOUT.lowest[last]) & (max_us != LAYOUT.highest[last])
    low_idx = idx.copy()
    low_idx[1:] = np.minimum(idx[:-1] + 1, idx[1:])
    low_idx[starts] = idx[starts]
    low = np.add.reduceat(deltas * LAYOUT.median[low_idx], starts)
    high = np.add.reduceat(deltas * LAYOUT.median[idx], starts)
    sums = np.add.reduceat(deltas, starts)
    out: list[LatencyHistogram | None] = []
    runs = np.flatnonzero(first | np.concatenate(([True], idx[1:] != idx[:-1])))
    summed = np.add.reduceat(deltas, runs)
    keep = summed > 0
    h_idx, h_cnt, h_seg = idx[runs][keep], summed[keep], seg[runs][keep]
    bounds = np.searchsorted(h_seg, np.arange(len(blocks) + 1))
    used = np.flatnonzero(deltas)
    used_seg = seg[used]
    used_lo = np.searchsorted(used_seg, np.arange(len(blocks)))
    used_hi = np.searchsorted(used_seg, np.arange(len(blocks)), side="right") - 1
    half_digit = 0.0005 + 1e-9  # the mean is printed with 3 decimals
    # per block, as Python numbers: indexing numpy arrays one element at a time costs more
    # than the rest of this loop
    mins = v[used[np.minimum(used_lo, len(used) - 1)]].tolist() if len(used) else []
    maxs = v[used[np.maximum(used_hi, 0)]].tolist() if len(used) else []
    bounds_l = bounds.tolist()
    sparse = LatencyHistogram._sparse
    for k, (block, is_bad, total, lo_sum, hi_sum) in enumerate(zip(
            blocks, bad.tolist(), sums.tolist(), low.tolist(), high.tolist(), strict=True)):
        if is_bad or total == 0:
            out.append(None)
            continue
        lo, hi = lo_sum / total / 1000.0, hi_sum / total / 1000.0
        if not lo - half_digit <= block.mean_ms <= hi + half_digit:
            out.append(None)
            continue
        a, b = bounds_l[k], bounds_l[k + 1]
        out.append(sparse(h_idx[a:b], h_cnt[a:b], mins[k], maxs[k], total))
    return out


def parse_many(items: Sequence[tuple[str, str]]) -> list[Run | None]:
    """``[(text, source), ...]`` -> a Run for each output of the usual shape, else None."""
    parsed = [match(text, source) for text, source in items]
    blocks = [b for p in parsed if p is not None for b in p.blocks]
    hists = iter(_histograms(blocks) if blocks else [])
    out: list[Run | None] = []
    for p in parsed:
        if p is None:
            out.append(None)
            continue
        built = [next(hists) for _ in p.blocks]
        out.append(None if any(h is None for h in built)
                   else _run(p, typing.cast(list[LatencyHistogram], built)))
    return out


#: the Run fields of the recorded and the uncorrected (-U) distribution
_BLOCK_FIELDS = (("percentiles_ms", "histogram"),
                 ("uncorrected_percentiles_ms", "uncorrected_histogram"))


def _run(p: _Parsed, hists: list[LatencyHistogram]) -> Run:
    fields = p.fields
    notes: tuple[Warn, ...] = ()
    for block, hist, (percentiles, histogram) in zip(p.blocks, hists, _BLOCK_FIELDS,
                                                     strict=False):
        # built on first use, as the run store's: the regex admitted only numbers it converts
        fields[percentiles] = LazyMap(block.pairs, _percentiles)
        fields[histogram] = hist
    g = p.head
    if g[13] is None:  # in the careful parser's words and order: the thread stats come first
        row = f"-nan -nan {g[17]}{g[18] or ''} {g[19]}%"
        notes = (Warn(Code.NO_RATE_SAMPLES, tool="wrk2", row=row),)
    held = hists[0].total_count
    requests = fields["requests"]
    if requests and held < COVERAGE_NOTE_BELOW * requests:
        notes += (Warn(Code.HISTOGRAM_PARTIAL, held=held, requests=requests),)
    # extra (provenance no analysis reads) is built when first read
    fields.update(tool="wrk2", source=p.source, latency_source="hdr_corrected", notes=notes,
                  extra=LazyMap((p.head[_EXTRA_GROUPS], tuple(b.footer for b in p.blocks)),
                                _extra))
    return built_run(fields)  # every value above is already as Run.__post_init__ leaves it
