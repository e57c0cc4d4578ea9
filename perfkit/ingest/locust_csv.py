"""Pure parsers for the CSV files Locust writes with ``--csv PREFIX``.

- ``PREFIX_stats.csv``: one row per request name, then the ``Aggregated`` row
  (:func:`parse_stats_csv` -> one :class:`~perfkit.model.Run` per row);
- ``PREFIX_stats_history.csv``: one row per second, per name plus ``Aggregated`` with
  ``--csv-full-history`` (:func:`parse_history_csv`);
- ``PREFIX_failures.csv`` and ``PREFIX_exceptions.csv`` (:func:`parse_failures_csv`,
  :func:`parse_exceptions_csv`).

Every file is read by header name with the :mod:`csv` module, never by position: Locust's
columns change between versions (source: ``locust/stats.py``, ``StatsCSV`` and
``StatsCSVFileWriter``). Times are milliseconds with no unit in the header. Locust prints
``N/A`` for percentiles when there were no requests, and ``0`` for the min/max/mean of an
empty entry; both become None with a note, never 0 (a 0 where nothing was measured:
:mod:`perfkit.ingest.nodata`). A percentile column outside 0-100% (``900%``) is refused.

Errors carry the physical 1-based line: the exceptions CSV holds multi-line quoted tracebacks,
so rows are located through the reader's ``line_num``, not by counting rows.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from perfkit.errors import ParseError
from perfkit.ingest import nodata
from perfkit.ingest.nodata import zeros_missing
from perfkit.model import Run, percentile_column

TOOL = "locust"
LATENCY_SOURCE = "locust_rounded"
NA = "N/A"

# ASCII only (re.ASCII): \d would admit any Unicode digit, which int() and float() then read
# ("\u0663" is 3); Locust writes ASCII digits
_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?", re.ASCII)
_INTEGER = re.compile(r"\d{1,18}", re.ASCII)  # below 2**63: a longer one is damage
_Number = TypeVar("_Number", int, float)
_PERCENTILE_HEADER = re.compile(r"(\d+(?:\.\d+)?)%", re.ASCII)

#: header aliases: older Locust versions called the request type column "Method"
_ALIASES = {"Type": ("Type", "Method")}

STATS_REQUIRED = ("Name", "Request Count", "Failure Count", "Average Response Time",
                  "Min Response Time", "Max Response Time", "Average Content Size",
                  "Requests/s")
HISTORY_REQUIRED = ("Timestamp", "User Count", "Name", "Requests/s", "Total Request Count",
                    "Total Failure Count")
FAILURES_REQUIRED = ("Method", "Name", "Error", "Occurrences")
EXCEPTIONS_REQUIRED = ("Count", "Message", "Traceback")


@dataclass(frozen=True)
class CsvRow:
    """One CSV record: its first physical line, the raw line text, and fields by header."""

    line: int
    text: str
    fields: dict[str, str]


@dataclass(frozen=True)
class CsvTable:
    header: tuple[str, ...]
    rows: tuple[CsvRow, ...]
    #: line number one past the last record (where a missing row would have been)
    end_line: int


def _physical_lines(text: str) -> Iterator[str]:
    """Lines split on ``\\n`` only (keeping ends), so line numbers match an editor's."""
    start = 0
    while start < len(text):
        end = text.find("\n", start)
        if end < 0:
            yield text[start:]
            return
        yield text[start:end + 1]
        start = end + 1


def check_text(text: str, source: str, what: str) -> None:
    """Refuse binary data and empty files with the line where the problem is."""
    nul = text.find("\x00")
    if nul >= 0:
        line = text.count("\n", 0, nul) + 1
        raise ParseError(source, line, f"text ({what})", "binary data (a NUL byte)")
    if not text.strip():
        raise ParseError(source, 1, what, "an empty file")


def read_table(text: str, source: str, required: tuple[str, ...], what: str) -> CsvTable:
    """Read a CSV by header name, checking required columns and the field count of every row.

    Raises :class:`ParseError` with the exact physical line: line 1 for a missing column, the
    row's first line for a wrong number of fields or an unterminated quoted field, and the last
    line when the file does not end with a newline (Locust always ends its lines; a missing end
    means the file was cut off).
    """
    check_text(text.lstrip("\ufeff"), source, what)
    lines = list(_physical_lines(text.lstrip("\ufeff")))
    reader = csv.reader(lines, strict=True)
    try:
        header = tuple(h.strip() for h in next(reader))
    except csv.Error as exc:
        raise ParseError(source, 1, f"the {what} header", str(exc)) from exc
    missing = [c for c in required if _column(header, c) is None]
    if missing:
        raise ParseError(source, 1, f"column {missing[0]!r} in the {what} header",
                         ",".join(header))
    rows: list[CsvRow] = []
    start = reader.line_num + 1
    while True:
        try:
            record = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            expected = (f"a complete {what} row (closing quote; the file looks cut off)"
                        if "end of data" in str(exc) else f"a well-formed {what} row")
            raise ParseError(source, start, expected,
                             f"{exc} in {lines[start - 1].rstrip()}") from exc
        raw = "".join(lines[start - 1:reader.line_num]).rstrip("\r\n")
        if record:
            if len(record) != len(header):
                raise ParseError(source, start, f"{len(header)} fields as in the header",
                                 f"{len(record)} fields: {raw}")
            rows.append(CsvRow(start, raw, dict(zip(header, record, strict=True))))
        start = reader.line_num + 1
    if not lines[-1].endswith("\n"):
        raise ParseError(source, len(lines), f"a complete {what} line ending in a newline "
                         "(the file looks cut off)", lines[-1])
    return CsvTable(header, tuple(rows), start)


