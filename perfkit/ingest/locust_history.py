"""Pure parser for Locust's ``PREFIX_stats_history.csv``: one row per second, per name plus
``Aggregated`` with ``--csv-full-history`` (:func:`parse_history_csv`).

The file is read by header name (:mod:`perfkit.ingest.locust_table`) and its cells one by one
(:class:`~perfkit.ingest.locust_cells.RowReader`), whose error names the file, line, column
and value.
"""

from __future__ import annotations

from dataclasses import dataclass

from perfkit.ingest import locust_legacy as legacy
from perfkit.ingest.locust_cells import RowReader
from perfkit.ingest.locust_table import CsvTable, percentile_headers, read_table
from perfkit.ingest.nodata import zeros_missing
from perfkit.model import percentile_column
from perfkit.warning import Code, Warn

#: (``User Count`` came with 1.0: a 0.13.3-0.14.6 history has none)
HISTORY_REQUIRED = ("Timestamp", "Name", "Requests/s", "Total Request Count",
                    "Total Failure Count")

_HISTORY_TOTALS = (
    ("Total Request Count", "total_requests", "int"),
    ("Total Failure Count", "total_failures", "int"),
    ("Total Median Response Time", "total_latency_median_ms", "num"),
    ("Total Average Response Time", "total_latency_mean_ms", "num"),
    ("Total Min Response Time", "total_latency_min_ms", "num"),
    ("Total Max Response Time", "total_latency_max_ms", "num"),
    ("Total Average Content Size", "total_content_size_mean_bytes", "num"),
)
#: the totals of a row with no request yet: Locust's printed 0s, not measurements
_UNMEASURED_TOTALS = ("total_latency_median_ms", "total_latency_mean_ms",
                      "total_latency_min_ms", "total_latency_max_ms",
                      "total_content_size_mean_bytes")
#: (rows, (rows with N/A, rows of windowed placeholder 0s, rows with 0s before any request))
_Rows = tuple[list[dict], tuple[int, int, int]]


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
    notes: tuple[Warn, ...]


def parse_history_csv(text: str, source: str = "<string>") -> History:
    """Parse a Locust ``_stats_history.csv`` into per-second rows (see :class:`History`).

    ``N/A`` and Locust's placeholders become None: the ``Total ...`` latencies of a row with no
    requests yet (printed 0) and a 0 in its percentiles (:mod:`perfkit.ingest.nodata`), and in
    windowed mode a row whose percentiles are all 0 (Locust's ``or 0`` when it has no
    10-second-old snapshot to difference against yet).
    """
    table = read_table(text, source, HISTORY_REQUIRED, "Locust _stats_history.csv",
                       legacy.HISTORY_NAMES)
    pct_headers = percentile_headers(table.header, source)
    name_at, type_at = table.position("Name"), table.position("Type")
    full = any(row.values[name_at] != "Aggregated"  # type: ignore[index]
               or (type_at is not None and row.values[type_at]) for row in table.rows)
    cumulative = None if not table.rows else not full
    rows, (na_rows, placeholder_rows, unmeasured_rows) = _cell_rows(table, source, pct_headers,
                                                                    cumulative)
    notes = [Warn(Code.IN_FILE, source=source, warning=note) for note in table.notes]
    if na_rows:
        notes.append(Warn(Code.LOCUST_HISTORY_NA, rows=na_rows))
    if placeholder_rows:
        notes.append(Warn(Code.LOCUST_HISTORY_WINDOW_ZERO, rows=placeholder_rows))
    if unmeasured_rows:
        notes.append(Warn(Code.LOCUST_HISTORY_UNMEASURED, rows=unmeasured_rows))
    return History(tuple(rows), cumulative, tuple(notes))


def _cell_rows(table: CsvTable, source: str, pct_headers: list[tuple[float, str]],
               cumulative: bool | None) -> _Rows:
    """The rows read cell by cell: a bad cell is a ParseError naming its line and column."""
    rows = []
    na_rows = placeholder_rows = unmeasured_rows = 0
    pct_columns = [(percentile_column(q), h) for q, h in pct_headers]
    for row in table.rows:
        r = RowReader(row, source, table)
        out = {
            "line": row.line,
            "timestamp_s": r.integer("Timestamp"),
            "user_count": r.integer("User Count"),
            "method": r.text("Type"),
            "name": r.raw("Name"),
            "requests_per_s": r.number("Requests/s"),
            "failures_per_s": r.number("Failures/s"),
        }
        pcts = {column: r.number(h) for column, h in pct_columns}
        for header, key, kind in _HISTORY_TOTALS:
            out[key] = r.integer(header) if kind == "int" else r.number(header)
        if r.na_columns:
            na_rows += 1
        values = [v for v in pcts.values() if v is not None]
        if not cumulative and values and not any(values):
            pcts = dict.fromkeys(pcts)
            placeholder_rows += 1
        if out["total_requests"] == 0:  # nothing measured yet: a printed 0 is a placeholder
            pcts, note = zeros_missing(pcts, "no-request-yet")
            unmeasured_rows += note is not None
        out.update(pcts)
        if out["total_requests"] == 0:
            for key in _UNMEASURED_TOTALS:
                out[key] = None
        rows.append(out)
    return rows, (na_rows, placeholder_rows, unmeasured_rows)
