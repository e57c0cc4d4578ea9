"""Reading a Locust CSV file into a table of strings, by header name (the parsers of
:mod:`perfkit.ingest.locust_csv` turn its cells into numbers: :mod:`perfkit.ingest.locust_cells`).

Errors carry the physical 1-based line: the exceptions CSV holds multi-line quoted tracebacks,
so rows are located through the :mod:`csv` reader's ``line_num``, not by counting rows. A file
without a quote, a lone carriage return or a field longer than the :mod:`csv` module's limit
(every ``_stats.csv`` and ``_stats_history.csv`` Locust writes) has one record per line, which
:func:`_plain_records` splits on commas in bulk, as the :mod:`csv` reader would.

Files of Locust before 1.1 are read as 1.x writes them (:mod:`perfkit.ingest.locust_legacy`):
their column names, a method printed as ``None`` and a file without a final newline whose last
row is complete; each difference is a note of the table (:attr:`CsvTable.notes`).
"""

from __future__ import annotations

import csv
import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import NamedTuple

from perfkit.errors import ParseError
from perfkit.ingest import locust_legacy as legacy
from perfkit.warning import Warn

_PERCENTILE_HEADER = re.compile(r"(\d+(?:\.\d+)?)%", re.ASCII)

#: one record: its first physical line, the raw text of its lines, its fields, the line after it
Record = tuple[int, str, list[str], int]


class CsvRow(NamedTuple):
    """One CSV record: its first physical line, the raw line text, and its fields in header
    order (:meth:`CsvTable.position` says which is which)."""

    line: int
    text: str
    values: list[str]


@dataclass(frozen=True)
class CsvTable:
    header: tuple[str, ...]
    rows: tuple[CsvRow, ...]
    #: line number one past the last record (where a missing row would have been)
    end_line: int

    #: header name -> its place in a row's values (a name the header holds twice: its last
    #: column, as a dict of header to field has it)
    positions: dict[str, int]
    #: what was read otherwise than Locust 1.x writes it (older versions), in words
    notes: tuple[Warn, ...] = ()
    #: the older Locust names the header held, renamed to 1.x's
    renamed: tuple[str, ...] = ()
    #: (cell text, kind) -> its value, for the cells read so far (Locust repeats most)
    memo: dict = field(default_factory=dict, compare=False, repr=False)

    def position(self, name: str) -> int | None:
        """Where column ``name`` is in a row's values; None when absent."""
        return self.positions.get(name)


