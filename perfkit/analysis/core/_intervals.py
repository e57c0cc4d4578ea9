"""The one rule for an interval a reader can use: when it is printed, and when ``not
estimable`` (with the reason) takes its place.

An interval is not estimable when

- its ends differ by more than :data:`MAX_SPREAD` times (``379 [4.39, 32800]`` ms: a t
  interval on the logs of 3 runs, one of them saturated, says nothing a reader can act on); or
- it rests on a run that saturated or failed: an estimate that every run enters (the
  geometric mean of 2-4 runs, a factorial effect on the cell means), or an order statistic
  that is such a run's value. A saturated run's latency is the queue of a rate it did not
  sustain, a failed run has no value: neither bounds the configuration's own value.

The rule is for intervals of positive quantities on a ratio scale (latencies, throughputs,
ratios, a peak concurrency); a parameter whose range includes 0 (the USL's kappa) keeps its
interval. Every table and answer that prints such an interval applies :func:`judge`: a tidy
frame sets the interval's columns to missing with the reason in :data:`NOT_ESTIMABLE_COLUMN`, a
printed cell says :func:`text` (:func:`interval_or_reason`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from perfkit.vocabulary import RunStatus

#: the widest interval printed: its ends differ by at most this factor
MAX_SPREAD = 100.0
#: the words that take an interval's place
NOT_ESTIMABLE = "not estimable"
#: the column of a tidy frame that says which interval of the row is not estimable, and why
NOT_ESTIMABLE_COLUMN = "not_estimable"


def judge_interval(low: float, high: float, *, n_saturated: int = 0, n_failed: int = 0,
          n_runs: int | None = None, every_run_counts: bool = True,
          doubtful_values: Sequence[float] = (), side_of: float | None = None) -> str:
    """Why the interval ``[low, high]`` is not estimable, or ``""`` when it may be printed.

    ``n_saturated`` / ``n_failed``: runs of that status among those the estimate was computed
    from (of ``n_runs``). With ``every_run_counts`` (a mean, a fitted effect) any of them
    makes the interval rest on it; otherwise (order statistics) only when one of
    ``doubtful_values`` (their values) is at or beyond an end. ``side_of``: the no-effect
    value of an effect's interval (1 for a ratio); an interval wholly on one side of it gives
    the effect's direction and a bound a reader can act on, whatever its spread (the demo's
    listen backlog at 256 connections: x0.0182 [0.000937, 0.354] over 3 vs 3 runs, Bonferroni
    over 3 loads), so the spread rule is for intervals that hold it.
    """
    if _missing(low) or _missing(high):
        return ""
    doubt = _doubt(low, high, n_saturated, n_failed, n_runs, every_run_counts,
                   doubtful_values)
    if doubt:
        return doubt
    beside = side_of is not None and (low > side_of or high < side_of)
    if low > 0 and math.isfinite(high) and high / low > MAX_SPREAD and not beside:
        return f"its ends differ {high / low:.3g}x (more than {MAX_SPREAD:g}x)"
    return ""


def not_estimable_text(reason: str) -> str:
    """``not estimable: its ends differ 7470x (more than 100x)``."""
    return f"{NOT_ESTIMABLE}: {reason}"


def interval_or_reason(printed: str, reason: str) -> str:
    """``printed`` (the interval as a page writes it), or ``not estimable: reason``."""
    return not_estimable_text(reason) if reason else printed


def _doubt(low: float, high: float, n_saturated: int, n_failed: int, n_runs: int | None,
           every_run_counts: bool, values: Sequence[float]) -> str:
    bad = [(n, word) for n, word in ((n_saturated, RunStatus.SATURATED),
                                     (n_failed, RunStatus.FAILED)) if n]
    if not bad:
        return ""
    if not every_run_counts and not any(v <= low or v >= high for v in values
                                        if not _missing(v)):
        return ""
    of = f" of {n_runs}" if n_runs else ""
    runs = " and ".join(f"{n}{of if k == 0 else ''} run(s) that {word}"
                        for k, (n, word) in enumerate(bad))
    return f"it rests on {runs}"


def _missing(value: float) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))

