"""One value per run, from whatever a run carries: histogram, printed percentile or a float.

:func:`per_run` turns the items given to :func:`perfkit.stats.percentile_ci_across_runs` into
a :class:`PerRun`: each run's percentile (ms), and what the diagnostics need where it is known
(the percentiles either side, the requests beyond the percentile, the run order).

A :class:`~perfkit.model.Run` gives the percentile its tool printed when it printed that one,
else its histogram's: wrk2 computes its printed percentiles on its full histogram, while
perfkit's histogram of a wrk2 run is rebuilt from the printed spectrum and is coarser in the
tail (p99 3.49 ms rebuilt vs 3.38 ms printed in tests/fixtures/wrk2/sweep). So a run gives the
same value whether it comes as a Run or as its row of :func:`perfkit.frames.runs_frame`.
"""

from __future__ import annotations

import dataclasses
import math
import typing
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import numpy as np

from perfkit.histogram import LAYOUT, LatencyHistogram
from perfkit.model import Run
from perfkit.stats.bootstrap import percentiles_us, trimmed_cumulative
from perfkit.units import to_float

#: fewer requests than this beyond a run's percentile make it one of the run's slowest few
MIN_TAIL_REQUESTS = 10


@dataclasses.dataclass(frozen=True)
class PerRun:
    """Arrays with one entry per run, in the order given; NaN where unknown."""

    values_ms: np.ndarray
    #: p(hi) / p(lo) around the percentile, from histograms (see :func:`jump_percentiles`)
    jump_ratio: np.ndarray
    jump_percentiles: tuple[float, float]
    #: requests beyond the percentile: N (100 - q) / 100
    tail_requests: np.ndarray
    #: position in the run order (Run.order, else the start time in seconds)
    order: np.ndarray
    has_histogram: np.ndarray
    #: a run without a histogram: its printed p(q) / its printed ``shape_q`` (NaN where it
    #: has no such pair), the tail's shape that printed percentiles show (see
    #: :func:`shape_percentile`)
    shape_ratio: np.ndarray | None = None
    shape_q: float = math.nan


def jump_percentiles(q: float) -> tuple[float, float]:
    """Percentiles either side of a tail percentile: twice and half its tail (p98, p99.5)."""
    tail = 100.0 - q
    return q - tail, q + tail / 2.0


def shape_percentile(q: float, printed: Sequence[float]) -> float:
    """The printed percentile a tail percentile ``q`` is read against, for a run without a
    histogram: the highest printed below :func:`jump_percentiles`' lower one (p90 for wrk's
    p99, p98 for Locust's), NaN when none is printed or ``q`` is not a tail percentile."""
    if not 90.0 <= q < 100.0:
        return math.nan
    below = [p for p in printed if p <= jump_percentiles(q)[0]]
    return max(below) if below else math.nan


def per_run(items: Sequence[Any] | np.ndarray, q: float) -> PerRun:
    """Per-run values and diagnostics inputs for percentile ``q`` (0-100 scale)."""
    lo, hi = jump_percentiles(q)
    check_jump = 90.0 <= q < 100.0
    if isinstance(items, np.ndarray) and items.ndim == 2:
        return _from_counts(np.asarray(items, dtype=np.int64), q, (lo, hi), check_jump)
    n = len(items)
    values, jump, tail, order = (np.full(n, np.nan) for _ in range(4))
    has_hist = np.zeros(n, dtype=bool)
    shape = np.full(n, np.nan)
    shape_q = shape_percentile(q, sorted({p for it in items if isinstance(it, Run)
                                          for p in it.percentiles_ms}))
    for i, item in enumerate(items):
        hist = _histogram(item)
        if hist is not None:
            p = hist.percentiles_us([q, lo, hi] if check_jump else [q]) / 1000.0
            values[i], has_hist[i] = p[0], True
            tail[i] = hist.total_count * (100.0 - q) / 100.0
            if check_jump and tail[i] >= MIN_TAIL_REQUESTS and p[1] > 0:
                jump[i] = p[2] / p[1]
        elif isinstance(item, LatencyHistogram):  # empty
            values[i] = math.nan
        elif not isinstance(item, Run):
            values[i] = to_float(item)
        if isinstance(item, Run):
            printed = item.percentiles_ms.get(q)
            if printed is not None:  # the tool's own value (see run_value_ms)
                values[i] = float(printed)
            elif hist is None:
                values[i] = math.nan
            if hist is None and item.requests:
                tail[i] = item.requests * (100.0 - q) / 100.0
            if hist is None:
                shape[i] = _shape_ratio(item, q, shape_q)
            order[i] = _order_of(item)
    return PerRun(values, jump, (lo, hi), tail, order, has_hist, shape, shape_q)


def stack_counts(items: Any, runs: PerRun) -> tuple[np.ndarray, int]:
    """Counts matrix of the runs that have a value (all need a histogram), and how many lack one."""
    usable = np.isfinite(runs.values_ms)
    if not runs.has_histogram[usable].all():
        raise ValueError("the cluster bootstrap needs a histogram for every run")
    missing = int((~usable).sum())
    if isinstance(items, np.ndarray) and items.ndim == 2:
        return np.asarray(items, dtype=np.int64)[usable], missing
    hists = [_histogram(it) for it, ok in zip(items, usable, strict=True) if ok]
    if not hists:
        return np.zeros((0, LAYOUT.counts_len), dtype=np.int64), missing
    return np.vstack([typing.cast(LatencyHistogram, h).counts for h in hists]), missing


# -- internals ---------------------------------------------------------------------------------
def _histogram(item: Any) -> LatencyHistogram | None:
    if isinstance(item, LatencyHistogram):
        return item if item.total_count else None
    if isinstance(item, Run) and item.histogram is not None and item.histogram.total_count:
        return item.histogram
    return None


def _shape_ratio(run: Run, q: float, shape_q: float) -> float:
    top, low = run.percentiles_ms.get(q), run.percentiles_ms.get(shape_q)
    if top is None or low is None or not (low > 0 and math.isfinite(top)):
        return math.nan
    return float(top) / float(low)


def _order_of(run: Run) -> float:
    if run.order is not None:
        return float(run.order)
    if run.start_utc:
        try:
            return datetime.fromisoformat(str(run.start_utc).replace("Z", "+00:00")).timestamp()
        except ValueError:
            return math.nan
    return math.nan


def _from_counts(counts: np.ndarray, q: float, jump_qs: tuple[float, float],
                 check_jump: bool) -> PerRun:
    if counts.shape[1] > LAYOUT.counts_len:
        raise ValueError("a counts matrix must be runs x LAYOUT.counts_len")
    n = counts.shape[0]
    values, jump = np.full(n, np.nan), np.full(n, np.nan)
    totals = counts.sum(axis=1).astype(np.float64)
    used = totals > 0
    if used.any():
        cum, first = trimmed_cumulative(counts[used])
        values[used] = percentiles_us(cum, first, q) / 1000.0
        if check_jump:
            low = percentiles_us(cum, first, jump_qs[0])
            high = percentiles_us(cum, first, jump_qs[1])
            jump[used] = high / low
    tail = np.where(used, totals * (100.0 - q) / 100.0, np.nan)
    jump[~(tail >= MIN_TAIL_REQUESTS)] = np.nan
    return PerRun(values, jump, jump_qs, tail, np.full(n, np.nan), used)
