"""The line grammar wrk and wrk2 share, in one place.

Both tools print (wrk.c ``main``; wrk2 keeps wrk's code)::

    Running 10s test @ http://127.0.0.1:8080/
      2 threads and 50 connections
      Thread Stats   Avg      Stdev     Max   +/- Stdev
        Latency     1.27ms    1.01ms  12.63ms   80.03%
        Req/Sec    20.73k     2.63k   30.13k    76.00%
      ... (latency distribution: tool specific) ...
      412740 requests in 10.02s, 497.14MB read
      Socket errors: connect 0, read 0, write 105015, timeout 0   (only when non-zero)
      Non-2xx or 3xx responses: 290698                              (only when non-zero)
    Requests/sec:  41200.66
    Transfer/sec:     49.63MB
    ... (lines printed by a Lua ``done()`` hook, if any) ...

:class:`Cursor` walks the lines and raises :class:`~perfkit.errors.ParseError` with the 1-based
line where reading failed; the ``read_*`` functions each consume one part of the grammar into an
:class:`Accumulator`. Numbers go through :mod:`perfkit.units` only.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from perfkit.errors import ParseError
from perfkit.ingest import pasted
from perfkit.model import Run
from perfkit.units import UnitError, bytes_, count, duration_s, number, percent, time_ms
from perfkit.warning import Code, Warn

# integers have at most 18 digits (below 2**63): a longer one is damage, not a count. Every
# pattern is ASCII-only (re.ASCII): \d would admit any Unicode digit, which int() and float()
# then read ("\u0663" is 3), and \s any Unicode space; neither tool prints them.
_A = re.ASCII
# no lazy .*: quadratic on long lines
HEADER = re.compile(r"[ \t]*Running (\S+) test @ (\S+)\s*$", _A)
THREADS = re.compile(r"\s*(\d{1,18}) threads and (\d{1,18}) connections\s*$", _A)
STATS_HEADER = re.compile(r"\s*Thread Stats\s+Avg\s+Stdev\s+Max\s+\+/- Stdev\s*$", _A)
STAT_ROW = re.compile(r"\s*(Latency|Req/Sec)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s*$", _A)
TOTALS = re.compile(r"\s*(\d{1,18}) requests in (\S+), (\S+) read\s*$", _A)
SOCKET = re.compile(
    r"\s*Socket errors: connect (\d{1,18}), read (\d{1,18}), write (\d{1,18}), "
    r"timeout (\d{1,18})\s*$", _A)
NON2XX = re.compile(r"\s*Non-2xx or 3xx responses: (\d{1,18})\s*$", _A)
REQ_SEC = re.compile(r"\s*Requests/sec:\s+(\S+)\s*$", _A)
TRANSFER_SEC = re.compile(r"\s*Transfer/sec:\s+(\S+)\s*$", _A)

TRUNCATED = " (the output ends here: truncated run?)"

class Cursor:
    """The lines of one output and the position of the next line to read.

    A final newline does not start a line, so "the line after the last line present" of a
    truncated output is ``len(lines) + 1``. A report pasted among other lines
    (:mod:`perfkit.ingest.pasted`) is read where it starts, without its uniform indent and
    echoed ``^C``; blank lines are skipped wherever they stand (:attr:`blanks` counts those the
    tool does not print). Line numbers are always those of the text given.
    """

    __slots__ = ("lines", "pos", "source", "text", "layout", "blanks", "original")

    def __init__(self, text: str, source: str):
        if not isinstance(text, str):
            raise TypeError(f"parse() takes the output as str, not {type(text).__name__}")
        if "\r" in text:
            text = text.replace("\r\n", "\n")
        lines = text.split("\n")
        if lines[-1] == "":
            lines.pop()
        self.original = lines
        self.layout = pasted.locate(lines)
        if self.layout is not None and not self.layout.plain:
            lines = pasted.report_lines(lines, self.layout)
            text = "\n".join(lines)
        self.text = text
        self.lines = lines
        self.pos = 0 if self.layout is None else self.layout.start
        self.source = source
        self.blanks = 0

    def offset(self, line_index: int) -> int:
        """Character offset in ``text`` where line ``line_index`` (0-based) starts."""
        return sum(map(len, self.lines[:line_index])) + line_index

    def skip_blanks(self, counted: bool = True) -> None:
        """Step over whitespace-only lines (``counted``: ones the tool does not print)."""
        lines = self.lines
        while self.pos < len(lines) and not lines[self.pos].strip():
            self.pos += 1
            self.blanks += counted

    def blank_expected(self) -> None:
        """Step over the one blank line the tool prints here, if present, then any other."""
        if self.pos < len(self.lines) and not self.lines[self.pos].strip():
            self.pos += 1
        self.skip_blanks()

    def peek(self) -> str | None:
        """The next non-blank line, or None at the end of the output."""
        self.skip_blanks()
        return self.lines[self.pos] if self.pos < len(self.lines) else None

    def error(self, expected: str, line_index: int | None = None) -> ParseError:
        """A ParseError at line ``line_index`` (0-based; default: the next line)."""
        i = self.pos if line_index is None else line_index
        if not any(s.strip() for s in self.lines):
            return ParseError(self.source, 1, expected, "an empty output")
        if i >= len(self.lines):
            return ParseError(self.source, i + 1, expected + TRUNCATED)
        return ParseError(self.source, i + 1, expected, self.original[i])

    def take(self, regex: re.Pattern, expected: str) -> re.Match:
        """Match the next line against ``regex`` and consume it, or raise."""
        line = self.peek()
        m = None if line is None else regex.match(line)
        if m is None:
            raise self.error(expected)
        self.pos += 1
        return m

    def take_if(self, regex: re.Pattern) -> re.Match | None:
        """Consume the next line if it matches ``regex``."""
        line = self.peek()
        m = None if line is None else regex.match(line)
        if m is not None:
            self.pos += 1
        return m

    def convert(self, fn: Callable[[str], float], token: str, what: str,
                line_index: int | None = None) -> float:
        """``fn(token)`` through :mod:`perfkit.units`; a bad token is a ParseError at its line.

        wrk and wrk2 never print a negative number, so one is an error too. A placeholder
        (``-nan``, ``-nanus``, ``inf``) comes back as NaN or inf for the caller to report.
        """
        try:
            value = fn(token)
        except UnitError:
            value = None
        if value is None or value < 0:
            i = self.pos - 1 if line_index is None else line_index
            raise self.error(f"{what}, not {token!r}", i) from None
        return value


class Accumulator:
    """What a parse has found so far: Run fields, ``extra`` and notes."""

    __slots__ = ("fields", "extra", "notes", "no_samples")

    def __init__(self) -> None:
        self.fields: dict[str, Any] = {}
        self.extra: dict[str, Any] = {}
        self.notes: list[Warn] = []
        #: the Latency row said no sample was recorded (its 0.00us are placeholders)
        self.no_samples = False

    def printed(self, field: str, value: float, token: str, kind: str) -> float | None:
        """``value`` as printed, or None with a note naming ``field`` when it is not finite
        (``kind``: what it is, a key of :data:`perfkit.wording.NOT_FINITE_WHY`)."""
        if math.isfinite(value):
            return value
        self.notes.append(Warn(Code.PRINTED_NOT_FINITE, field=field, token=token, kind=kind))
        return None

    def run(self, tool: str, source: str, latency_source: str) -> Run:
        return Run(tool=tool, source=source, latency_source=latency_source,
                   notes=tuple(self.notes), extra=self.extra, **self.fields)


def missing(value: float) -> float | None:
    """NaN (a printed ``-nan``) or inf -> None."""
    return value if math.isfinite(value) else None


def read_header(cur: Cursor, acc: Accumulator, tool: str) -> None:
    """``Running 10s test @ URL`` and ``N threads and M connections``; what surrounds a pasted
    report (:mod:`perfkit.ingest.pasted`) goes to the notes and ``extra["pasted"]``."""
    m = cur.take(HEADER, f"{tool} output starting with 'Running <duration> test @ <url>'")
    acc.fields["url"] = m.group(2)
    acc.extra["requested_duration_s"] = cur.convert(
        duration_s, m.group(1), "a test duration such as 10s")
    m = cur.take(THREADS, "'<N> threads and <M> connections'")
    acc.fields["threads"] = int(m.group(1))
    acc.fields["connections"] = int(m.group(2))
    layout = cur.layout
    if layout is not None and not layout.plain:
        acc.notes.extend(pasted.notes(layout))
        acc.extra["pasted"] = {"preamble": list(layout.preamble), "indent": layout.prefix,
                               "ctrl_c_lines": [i + 1 for i in layout.ctrl_c]}
        if layout.preamble:
            _command_line(acc, tool, layout.preamble)


def _command_line(acc: Accumulator, tool: str, preamble: tuple[str, ...]) -> None:
    """The options of a ``wrk`` command line in the preamble that the report does not print
    (wrk2's ``-R``), when the command is this report's: its threads, connections and URL, where
    given, are those printed."""
    opts = pasted.command_options(preamble)
    if opts is None:
        return
    printed = {"threads": acc.fields["threads"], "connections": acc.fields["connections"],
               "url": acc.fields["url"]}
    other = [(k, opts[k], v) for k, v in printed.items()
             if k in opts and opts[k] != v and not (k == "url" and _same_url(opts[k], v))]
    if other:
        acc.notes.append(Warn(Code.PREAMBLE_OTHER_SETTINGS, other=other))
        return
    acc.fields["argv"] = tuple(opts["argv"])
    if "rate" in opts and tool == "wrk2":
        acc.fields["target_rate_rps"] = opts["rate"]
        acc.notes.append(Warn(Code.PREAMBLE_RATE, rate_rps=opts["rate"]))


def _same_url(given: str, printed: str) -> bool:
    """A URL on the command line and the one wrk prints (quotes, a final slash aside)."""
    return given.strip("'\"").rstrip("/") == printed.rstrip("/")


def read_thread_stats(cur: Cursor, acc: Accumulator, tool: str, before: str = "") -> None:
    """The ``Thread Stats`` table: Latency row to the main fields, Req/Sec row to ``extra``.

    ``before`` names what else could have come first (wrk2's calibration lines).

    No-data rows, as the tools print them (wrk.c ``print_stats``, ``stats.c``):

    - wrk, nothing recorded: ``Latency 0.00us 0.00us 0.00us -nan%`` (mean and stdev 0 by
      definition, max 0, 0/0 within);
    - wrk2, empty histogram: ``Latency -nanus -nanus 0.00us 0.00%`` (HdrHistogram's mean 0/0,
      max 0, ``stats_within_stdev`` returns 0 for an empty histogram);
    - wrk2, no rate sample: ``Req/Sec -nan -nan 0.00 0.00%``.

    A maximum of 0 (or not a number) therefore means "no sample": the whole row is missing.
    """
    cur.take(STATS_HEADER, f"{before}the 'Thread Stats   Avg   Stdev   Max   +/- Stdev' table")
    m = cur.take(STAT_ROW, "the thread-stats 'Latency' row (avg, stdev, max, +/- stdev %)")
    if m.group(1) != "Latency":
        raise cur.error("the thread-stats 'Latency' row", cur.pos - 1)
    mean: float | None
    stdev: float | None
    max_: float | None
    within: float | None
    mean, stdev, max_ = (cur.convert(time_ms, t, "a latency such as 1.25ms")
                         for t in m.group(2, 3, 4))
    within = cur.convert(percent, m.group(5), "a percentage such as 68.33%")
    acc.no_samples = max_ == 0 or math.isnan(max_)
    if acc.no_samples:
        row = " ".join(m.group(2, 3, 4, 5))
        acc.notes.append(Warn(Code.NO_LATENCY_SAMPLES, tool=tool, row=row))
        mean = stdev = max_ = within = None
    else:
        mean, stdev, max_ = (acc.printed(f, v, t, "latency")
                             for f, v, t in zip(("latency_mean_ms", "latency_stdev_ms",
                                                 "latency_max_ms"), (mean, stdev, max_),
                                                m.group(2, 3, 4), strict=True))
        within = acc.printed("latency_within_stdev_pct", within, m.group(5), "latency")
    acc.fields.update(latency_mean_ms=mean, latency_stdev_ms=stdev, latency_max_ms=max_)
    m = cur.take(STAT_ROW, "the thread-stats 'Req/Sec' row (avg, stdev, max, +/- stdev %)")
    if m.group(1) != "Req/Sec":
        raise cur.error("the thread-stats 'Req/Sec' row", cur.pos - 1)
    avg: float | None
    sd: float | None
    mx: float | None
    pct: float | None
    avg, sd, mx = (cur.convert(count, t, "a rate such as 19.63k") for t in m.group(2, 3, 4))
    pct = cur.convert(percent, m.group(5), "a percentage such as 76.00%")
    if math.isnan(avg):
        acc.notes.append(Warn(Code.NO_RATE_SAMPLES, tool=tool, row=" ".join(m.group(2, 3, 4, 5))))
        avg = sd = mx = pct = None
    else:
        why = "rate"
        avg = acc.printed("req_per_thread_avg_rps", avg, m.group(2), why)
        sd = acc.printed("req_per_thread_stdev_rps", sd, m.group(3), why)
        mx = acc.printed("req_per_thread_max_rps", mx, m.group(4), why)
        pct = acc.printed("req_per_thread_within_stdev_pct", pct, m.group(5), why)
    acc.extra["thread_stats"] = {
        "latency_within_stdev_pct": within,
        "req_per_thread_avg_rps": avg,
        "req_per_thread_stdev_rps": sd,
        "req_per_thread_max_rps": mx,
        "req_per_thread_within_stdev_pct": pct,
    }


def read_tail(cur: Cursor, acc: Accumulator, expected_before: str) -> None:
    """Totals, error lines, Requests/sec, Transfer/sec and any Lua ``done()`` lines.

    ``expected_before`` names the tool-specific alternatives that could also have come next,
    for the error message when the totals line is missing.
    """
    m = cur.take(TOTALS, f"{expected_before}'<N> requests in <T>, <B> read'")
    acc.fields["requests"] = int(m.group(1))
    acc.fields["duration_s"] = acc.printed(
        "duration_s", cur.convert(duration_s, m.group(2), "a duration"), m.group(2),
        "duration")
    acc.fields["bytes_read"] = acc.printed(
        "bytes_read", cur.convert(bytes_, m.group(3), "a byte count"), m.group(3),
        "bytes")
    errors = cur.take_if(SOCKET)
    # wrk prints these lines only when non-zero: absent is a real 0
    connect, read, write, timeout = (int(g) for g in errors.groups()) if errors else (0,) * 4
    acc.fields.update(errors_connect=connect, errors_read=read, errors_write=write,
                      errors_timeout=timeout)
    non2xx = cur.take_if(NON2XX)
    acc.fields["non_2xx_3xx"] = int(non2xx.group(1)) if non2xx else 0
    alternatives = [] if errors or non2xx else ["'Socket errors: ...'"]
    alternatives += [] if non2xx else ["'Non-2xx or 3xx responses: N'"]
    alternatives.append("'Requests/sec: <rate>'")
    m = cur.take(REQ_SEC, " or ".join(alternatives))
    rps = cur.convert(number, m.group(1), "a rate such as 41200.66")
    acc.fields["throughput_rps"] = acc.printed(
        "throughput_rps", rps, m.group(1), "throughput")
    m = cur.take(TRANSFER_SEC, "'Transfer/sec: <bytes>'")
    acc.fields["transfer_bytes_per_s"] = acc.printed(
        "transfer_bytes_per_s", cur.convert(bytes_, m.group(1), "a byte rate such as 49.63MB"),
        m.group(1), "transfer")
    read_script_output(cur, acc)


def read_script_output(cur: Cursor, acc: Accumulator) -> None:
    """Lines after ``Transfer/sec`` come from a Lua ``done()`` hook; a second report is an error.
    Blank lines at the end carry nothing and are dropped."""
    rest = cur.lines[cur.pos:]
    for i, line in enumerate(rest):
        if HEADER.match(line):
            raise cur.error("the end of the output (or Lua done() lines), not a second run",
                            cur.pos + i)
    while rest and not rest[-1].strip():
        rest.pop()
    if rest:
        acc.extra["script_output"] = list(rest)
    cur.pos = len(cur.lines)
    if cur.blanks:
        acc.notes.append(Warn(Code.PASTED_BLANK_LINES, lines=cur.blanks))
