"""Drift over the run order, and whether two arms were interleaved: one rule for every page.

Each run's residual is the log of its metric minus the mean log of the runs in its cell (same
factor levels and load), so only what changed *over time* remains. Runs the run-status rule
(:mod:`perfkit.analysis.core._runstatus`) calls failed or saturated are left out first, and counted
(:func:`check_drift`): a saturated run's latency is its queue, not the system's state, and one such
run moves its cell's mean and so every residual of its cell.

:func:`residual_trend` estimates the slope of residual on run position robustly: the Theil-Sen slope
(the median of the slopes between every pair of runs; Theil 1950, Sen 1968), with Sen's
distribution-free interval, the slopes whose Kendall test does not reject at ``1 -
confidence`` (Sen 1968, eq. 2.6: the normal approximation of Kendall's S with its variance
corrected for ties). The p-value is that Kendall (Mann-Kendall) test of no trend on the same
approximation, so the test and the interval agree: ``p < 1 - confidence`` exactly when 0 lies
outside the interval (or on an end made of slopes of exactly 0, tied values). A few wild runs
move neither (the slope's breakdown point is 29%), where an ordinary least-squares slope
follows them. The
slope is stated as the % change it implies from the first run to the last;
:func:`drift_verdict` reads it:

- ``drift``: the trend differs from 0 at ``alpha``;
- ``no drift beyond ±10%``: not significant and the whole interval lies within
  ±:data:`TOLERANCE_PCT`;
- ``inconclusive``: not significant but the interval is too wide to rule out a drift of that
  size (a "no significant drift" there would claim more than the data show); also when more
  than :data:`COARSE_TIES` of the run pairs tie exactly (a metric its tool rounds, as Locust
  rounds response times to ~2 significant digits: a p50 of 2 ms is anything in [1.5, 2.5)),
  where the pairwise slopes are mostly 0 and Sen's interval shrinks to a point that no
  rounded measurement can support (``note`` says so).

:func:`interleaving` says whether the runs of two arms alternated in time or ran one arm after
the other, in which case any drift is confounded with the arms.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import cast

import numpy as np
import pandas as pd

from perfkit.analysis.core import LOAD_COLUMNS, Experiment, RunSet
from perfkit.stats._dist import norm_ppf, norm_sf
from perfkit.vocabulary import DriftVerdict
from perfkit.warning import Code, Warn
from perfkit.wording import DRIFT_TOLERANCE_PCT

#: a drift smaller than this over a whole experiment (first run to last) does not matter
TOLERANCE_PCT = DRIFT_TOLERANCE_PCT
DRIFT, STABLE, INCONCLUSIVE = DriftVerdict.DRIFT, DriftVerdict.STABLE, DriftVerdict.INCONCLUSIVE
#: above this share of run pairs with exactly equal residuals, the values are too coarse for an
#: interval to rule a drift out (continuous metrics tie in < 3% of pairs on the bundled data,
#: Locust's rounded p50 in 48%)
COARSE_TIES = 0.2
#: most runs a trend is estimated from (:func:`thinned`): 2 million pairs
TREND_RUNS = 2_000


def drift_residuals(rows: RunSet, metric: str, cells: Sequence[str]) -> pd.DataFrame:
    """Per run with a positive value and a position: ``order, cell, residual`` (cells with
    fewer than two runs are left out: a lone run has no residual)."""
    f = rows.frame
    if metric not in f or "order" not in f:
        return pd.DataFrame(columns=["order", "cell", "residual"])
    value = pd.to_numeric(f[metric], errors="coerce")
    keep = (value > 0) & np.isfinite(value) & f["order"].notna()
    f, value = f[keep], value[keep]
    cols = [c for c in cells if c in f and f[c].notna().any()]
    cell = (f[cols].astype(object).apply(lambda r: ", ".join(map(str, r)), axis=1)
            if cols else pd.Series("all", index=f.index))
    log = cast(pd.Series, np.log(value.astype(float)))  # a ufunc keeps the Series
    out = pd.DataFrame({"order": f["order"].astype(float), "cell": cell,
                        "residual": log - log.groupby(cell).transform("mean")})
    return out[cell.map(cell.value_counts()).to_numpy() >= 2].reset_index(drop=True)


def kept_rows(exp: Experiment) -> tuple[RunSet, int]:
    """The runs of ``exp`` a drift check uses, and how many were left out: those the run-status
    rule calls failed or saturated
    (:func:`perfkit.analysis.core._runstatus.experiment_statuses`)."""
    from perfkit.analysis.core import experiment_statuses

    rows = exp.rows()
    keep = np.array([not s.counts_as_failed for s in experiment_statuses(exp)], dtype=bool)
    return rows.subset(keep), int((~keep).sum())


def experiment_residuals(exp: Experiment, metric: str) -> pd.DataFrame:
    """:func:`residuals` of ``exp``'s kept runs (:func:`kept_rows`) within its cells (factors
    and load columns); ``attrs["left_out"]`` counts the runs left out."""
    rows, left_out = kept_rows(exp)
    res = drift_residuals(rows, metric, [*exp.factors, *LOAD_COLUMNS])
    res.attrs["left_out"] = left_out
    return res


@dataclasses.dataclass(frozen=True)
class Drift:
    """The trend of the residuals over the run order: the runs it used, the change from the
    first run to the last (%) with its interval, the p-value of Kendall's test, the verdict and
    the runs left out before (failed or saturated, :func:`check_drift`)."""

    runs: int
    change_pct: float
    ci_low_pct: float
    ci_high_pct: float
    p_value: float
    verdict: DriftVerdict
    left_out: int = 0
    note: str = ""


def theil_sen(x: np.ndarray, y: np.ndarray, confidence: float = 0.95,
              groups: np.ndarray | None = None) -> tuple[float, float, float, float]:
    """``(slope, low, high, p)``: the Theil-Sen slope of ``y`` on ``x``, Sen's interval at
    ``confidence`` (the slopes ``b`` whose ``|S(b)|`` stays within the normal quantile; an end
    is infinite when too few pairs can reject at all) and the two-sided p of Kendall's S at
    ``b = 0`` (no trend), on one normal approximation (Sen 1968, eq. 2.6). Pairs with equal
    ``x`` have no slope; pairs with a non-finite value are left out.

    ``groups``: only pairs within a group count (the seasonal Kendall test and slope of
    Hirsch, Slack and Smith, Water Resources Research 18, 1982: S and its variance summed
    over the groups, the slope the median of the within-group slopes), so that a level that
    differs between groups, or was removed from each, neither makes nor hides a trend."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    g = np.zeros(len(x), dtype=np.int64) if groups is None else np.unique(
        np.asarray(groups), return_inverse=True)[1].ravel()
    finite = np.isfinite(x) & np.isfinite(y)  # a run without a finite value has no slope
    x, y, g = x[finite], y[finite], g[finite]
    kept = thinned(x)
    x, y, g = x[kept], y[kept], g[kept]
    i, j = np.triu_indices(len(x), 1)
    dx, dy = x[j] - x[i], y[j] - y[i]
    pair = (dx != 0) & (g[i] == g[j])
    slopes = np.sort(dy[pair] / dx[pair])
    n_slopes = len(slopes)
    if not n_slopes:
        return math.nan, -math.inf, math.inf, math.nan
    var = sum(_ties_term(np.array([len(x[g == k])])) - _ties_term(_repeats(x[g == k]))
              - _ties_term(_repeats(y[g == k])) for k in np.unique(g)) / 18.0
    s_zero = float(np.count_nonzero(slopes > 0) - np.count_nonzero(slopes < 0))
    p = float(2 * norm_sf(abs(s_zero) / math.sqrt(var))) if var > 0 else math.nan
    reach = norm_ppf(0.5 + confidence / 2) * math.sqrt(max(var, 0.0))
    k = int(math.ceil((n_slopes - reach) / 2))  # 1-based: S(b) <= reach from the k-th on
    low, high = (slopes[k - 1], slopes[n_slopes - k]) if k >= 1 else (-math.inf, math.inf)
    return float(np.median(slopes)), float(low), float(high), p