def _physical_lines(text: str) -> list[str]:
    """Lines split on ``\\n`` only (keeping ends), so line numbers match an editor's."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def check_text(text: str, source: str, what: str) -> None:
    """Refuse binary data and empty files with the line where the problem is."""
    nul = text.find("\x00")
    if nul >= 0:
        line = text.count("\n", 0, nul) + 1
        raise ParseError(source, line, f"text ({what})", "binary data (a NUL byte)")
    if not text.strip():
        raise ParseError(source, 1, what, "an empty file")


def _csv_records(lines: list[str], source: str, what: str) -> Iterator[Record]:
    """Every record of ``lines`` (the header first) through the :mod:`csv` reader."""
    reader = csv.reader(lines, strict=True)
    start = 1
    while True:
        try:
            record = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            if start == 1:
                raise ParseError(source, 1, f"the {what} header", str(exc)) from exc
            expected = (f"a complete {what} row (closing quote; the file looks cut off)"
                        if "end of data" in str(exc) else f"a well-formed {what} row")
            raise ParseError(source, start, expected,
                             f"{exc} in {lines[start - 1].rstrip()}") from exc
        end = reader.line_num + 1
        yield start, "".join(lines[start - 1:end - 1]).rstrip("\r\n"), record, end
        start = end


def _plain_records(text: str) -> list[Record] | None:
    """Every record of a plain ``text``, as the :mod:`csv` reader reads it, or None when the
    text is not plain. Plain: no quote character, a carriage return only before a newline, no
    line beyond the reader's field limit; then each physical line is one record, split on
    commas (an empty line: an empty record)."""
    if '"' in text or text.count("\r") != text.count("\r\n"):
        return None
    bodies = (text.replace("\r\n", "\n") if "\r" in text else text).split("\n")
    if not bodies[-1]:  # the text ends with a newline
        bodies.pop()
    if not bodies or max(map(len, bodies)) > csv.field_size_limit():
        return None
    return [(n, body, body.split(",") if body else [], n + 1)
            for n, body in enumerate(bodies, start=1)]


def read_table(text: str, source: str, required: tuple[str, ...], what: str,
               names: dict[str, str] | None = None) -> CsvTable:
    """Read a CSV by header name, checking required columns and the field count of every row.

    ``names``: older Locust versions' column names -> their 1.x names (renamed, with a note;
    a ``Type`` cell ``None`` is then no method). Raises :class:`ParseError` with the exact
    physical line: line 1 for a missing column, the row's first line for a wrong number of
    fields or an unterminated quoted field, and the last line when the file does not end with a
    newline, unless Locust up to 1.0 wrote it (quoted, ``\n`` line ends, never a final
    newline) and its last row has every field: a missing end otherwise means the file was cut
    off.
    """
    text = text.lstrip("\ufeff")
    check_text(text, source, what)
    plain = _plain_records(text)
    records = iter(plain if plain is not None
                   else _csv_records(_physical_lines(text), source, what))
    first = next(records, None)
    header = () if first is None else tuple(h.strip() for h in first[2])
    notes: list[Warn] = []
    renamed: tuple[str, ...] = ()
    if names:
        header, renamed, notes = legacy.modern_header(header, names)
    missing = [c for c in required if c not in header]
    if missing:
        raise ParseError(source, 1, f"column {missing[0]!r} in the {what} header",
                         ",".join(header))
    rows: list[CsvRow] = []
    width = len(header)
    end = 2 if first is None else first[3]
    for line, raw, record, after in records:
        if record:
            if len(record) != width:
                raise ParseError(source, line, f"{width} fields as in the header",
                                 f"{len(record)} fields: {raw}")
            rows.append(CsvRow(line, raw, record))
        end = after
    if not text.endswith("\n"):
        if not legacy.is_quoted_writer(text):
            raise ParseError(source, text.count("\n") + 1, f"a complete {what} line ending in "
                             "a newline (the file looks cut off)", text[text.rfind("\n") + 1:])
        notes.append(legacy.no_final_newline_note(width))
    positions = {h: i for i, h in enumerate(header)}
    if names and "Type" in positions:
        notes.extend(_no_none_methods(rows, positions["Type"]))
    return CsvTable(header, tuple(rows), end, positions, tuple(notes), renamed)


def _no_none_methods(rows: list[CsvRow], at: int) -> list[Warn]:
    """Empty the ``Type`` cells printed as ``None`` (Python's None); the note, if any."""
    count = 0
    for row in rows:
        if row.values[at] == legacy.NONE_METHOD:
            row.values[at] = ""
            count += 1
    return [legacy.none_method_note(count)] if count else []


def percentile_headers(header: tuple[str, ...], source: str = "<string>"
                       ) -> list[tuple[float, str]]:
    """``[(50.0, '50%'), (99.9, '99.9%'), ...]`` for every percentile column, by percentile.

    A percentile is on the 0-100 scale: a header such as ``900%`` (which would become
    ``latency_p900_ms``) or a percentile named twice (``50%`` and ``50.0%``) is a ParseError at
    line 1, never a column. Worked out once per header (Locust writes the same few)."""
    found = _percentiles_of(header)
    if isinstance(found, tuple):
        raise ParseError(source, 1, *found)
    return list(found)


@functools.lru_cache(maxsize=64)
def _percentiles_of(header: tuple[str, ...]) -> list[tuple[float, str]] | tuple[str, str]:
    """The percentile columns of ``header``, or the (expected, found) of its error."""
    out: list[tuple[float, str]] = []
    seen: dict[float, str] = {}
    for h in header:
        m = _PERCENTILE_HEADER.fullmatch(h)
        if not m:
            continue
        q = float(m.group(1))
        if not 0 <= q <= 100:
            return "percentile columns between 0% and 100% in the header", h
        if q in seen:
            return (f"each percentile column once in the header ({seen[q]!r} is the same "
                    "percentile)", h)
        seen[q] = h
        out.append((q, h))
    return sorted(out)  # by percentile, wherever the columns are
