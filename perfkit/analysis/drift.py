"""Drift over the run order, and whether two arms were interleaved: one rule for every page.

Each run's residual is the log of its metric minus the mean log of the runs in its cell (same
factor levels and load), so only what changed *over time* remains. :func:`trend` fits the
ordinary least-squares slope of residual on run position and states it as the % change it
implies from the first run to the last, with a t interval; :func:`verdict` reads it:

- ``drift``: the slope differs from 0 at ``alpha``;
- ``no drift beyond ±10%``: not significant and the whole interval lies within
  ±:data:`TOLERANCE_PCT`;
- ``inconclusive``: not significant but the interval is too wide to rule out a drift of that
  size (a "no significant drift" there would claim more than the data show).

:func:`interleaving` says whether the runs of two arms alternated in time or ran one arm after
the other, in which case any drift is confounded with the arms.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats as sps

from perfkit.analysis.experiment import RunSet

#: a drift smaller than this over a whole experiment (first run to last) does not matter
TOLERANCE_PCT = 10.0
DRIFT, STABLE, INCONCLUSIVE = "drift", f"no drift beyond ±{TOLERANCE_PCT:g}%", "inconclusive"


def residuals(rows: RunSet, metric: str, cells: Sequence[str]) -> pd.DataFrame:
    """Per run with a positive value and a position: ``order, cell, residual`` (cells with
    fewer than two runs are left out: a lone run has no residual)."""
    f = rows.frame
    if metric not in f or "order" not in f:
        return pd.DataFrame(columns=["order", "cell", "residual"])
    value = pd.to_numeric(f[metric], errors="coerce")
    keep = (value > 0) & f["order"].notna()
    f, value = f[keep], value[keep]
    cols = [c for c in cells if c in f and f[c].notna().any()]
    cell = (f[cols].astype(object).apply(lambda r: ", ".join(map(str, r)), axis=1)
            if cols else pd.Series("all", index=f.index))
    log = np.log(value.astype(float))
    out = pd.DataFrame({"order": f["order"].astype(float), "cell": cell,
                        "residual": log - log.groupby(cell).transform("mean")})
    return out[cell.map(cell.value_counts()).to_numpy() >= 2].reset_index(drop=True)


@dataclasses.dataclass(frozen=True)
class Drift:
    """The trend of the residuals over the run order."""

    runs: int
    change_pct: float
    ci_low_pct: float
    ci_high_pct: float
    p_value: float
    verdict: str


def trend(res: pd.DataFrame, confidence: float = 0.95, alpha: float = 0.05) -> Drift | None:
    """The OLS trend of ``residuals`` over the order (None with fewer than 3 positions)."""
    if len(res) < 3 or res["order"].nunique() < 3:
        return None
    fit = sps.linregress(res["order"].astype(float), res["residual"].astype(float))
    t = float(sps.t.ppf(0.5 + confidence / 2, len(res) - 2))
    span = float(res["order"].max() - res["order"].min())
    pct = [100 * math.expm1(span * v) for v in
           (fit.slope, fit.slope - t * fit.stderr, fit.slope + t * fit.stderr)]
    return Drift(len(res), pct[0], pct[1], pct[2], float(fit.pvalue),
                 verdict(float(fit.pvalue), pct[1], pct[2], alpha))


def verdict(p_value: float, low_pct: float, high_pct: float, alpha: float = 0.05) -> str:
    """The drift verdict (see the module docstring)."""
    if p_value < alpha:
        return DRIFT
    if -TOLERANCE_PCT <= low_pct and high_pct <= TOLERANCE_PCT:
        return STABLE
    return INCONCLUSIVE


def interleaving(base: RunSet, new: RunSet) -> str | None:
    """A warning when one arm's runs all started before the other's (by start time, else run
    order); None when they alternate or the times are not recorded."""
    def times(rows: RunSet) -> list:
        starts = [r.start_utc for r in rows.runs if r.start_utc]
        if len(starts) == len(rows):
            return sorted(starts)
        orders = [r.order for r in rows.runs if r.order is not None]
        return sorted(orders) if len(orders) == len(rows) else []

    a, b = times(base), times(new)
    if not a or not b or type(a[0]) is not type(b[0]):
        return None
    if a[-1] < b[0] or b[-1] < a[0]:
        first = "base" if a[-1] < b[0] else "new"
        return (f"the arms were not interleaved: every {first} run ran before every "
                f"{'new' if first == 'base' else 'base'} run, so a drift over time is "
                "confounded with the change; see the drift check, and randomize the order")
    return None
