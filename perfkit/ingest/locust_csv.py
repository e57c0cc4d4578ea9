"""Pure parsers for the CSV files Locust writes with ``--csv PREFIX``.

- ``PREFIX_stats.csv``: one row per request name, then the ``Aggregated`` row
  (:func:`parse_stats_csv` -> one :class:`~perfkit.model.Run` per row);
- ``PREFIX_stats_history.csv``: one row per second, per name plus ``Aggregated`` with
  ``--csv-full-history`` (:func:`parse_history_csv`);
- ``PREFIX_failures.csv`` and ``PREFIX_exceptions.csv`` (:func:`parse_failures_csv`,
  :func:`parse_exceptions_csv`).

Every file is read by header name (:mod:`perfkit.ingest.locust_table`: the :mod:`csv` module,
or a split on commas where that reads the same), never by position: Locust's columns change
between versions (source: ``locust/stats.py``, ``StatsCSV`` and ``StatsCSVFileWriter``). Cells
are converted in bulk, or cell by cell where a bulk check fails, for the exact error
(:mod:`perfkit.ingest.locust_cells`). Times are milliseconds with no unit in the header.
Locust prints ``N/A`` for percentiles when there were no requests, and ``0`` for the
min/max/mean of an empty entry; both become None with a note, never 0 (a 0 where nothing was
measured: :mod:`perfkit.ingest.nodata`). A percentile column outside 0-100% (``900%``) is refused.

Errors carry the physical 1-based line: the exceptions CSV holds multi-line quoted tracebacks,
so rows are located through the reader's ``line_num``, not by counting rows.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeVar

from perfkit.errors import ParseError
from perfkit.ingest.locust_cells import NA, CellView, Columns, Irregular, RowReader
from perfkit.ingest.locust_history import HISTORY_REQUIRED, History, parse_history_csv
from perfkit.ingest.locust_table import (
    CsvRow,
    CsvTable,
    check_text,
    percentile_headers,
    read_table,
)
from perfkit.ingest.nodata import zeros_missing
from perfkit.model import FrozenMap, Run, built_run, replaced_run
from perfkit.warning import Code, Warn

__all__ = ["HISTORY_REQUIRED", "NA", "CsvRow", "CsvTable", "History", "RowReader", "check_text",
           "parse_exceptions_csv", "parse_failures_csv", "parse_history_csv", "parse_stats_csv",
           "percentile_headers", "read_table"]

TOOL = "locust"
LATENCY_SOURCE = "locust_rounded"

STATS_REQUIRED = ("Name", "Request Count", "Failure Count", "Average Response Time",
                  "Min Response Time", "Max Response Time", "Average Content Size",
                  "Requests/s")
#: the columns of a _stats.csv read as counts and as numbers
_STATS_KINDS = {"Request Count": "int", "Failure Count": "int", **dict.fromkeys((
    "Average Response Time", "Min Response Time", "Max Response Time", "Median Response Time",
    "Average Content Size", "Requests/s", "Failures/s"), "num")}
FAILURES_REQUIRED = ("Method", "Name", "Error", "Occurrences")
EXCEPTIONS_REQUIRED = ("Count", "Message", "Traceback")

#: a row's reader: in bulk (a view of the converted columns) or cell by cell
Reader = CellView | RowReader
_T = TypeVar("_T")


def _each_row(read: Callable[[Reader], _T], table: CsvTable, source: str, bulk: bool,
              kinds: dict[str, str] | None = None) -> list[_T]:
    """``read`` of every row: from the columns converted in bulk (``kinds``: the columns read
    as counts and numbers, see :class:`Columns`), or, when ``bulk`` is False or a cell fails
    the bulk check, cell by cell (whose error names the cell)."""
    if bulk:
        try:
            columns = Columns(table, kinds)
            return [read(CellView(columns, i)) for i in range(len(table.rows))]
        except Irregular:
            pass
    return [read(RowReader(row, source, table)) for row in table.rows]


def _na_note(na_columns: list[str], where: str) -> Warn:
    return Warn(Code.LOCUST_NA, where=where, columns=tuple(dict.fromkeys(na_columns)))


# -- _stats.csv ---------------------------------------------------------------------------------
def parse_stats_csv(text: str, source: str = "<string>", bulk: bool = True) -> list[Run]:
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

    ``bulk=False`` reads the cells one by one, as a file the bulk check refuses is read (the
    same result; tests compare the two).
    """
    table = read_table(text, source, STATS_REQUIRED, "Locust _stats.csv")
    pct_headers = percentile_headers(table.header, source)
    kinds = dict(_STATS_KINDS, **{h: "num" for _, h in pct_headers})
    runs = _each_row(functools.partial(_stats_run, source=source, pct_headers=pct_headers),
                     table, source, bulk, kinds)
    aggregates = [r for r in runs if r.is_aggregate]
    if not aggregates:
        raise ParseError(source, table.end_line, "the Aggregated row (Locust always writes it "
                         "last)", "end of file")
    agg = aggregates[-1]
    if agg.requests and agg.throughput_rps:
        duration = agg.requests / agg.throughput_rps
        runs = [replaced_run(r, {"duration_s": duration}) for r in runs]
    return runs


