"""Two-level factor coding for 2^k designs: which label is low (-1) and which is high (+1).

The rule, in order (the chosen mapping is always reported):

1. an explicit ``levels={factor: (low, high)}`` from the caller;
2. numbers (including Jain's -1/+1 coding): the smaller is low;
3. booleans: False is low;
4. text: a baseline label is low: ``off, no, false, default, disabled, low, baseline, base,
   none, 0, -, -1`` (case-insensitive), when exactly one of the two is such a label. It is
   called a baseline, not "not applied": a level named off may still apply a testbed profile;
5. otherwise natural sort order (digits compared as numbers, so ``backlog8`` is below
   ``backlog4096``): the first is low.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from perfkit.errors import UsageError

LOW_LABELS = frozenset({"off", "no", "false", "default", "disabled", "low", "baseline", "base",
                        "none", "0", "-", "-1"})


def code_factor(values: pd.Series, name: str,
                levels: Mapping[str, Sequence[Any]] | None = None) -> tuple[np.ndarray, dict]:
    """Code a two-level column as -1/+1; return the codes and ``{"low": .., "high": .., "rule"}``.

    Raises :class:`~perfkit.errors.UsageError` (a ValueError) when the column is missing values
    or does not have exactly two levels.
    """
    if values.isna().any():
        raise UsageError(f"factor {name!r} has missing levels in {int(values.isna().sum())} runs")
    uniq = list(pd.unique(values))
    if len(uniq) != 2:
        shown = ", ".join(map(str, sorted(uniq, key=_natural_key)[:6]))
        raise UsageError(
            f"factor {name!r} has {len(uniq)} levels ({shown}); a 2^k design needs exactly two "
            f"(a load level is analysed per level: by={name!r}, or leave it out of the factors)")
    low, high, rule = _order(uniq, name, levels)
    codes = np.where(values.to_numpy() == high, 1.0, -1.0)
    return codes, {"low": _plain(low), "high": _plain(high), "rule": rule}


def _order(uniq: list, name: str, levels: Mapping[str, Sequence[Any]] | None) -> tuple:
    if levels and name in levels:
        low, high = levels[name]
        if {low, high} != set(uniq):
            raise UsageError(f"levels for {name!r} are {uniq}, not {[low, high]}")
        return low, high, "given"
    a, b = uniq
    if all(isinstance(v, (bool, np.bool_)) for v in uniq):
        return (a, b, "False is low") if not a else (b, a, "False is low")
    if all(isinstance(v, (int, float, np.integer, np.floating)) for v in uniq):
        return (a, b, "smaller is low") if a < b else (b, a, "smaller is low")
    lows = [v for v in uniq if str(v).strip().lower() in LOW_LABELS]
    if len(lows) == 1:
        high = b if lows[0] == a else a
        return lows[0], high, f"{lows[0]!s} is a baseline label"
    first, second = sorted(uniq, key=_natural_key)
    return first, second, "natural sort order"


def _natural_key(value: Any) -> tuple:
    parts = re.split(r"(\d+)", str(value))
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in parts)


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value
