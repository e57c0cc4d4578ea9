"""The direction of a Mann-Whitney comparison from the ranks: defined where the ratio is not
(values <= 0), ranking failed runs and missing values worst as :func:`perfkit.stats.compare`
does."""

from __future__ import annotations

import math

import numpy as np

from perfkit.analysis.core._metrics import Metric
from perfkit.stats._dist import rankdata


def ranks_higher(base: np.ndarray, new: np.ndarray, failed_base: np.ndarray,
                 failed_new: np.ndarray, lower_is_better: bool) -> bool | None:
    """Whether new's mean rank lies above base's (None: level), ranking failed runs and
    missing values worst as :func:`perfkit.stats.compare` does: the direction of the
    Mann-Whitney U test, defined where the ratio is not (values <= 0)."""
    worst = math.inf if lower_is_better else -math.inf
    sides = []
    for values, failed in ((base, failed_base), (new, failed_new)):
        v = np.asarray(values, dtype=float).copy()
        v[np.asarray(failed, dtype=bool) | np.isnan(v)] = worst
        sides.append(v)
    if not (len(sides[0]) and len(sides[1])):
        return None
    ranks = rankdata(np.concatenate(sides))
    gap = ranks[len(sides[0]):].mean() - ranks[:len(sides[0])].mean()
    return None if gap == 0 else bool(gap > 0)


def side_ranks_higher(sides, failed, metric: Metric, exclude_failed: str | None
                      ) -> bool | None:
    """:func:`ranks_higher` of two ``(values, statuses)`` sides and their ranked-worst flags,
    the failed runs left out when ``exclude_failed`` is set."""
    values = [np.asarray(v, dtype=float) for v, _ in sides]
    flags = [np.asarray(f, dtype=bool) | np.isnan(v) for v, f in zip(values, failed,
                                                                      strict=True)]
    if exclude_failed is not None:
        values = [v[~f] for v, f in zip(values, flags, strict=True)]
        flags = [f[~f] for f in flags]
    return ranks_higher(values[0], values[1], flags[0], flags[1], metric.lower_is_better)