def _column(header: tuple[str, ...], name: str) -> str | None:
    for alias in _ALIASES.get(name, (name,)):
        if alias in header:
            return alias
    return None


def percentile_headers(header: tuple[str, ...], source: str = "<string>"
                       ) -> list[tuple[float, str]]:
    """``[(50.0, '50%'), (99.9, '99.9%'), ...]`` for every percentile column, by percentile.

    A percentile is on the 0-100 scale: a header such as ``900%`` (which would become
    ``latency_p900_ms``) or a percentile named twice (``50%`` and ``50.0%``) is a ParseError at
    line 1, never a column."""
    out: list[tuple[float, str]] = []
    seen: dict[float, str] = {}
    for h in header:
        m = _PERCENTILE_HEADER.fullmatch(h)
        if not m:
            continue
        q = float(m.group(1))
        if not 0 <= q <= 100:
            raise ParseError(source, 1, "percentile columns between 0% and 100% in the header",
                             h)
        if q in seen:
            raise ParseError(source, 1, f"each percentile column once in the header "
                             f"({seen[q]!r} is the same percentile)", h)
        seen[q] = h
        out.append((q, h))
    return sorted(out)  # by percentile, wherever the columns are


class RowReader:
    """Typed access to one row's fields; every error names the row's line."""

    def __init__(self, row: CsvRow, source: str, header: tuple[str, ...]):
        self.row = row
        self.source = source
        self.header = header
        self.na_columns: list[str] = []

    def raw(self, name: str) -> str | None:
        col = _column(self.header, name)
        return None if col is None else self.row.fields[col]

    def text(self, name: str) -> str | None:
        value = self.raw(name)
        return None if value is None or value == "" else value

    def _fail(self, name: str, kind: str, value: str):
        raise ParseError(self.source, self.row.line, f"{kind} in column {name!r}",
                         f"{value!r} in {self.row.text}")

    def _convert(self, name: str, allow_na: bool, pattern: re.Pattern, kind: str,
                 cast: Callable[[str], _Number]) -> _Number | None:
        """Column ``name`` through ``cast`` once it matches ``pattern``; N/A -> None if allowed."""
        value = self.raw(name)
        if value is None:
            return None
        value = value.strip(" \t")  # not str.strip(): that also drops Unicode spaces
        if allow_na and value == NA:
            self.na_columns.append(name)
            return None
        if not pattern.fullmatch(value):
            self._fail(name, kind, value)
        if len(value) > 400:  # float() would take it, int() refuses > 4300 digits
            self._fail(name, f"{kind} (of a sane length)", value[:40] + "...")
        number = cast(value)
        if not 0 <= number < math.inf:  # Locust never prints a negative or non-finite count/time
            self._fail(name, f"{kind} (finite, not negative)", value)
        return number

    def integer(self, name: str, allow_na: bool = False) -> int | None:
        return self._convert(name, allow_na, _INTEGER, "a whole number", int)

    def number(self, name: str, allow_na: bool = True) -> float | None:
        return self._convert(name, allow_na, _NUMBER, "a number", float)


def _na_note(na_columns: list[str], where: str) -> str:
    cols = ", ".join(dict.fromkeys(na_columns))
    return f"{where}: Locust printed N/A (no data) in {cols}; kept as missing"


