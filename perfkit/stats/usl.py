"""Throughput scaling: the Universal Scalability Law and Amdahl's law, fitted to every run.

The Universal Scalability Law (Gunther, *Guerrilla Capacity Planning*, Springer 2007, ch. 4-6)::

    X(N) = gamma * N / (1 + sigma * (N - 1) + kappa * N * (N - 1))

- ``N`` is a concurrency (closed-loop connections or users), never an offered rate: under
  open-loop load the throughput is just min(rate, capacity), which says nothing about contention.
- ``sigma`` in [0, 1] is contention (serial fraction), ``kappa`` >= 0 coherency (crosstalk),
  ``gamma`` > 0 the throughput of one unit of concurrency.
- Amdahl's law is the special case ``kappa = 0``.

The fit is bounded nonlinear least squares (:func:`scipy.optimize.least_squares`, method
``trf``) on every observation, not on means, started from the linearised form
``N / X = 1/gamma + (sigma/gamma)(N - 1) + (kappa/gamma) N (N - 1)`` (ordinary least squares).
Confidence intervals come from a seeded bootstrap of the runs' residuals
(:mod:`perfkit.stats._usl_bootstrap`: wild by default, studentized). A peak ``N* =
sqrt((1 - sigma) / kappa)`` is claimed only when an F-test of the USL against Amdahl rejects
``kappa = 0``.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from perfkit.errors import PerfkitError
from perfkit.stats._dist import f_sf
from perfkit.stats._usl_bootstrap import (
    bootstrap_estimates,
    interval,
    interval_method,
    n_star_of,
    percentile_interval,
)
from perfkit.stats._usl_model import best_fit, linearised_start, rss, standard_errors, usl
from perfkit.warning import Code, Warn
from perfkit.wording import NSTAR_COVERAGE

__all__ = ["RATE_NAMES", "ScalingFit", "fit_amdahl", "fit_usl", "kappa_test", "linearised_start",
           "usl"]

#: where the N* interval's coverage was measured (benchmarks/calibration_usl.py)
NSTAR_COVERAGE_NOTE = NSTAR_COVERAGE
#: names of columns that hold an offered rate, never a concurrency
RATE_NAMES = ("target_rate_rps", "rate", "rate_rps", "throughput_rps")
#: mean throughput at the lowest N, as a share of the highest, above which the rise is unseen
LINEAR_REGION_SHARE = 0.8


@dataclasses.dataclass(frozen=True)
class ScalingFit:
    """A fitted USL (``model='usl'``) or Amdahl (``model='amdahl'``, ``kappa`` fixed at 0).

    ``*_ci`` are ``(low, high)`` bootstrap intervals at ``confidence`` (``bootstrap`` names the
    resampling scheme, ``interval`` the kind asked for, studentized or percentile, and
    ``ci_methods`` what each of sigma, kappa, gamma got: ``bootstrap-t``, or ``percentile`` on
    its bound; ``n_star_ci`` is a percentile interval of the same refits, infinite above when
    resamples lose the peak, ``n_star_warnings`` what to know about it, also in ``warnings``);
    ``residual_se`` is the residual standard error sqrt(RSS / (n_obs - n_params)) in the unit of
    the throughput given. ``n_star`` (the concurrency of peak throughput) is None unless the
    F-test rejected Amdahl at ``alpha``; ``n_star_reason`` says why either way.
    """

    model: str
    sigma: float
    kappa: float
    gamma: float
    sigma_ci: tuple[float, float]
    kappa_ci: tuple[float, float]
    gamma_ci: tuple[float, float]
    confidence: float
    residual_se: float
    rss: float
    n_obs: int
    n_levels: int
    dof: int
    bootstrap: str
    interval: str
    n_resamples: int
    seed: int | None
    n_star: float | None = None
    n_star_ci: tuple[float, float] | None = None
    x_at_n_star: float | None = None
    #: why a peak N* is claimed, or not (:attr:`Code.NSTAR_CLAIMED`, ``NSTAR_NOT_CLAIMED``,
    #: ``AMDAHL_NO_PEAK``); None before the test
    n_star_reason: Warn | None = None
    f_stat: float | None = None
    f_p_value: float | None = None
    alpha: float | None = None
    n: tuple[float, ...] = ()
    x: tuple[float, ...] = ()
    warnings: tuple[Warn, ...] = ()
    ci_methods: tuple[str, ...] = ()
    n_star_warnings: tuple[Warn, ...] = ()

    def predict(self, n: np.ndarray | float) -> np.ndarray:
        """Fitted throughput at concurrency ``n`` (for plotting the curve over the runs)."""
        return usl(n, self.sigma, self.kappa, self.gamma)

    @property
    def max_throughput(self) -> float:
        """The asymptote gamma/sigma under Amdahl, or X(N*) when a peak is claimed; else NaN."""
        if self.x_at_n_star is not None:
            return self.x_at_n_star
        if self.model == "amdahl" and self.sigma > 0:
            return self.gamma / self.sigma
        return math.nan

    def parameters(self) -> list[dict]:
        """Tidy rows ``parameter, estimate, ci_low, ci_high, ci_method`` (for tables)."""
        methods = self.ci_methods or ("",) * 3
        rows = [("sigma", self.sigma, self.sigma_ci, methods[0]),
                ("kappa", self.kappa, self.kappa_ci, methods[1]),
                ("gamma", self.gamma, self.gamma_ci, methods[2])]
        if self.model == "amdahl":
            rows.pop(1)
        if self.n_star is not None:
            rows.append(("n_star", self.n_star, self.n_star_ci or (math.nan, math.nan),
                         "percentile"))
        return [{"parameter": p, "estimate": e, "ci_low": c[0], "ci_high": c[1],
                 "ci_method": m} for p, e, c, m in rows]


# -- inputs ---------------------------------------------------------------------------------
def _check_inputs(n, x, n_column: str | None, n_params: int
                  ) -> tuple[np.ndarray, np.ndarray, list[Warn]]:
    name = n_column if n_column is not None else getattr(n, "name", None)
    if isinstance(name, str) and (name in RATE_NAMES or name.endswith("_rps")):
        raise PerfkitError(
            f"{name!r} is a rate, not a concurrency: the USL needs N = connections or users. "
            "Under open-loop load throughput is min(rate, capacity); use slo_bracket for rates")
    n_arr = np.asarray(n, dtype=float).ravel()
    x_arr = np.asarray(x, dtype=float).ravel()
    if n_arr.shape != x_arr.shape:
        raise ValueError(f"n and x differ in length ({len(n_arr)} vs {len(x_arr)})")
    warns: list[Warn] = []
    bad = ~(np.isfinite(n_arr) & np.isfinite(x_arr))
    if bad.any():
        warns.append(Warn(Code.RUNS_LEFT_OUT_OF_FIT, runs=int(bad.sum())))
        n_arr, x_arr = n_arr[~bad], x_arr[~bad]
    if np.any(n_arr < 1):
        raise PerfkitError("N must be a concurrency >= 1 (connections or users)")
    if np.any(x_arr <= 0):
        raise PerfkitError("throughput must be > 0 in every run used for the fit")
    levels = len(np.unique(n_arr))
    if levels < n_params + 1:
        raise PerfkitError(
            f"{levels} distinct N: a {n_params}-parameter fit needs at least {n_params + 1} "
            "concurrency levels; measure more N")
    return n_arr, x_arr, warns


# -- fit ------------------------------------------------------------------------------------
def _fit(model, n, x, confidence, alpha, n_resamples, seed, bootstrap, interval_kind,
         n_column) -> ScalingFit:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    free = np.array([True, model == "usl", True])
    n_params = int(free.sum())
    n_arr, x_arr, warns = _check_inputs(n, x, n_column, n_params)
    p_hat, ok = best_fit(n_arr, x_arr, free)
    if not ok:
        warns.append(Warn(Code.FIT_NOT_CONVERGED))
    rss_lin = rss(n_arr, x_arr, p_hat)
    dof = len(x_arr) - n_params
    reps = bootstrap_estimates(n_arr, x_arr, p_hat, free, bootstrap, n_resamples, seed)
    if reps.note is not None:
        warns.append(reps.note)
    if reps.failed:
        warns.append(Warn(Code.REFITS_NOT_CONVERGED, failed=reps.failed, of=n_resamples))
    se = standard_errors(p_hat, n_arr, x_arr, free)
    cis = [interval(reps, j, p_hat[j], se[j], confidence, interval_kind) for j in range(3)]
    methods = tuple(interval_method(reps, j, p_hat[j], se[j], interval_kind) if free[j]
                    else "" for j in range(3))
    levels = len(np.unique(n_arr))
    if len(x_arr) == levels:
        warns.append(Warn(Code.ONE_RUN_PER_N))
    sigma, kappa, gamma = (float(v) for v in p_hat)
    warns.extend(_linear_region_warning(n_arr, x_arr))
    if sigma <= 0 or sigma >= 1:
        warns.append(Warn(Code.SIGMA_ON_BOUND, sigma=sigma))
    base = dict(
        model=model, sigma=sigma, kappa=kappa, gamma=gamma,
        sigma_ci=cis[0], kappa_ci=cis[1], gamma_ci=cis[2], confidence=confidence,
        residual_se=math.sqrt(rss_lin / dof) if dof > 0 else math.nan, rss=rss_lin,
        n_obs=len(x_arr), n_levels=levels, dof=dof, bootstrap=reps.scheme,
        interval=interval_kind, ci_methods=methods,
        n_resamples=n_resamples, seed=seed, n=tuple(n_arr.tolist()), x=tuple(x_arr.tolist()))
    if model == "amdahl":
        base["kappa_ci"] = (0.0, 0.0)
        return ScalingFit(**base, warnings=tuple(warns),
                          n_star_reason=Warn(Code.AMDAHL_NO_PEAK))
    return ScalingFit(**base, **_peak(n_arr, x_arr, p_hat, dof, reps.estimates, alpha,
                                      confidence, warns), warnings=tuple(warns))


def _linear_region_warning(n: np.ndarray, x: np.ndarray) -> list[Warn]:
    """Warn when the lowest N measured is already near the highest throughput."""
    levels = np.unique(n)
    means = np.array([x[n == level].mean() for level in levels])
    share = means[0] / means.max()
    if levels[0] > 1 and share >= LINEAR_REGION_SHARE:
        return [Warn(Code.LINEAR_REGION_MISSED, lowest_n=float(levels[0]), share=float(share))]
    return []


def kappa_test(n: np.ndarray, x: np.ndarray, starts: tuple[np.ndarray, ...] = ()
               ) -> tuple[float, float, int]:
    """F-test of kappa = 0 on log throughput: ``(F, p, dof)``.

    Both laws are fitted by least squares to log X (the likelihood fit when the noise is
    proportional to throughput, as run-to-run noise usually is), and
    ``F = (RSS_amdahl - RSS_usl) / (RSS_usl / (n_obs - 3))`` is referred to F(1, n_obs - 3).
    kappa = 0 lies on the boundary, where this reference is conservative (Self and Liang,
    JASA 82, 1987). On throughput itself the same test claims a peak in 14% of Amdahl data
    sets with 3% proportional noise (issue 13); see benchmarks/calibration_usl.py.
    """
    usl_log, _ = best_fit(n, x, np.array([True, True, True]), log=True, starts=starts)
    amdahl_log, _ = best_fit(n, x, np.array([True, False, True]), log=True, starts=starts)
    rss_u, rss_a = rss(n, x, usl_log, log=True), rss(n, x, amdahl_log, log=True)
    rss_u = min(rss_u, rss_a)  # the USL contains Amdahl's law
    dof = len(x) - 3
    f_stat = math.inf if rss_u == 0 else max(rss_a - rss_u, 0.0) / (rss_u / dof)
    return f_stat, float(f_sf(f_stat, 1, dof)), dof


def _peak(n, x, p_hat, dof, est, alpha, confidence, warns) -> dict:
    """The test of kappa = 0, and N* with its bootstrap CI when it rejects."""
    p_amdahl, _ = best_fit(n, x, np.array([True, False, True]))
    f_stat, p_value, dof = kappa_test(n, x, starts=(p_hat, p_amdahl))
    out = dict(f_stat=f_stat, f_p_value=p_value, alpha=alpha)
    test = {"dof": dof, "f_stat": f_stat, "p_value": p_value, "alpha": alpha}
    if p_value >= alpha or p_hat[1] <= 0:
        out["n_star_reason"] = Warn(Code.NSTAR_NOT_CLAIMED, kappa_zero=p_value < alpha, **test)
        return out
    n_star = float(n_star_of(p_hat[0], p_hat[1]))
    about = [Warn(Code.NSTAR_ROUGH_RANGE)]
    if n_star > n.max():
        about.append(Warn(Code.NSTAR_EXTRAPOLATED, n_star=n_star, largest_n=float(n.max())))
    warns.extend(about)
    out.update(n_star=n_star,
               n_star_ci=percentile_interval(n_star_of(est[:, 0], est[:, 1]), confidence),
               x_at_n_star=float(usl(n_star, *p_hat)),
               n_star_reason=Warn(Code.NSTAR_CLAIMED, **test),
               n_star_warnings=tuple(about))
    return out


def fit_usl(n, x, *, confidence: float = 0.95, alpha: float = 0.05, n_resamples: int = 1000,
            seed: int | None = 0, bootstrap: str = "wild", interval: str = "studentized",
            n_column: str | None = None) -> ScalingFit:
    """Fit the Universal Scalability Law to every run (not to means).

    Parameters
    ----------
    n : array-like
        Concurrency of each run (connections for wrk, users for Locust), >= 1. Never an
        offered rate: a Series named like a rate (``target_rate_rps``), or ``n_column`` naming
        one, raises :class:`~perfkit.errors.PerfkitError`.
    x : array-like
        Throughput of each run (e.g. ``throughput_rps``); NaN runs are left out with a warning.
    confidence : float
        Level of the bootstrap intervals.
    alpha : float
        Level of the F-test of the USL against Amdahl that gates the peak N*.
    n_resamples, seed : int
        Bootstrap size and seed (results are reproducible for a given seed).
    bootstrap : {'wild', 'residual', 'runs'}
        ``wild``: Rademacher signs on leverage-adjusted residuals, robust to noise that grows
        with throughput (Davidson & Flachaire 2008); ``residual``: centred residuals drawn with
        replacement (Efron & Tibshirani 1993, sec. 9.5); ``runs``: runs resampled within N.
    interval : {'studentized', 'percentile'}
        Bootstrap-t with the Jacobian's standard errors (Efron & Tibshirani sec. 12.5), or
        plain percentiles. Simulated coverage of nominal 95% intervals (8 N x 3 runs, 3%
        noise, 300 data sets): wild + studentized 0.94 / 0.92 / 0.95 (sigma / kappa / gamma)
        with constant noise and 0.93 / 0.91 / 0.93 with noise proportional to throughput;
        residual + percentile (150 data sets) 0.91 / 0.91 / 0.92 and 0.87 / 0.82 / 0.94.
    n_column : str, optional
        The name of the column ``n`` came from, checked against rate names.

    Returns
    -------
    ScalingFit
        ``sigma, kappa, gamma`` with CIs, ``residual_se``, and ``n_star = sqrt((1-sigma)/kappa)``
        only when the F-test ``F = (RSS_amdahl - RSS_usl) / (RSS_usl / (n_obs - 3))`` on
        (1, n_obs - 3) degrees of freedom rejects Amdahl at ``alpha``. kappa = 0 lies on the
        boundary, where F's reference distribution is conservative (the null distribution is
        a 50:50 mixture with 0; Self & Liang 1987), so a claimed peak is not over-claimed.

    Notes
    -----
    Gunther, *Guerrilla Capacity Planning* (2007): the SPEC SDM91 benchmark gives
    sigma = 0.0277285, kappa = 1.04366e-4, gamma = 89.99523, N* = 96.52 (see the tests).
    Fewer than 4 distinct N are refused.
    """
    return _fit("usl", n, x, confidence, alpha, n_resamples, seed, bootstrap, interval,
                n_column)


def fit_amdahl(n, x, *, confidence: float = 0.95, n_resamples: int = 1000,
               seed: int | None = 0, bootstrap: str = "wild", interval: str = "studentized",
               n_column: str | None = None) -> ScalingFit:
    """Fit Amdahl's law ``X(N) = gamma N / (1 + sigma (N - 1))`` (the USL with kappa = 0).

    Same inputs, bounds and bootstrap as :func:`fit_usl`; needs at least 3 distinct N.
    """
    return _fit("amdahl", n, x, confidence, None, n_resamples, seed, bootstrap, interval,
                n_column)
