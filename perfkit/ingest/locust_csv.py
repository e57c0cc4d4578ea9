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
are converted one by one, a bad one named by its line and column
(:mod:`perfkit.ingest.locust_cells`). Times are milliseconds with no unit in the header.
Locust prints ``N/A`` for percentiles when there were no requests, and ``0`` for the
min/max/mean of an empty entry; both become None with a note, never 0 (a 0 where nothing was
measured: :mod:`perfkit.ingest.nodata`). A percentile column outside 0-100% (``900%``) is refused.

Errors carry the physical 1-based line: the exceptions CSV holds multi-line quoted tracebacks,
so rows are located through the reader's ``line_num``, not by counting rows.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from perfkit.errors import ParseError
from perfkit.ingest import locust_legacy as legacy
from perfkit.ingest.locust_cells import NA, RowReader
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

__all__ = ["HISTORY_REQUIRED", "NA", "CsvRow", "CsvTable", "Distribution", "History", "RowReader",
           "check_text", "parse_distribution_csv", "parse_exceptions_csv", "parse_failures_csv",
           "parse_history_csv", "parse_stats_csv", "percentile_headers", "read_table"]

TOOL = "locust"
LATENCY_SOURCE = "locust_rounded"

STATS_REQUIRED = ("Name", "Request Count", "Failure Count", "Average Response Time",
                  "Min Response Time", "Max Response Time", "Average Content Size",
                  "Requests/s")
FAILURES_REQUIRED = ("Method", "Name", "Error", "Occurrences")
EXCEPTIONS_REQUIRED = ("Count", "Message", "Traceback")

_T = TypeVar("_T")


def _each_row(read: Callable[[RowReader], _T], table: CsvTable, source: str) -> list[_T]:
    """``read`` of every row, cell by cell (a bad cell's error names it)."""
    return [read(RowReader(row, source, table)) for row in table.rows]