# -- _stats.csv ---------------------------------------------------------------------------------
def parse_stats_csv(text: str, source: str = "<string>") -> list[Run]:
    """One :class:`Run` per request name in a Locust ``_stats.csv``, plus the Aggregated row.

    Columns are read by header name: ``Request Count`` -> ``requests``, ``Failure Count`` ->
    ``failures``, ``Average/Min/Max Response Time`` -> ``latency_mean/min/max_ms``,
    ``Requests/s`` -> ``throughput_rps``, ``Name`` -> ``endpoint``, ``Type`` -> ``method``, the
    ``50%`` .. ``100%`` columns -> ``percentiles_ms`` {50.0: .., 99.99: .., 100.0: ..}.

    ``transfer_bytes_per_s`` is derived: ``Average Content Size * Requests/s`` (bytes per
    request times requests per second; Locust prints no transfer rate). ``duration_s`` is
    ``Request Count / Requests/s`` of the Aggregated row: Locust's own denominator (last request
    time minus the test start, ``StatsEntry.total_rps``), shared by every row. The Aggregated
    row (empty ``Type``, ``Name`` ``Aggregated``) has ``is_aggregate=True``.

    A row without requests has ``N/A`` percentiles and 0 for min/max/mean/median and content
    size: those become None with a note, and so does a 0 edited into its percentiles
    (:mod:`perfkit.ingest.nodata`). ``users`` and ``url`` are not in the file; the loader takes
    them from the run's manifest.
    """
    table = read_table(text, source, STATS_REQUIRED, "Locust _stats.csv")
    pct_headers = percentile_headers(table.header, source)
    runs = [_stats_run(RowReader(row, source, table.header), source, pct_headers)
            for row in table.rows]
    aggregates = [r for r in runs if r.is_aggregate]
    if not aggregates:
        raise ParseError(source, table.end_line, "the Aggregated row (Locust always writes it "
                         "last)", "end of file")
    agg = aggregates[-1]
    if agg.requests and agg.throughput_rps:
        duration = agg.requests / agg.throughput_rps
        runs = [r.replace(duration_s=duration) for r in runs]
    return runs


def _stats_run(r: RowReader, source: str, pct_headers: list[tuple[float, str]]) -> Run:
    name = r.raw("Name") or ""
    method = r.text("Type")
    requests = r.integer("Request Count")
    failures = r.integer("Failure Count")
    notes: list[str] = []
    mean = r.number("Average Response Time")
    low = r.number("Min Response Time")
    high = r.number("Max Response Time")
    median = r.number("Median Response Time")
    content = r.number("Average Content Size")
    rps = r.number("Requests/s")
    fail_rps = r.number("Failures/s")
    percentiles = {q: r.number(h) for q, h in pct_headers}
    # bytes per request times requests per second: 0 without requests is a real 0
    transfer = None if content is None or rps is None else content * rps
    label = f"{name!r} (line {r.row.line})"
    if requests == 0:  # Locust's 0 for the mean, min, max, median and content size: no data
        names = ("latency_mean_ms", "latency_min_ms", "latency_max_ms", "latency_median_ms",
                 "content_size_mean_bytes")
        pct_names = {q: f"percentiles_ms[{q:g}]" for q in percentiles}
        printed = dict(zip(names, (mean, low, high, median, content), strict=True))
        printed.update((pct_names[q], v) for q, v in percentiles.items())
        kept, note = zeros_missing(printed, "Request Count is 0 (no request was made)")
        mean, low, high, median, content = (kept[n] for n in names)
        percentiles = {q: kept[n] for q, n in pct_names.items()}
        if note:
            notes.append(f"{label}: {note}")
    if r.na_columns:
        notes.append(_na_note(r.na_columns, label))
    return Run(
        tool=TOOL, source=source, latency_source=LATENCY_SOURCE,
        endpoint=name, method=method, is_aggregate=(name == "Aggregated" and method is None),
        requests=requests, failures=failures, throughput_rps=rps,
        transfer_bytes_per_s=transfer, latency_mean_ms=mean, latency_min_ms=low,
        latency_max_ms=high,
        percentiles_ms={q: v for q, v in percentiles.items() if v is not None},
        notes=tuple(notes),
        extra={"latency_median_ms": median, "failures_per_s": fail_rps,
               "content_size_mean_bytes": content},
    )


# -- _stats_history.csv -------------------------------------------------------------------------
_HISTORY_TOTALS = (
    ("Total Request Count", "total_requests", "int"),
    ("Total Failure Count", "total_failures", "int"),
    ("Total Median Response Time", "total_latency_median_ms", "num"),
    ("Total Average Response Time", "total_latency_mean_ms", "num"),
    ("Total Min Response Time", "total_latency_min_ms", "num"),
    ("Total Max Response Time", "total_latency_max_ms", "num"),
    ("Total Average Content Size", "total_content_size_mean_bytes", "num"),
)


@dataclass(frozen=True)
class History:
    """The rows of a ``_stats_history.csv``.

    ``rows`` are dicts with unit-suffixed keys (``timestamp_s``, ``user_count``, ``method``,
    ``name``, ``requests_per_s``, ``failures_per_s``, ``latency_p50_ms`` ..
    ``latency_p100_ms``, ``total_requests``, ``total_failures``, ``total_latency_mean_ms``, ...)
    and their ``line``. ``cumulative_percentiles`` is True when the percentiles cover the run so
    far (Locust without ``--csv-full-history``, which writes only Aggregated rows), False when
    they cover Locust's ~10 s window (``--csv-full-history``: a row per name too), None when the
    file has no rows to tell.
    """

    rows: tuple[dict, ...]
    cumulative_percentiles: bool | None
    notes: tuple[str, ...]


