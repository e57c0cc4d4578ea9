
"""Minimum detectable effect of a t test on one effect of a linear model (the factorial's).

A factorial effect is tested with ``t = q_hat / se(q_hat)`` on ``nu`` degrees of freedom (Jain
1991, *The Art of Computer Systems Performance Analysis*, ch. 18: the error df of a pooled
variance; :func:`perfkit.stats.factorial` uses the HC2 standard error and its Satterthwaite df,
and this module reads both off the interval it reports, so the power is that of the same
test, with ``nu`` the Satterthwaite df, itself an approximation). With normal
errors ``t`` follows a noncentral t distribution with ``nu`` degrees of freedom and
noncentrality ``lambda = q / sigma_q``; the two-sided test at level ``a`` rejects when
``|t| > t_(1 - a/2, nu)``, so its power is

    power(lambda) = 1 - F(t_c; nu, lambda) + F(-t_c; nu, lambda),  t_c = t_(1 - a/2, nu)

(:func:`power_at`; Cohen 1988, *Statistical Power Analysis*, ch. 2; Kutner et al. 2005,
*Applied Linear Statistical Models*, sec. 16.10). The minimum detectable effect at a power solves
``power(lambda) = power``: it is ``lambda * sigma_q``, with ``sigma_q`` estimated by the
effect's standard error, read off its t interval (half-width / ``t_((1 + c)/2, nu)``). That
is a plug-in: with few error df the spread is itself uncertain, so the stated size is a
point estimate of what the design could detect. ``lambda`` is close to the textbook
``t_(1 - a/2, nu) + t_(power, nu)`` (:func:`approximate_noncentrality`: up to 4% low at 4
error df and alpha 0.05/3, within 1% from 12 df), which understates it at few df.

Within a Holm family of ``m`` tests the level is ``alpha / m``: Holm's first step, the
strictest (a bound, since later steps test at larger levels), as
:func:`perfkit.stats.power.min_detectable_ratio` does for the run-vs-run comparison.
``tests/test_stats_tpower.py`` checks the stated power by simulating the design.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any

import numpy as np

from perfkit.stats import _simcache
from perfkit.stats._dist import chi2_ppf, norm_cdf, t_ppf


@functools.cache
def _nodes() -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Legendre nodes on (0, 1) and their weights: quantiles of the chi-square spread
    (computed on first use: an eigenproblem of 256 x 256)."""
    x, w = np.polynomial.legendre.leggauss(256)
    return (x + 1) / 2, w / 2


@dataclasses.dataclass(frozen=True)
class DetectableEffect:
    """The smallest effects the design detects with probability ``power``.

    ``high`` and ``low`` are on the scale the effect is reported on: ratios (``high`` > 1 >
    ``low``) when ``log``, else additive effects (``+d`` and ``-d``); None when not
    ``testable`` (``reason`` says why). ``se`` is the effect's standard error on the analysis
    scale (log ratio, or the metric's unit), ``df`` the degrees of freedom of its t.
    """

    testable: bool
    high: float | None
    low: float | None
    log: bool
    power: float
    alpha: float
    alpha_adjusted: float
    family_size: int
    df: float | None
    se: float
    reason: str | None = None
    #: the unit of an additive effect (``ms``), printed after it
    unit: str = ""

    @property
    def ratio_high(self) -> float | None:
        return self.high if self.log else None

    @property
    def ratio_low(self) -> float | None:
        return self.low if self.log else None

    @property
    def statement(self) -> str:
        """``could detect x1.39 / x0.72 at 80% power, alpha 0.0167, 12 df``."""
        if not self.testable:
            return f"no minimum detectable effect: {self.reason}"
        if self.se == 0:
            return ("could detect any change (the runs had no spread within the cells), "
                    f"alpha {self.alpha_adjusted:.3g}, {self.df:.3g} df")
        size = (f"x{self.high:.3g} / x{self.low:.3g}" if self.log
                else f"±{self.high:.3g} {self.unit}".rstrip())
        return (f"could detect {size} at {self.power:.0%} power, alpha "
                f"{self.alpha_adjusted:.3g}, {self.df:.3g} df")


