"""The change points of several metrics of one history, with Holm over the metrics.

Each metric's change points come from a hierarchical search whose first permutation test asks
"is there any change point?" (:func:`perfkit.stats.changepoint.change_points`). Testing every
metric at alpha gave a flat history a false change point somewhere on its page in 0.064-0.080
of histories with two metrics, whatever their correlation (alpha 0.05, 12 labels,
benchmarks/calibration_changepoint_metrics.py): metrics that move together still do not make
one test. Here the first tests of the metrics at one load level are one Holm family (Holm 1979;
valid under any dependence between the metrics): ordered by their p, the k-th of m is tested
at alpha / (m - k + 1), and a metric after the first not rejected is not rejected either. A
metric's whole search runs at its Holm level, so under no change at all the page finds a change
point with probability at most alpha (0.028-0.035 +- 0.006 in the same simulation).

The tests of a step in the newest labels (:mod:`perfkit.stats.recent`), one per metric, are a
second Holm family over the metrics at each load level, of their own
(:func:`perfkit.stats.recent.holm_over_metrics`), not one family with the change points:

- they answer another question, the one CI asks (did the newest labels move against the
  segment before them?), on rows of their own, while the change points say where the level
  changed over the whole history; each family's rate is stated for what it answers;
- a recent-step test is made given the change points found (its window stops at the last one
  before it, and it is not tried across one): in one family its p would depend on the
  change points' Holm levels, which depend on its p; as a second family its p is fixed once
  the change points are, and Holm's step-down runs over fixed p-values;
- the change points keep the levels they were calibrated at (and the demo history its
  verdicts).

The price is stated, not hidden: a page's verdict of "a change somewhere" (a change point or a
recent step on either metric) on a flat history is bounded by 2 alpha (the union of two
families at alpha each). Measured by benchmarks/calibration_recent.py (2 metrics correlated
-0.8, 12 and 20 labels, normal or t3 label effects, 2000 pages each, +-0.014): a false recent
step on 0.063-0.091 of pages with each metric at alpha, 0.021-0.035 with Holm; a false change
point or recent step on 0.095-0.117 before, 0.054-0.065 now (change points alone
0.030-0.037).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

from perfkit.analysis.core import Metric
from perfkit.analysis.history._history import HistoryAnalysis, analyse
from perfkit.stats.changepoint import ChangePoints
from perfkit.stats.recent import holm_over_metrics

__all__ = ["analyse_metrics", "first_p", "holm_levels"]


def first_p(change: ChangePoints) -> float:
    """The p of the search's first test (is there any change point?): the first change point's,
    else the p it stopped at; 1 when no split could be tested."""
    firsts = [c.p_value for c in change.change_points if c.order == 1]
    p = firsts[0] if firsts else change.stop_p_value
    return p if math.isfinite(p) else 1.0


def holm_levels(p_values: Sequence[float], alpha: float) -> list[float]:
    """Each test's Holm level: the k-th smallest p of m at alpha / (m - k + 1) while each
    before it was rejected; from the first not rejected on, that test's level (which none of
    them can reach, their p being at least its p)."""
    m = len(p_values)
    levels = [alpha] * m
    stop = None
    for k, i in enumerate(sorted(range(m), key=lambda j: p_values[j])):
        level = alpha / (m - k) if stop is None else stop
        levels[i] = level
        if stop is None and not p_values[i] <= level:
            stop = level
    return levels


def analyse_metrics(history, metrics: Sequence[Metric], *, where: dict | None = None,
                    alpha: float = 0.05, confidence: float = 0.95, permutations: int = 199,
                    seed: int = 0) -> list[HistoryAnalysis]:
    """One analysis per metric (:func:`perfkit.analysis.history._history.analyse`), the change
    points of each load level tested with Holm over the metrics (module docstring)."""
    def run(m: Metric, levels: dict[tuple, float] | None = None) -> HistoryAnalysis:
        return analyse(history, m, where=where, alpha=alpha, confidence=confidence,
                       permutations=permutations, seed=seed, levels=levels)

    first = [run(m) for m in metrics]
    if len(first) < 2:
        return first
    keys = dict.fromkeys(s.key for a in first for s in a.series)
    levels: list[dict[tuple, float]] = [{} for _ in first]
    for key in keys:
        found = [(i, s) for i, a in enumerate(first) for s in a.series if s.key == key]
        for (i, _), level in zip(found, holm_levels([first_p(s.change) for _, s in found],
                                                    alpha), strict=True):
            levels[i][key] = level
    final = [a if all(v == alpha for v in lv.values()) else
             run(m, lv)
             for a, m, lv in zip(first, metrics, levels, strict=True)]
    return _recent_holm(final, alpha)


def _recent_holm(analyses: list[HistoryAnalysis], alpha: float) -> list[HistoryAnalysis]:
    """The analyses with the recent-step tests of each load level Holm-adjusted over the
    metrics (:func:`perfkit.stats.recent.holm_over_metrics`), given the change points found."""
    series = [list(a.series) for a in analyses]
    for key in dict.fromkeys(s.key for a in analyses for s in a.series):
        at = [(i, j) for i, a in enumerate(analyses) for j, s in enumerate(a.series)
              if s.key == key]
        steps = holm_over_metrics([series[i][j].recent for i, j in at], alpha)
        for (i, j), r in zip(at, steps, strict=True):
            series[i][j] = dataclasses.replace(series[i][j], recent=r)
    return [dataclasses.replace(a, series=tuple(s)) for a, s in zip(analyses, series,
                                                                     strict=True)]
