"""The cells of a Locust CSV table as numbers: column by column in bulk (:class:`Columns`), or
cell by cell (:class:`RowReader`), which names the exact line, column and value of a bad cell.

The rules are the same either way. A count is ASCII digits (at most 18: below 2**63); a number
is a decimal or exponent literal, ``N/A`` (Locust's "no data") allowed where the parser says,
which becomes None and is recorded in the row's ``na_columns``. Spaces and tabs around a cell
are ignored; a cell of more than 400 characters, a negative or an infinite value is refused
(Locust never prints one).

:class:`Columns` converts every count, then every number, of a table at once with ``map``
after a check of their characters (:func:`_batch`); a column it does not pass is checked on
its own, with one regular expression over its cells joined by newlines. When that check fails
it raises :class:`Irregular`, and the parser reads the table again through :class:`RowReader`,
whose error is the one to report.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from itertools import chain
from typing import TypeVar

from perfkit.errors import ParseError
from perfkit.ingest.locust_table import CsvRow, CsvTable

NA = "N/A"

# ASCII only (re.ASCII): \d would admit any Unicode digit, which int() and float() then read
# ("\u0663" is 3); Locust writes ASCII digits
_NUMBER_TEXT = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_INTEGER_TEXT = r"\d{1,18}"  # below 2**63: a longer one is damage
_NUMBER = re.compile(_NUMBER_TEXT, re.ASCII)
_INTEGER = re.compile(_INTEGER_TEXT, re.ASCII)
#: a whole column at once: each cell (spaces and tabs around it) followed by a newline
_BULK = {(kind, allow_na): re.compile(rf"(?:[ \t]*(?:{'N/A|' if allow_na else ''}{text})"
                                      r"[ \t]*\n)*", re.ASCII)
         for kind, text in (("int", _INTEGER_TEXT), ("num", _NUMBER_TEXT))
         for allow_na in (False, True)}
_MAX_CHARS = 400
_Number = TypeVar("_Number", int, float)

#: what a count's and a number's cells may hold (and the newlines joining them); within these
#: characters int() and float() take exactly what the patterns above take (no underscore, no
#: "inf" or "nan", no other space, no other digit)
_CHARS = {"int": b"0123456789 \t\n", "num": b"0123456789.eE+- \t\n"}
_LONGEST = {"int": 18, "num": _MAX_CHARS}


def _batch(cells: list[str], kind: str) -> list | None:
    """``cells`` of one kind (``"int"`` or ``"num"``) converted all at once, each distinct
    text once (Locust repeats most of them); None when any cell might break a rule (then each
    column is checked on its own). Never looser than the rules: ASCII digits, ``.eE+-`` for
    numbers, spaces and tabs, at most 18 (400) characters with the spaces, finite and not
    negative; an N/A number is None."""
    distinct = dict.fromkeys(cells)
    if kind == "num":
        distinct.pop(NA, None)  # not converted: None below
    text = "\n".join(distinct)
    if (not distinct or text.count("\n") != len(distinct) - 1 or not text.isascii()
            or text.encode("ascii").translate(None, _CHARS[kind])
            or max(map(len, distinct)) > _LONGEST[kind]):
        return None
    cast: Callable[[str], float] = int if kind == "int" else float
    try:
        value_of = dict(zip(distinct, map(cast, distinct), strict=True))
    except ValueError:
        return None
    if kind == "num" and not (min(value_of.values()) >= 0
                              and max(value_of.values()) < math.inf):
        return None
    return list(map(value_of.get, cells))  # N/A: None


class Irregular(Exception):
    """A column the bulk check does not pass: read the table cell by cell instead."""


class Columns:
    """Every column of a table, converted in bulk and kept per (column, kind, N/A allowed).

    ``kinds`` names the columns the parser reads as counts (``"int"``: no N/A) and numbers
    (``"num"``: N/A allowed): those are converted all at once, kind by kind (:func:`_batch`).
    Any other column, or all of a kind whose batch fails, is checked column by column when it
    is read.
    """

    def __init__(self, table: CsvTable, kinds: dict[str, str] | None = None):
        self.table = table
        self.rows = len(table.rows)
        cells = list(zip(*(row.values for row in table.rows), strict=True))
        self._cells: list[tuple[str, ...]] = cells or [()] * len(table.header)
        self._positions: dict[str, int | None] = {}
        self._converted: dict[tuple[str, str, bool], list] = {}
        if kinds and self.rows:
            for kind in ("int", "num"):
                self._batch_of([name for name, k in kinds.items() if k == kind], kind)

    def _batch_of(self, names: list[str], kind: str) -> None:
        present = [(name, cells) for name in names if (cells := self.cells(name)) is not None]
        values = None if not present else _batch(
            list(chain.from_iterable(c for _, c in present)), kind)
        if values is None:
            return
        n = self.rows
        for j, (name, _) in enumerate(present):
            self._converted[name, kind, kind == "num"] = values[j * n:(j + 1) * n]

    def cells(self, name: str) -> tuple[str, ...] | None:
        """The cells of column ``name`` (or its alias) as printed; None when it is absent."""
        if name not in self._positions:
            self._positions[name] = self.table.position(name)
        i = self._positions[name]
        return None if i is None else self._cells[i]

    def integers(self, name: str, allow_na: bool = False) -> list[int | None]:
        return self._convert(name, "int", allow_na)

    def numbers(self, name: str, allow_na: bool = True) -> list[float | None]:
        return self._convert(name, "num", allow_na)

    def _convert(self, name: str, kind: str, allow_na: bool) -> list:
        key = (name, kind, allow_na)
        if key not in self._converted:
            self._converted[key] = self._bulk(name, kind, allow_na)
        return self._converted[key]

    def _bulk(self, name: str, kind: str, allow_na: bool) -> list:
        cells = self.cells(name)
        if cells is None:
            return [None] * self.rows
        if not cells:
            return []
        cast: Callable[[str], float] = int if kind == "int" else float
        joined = "\n".join(cells) + "\n"
        # a newline inside a cell would pass as two cells
        if joined.count("\n") != len(cells) or not _BULK[kind, allow_na].fullmatch(joined):
            raise Irregular(name)
        if kind == "num" and max(map(len, cells)) > _MAX_CHARS:
            raise Irregular(name)
        if NA not in joined:
            values: list = list(map(cast, cells))
            known = values
        else:
            values = [None if NA in c else cast(c) for c in cells]
            known = [v for v in values if v is not None]
        # 1-18 digits are never negative nor infinite; a number may be either
        if kind == "num" and known and not (min(known) >= 0 and max(known) < math.inf):
            raise Irregular(name)
        return values


class _Cells:
    """A row's cells by column name: :meth:`raw` as printed (None: no such column)."""

    def raw(self, name: str) -> str | None:
        raise NotImplementedError

    def text(self, name: str) -> str | None:
        """The cell as printed, None when empty or absent."""
        value = self.raw(name)
        return None if value is None or value == "" else value