def thinned(x: np.ndarray) -> np.ndarray:
    """The positions of the runs a trend uses: all of them up to :data:`TREND_RUNS`, else every
    k-th in the order of ``x`` (k = ceil(n / TREND_RUNS)), in their original order. The pairs
    grow as the square of the runs (50 million at 10,000); a subsample chosen by position
    alone keeps Kendall's test exact under no trend and Sen's interval its coverage, on
    fewer runs."""
    if len(x) <= TREND_RUNS:
        return np.arange(len(x))
    step = math.ceil(len(x) / TREND_RUNS)
    return np.sort(np.argsort(x, kind="stable")[::step])


def _repeats(values: np.ndarray) -> np.ndarray:
    _, counts = np.unique(values, return_counts=True)
    return counts[counts > 1]


def _ties_term(counts: np.ndarray) -> float:
    k = counts.astype(float)
    return float(np.sum(k * (k - 1) * (2 * k + 5)))


def residual_trend(res: pd.DataFrame, confidence: float = 0.95, alpha: float = 0.05,
          within_cells: bool = False) -> Drift | None:
    """The Theil-Sen trend of ``residuals`` over the order (see the module docstring; None
    with fewer than 3 positions); ``res.attrs["left_out"]`` (a count, as
    :func:`experiment_residuals` sets it) is carried to the result. ``within_cells``: from
    the pairs of runs of one cell only (:func:`theil_sen` with groups), for cells that ran
    one after the other (two arms not interleaved), where a pair across cells compares
    residuals centred apart and hides a drift."""
    if len(res) < 3 or res["order"].nunique() < 3:
        return None
    order = res["order"].to_numpy(dtype=float)
    resid = res["residual"].to_numpy(dtype=float)
    groups = res["cell"].to_numpy() if within_cells else None
    slope, low, high, p = theil_sen(order, resid, confidence, groups)
    span = float(order.max() - order.min())
    pct = [math.nan if math.isnan(v) else 100 * math.expm1(span * v)
           for v in (slope, low, high)]
    left_out = res.attrs.get("left_out", 0)
    found, note = drift_verdict(p, pct[1], pct[2], alpha), ""
    ties = tied_share(order, resid)
    if ties > COARSE_TIES and found == STABLE:
        found = INCONCLUSIVE
        note = (f"the values tie exactly in {ties:.0%} of the run pairs (a metric its tool "
                "rounds): the interval cannot rule out a drift smaller than the rounding")
    if pct[1] == pct[2]:  # a zero-width interval (tied slopes) is no interval
        pct[1] = pct[2] = math.nan
        found = INCONCLUSIVE if found == STABLE else found
        note = note or "the pairwise slopes tie at the interval's ends: no interval"
    used = len(thinned(order[np.isfinite(order) & np.isfinite(resid)]))
    if used < len(res):
        note = "; ".join(filter(None, [
            f"the trend is from {used} of the {len(res)} runs, evenly spaced in run order "
            f"(Theil-Sen's pairs grow as the square of the runs)", note]))
    return Drift(len(res), pct[0], pct[1], pct[2], p, found,
                 left_out if isinstance(left_out, int) else 0, note)


