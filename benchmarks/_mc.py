"""Monte Carlo shares as the calibration scripts print them."""

from __future__ import annotations

import math


def share_pm(k: int, n: int) -> str:
    """``k`` of ``n`` simulated cases as a share ± twice its binomial standard error,
    ``0.037±0.010`` (the error floored at one case in ``n``: a share of 0 is not exact);
    ``nan±nan`` without a case."""
    if not n:
        return "nan±nan"
    p = k / n
    return f"{p:.3f}±{2 * math.sqrt(max(p * (1 - p), 1 / n) / n):.3f}"
