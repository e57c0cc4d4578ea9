"""Independent arithmetic for the value of a configuration's percentile (the estimate
:func:`perfkit.stats.percentile_ci_across_runs` gives), written from its documented rule."""

from __future__ import annotations

import math

import numpy as np


def median_run_value(values) -> float:
    """The median of the per-run values from 5 runs (and for 1); with 2-4 runs their geometric
    mean, the median of the log-normal spread the few-runs interval assumes."""
    v = np.asarray([x for x in values if x is not None and np.isfinite(x) and x > 0], float)
    if 2 <= len(v) < 5:
        return math.exp(float(np.log(v).mean()))
    return float(np.median(v))
