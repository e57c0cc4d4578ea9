"""Helpers shared by subcommands: loading paths with error reporting, number formatting."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, TextIO

from perfkit.ingest import LoadResult, scan_many


def load_paths(paths: Sequence[str], err: TextIO) -> LoadResult:
    """Load every run under ``paths``; print each error as ``perfkit: error: ...`` on ``err``."""
    result = scan_many(paths)
    for error in result.errors:
        print(f"perfkit: error: {error}", file=err)
    return result


def is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def fmt_num(value: Any, digits: int = 4) -> str:
    """Compact human form: integers as is, floats to ``digits`` significant digits, missing '-'."""
    if is_missing(value):
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value == 0:
            return "0"
        if abs(value) >= 10 ** digits:
            return f"{value:.0f}"
        return f"{value:.{digits}g}"
    return str(value)


def render_table(header: Sequence[str], rows: Sequence[Sequence[str]],
                 right_align: Sequence[bool] | None = None) -> str:
    """A plain aligned text table (two spaces between columns)."""
    widths = [len(h) for h in header]
    for row in rows:
        widths = [max(w, len(c)) for w, c in zip(widths, row, strict=True)]
    right = list(right_align) if right_align is not None else [False] * len(header)

    def line(cells: Sequence[str]) -> str:
        parts = [c.rjust(w) if r else c.ljust(w)
                 for c, w, r in zip(cells, widths, right, strict=True)]
        return "  ".join(parts).rstrip()

    return "\n".join([line(header)] + [line(r) for r in rows])