def _na_note(na_columns: list[str], where: str) -> Warn:
    return Warn(Code.LOCUST_NA, where=where, columns=tuple(dict.fromkeys(na_columns)))


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

    Older Locust files are read too (:mod:`perfkit.ingest.locust_legacy`): 0.8-0.13.2's
    ``_requests.csv`` (no percentiles: they are in its ``_distribution.csv``, which
    :func:`parse_distribution_csv` reads), whose last row, ``"None","Total"``, is the
    aggregate; 0.13.3-0.14.6's ``_stats.csv``; 1.0's quoted file without a final newline. What
    was read otherwise than 1.x writes it is noted on every run of the file.
    """
    table = read_table(text, source, STATS_REQUIRED, "Locust _stats.csv", legacy.STATS_NAMES)
    pct_headers = percentile_headers(table.header, source)
    runs = _each_row(functools.partial(_stats_run, source=source, pct_headers=pct_headers),
                     table, source)
    if runs and runs[-1].endpoint == "Total" and runs[-1].method is None:  # Locust < 0.12.2
        runs[-1] = replaced_run(runs[-1], {"is_aggregate": True})
    successes = "# requests" in table.renamed and not pct_headers  # a 0.8-0.13.2 file
    runs = [_noted(r, table.notes, source, successes) for r in runs]
    aggregates = [r for r in runs if r.is_aggregate]
    if not aggregates:
        raise ParseError(source, table.end_line, "the Aggregated row (Locust always writes it "
                         "last)", "end of file")
    agg = aggregates[-1]
    if agg.requests and agg.throughput_rps:
        duration = agg.requests / agg.throughput_rps
        runs = [replaced_run(r, {"duration_s": duration}) for r in runs]
    return runs


def _noted(run: Run, notes: tuple[Warn, ...], source: str, successes: bool) -> Run:
    """``run`` with the notes of its file, and what its requests may count."""
    more = [Warn(Code.IN_FILE, source=source, warning=note) for note in notes]
    if successes and run.failures:
        more.append(legacy.successes_note(source, run.requests or 0, run.failures))
    if run.is_aggregate and run.endpoint == "Total":
        more.append(Warn(Code.LOCUST_TOTAL_ROW, source=source))
    return replaced_run(run, {"notes": run.notes + tuple(more)}) if more else run


def _stats_run(r: RowReader, source: str, pct_headers: list[tuple[float, str]]) -> Run:
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
    if transfer is not None and not math.isfinite(transfer):  # two huge numbers: no rate
        notes.append(Warn(Code.LOCUST_TRANSFER_BEYOND, where=label))
        transfer = None
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


# -- _distribution.csv (Locust 0.8-0.13.2) ------------------------------------------------------
DISTRIBUTION_REQUIRED = ("Name", "Request Count")


@dataclass(frozen=True)
class Distribution:
    """The rows of a Locust 0.8-0.13.2 ``_distribution.csv``: each a dict of ``name`` (as
    printed: ``"GET /path"``, the name alone for a row without requests, ``"Total"``,
    ``"None Total"`` in 0.8-0.9), ``requests``, ``percentiles_ms`` ({50.0: .., 100.0: ..}, an
    ``N/A`` left out), ``na_columns`` and ``line``; ``notes`` say what was read otherwise than
    Locust 1.x writes."""

    rows: tuple[dict, ...]
    notes: tuple[Warn, ...]


def parse_distribution_csv(text: str, source: str = "<string>") -> Distribution:
    """Rows of a Locust 0.8-0.13.2 ``_distribution.csv`` (see :class:`Distribution`)."""
    table = read_table(text, source, DISTRIBUTION_REQUIRED, "Locust _distribution.csv",
                       legacy.STATS_NAMES)
    pct_headers = percentile_headers(table.header, source)
    if not pct_headers:
        raise ParseError(source, 1, "percentile columns ('50%', ...) in the Locust "
                         "_distribution.csv header", ",".join(table.header))
    return Distribution(tuple(_each_row(functools.partial(_distribution_row,
                                                          pct_headers=pct_headers),
                                        table, source)),
                        tuple(Warn(Code.IN_FILE, source=source, warning=note)
                              for note in table.notes))


def _distribution_row(r: RowReader, pct_headers: list[tuple[float, str]]) -> dict:
    percentiles = {q: r.number(h) for q, h in pct_headers}
    return {"name": r.raw("Name") or "", "requests": r.integer("Request Count"),
            "percentiles_ms": {q: v for q, v in percentiles.items() if v is not None},
            "na_columns": tuple(r.na_columns), "line": r.row.line}


# -- _failures.csv and _exceptions.csv -----------------------------------------------------------
def parse_failures_csv(text: str, source: str = "<string>") -> tuple[dict, ...]:
    """Rows of a Locust ``_failures.csv``: method, name, error, occurrences, first/last seen.

    ``first_seen`` / ``last_seen`` are the ISO 8601 UTC strings as printed (None when absent,
    as in older versions). Only a header -> an empty tuple.
    """
    table = read_table(text, source, FAILURES_REQUIRED, "Locust _failures.csv")
    return tuple(_each_row(_failure, table, source))


def _failure(r: RowReader) -> dict:
    return {
        "method": r.text("Method"),
        "name": r.raw("Name"),
        "error": r.raw("Error"),
        "occurrences": r.integer("Occurrences"),
        "first_seen": r.text("First Seen"),
        "last_seen": r.text("Last Seen"),
    }


def parse_exceptions_csv(text: str, source: str = "<string>") -> tuple[dict, ...]:
    """Rows of a Locust ``_exceptions.csv``: count, message, traceback, nodes.

    ``nodes`` is the tuple of node names Locust joined with ``", "`` (``local``, or worker ids
    such as ``vm_5552...`` with ``--processes``), kept as printed. Only a header -> ``()``.
    """
    table = read_table(text, source, EXCEPTIONS_REQUIRED, "Locust _exceptions.csv")
    return tuple(_each_row(_exception, table, source))


def _exception(r: RowReader) -> dict:
    nodes = r.raw("Nodes")
    return {
        "count": r.integer("Count"),
        "message": r.raw("Message"),
        "traceback": r.raw("Traceback"),
        "nodes": tuple(nodes.split(", ")) if nodes else (),
    }