def tied_share(x: np.ndarray, y: np.ndarray) -> float:
    """The share of pairs with different ``x`` whose ``y`` are exactly equal (of the runs
    :func:`thinned` keeps)."""
    kept = thinned(x)
    x, y = x[kept], y[kept]
    i, j = np.triu_indices(len(x), 1)
    pair = x[i] != x[j]
    return float(np.mean(y[i][pair] == y[j][pair])) if pair.any() else 0.0


def check_drift(exp: Experiment, metric: str, confidence: float = 0.95,
          alpha: float = 0.05) -> Drift | None:
    """The drift of ``metric`` over ``exp``'s run order: :func:`residual_trend` of
    :func:`experiment_residuals` (failed and saturated runs left out, and counted)."""
    return residual_trend(experiment_residuals(exp, metric), confidence, alpha)


def drift_verdict(p_value: float, low_pct: float, high_pct: float, alpha: float = 0.05
            ) -> DriftVerdict:
    """The drift verdict (see the module docstring)."""
    if p_value < alpha:
        return DRIFT
    if -TOLERANCE_PCT <= low_pct and high_pct <= TOLERANCE_PCT:
        return STABLE
    return INCONCLUSIVE


def describe_drift(confidence: float = 0.95, alpha: float = 0.05) -> str:
    """The drift check in one Methods sentence."""
    return (f"Drift over the run order was checked on each run's log value minus the mean log "
            f"of its cell (same factor levels and load), leaving out the runs the run-status "
            f"rule calls failed or saturated: the Theil-Sen slope (median of the pairwise "
            f"slopes) with Sen's distribution-free {confidence:.0%} interval and Kendall's test "
            f"of no trend at alpha {alpha:g}, robust to a few wild runs, stated as the change "
            f"from the first run to the last; a trend that is not significant but whose "
            f"interval reaches beyond ±{TOLERANCE_PCT:g}%, or whose values tie in more than "
            f"{COARSE_TIES:.0%} of the run pairs (a rounded metric), is inconclusive, not "
            f"\"no drift\".")


def interleaving(base: RunSet, new: RunSet) -> Warn | None:
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
        return Warn(Code.ARMS_NOT_INTERLEAVED, first=first,
                    then="new" if first == "base" else "base")
    return None