def parse_history_csv(text: str, source: str = "<string>") -> History:
    """Parse a Locust ``_stats_history.csv`` into per-second rows (see :class:`History`).

    ``N/A`` and Locust's placeholders become None: the ``Total ...`` latencies of a row with no
    requests yet (printed 0) and a 0 in its percentiles (:mod:`perfkit.ingest.nodata`), and in
    windowed mode a row whose percentiles are all 0 (Locust's ``or 0`` when it has no
    10-second-old snapshot to difference against yet).
    """
    table = read_table(text, source, HISTORY_REQUIRED, "Locust _stats_history.csv")
    pct_headers = percentile_headers(table.header, source)
    type_col = _column(table.header, "Type")
    full = any(row.fields["Name"] != "Aggregated" or (type_col and row.fields[type_col])
               for row in table.rows)
    cumulative = None if not table.rows else not full
    rows = []
    na_rows = placeholder_rows = unmeasured_rows = 0
    for row in table.rows:
        r = RowReader(row, source, table.header)
        out = {
            "line": row.line,
            "timestamp_s": r.integer("Timestamp"),
            "user_count": r.integer("User Count"),
            "method": r.text("Type"),
            "name": r.raw("Name"),
            "requests_per_s": r.number("Requests/s"),
            "failures_per_s": r.number("Failures/s"),
        }
        pcts = {percentile_column(q): r.number(h) for q, h in pct_headers}
        for header, key, kind in _HISTORY_TOTALS:
            out[key] = r.integer(header) if kind == "int" else r.number(header)
        if r.na_columns:
            na_rows += 1
        values = [v for v in pcts.values() if v is not None]
        if not cumulative and values and not any(values):
            pcts = dict.fromkeys(pcts)
            placeholder_rows += 1
        if out["total_requests"] == 0:  # nothing measured yet: a printed 0 is a placeholder
            pcts, note = zeros_missing(pcts, "Total Request Count is 0")
            unmeasured_rows += note is not None
        out.update(pcts)
        if out["total_requests"] == 0:
            for key in ("total_latency_median_ms", "total_latency_mean_ms",
                        "total_latency_min_ms", "total_latency_max_ms",
                        "total_content_size_mean_bytes"):
                out[key] = None
        rows.append(out)
    notes = []
    if na_rows:
        notes.append(f"history: {na_rows} row(s) with N/A (no requests yet); kept as missing")
    if placeholder_rows:
        notes.append(f"history: {placeholder_rows} row(s) with every windowed percentile "
                     "printed as 0 (no 10 s window yet); kept as missing")
    if unmeasured_rows:
        notes.append("history: " + nodata.note(f"the percentiles of {unmeasured_rows} row(s)",
                                               "Total Request Count is 0 (no request yet)"))
    return History(tuple(rows), cumulative, tuple(notes))


# -- _failures.csv and _exceptions.csv -----------------------------------------------------------
def parse_failures_csv(text: str, source: str = "<string>") -> tuple[dict, ...]:
    """Rows of a Locust ``_failures.csv``: method, name, error, occurrences, first/last seen.

    ``first_seen`` / ``last_seen`` are the ISO 8601 UTC strings as printed (None when absent,
    as in older versions). Only a header -> an empty tuple.
    """
    table = read_table(text, source, FAILURES_REQUIRED, "Locust _failures.csv")
    out = []
    for row in table.rows:
        r = RowReader(row, source, table.header)
        out.append({
            "method": r.text("Method"),
            "name": r.raw("Name"),
            "error": r.raw("Error"),
            "occurrences": r.integer("Occurrences"),
            "first_seen": r.text("First Seen"),
            "last_seen": r.text("Last Seen"),
        })
    return tuple(out)


def parse_exceptions_csv(text: str, source: str = "<string>") -> tuple[dict, ...]:
    """Rows of a Locust ``_exceptions.csv``: count, message, traceback, nodes.

    ``nodes`` is the tuple of node names Locust joined with ``", "`` (``local``, or worker ids
    such as ``vm_5552...`` with ``--processes``), kept as printed. Only a header -> ``()``.
    """
    table = read_table(text, source, EXCEPTIONS_REQUIRED, "Locust _exceptions.csv")
    out = []
    for row in table.rows:
        r = RowReader(row, source, table.header)
        nodes = r.raw("Nodes")
        out.append({
            "count": r.integer("Count"),
            "message": r.raw("Message"),
            "traceback": r.raw("Traceback"),
            "nodes": tuple(nodes.split(", ")) if nodes else (),
        })
    return tuple(out)
