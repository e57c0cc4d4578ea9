"""Tidy frames hold no +-inf: a value that is not finite is written as missing, and a warning
column says which cells and why ("missing is NaN, never 0"; a CSV or JSON reader meets no
``inf`` it must interpret)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from perfkit.formatting import plain

#: why a column may hold no finite value: (name prefix, part of the name, reason)
REASONS: tuple[tuple[str, str, str], ...] = (
    ("median_", "_ci_", "an unbounded median interval (too few runs, or a failed run inside "
                        "it)"),
    ("median_", "", "the median run failed (ranked worst), so it has no value"),
    ("ratio", "", "a ratio of 0 or infinity (failed runs ranked worst) is no finite size"),
)


def not_finite(record: dict[str, Any],
               reasons: Sequence[tuple[str, str, str]] = REASONS) -> list[str]:
    """Set the +-inf cells of ``record`` (and ratios of 0, log -inf) to NaN in place; return
    one sentence per reason naming the columns. A column no reason covers is "not finite"."""
    found: dict[str, list[str]] = {}
    for name, value in record.items():
        if not isinstance(value, float) or math.isnan(value):
            continue
        zero_ratio = "ratio" in name and value == 0
        if math.isfinite(value) and not zero_ratio:
            continue
        why = next((w for prefix, part, w in reasons
                    if name.startswith(prefix) and part in name), "not finite")
        found.setdefault(why, []).append(name)
        record[name] = math.nan
    return [f"{', '.join(cols)} written as missing: {why}" for why, cols in found.items()]


def json_records(frame: Any) -> list[dict[str, Any]]:
    """A frame's rows for ``to_dict()`` and JSON: plain Python values, None for a float NaN."""
    out = []
    for rec in frame.to_dict(orient="records"):
        out.append({k: (None if isinstance(v, float) and math.isnan(v) else plain(v))
                    for k, v in rec.items()})
    return out