def noncentrality(df: float, alpha: float, power: float = 0.8) -> float:
    """The noncentrality at which the two-sided t test at level ``alpha`` on ``df`` degrees of
    freedom has probability ``power`` of rejecting (module docstring).

    Remembered by its three inputs (:mod:`perfkit.stats._simcache`: in the process, and in the
    run store's folder where a command names it): the root is found once per design."""
    digest = _simcache.key("noncentrality", "Gauss-Legendre 256", float(df), float(alpha),
                           float(power))
    return _simcache.remembered(digest, lambda: _solve_noncentrality(df, alpha, power))


def _solve_noncentrality(df: float, alpha: float, power: float) -> float:
    from scipy import optimize  # only when not remembered: 0.3x the import of numpy and pandas

    crit = float(t_ppf(1 - alpha / 2, df))

    def reach(lam: float) -> float:
        return power_at(lam, df, crit) - power

    high = approximate_noncentrality(df, alpha, power)
    for _ in range(200):  # the approximation is within ~10%: this loops little
        if reach(high) > 0:
            break
        high *= 1.1
    return float(optimize.brentq(reach, 0.0, high, xtol=1e-10))


def power_at(lam: float, df: float, crit: float) -> float:
    """P(|T| > crit) for T noncentral t(df, lam): E[Phi(lam - crit s) + Phi(-lam - crit s)],
    s = sqrt(V / df), V ~ chi2(df), averaged over the quantiles of V by Gauss-Legendre
    quadrature (scipy's ``nct`` loses accuracy in the far tail at few df)."""
    u, w = _nodes()
    s = np.sqrt(chi2_ppf(u, df) / df)
    inside = norm_cdf(lam - crit * s) + norm_cdf(-lam - crit * s)
    return float(np.dot(w, inside))


def approximate_noncentrality(df: float, alpha: float, power: float = 0.8) -> float:
    """The textbook approximation ``t_(1 - alpha/2, df) + t_(power, df)``."""
    return float(t_ppf(1 - alpha / 2, df) + t_ppf(power, df))


def min_detectable_effect(ci_low: float, ci_high: float, df: float | None, *,
                          confidence: float = 0.95, alpha: float = 0.05, family_size: int = 1,
                          power: float = 0.8, log: bool = True,
                          unit: str = "") -> DetectableEffect:
    """The minimum detectable effect of an effect reported with the ``confidence`` t interval
    ``[ci_low, ci_high]`` on ``df`` error degrees of freedom (ratios when ``log``, else
    additive in ``unit``), tested at ``alpha`` in a Holm family of ``family_size`` (module
    docstring). A zero-width interval (no spread within the cells) detects any change:
    ``high == low == 1`` (0 additive) and ``se == 0``."""
    level = alpha / max(family_size, 1)
    base: dict[str, Any] = dict(log=log, power=power, alpha=alpha, alpha_adjusted=level,
                family_size=family_size, df=df, unit=unit)
    if df is None or not df > 0:
        return DetectableEffect(False, None, None, se=math.nan,
                                reason="no degrees of freedom", **base)
    bounds_ok = all(math.isfinite(v) for v in (ci_low, ci_high)) and (
        not log or (ci_low > 0 and ci_high > 0))
    if not bounds_ok or ci_high < ci_low:
        return DetectableEffect(False, None, None, se=math.nan,
                                reason="the effect has no finite interval", **base)
    width = math.log(ci_high / ci_low) if log else ci_high - ci_low
    se = width / (2 * float(t_ppf(0.5 + confidence / 2, df)))
    d = noncentrality(df, level, power) * se
    high, low = (math.exp(d), math.exp(-d)) if log else (d, -d)
    return DetectableEffect(True, high, low, se=se, **base)
