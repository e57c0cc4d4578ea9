"""The cells of a Locust CSV table as numbers, one row at a time (:class:`RowReader`); a bad
cell is a ParseError naming its exact line, column and value.

A count is ASCII digits (at most 18: below 2**63); a number is a decimal or exponent literal,
``N/A`` (Locust's "no data") allowed where the parser says, which becomes None and is recorded in
the row's ``na_columns``. Spaces and tabs around a cell are ignored; a cell of more than 400
characters, a negative or an infinite value is refused (Locust never prints one).

One reader: a bulk one (columns converted at once, this one only for the error) saved 0.12 s
CPU on a first store-less load of 500 run folders, a quarter of ``import numpy, pandas``
(benchmarks/bench_locust_readers.py), once this reader remembered the cells it converted
(:attr:`~perfkit.ingest.locust_table.CsvTable.memo`): not worth its 300 lines.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
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
_MAX_CHARS = 400
_Number = TypeVar("_Number", int, float)



class RowReader:
    """Typed access to one row's fields, cell by cell; every error names the row's line."""

    def __init__(self, row: CsvRow, source: str, table: CsvTable):
        self.row = row
        self.source = source
        self.table = table
        self.na_columns: list[str] = []

    def raw(self, name: str) -> str | None:
        """The cell of column ``name`` (or its alias) as printed; None: no such column."""
        i = self.table.positions.get(name)
        return None if i is None else self.row.values[i]

    def text(self, name: str) -> str | None:
        """The cell as printed, None when empty or absent."""
        value = self.raw(name)
        return None if value is None or value == "" else value

    def _fail(self, name: str, kind: str, value: str):
        raise ParseError(self.source, self.row.line, f"{kind} in column {name!r}",
                         f"{value!r} in {self.row.text}")

    def _convert(self, name: str, allow_na: bool, pattern: re.Pattern, kind: str,
                 cast: Callable[[str], _Number]) -> _Number | None:
        """Column ``name`` through ``cast`` once it matches ``pattern``; N/A -> None if allowed.
        A text read before in the table is not checked again (its value is in the memo)."""
        value = self.raw(name)
        if value is None:
            return None
        value = value.strip(" \t")  # not str.strip(): that also drops Unicode spaces
        if allow_na and value == NA:
            self.na_columns.append(name)
            return None
        memo = self.table.memo
        known = memo.get((value, kind))
        if known is not None:
            return known
        if not pattern.fullmatch(value):
            self._fail(name, kind, value)
        if len(value) > _MAX_CHARS:  # float() would take it, int() refuses > 4300 digits
            self._fail(name, f"{kind} (of a sane length)", value[:40] + "...")
        number = cast(value)
        if not 0 <= number < math.inf:  # Locust never prints a negative or non-finite count/time
            self._fail(name, f"{kind} (finite, not negative)", value)
        memo[value, kind] = number
        return number

    def integer(self, name: str, allow_na: bool = False) -> int | None:
        return self._convert(name, allow_na, _INTEGER, "a whole number", int)

    def number(self, name: str, allow_na: bool = True) -> float | None:
        return self._convert(name, allow_na, _NUMBER, "a number", float)