class CellView(_Cells):
    """One row of :class:`Columns`, read as a :class:`RowReader` reads it (the same answers,
    the same ``na_columns``)."""

    def __init__(self, columns: Columns, index: int):
        self.columns = columns
        self.index = index
        self.row = columns.table.rows[index]
        self.na_columns: list[str] = []

    def raw(self, name: str) -> str | None:
        cells = self.columns.cells(name)
        return None if cells is None else cells[self.index]

    def _value(self, values: list, name: str) -> int | float | None:
        value = values[self.index]
        if value is None and self.columns.cells(name) is not None:
            self.na_columns.append(name)
        return value

    def integer(self, name: str, allow_na: bool = False) -> int | None:
        return self._value(self.columns.integers(name, allow_na), name)  # type: ignore[return-value]

    def number(self, name: str, allow_na: bool = True) -> float | None:
        return self._value(self.columns.numbers(name, allow_na), name)


class RowReader(_Cells):
    """Typed access to one row's fields, cell by cell; every error names the row's line."""

    def __init__(self, row: CsvRow, source: str, table: CsvTable):
        self.row = row
        self.source = source
        self.table = table
        self.na_columns: list[str] = []

    def raw(self, name: str) -> str | None:
        i = self.table.position(name)
        return None if i is None else self.row.values[i]

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
        if len(value) > _MAX_CHARS:  # float() would take it, int() refuses > 4300 digits
            self._fail(name, f"{kind} (of a sane length)", value[:40] + "...")
        number = cast(value)
        if not 0 <= number < math.inf:  # Locust never prints a negative or non-finite count/time
            self._fail(name, f"{kind} (finite, not negative)", value)
        return number

    def integer(self, name: str, allow_na: bool = False) -> int | None:
        return self._convert(name, allow_na, _INTEGER, "a whole number", int)

    def number(self, name: str, allow_na: bool = True) -> float | None:
        return self._convert(name, allow_na, _NUMBER, "a number", float)