def _stats_run(r: Reader, source: str, pct_headers: list[tuple[float, str]]) -> Run:
    name = r.raw("Name") or ""
    method = r.text("Type")
    requests = r.integer("Request Count")
    failures = r.integer("Failure Count")
    notes: list[Warn] = []
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
        kept, note = zeros_missing(printed, "no-request", where=label)
        mean, low, high, median, content = (kept[n] for n in names)
        percentiles = {q: kept[n] for q, n in pct_names.items()}
        if note:
            notes.append(note)
    if r.na_columns:
        notes.append(_na_note(r.na_columns, label))
    return built_run(dict(  # built frozen: float keys and values, scalars in extra
        tool=TOOL, source=source, latency_source=LATENCY_SOURCE,
        endpoint=name, method=method, is_aggregate=(name == "Aggregated" and method is None),
        requests=requests, failures=failures, throughput_rps=rps,
        transfer_bytes_per_s=transfer, latency_mean_ms=mean, latency_min_ms=low,
        latency_max_ms=high,
        percentiles_ms=FrozenMap.wrap({q: v for q, v in percentiles.items() if v is not None}),
        notes=tuple(notes),
        extra=FrozenMap.wrap({"latency_median_ms": median, "failures_per_s": fail_rps,
                              "content_size_mean_bytes": content}),
    ))


# -- _failures.csv and _exceptions.csv -----------------------------------------------------------
def parse_failures_csv(text: str, source: str = "<string>", bulk: bool = True
                       ) -> tuple[dict, ...]:
    """Rows of a Locust ``_failures.csv``: method, name, error, occurrences, first/last seen.

    ``first_seen`` / ``last_seen`` are the ISO 8601 UTC strings as printed (None when absent,
    as in older versions). Only a header -> an empty tuple.
    """
    table = read_table(text, source, FAILURES_REQUIRED, "Locust _failures.csv")
    return tuple(_each_row(_failure, table, source, bulk))


def _failure(r: Reader) -> dict:
    return {
        "method": r.text("Method"),
        "name": r.raw("Name"),
        "error": r.raw("Error"),
        "occurrences": r.integer("Occurrences"),
        "first_seen": r.text("First Seen"),
        "last_seen": r.text("Last Seen"),
    }


def parse_exceptions_csv(text: str, source: str = "<string>", bulk: bool = True
                         ) -> tuple[dict, ...]:
    """Rows of a Locust ``_exceptions.csv``: count, message, traceback, nodes.

    ``nodes`` is the tuple of node names Locust joined with ``", "`` (``local``, or worker ids
    such as ``vm_5552...`` with ``--processes``), kept as printed. Only a header -> ``()``.
    """
    table = read_table(text, source, EXCEPTIONS_REQUIRED, "Locust _exceptions.csv")
    return tuple(_each_row(_exception, table, source, bulk))


def _exception(r: Reader) -> dict:
    nodes = r.raw("Nodes")
    return {
        "count": r.integer("Count"),
        "message": r.raw("Message"),
        "traceback": r.raw("Traceback"),
        "nodes": tuple(nodes.split(", ")) if nodes else (),
    }
