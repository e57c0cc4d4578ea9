"""Drift confounded with the arms: when BASE ran before NEW (or mostly), can a drift over time
explain the change a comparison found?

A drift over the run order adds ``b x position`` to each run's log value. When the arms
alternate in time the drift adds noise; when NEW ran ``d`` runs after BASE on average
(``d``: the mean position of NEW's runs minus BASE's, per row), it adds ``b x d`` to the
change new/base, which no test on the two arms can tell from a change. Centring the runs
within each arm removes that part, and so hides the drift from a check of all pairs of runs:
with +20% over ten BASE runs then ten NEW runs, such a check called it in 1 of 104 gates
that exited 1 (issue 22).

The drift is therefore measured from the pairs of runs of one arm and row only
(:func:`perfkit.analysis.context._drift.theil_sen` with groups: the seasonal Kendall slope and test
of Hirsch, Slack and Smith 1982, on each run's log value minus the mean log of its cell: its arm,
row, factor levels and load; failed and saturated runs left out), whose slopes the arms' levels do
not touch. Over the row's ``d`` the drift makes ``b x d``, with Sen's interval of the slope times
the distance. A row whose change is significant gets a note when the change without the drift's
part, ``change - b x d``, can be 0: its interval (the change's Moses interval and the drift's,
half-widths added in quadrature: :func:`corrected`) holds 0 (:func:`confounded`). Such a change
cannot be told from a drift; the note says so, with the change without the drift and the fix:
interleave the arms (``perfkit sweep`` randomizes the run order). A change that stays beyond 0
without the drift, while the drift is significant (Kendall, at alpha) in its direction, gets the
note that part of it is drift.

``benchmarks/calibration_drift_gate.py`` measures it: on an A/A with +20% drift over ten base
runs then ten new runs, the share of exit-1 gates that carry the note, and how often the note
is given on interleaved A/A runs without drift.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from perfkit.analysis.context._drift import Drift, drift_residuals, residual_trend, theil_sen
from perfkit.analysis.core import Metric, RunSet, peer_columns, statuses_by_cell
from perfkit.formatting import level_text
from perfkit.warning import Code, Warn
from perfkit.wording import DRIFT_FIX

#: the column of a run's arm in the frame of both arms
ARM = "_arm"
#: what to do about it, in every note
#: what to do about a drift the arms' order confounds (its words: :data:`perfkit.wording.
#: DRIFT_FIX`)
FIX = DRIFT_FIX


@dataclasses.dataclass(frozen=True)
class ArmDrift:
    """The drift within the arms: the log slope per run position with Sen's interval, the
    seasonal Kendall p, the runs it used, and the runs of both arms with their positions
    (``frame``: the rows' key columns, :data:`ARM` and ``order``)."""

    slope: float
    low: float
    high: float
    p_value: float
    runs: int
    frame: pd.DataFrame
    #: the same pairs as the drift check of every page states it (:func:`residual_trend`: the
    #: change from the first run to the last, and its verdict)
    trend: Drift | None = None

    def distance(self, keys: Sequence[str], key: Sequence) -> float:
        """Mean position of NEW's runs minus BASE's in the row ``key`` (NaN without both)."""
        f = self.frame
        mask = np.ones(len(f), dtype=bool)
        for col, value in zip(keys, key, strict=True):
            mask &= f[col].map(level_text).eq(level_text(value)).to_numpy()
        pos = f.loc[mask].groupby(ARM)["order"].mean()
        return float(pos.get("new", math.nan) - pos.get("base", math.nan))

    def made(self, d: float) -> tuple[float, float, float]:
        """The log change the drift makes over ``d`` positions: estimate, low, high."""
        ends = sorted(_times(v, d) for v in (self.low, self.high))
        return _times(self.slope, d), ends[0], ends[1]


def _times(slope: float, d: float) -> float:
    return 0.0 if d == 0 else slope * d  # an infinite end times no distance makes nothing


def positions(base: RunSet, new: RunSet) -> np.ndarray | None:
    """Each run's position in the run order of both arms together (BASE's runs first in the
    array): the rank of its start time, else its recorded order; None when not every run
    has one (nothing tells which ran first)."""
    runs = (*base.runs, *new.runs)
    starts = pd.Series([r.start_utc for r in runs], dtype=object)
    if starts.notna().all():
        return starts.rank(method="first").to_numpy(dtype=float)
    orders = [r.order for r in runs]
    if all(o is not None for o in orders):
        return np.array(orders, dtype=float)
    return None


def arm_drift(base: RunSet, new: RunSet, metric: Metric, keys: Sequence[str],
              confidence: float = 0.95) -> ArmDrift | None:
    """The drift of ``metric`` within the arms (module docstring); None without positions or
    without three positions with a value."""
    order = positions(base, new)
    if order is None:
        return None
    both = pd.concat([base.frame.assign(**{ARM: "base"}), new.frame.assign(**{ARM: "new"})],
                     ignore_index=True).assign(order=order)
    rows = RunSet(both, (*base.runs, *new.runs), factors=(*base.factors, *new.factors))
    # a run's cell: its arm, row and every factor and load level (a pooled row whose load
    # levels ran in order would otherwise show them as a drift)
    cells = list(dict.fromkeys([*keys, *peer_columns(rows), ARM]))
    statuses = statuses_by_cell(rows, metric, [c for c in cells if c in both])
    kept = rows.subset(np.array([not s.counts_as_failed for s in statuses], dtype=bool))
    res = drift_residuals(kept, metric.name, cells)
    if len(res) < 3 or res["order"].nunique() < 3:
        return None
    slope, low, high, p = theil_sen(res["order"].to_numpy(dtype=float),
                                          res["residual"].to_numpy(dtype=float), confidence,
                                          res["cell"].to_numpy())
    if math.isnan(slope):
        return None
    frame = both[[*[k for k in keys if k in both], ARM, "order"]]
    return ArmDrift(slope, low, high, p, len(res), frame,
                    residual_trend(res, confidence, within_cells=True))


def corrected(change: tuple[float, float, float],
              made: tuple[float, float, float]) -> tuple[float, float, float]:
    """The log change without the drift's part: ``change - made`` (each ``(estimate, low,
    high)``), its interval ends the estimate minus and plus the two half-widths on that side
    added in quadrature (two nearly independent estimates: the change from the arms' levels,
    the drift from the slopes within them)."""
    est = change[0] - made[0]
    low = est - math.hypot(change[0] - change[1], made[2] - made[0])
    high = est + math.hypot(change[2] - change[0], made[0] - made[1])
    return est, low, high


def confounded(change: tuple[float, float, float], made: tuple[float, float, float]) -> bool:
    """Whether the log change (estimate, low, high) without the drift's part can be 0
    (:func:`corrected`): the change cannot be told from the drift."""
    _, low, high = corrected(change, made)
    return low <= 0.0 <= high


def _ratios(values: tuple[float, float, float]) -> tuple[float, ...]:
    return tuple(math.exp(v) if math.isfinite(v) else (math.inf if v > 0 else 0.0)
                 for v in values)


def note(where: tuple[tuple[str, str], ...], change: tuple[float, float, float], d: float,
         found: ArmDrift, straddles: float | None = None, what: str | None = None) -> Warn:
    """The note of a row (``where``: its key, column and level) whose log change (estimate,
    low, high) the drift could have made (:attr:`Code.DRIFT_MAY_MAKE_CHANGE`); ``straddles``
    and ``what``: the gate's threshold ratio the change without the drift straddles, and the
    status (``"regression"``, ``"pass"``) it then cannot tell from the drift."""
    made = found.made(d)
    return Warn(Code.DRIFT_MAY_MAKE_CHANGE, where=where, change=math.exp(change[0]),
                distance_runs=d, per_run=_ratios((found.slope, found.low, found.high)),
                p_value=found.p_value, runs=found.runs, made=_ratios(made),
                without=_ratios(corrected(change, made)), straddles=straddles, what=what)


@dataclasses.dataclass(frozen=True)
class RowDrift:
    """The drift within the arms (``found``) over one row's ``distance`` between them (mean
    position of NEW's runs minus BASE's): what it makes of the row's change."""

    distance: float
    found: ArmDrift

    def corrected(self, change: tuple[float, float, float]) -> tuple[float, float, float]:
        """The log change (estimate, low, high) without the drift's part (:func:`corrected`)."""
        return corrected(change, self.found.made(self.distance))

    def significant(self, alpha: float) -> bool:
        """The drift itself is significant (the seasonal Kendall test) at ``alpha``."""
        return self.found.p_value < alpha

    def note(self, where: tuple[tuple[str, str], ...], change: tuple[float, float, float],
             straddles: float | None = None, what: str | None = None) -> Warn:
        """The note of a change the drift could have made (:func:`note`)."""
        return note(where, change, self.distance, self.found, straddles, what)


def row_drift(drift_of: ArmDriftOnce, keys: Sequence[str], key: Sequence) -> RowDrift | None:
    """The drift within the arms over the row ``key``'s distance between them; None without a
    drift estimate, or when the arms' runs sit at the same mean position (no distance)."""
    found = drift_of.get()
    if found is None:
        return None
    d = found.distance(keys, key)
    return RowDrift(d, found) if math.isfinite(d) and d != 0 else None


class ArmDriftOnce:
    """:func:`arm_drift` of two arms, computed when first asked for, then kept (the
    comparison's order check and its rows' notes read the same)."""

    def __init__(self, base: RunSet, new: RunSet, metric: Metric, keys: Sequence[str],
                 confidence: float = 0.95) -> None:
        self._args = (base, new, metric, list(keys), confidence)
        self._found: list[ArmDrift | None] = []

    def get(self) -> ArmDrift | None:
        if not self._found:
            self._found.append(arm_drift(*self._args))
        return self._found[0]


def confounding_notes(rows: Sequence, keys: Sequence[str],
                      drift_of: ArmDriftOnce) -> list[Warn]:
    """One note per row whose change the drift within the arms (``drift_of``) could have
    made (:func:`confounded`); ``rows``: the significant rows of a comparison
    (:class:`~perfkit.analysis.compare._compare.ComparisonRow`), those with a finite ratio interval
    read."""
    significant = [r for r in rows if all(
        0 < v < math.inf for v in (r.comparison.ratio, r.comparison.ratio_ci_low,
                                   r.comparison.ratio_ci_high))]
    if not significant:
        return []
    found = drift_of.get()
    if found is None:
        return []
    out = []
    for row in significant:
        d = found.distance(keys, row.key)
        c = row.comparison
        change = (math.log(c.ratio), math.log(c.ratio_ci_low), math.log(c.ratio_ci_high))
        if not math.isfinite(d) or d == 0:
            continue
        if confounded(change, found.made(d)):
            where = tuple((k, level_text(v)) for k, v in zip(keys, row.key, strict=True))
            out.append(note(where, change, d, found))
    return out
