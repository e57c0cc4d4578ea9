"""Any tidy frame as a paper-ready table (:class:`perfkit.present.tables.Table`): headers with
the units their column suffixes name, numbers to a few significant digits.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from enum import StrEnum

from perfkit.formatting import fmt_num, level_text
from perfkit.present.tables import Column, Table
from perfkit.wording import verdict_words

# -- any tidy frame ------------------------------------------------------------------------
_SUFFIX_UNITS = (("_bytes_per_s", "B/s"), ("_rps", "req/s"), ("_ms", "ms"), ("_us", "us"),
                 ("_pct", "%"), ("_percent", "%"), ("_bytes", "B"), ("_s", "s"))


def column(name: str, numeric: bool) -> Column:
    """A tidy column name as a header with its unit: ``median_base_ms`` -> ``median base [ms]``,
    a percentile as it is written (``latency_p99_9_ms`` -> ``latency p99.9 [ms]``)."""
    unit = ""
    for suffix, u in _SUFFIX_UNITS:
        if name.endswith(suffix) and len(name) > len(suffix):
            name, unit = name[: -len(suffix)], u
            break
    words = re.sub(r"(?<![A-Za-z0-9])p(\d+)_(\d+)(?![A-Za-z0-9])", r"p\1.\2", name)
    return Column(words.replace("_", " "), unit, numeric)


#: the columns whose values are identities of the vocabulary, shown in their words
#: (:func:`perfkit.wording.verdict_words`: ``stable`` -> ``no drift beyond ±10%``)
WORDED_COLUMNS = ("verdict", "kind", "status")


def frame(table, title: str = "", digits: int = 3, hide: Sequence[str] = ("warnings",)) -> Table:
    """Any tidy frame as a :class:`Table`: units from the column suffixes, floats to ``digits``
    significant digits, whole numbers without a decimal point, missing as blank; a column
    missing in every row is not shown (the CSV keeps it)."""
    import pandas as pd

    shown = table.drop(columns=[c for c in hide if c in table])
    empty = [c for c in shown.columns
             if shown[c].map(lambda v: v is None or v is pd.NA or v == "" or
                             (isinstance(v, float) and v != v)).all()]
    shown = shown.drop(columns=empty) if len(shown) else shown
    cols, cells = [], []
    for name in shown.columns:
        values = shown[name]
        numeric = pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)
        cols.append(column(str(name), numeric))
        # a verdict column's values are identities (read back from a CSV, or made plain str
        # on the way: not always the enum's members), worded here
        worded = str(name) in WORDED_COLUMNS or str(name).endswith("_verdict")
        cells.append(["" if v is None or v is pd.NA or (isinstance(v, float) and v != v)
                      else fmt_num(v, digits) if numeric
                      else verdict_words(v) if worded or isinstance(v, StrEnum)
                      else level_text(v)
                      for v in values])
    rows = tuple(zip(*cells, strict=True)) if cells else ()
    return Table(tuple(cols), tuple(tuple(r) for r in rows), title)
