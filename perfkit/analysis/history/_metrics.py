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
point with probability at most alpha (0.028-0.035 +- 0.006 in the same simulation); the
recent-step tests stay at alpha, one per metric.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from perfkit.analysis.core import Metric
from perfkit.analysis.history._history import HistoryAnalysis, analyse
from perfkit.stats.changepoint import ChangePoints

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
    return [a if all(v == alpha for v in lv.values()) else
            run(m, lv)
            for a, m, lv in zip(first, metrics, levels, strict=True)]
