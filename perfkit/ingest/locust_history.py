"""Pure parser for Locust's ``PREFIX_stats_history.csv``: one row per second, per name plus
``Aggregated`` with ``--csv-full-history`` (:func:`parse_history_csv`).

The file is read by header name (:mod:`perfkit.ingest.locust_table`) and its cells are
converted column by column (:class:`~perfkit.ingest.locust_cells.Columns`); a column that does
not pass the bulk check sends the whole file through the cell-by-cell reader, whose error names
the file, line, column and value.
"""

from __future__ import annotations

import functools
import operator
from dataclasses import dataclass
from itertools import repeat

from perfkit.ingest.locust_cells import Columns, Irregular, RowReader
from perfkit.ingest.locust_table import CsvTable, percentile_headers, read_table
from perfkit.ingest.nodata import zeros_missing
from perfkit.model import percentile_column
from perfkit.warning import Code, Warn

HISTORY_REQUIRED = ("Timestamp", "User Count", "Name", "Requests/s", "Total Request Count",
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


def parse_history_csv(text: str, source: str = "<string>", bulk: bool = True) -> History:
    """Parse a Locust ``_stats_history.csv`` into per-second rows (see :class:`History`).

    ``N/A`` and Locust's placeholders become None: the ``Total ...`` latencies of a row with no
    requests yet (printed 0) and a 0 in its percentiles (:mod:`perfkit.ingest.nodata`), and in
    windowed mode a row whose percentiles are all 0 (Locust's ``or 0`` when it has no
    10-second-old snapshot to difference against yet). ``bulk=False`` reads the cells one by
    one, as a file the bulk check refuses is read (the same result; tests compare the two).
    """
    table = read_table(text, source, HISTORY_REQUIRED, "Locust _stats_history.csv")
    pct_headers = percentile_headers(table.header, source)
    name_at, type_at = table.position("Name"), table.position("Type")
    full = any(row.values[name_at] != "Aggregated"  # type: ignore[index]
               or (type_at is not None and row.values[type_at]) for row in table.rows)
    cumulative = None if not table.rows else not full
    parsed: _Rows | None = None
    if bulk:
        try:
            parsed = _bulk_rows(table, pct_headers, cumulative)
        except Irregular:  # a cell the bulk check refuses: cell by cell, for the exact error
            parsed = None
    rows, (na_rows, placeholder_rows, unmeasured_rows) = (
        parsed or _cell_rows(table, source, pct_headers, cumulative))
    notes: list[Warn] = []
    if na_rows:
        notes.append(Warn(Code.LOCUST_HISTORY_NA, rows=na_rows))
    if placeholder_rows:
        notes.append(Warn(Code.LOCUST_HISTORY_WINDOW_ZERO, rows=placeholder_rows))
    if unmeasured_rows:
        notes.append(Warn(Code.LOCUST_HISTORY_UNMEASURED, rows=unmeasured_rows))
    return History(tuple(rows), cumulative, tuple(notes))


def _bulk_rows(table: CsvTable, pct_headers: list[tuple[float, str]],
               cumulative: bool | None) -> _Rows:
    """The rows of :func:`_cell_rows`, built column by column (raises :class:`Irregular`)."""
    kinds = {"Timestamp": "int", "User Count": "int", "Requests/s": "num", "Failures/s": "num"}
    kinds.update((header, kind) for header, _, kind in _HISTORY_TOTALS)
    kinds.update((h, "num") for _, h in pct_headers)
    c = Columns(table, kinds)
    n = c.rows
    types = c.cells("Type")
    keys = ["line", "timestamp_s", "user_count", "method", "name", "requests_per_s",
            "failures_per_s"]
    cols: list[list] = [
        [row.line for row in table.rows], c.integers("Timestamp"), c.integers("User Count"),
        [None] * n if types is None else [t or None for t in types], list(c.cells("Name") or ()),
        c.numbers("Requests/s"), c.numbers("Failures/s")]
    numeric = ["Requests/s", "Failures/s"]  # the columns where N/A may be
    for header, key, kind in _HISTORY_TOTALS:
        keys.append(key)
        cols.append(c.integers(header) if kind == "int" else c.numbers(header))
        numeric += [header] if kind == "num" else []
    pcts: dict[str, list] = {}  # one column per name (a later percentile of the same name wins)
    for q, h in pct_headers:
        pcts[_column_name(q)] = c.numbers(h)
        numeric.append(h)
    na_cols = [c.numbers(h) for h in numeric if c.cells(h) is not None]
    # rows with an N/A: rows holding a None in a column where N/A may be
    na_rows = sum(map(operator.contains, zip(*na_cols, strict=True), repeat(None)))
    keys += pcts
    cols += pcts.values()
    rows = [dict(zip(keys, values, strict=True)) for values in zip(*cols, strict=True)]
    # the rows a placeholder rule may touch: no request yet, or (windowed) a first percentile
    # of 0 or N/A, as every percentile of a row printed as 0 has
    totals = c.integers("Total Request Count")
    touched = {i for i, total in enumerate(totals) if total == 0}
    pct_cols = list(pcts.values())
    if not cumulative and pct_cols:
        touched.update(i for i, first in enumerate(pct_cols[0]) if not first)
    placeholder_rows = unmeasured_rows = 0
    for i in sorted(touched):
        row, printed = rows[i], tuple(col[i] for col in pct_cols)
        if not cumulative and not any(printed) and printed.count(None) != len(printed):
            row.update(dict.fromkeys(pcts))  # every windowed percentile printed as 0
            placeholder_rows += 1
        elif totals[i] == 0 and 0 in printed:
            row.update((k, None) for k in pcts if row[k] == 0)
            unmeasured_rows += 1
        if totals[i] == 0:
            row.update(dict.fromkeys(_UNMEASURED_TOTALS))
    return rows, (na_rows, placeholder_rows, unmeasured_rows)


@functools.lru_cache(maxsize=256)
def _column_name(q: float) -> str:
    return percentile_column(q)


def _cell_rows(table: CsvTable, source: str, pct_headers: list[tuple[float, str]],
               cumulative: bool | None) -> _Rows:
    """The rows read cell by cell: a bad cell is a ParseError naming its line and column."""
    rows = []
    na_rows = placeholder_rows = unmeasured_rows = 0
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
            pcts, note = zeros_missing(pcts, "no-request-yet")
            unmeasured_rows += note is not None
        out.update(pcts)
        if out["total_requests"] == 0:
            for key in _UNMEASURED_TOTALS:
                out[key] = None
        rows.append(out)
    return rows, (na_rows, placeholder_rows, unmeasured_rows)
