"""Tidy frames hold no +-inf: a value that is not finite is written as missing, and a warning
column says which cells and why ("missing is NaN, never 0"; a CSV or JSON reader meets no
``inf`` it must interpret). Why is the column's role, which the frame that writes it states
(:func:`comparison_columns`), never read from its name."""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from typing import Any

from perfkit.formatting import plain
from perfkit.warning import Code, Warn

#: a column no reason names
NOT_FINITE = "not-finite"

#: why a column of a comparison may hold no finite value: its role (worded by
#: :data:`perfkit.wording.NOT_FINITE_REASONS`)
MEDIAN_CI, MEDIAN, RATIO = "median-ci", "median", "ratio"


def comparison_columns(suffix: str = "") -> dict[str, str]:
    """The columns of a comparison's medians, their intervals and its ratio (``suffix``: the
    metric's unit, ``_ms``) -> why each may hold no finite value (:func:`not_finite`)."""
    out = {f"median_{side}{suffix}": MEDIAN for side in ("base", "new")}
    out.update({f"median_{side}_ci_{end}{suffix}": MEDIAN_CI for side in ("base", "new")
                for end in ("low", "high")})
    out.update({name: RATIO for name in ("ratio", "ratio_ci_low", "ratio_ci_high",
                                         "ratio_without_short")})
    return out


def not_finite(record: dict[str, Any], reasons: Mapping[str, str],
               ratios: Collection[str] = ()) -> list[Warn]:
    """Set the +-inf cells of ``record`` (and a 0 in a column of ``ratios``: log -inf) to NaN
    in place; return one warning per reason naming its columns
    (:attr:`Code.WRITTEN_AS_MISSING`). ``reasons``: column -> why (:func:`comparison_columns`);
    a column it does not name is "not finite"."""
    found: dict[str, list[str]] = {}
    for name, value in record.items():
        if not isinstance(value, float) or math.isnan(value):
            continue
        zero_ratio = name in ratios and value == 0
        if math.isfinite(value) and not zero_ratio:
            continue
        found.setdefault(reasons.get(name, NOT_FINITE), []).append(name)
        record[name] = math.nan
    return [Warn(Code.WRITTEN_AS_MISSING, columns=tuple(cols), why=why)
            for why, cols in found.items()]


def json_records(frame: Any) -> list[dict[str, Any]]:
    """A frame's rows for ``to_dict()`` and JSON: plain Python values, None for a float NaN."""
    out = []
    for rec in frame.to_dict(orient="records"):
        out.append({k: (None if isinstance(v, float) and math.isnan(v) else plain(v))
                    for k, v in rec.items()})
    return out
