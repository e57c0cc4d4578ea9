"""Welch's t on log per-run values: the test :func:`perfkit.stats.compare` uses where the rank
test's smallest attainable p sits at its floor.

The exact Mann-Whitney U test of n vs m runs can give no p below 2 / C(n + m, n) (0.0079 at 5 vs
5); times a Holm family of 6 that is 0.048, so only a complete separation of the runs reaches
alpha 0.05 and a seventh comparison would make every row untestable. Every permutation test has
that floor (a permutation test on the log ratio too: the same C(n + m, n) splits). Welch's t has
a continuous null distribution, so it has none.

The statistic is the difference of the mean logs, new minus base, over its standard error
``sqrt(s_new^2 / n_new + s_base^2 / n_base)`` (Welch, "The generalization of 'Student's' problem
when several different population variances are involved", Biometrika 34, 1947). For two groups
this is the HC2 sandwich t of the factorial's effects (MacKinnon & White, J. Econometrics 29,
1985; Imbens & Kolesar, REStat 98, 2016), so a two-cell contrast has one standard error whichever
table shows it. The effect is the ratio of the geometric means new/base with the t interval of
the log difference.

The degrees of freedom. With 4-6 runs a side and the small levels of a Holm family (alpha / m),
the Welch-Satterthwaite df (Satterthwaite, Biometrics Bulletin 2, 1946) make the test liberal when
the two spreads differ: 1.1-1.4 times its level at spreads 4:1 (normal logs, 200,000 data sets a
cell; the small-sample liberality Best & Rayner, Technometrics 29, 1987, report). Hsu's df, the
smaller side's n - 1 (Hsu 1938; Scheffe, JASA 65, 1970), can never be liberal but halves the
power. perfkit takes :data:`DF_TOWARD_WELCH` of the way from Hsu's df to Welch-Satterthwaite's:
measured at 0.78-1.01 times its level for spreads 3:1 to 6:1 at 4 vs 4 to 6 vs 6 runs and
levels 0.05 to 0.05 / 12 (within twice the Monte Carlo error of 1 at worst), and below 1 for
equal, heavy-tailed, skewed and slow-run spreads (``benchmarks/calibration_floor.py``, which also
gives its power beside the rank test's).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from perfkit.stats._dist import t_ppf, t_sf

#: the share of the way from Hsu's conservative df (n_min - 1) to Welch-Satterthwaite's df the
#: test's df take (module docstring: the calibration that keeps its size at 4-6 runs a side)
DF_TOWARD_WELCH = 0.4


@dataclasses.dataclass(frozen=True)
class WelchLog:
    """Welch's t of log ``new`` against log ``base``: the ratio of geometric means new/base
    with its interval at ``level``, the two-sided p, the df and the log difference's se."""

    ratio: float
    low: float
    high: float
    level: float
    p_value: float
    df: float
    se: float


def welch_log(base: np.ndarray, new: np.ndarray, level: float) -> WelchLog | None:
    """Welch's t on the logs of two sets of positive finite per-run values (its df as the
    module docstring says), with the ratio's interval at coverage ``level``; None when neither
    side has a spread (equal values: no variance to scale the difference by) or a side has
    fewer than 2 runs."""
    lb, ln = np.log(np.asarray(base, dtype=float)), np.log(np.asarray(new, dtype=float))
    if min(len(lb), len(ln)) < 2:
        return None
    vb, vn = float(lb.var(ddof=1)) / len(lb), float(ln.var(ddof=1)) / len(ln)
    if vb + vn <= 0:
        return None
    se = math.sqrt(vb + vn)
    satterthwaite = (vb + vn) ** 2 / (vb ** 2 / (len(lb) - 1) + vn ** 2 / (len(ln) - 1))
    hsu = min(len(lb), len(ln)) - 1.0
    df = hsu + DF_TOWARD_WELCH * (satterthwaite - hsu)
    diff = float(ln.mean() - lb.mean())
    p = float(2 * t_sf(abs(diff) / se, df))
    half = float(t_ppf(0.5 + level / 2, df)) * se
    return WelchLog(math.exp(diff), math.exp(diff - half), math.exp(diff + half), level, p, df,
                    se)
