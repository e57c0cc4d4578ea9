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
Confidence intervals come from a seeded bootstrap (Efron & Tibshirani, *An Introduction to the
Bootstrap*, 1993, sec. 9.5 for residual resampling in regression). A peak ``N* =
sqrt((1 - sigma) / kappa)`` is claimed only when an F-test of the USL against Amdahl rejects
``kappa = 0``.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from scipy import optimize
from scipy import stats as sps

from perfkit.errors import PerfkitError

#: names of columns that hold an offered rate, never a concurrency
RATE_NAMES = ("target_rate_rps", "rate", "rate_rps", "throughput_rps")
MIN_LEVELS_USL = 4
MIN_LEVELS_AMDAHL = 3
_LOWER = np.array([0.0, 0.0, 1e-12])
_UPPER = np.array([1.0, np.inf, np.inf])


def usl(n: np.ndarray | float, sigma: float, kappa: float, gamma: float) -> np.ndarray:
    """Throughput the USL predicts at concurrency ``n`` (in the unit of ``gamma``)."""
    n = np.asarray(n, dtype=float)
    return gamma * n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0))


@dataclasses.dataclass(frozen=True)
class ScalingFit:
    """A fitted USL (``model='usl'``) or Amdahl (``model='amdahl'``, ``kappa`` fixed at 0).

    ``*_ci`` are ``(low, high)`` bootstrap percentile intervals at ``confidence``;
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
    n_resamples: int
    seed: int | None
    n_star: float | None = None
    n_star_ci: tuple[float, float] | None = None
    x_at_n_star: float | None = None
    n_star_reason: str = ""
    f_stat: float | None = None
    f_p_value: float | None = None
    alpha: float | None = None
    n: tuple[float, ...] = ()
    x: tuple[float, ...] = ()
    warnings: tuple[str, ...] = ()

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
        """Tidy rows ``parameter, estimate, ci_low, ci_high`` (for tables)."""
        rows = [("sigma", self.sigma, self.sigma_ci), ("kappa", self.kappa, self.kappa_ci),
                ("gamma", self.gamma, self.gamma_ci)]
        if self.model == "amdahl":
            rows.pop(1)
        if self.n_star is not None:
            rows.append(("n_star", self.n_star, self.n_star_ci or (math.nan, math.nan)))
        return [{"parameter": p, "estimate": e, "ci_low": c[0], "ci_high": c[1]}
                for p, e, c in rows]


# -- inputs ---------------------------------------------------------------------------------
def _check_inputs(n, x, n_column: str | None, n_params: int
                  ) -> tuple[np.ndarray, np.ndarray, list[str]]:
    name = n_column if n_column is not None else getattr(n, "name", None)
    if isinstance(name, str) and (name in RATE_NAMES or name.endswith("_rps")):
        raise PerfkitError(
            f"{name!r} is a rate, not a concurrency: the USL needs N = connections or users. "
            "Under open-loop load throughput is min(rate, capacity); use slo_bracket for rates")
    n_arr = np.asarray(n, dtype=float).ravel()
    x_arr = np.asarray(x, dtype=float).ravel()
    if n_arr.shape != x_arr.shape:
        raise ValueError(f"n and x differ in length ({len(n_arr)} vs {len(x_arr)})")
    warns: list[str] = []
    bad = ~(np.isfinite(n_arr) & np.isfinite(x_arr))
    if bad.any():
        warns.append(f"{int(bad.sum())} run(s) without a throughput or N were left out of the fit")
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


# -- least squares --------------------------------------------------------------------------
def _jacobian(p: np.ndarray, n: np.ndarray, free: np.ndarray) -> np.ndarray:
    s, k, g = p
    d = 1.0 + s * (n - 1.0) + k * n * (n - 1.0)
    full = np.column_stack([-g * n * (n - 1.0) / d**2, -g * n * n * (n - 1.0) / d**2, n / d])
    return full[:, free]


def _solve(n: np.ndarray, x: np.ndarray, p0: np.ndarray, free: np.ndarray, tight: bool
           ) -> tuple[np.ndarray, bool]:
    """Least squares over the free parameters; the rest stay at ``p0``."""
    fixed = p0.copy()

    def full(q: np.ndarray) -> np.ndarray:
        p = fixed.copy()
        p[free] = q
        return p

    tol = 1e-15 if tight else 1e-10
    start = np.clip(p0[free], _LOWER[free], _UPPER[free])
    res = optimize.least_squares(
        lambda q: usl(n, *full(q)) - x, start, jac=lambda q: _jacobian(full(q), n, free),
        bounds=(_LOWER[free], _UPPER[free]), method="trf", x_scale="jac",
        ftol=tol, xtol=tol, gtol=tol, max_nfev=2000)
    return full(res.x), bool(res.status > 0)


def linearised_start(n: np.ndarray, x: np.ndarray, kappa_free: bool = True) -> np.ndarray:
    """Starting values from OLS on ``N/X = a + b(N-1) [+ c N(N-1)]``, clipped to the bounds."""
    cols = [np.ones_like(n), n - 1.0] + ([n * (n - 1.0)] if kappa_free else [])
    coef = np.linalg.lstsq(np.column_stack(cols), n / x, rcond=None)[0]
    a = coef[0] if coef[0] > 0 else float(np.min(n / x))
    sigma = float(np.clip(coef[1] / a, 0.0, 1.0))
    kappa = float(max(coef[2] / a, 0.0)) if kappa_free else 0.0
    return np.array([sigma, kappa, 1.0 / a])


def _best_fit(n: np.ndarray, x: np.ndarray, free: np.ndarray) -> tuple[np.ndarray, bool]:
    """Fit from the linearised start and two generic ones; keep the lowest RSS."""
    lin = linearised_start(n, x, kappa_free=bool(free[1]))
    g0 = float(np.max(x / n))
    starts = [lin, np.array([0.05, 1e-4 if free[1] else 0.0, g0]),
              np.array([0.5, 1e-3 if free[1] else 0.0, g0])]
    best, best_rss, ok = lin, np.inf, False
    for p0 in starts:
        p, conv = _solve(n, x, p0, free, tight=True)
        rss = float(np.sum((x - usl(n, *p)) ** 2))
        if rss < best_rss:
            best, best_rss, ok = p, rss, conv
    return best, ok


# -- bootstrap ------------------------------------------------------------------------------
def _resample_residuals(n, x, p_hat, n_params, rng, n_resamples) -> np.ndarray:
    fitted = usl(n, *p_hat)
    r = x - fitted
    r = (r - r.mean()) * math.sqrt(len(r) / (len(r) - n_params))  # leverage-free inflation
    idx = rng.integers(0, len(r), size=(n_resamples, len(r)))
    return fitted[None, :] + r[idx]


def _resample_runs(n, x, rng, n_resamples) -> np.ndarray:
    out = np.empty((n_resamples, len(x)))
    for level in np.unique(n):
        pos = np.flatnonzero(n == level)
        pick = rng.integers(0, len(pos), size=(n_resamples, len(pos)))
        out[:, pos] = x[pos][pick]
    return out


def _bootstrap(n, x, p_hat, free, method, n_resamples, seed) -> tuple[np.ndarray, int, str]:
    """Refit on ``n_resamples`` resampled data sets; rows of (sigma, kappa, gamma)."""
    rng = np.random.default_rng(seed)
    note = ""
    if method == "runs":
        counts = np.unique(n, return_counts=True)[1]
        if counts.min() < 2:
            method, note = "residual", (
                "some N have a single run, so runs cannot be resampled within N: "
                "used the residual bootstrap instead")
    if method == "runs":
        ys = _resample_runs(n, x, rng, n_resamples)
    elif method == "residual":
        ys = _resample_residuals(n, x, p_hat, int(free.sum()), rng, n_resamples)
    else:
        raise ValueError(f"bootstrap must be 'residual' or 'runs', got {method!r}")
    est = np.empty((n_resamples, 3))
    failed = 0
    for i, y in enumerate(ys):
        est[i], ok = _solve(n, y, p_hat, free, tight=False)
        failed += not ok
    return est, failed, note


def _interval(values: np.ndarray, confidence: float) -> tuple[float, float]:
    tail = (1.0 - confidence) / 2.0
    lo, hi = np.quantile(values, [tail, 1.0 - tail], method="inverted_cdf")
    return float(lo), float(hi)


def _n_star(sigma: float | np.ndarray, kappa: float | np.ndarray) -> np.ndarray:
    sigma, kappa = np.asarray(sigma, float), np.asarray(kappa, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.sqrt((1.0 - sigma) / kappa)
    return np.where((kappa > 0) & (sigma < 1), out, np.inf)


# -- public ---------------------------------------------------------------------------------
def _fit(model, n, x, confidence, alpha, n_resamples, seed, bootstrap, n_column) -> ScalingFit:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    free = np.array([True, model == "usl", True])
    n_params = int(free.sum())
    n_arr, x_arr, warns = _check_inputs(n, x, n_column, n_params)
    p_hat, ok = _best_fit(n_arr, x_arr, free)
    if not ok:
        warns.append("the least-squares fit did not report convergence: check the plot")
    rss = float(np.sum((x_arr - usl(n_arr, *p_hat)) ** 2))
    dof = len(x_arr) - n_params
    est, failed, note = _bootstrap(n_arr, x_arr, p_hat, free, bootstrap, n_resamples, seed)
    if note:
        warns.append(note)
        bootstrap = "residual"
    if failed:
        warns.append(f"{failed} of {n_resamples} bootstrap refits did not converge")
    levels = len(np.unique(n_arr))
    if len(x_arr) == levels:
        warns.append("one run per N: the residuals mix run-to-run noise with lack of fit; "
                     "repeat each N (>= 3 runs) for a model-free check")
    sigma, kappa, gamma = (float(v) for v in p_hat)
    if sigma <= 0 or sigma >= 1:
        warns.append(f"sigma = {sigma:g} sits on its bound [0, 1]: the CIs there are one-sided")
    base = dict(
        model=model, sigma=sigma, kappa=kappa, gamma=gamma,
        sigma_ci=_interval(est[:, 0], confidence), kappa_ci=_interval(est[:, 1], confidence),
        gamma_ci=_interval(est[:, 2], confidence), confidence=confidence,
        residual_se=math.sqrt(rss / dof) if dof > 0 else math.nan, rss=rss,
        n_obs=len(x_arr), n_levels=levels, dof=dof, bootstrap=bootstrap,
        n_resamples=n_resamples, seed=seed, n=tuple(n_arr.tolist()), x=tuple(x_arr.tolist()))
    if model == "amdahl":
        base["kappa_ci"] = (0.0, 0.0)
        return ScalingFit(**base, warnings=tuple(warns),
                          n_star_reason="Amdahl's law has no peak: throughput rises to "
                                        "gamma/sigma")
    return ScalingFit(**base, **_peak(n_arr, x_arr, p_hat, rss, dof, est, alpha, confidence,
                                      warns), warnings=tuple(warns))


def _peak(n, x, p_hat, rss, dof, est, alpha, confidence, warns) -> dict:
    """F-test of the USL against Amdahl, and N* with its bootstrap CI when Amdahl is rejected."""
    p_amdahl, _ = _best_fit(n, x, np.array([True, False, True]))
    rss_a = float(np.sum((x - usl(n, *p_amdahl)) ** 2))
    f_stat = math.inf if rss == 0 else max(rss_a - rss, 0.0) / (rss / dof)
    p_value = float(sps.f.sf(f_stat, 1, dof))
    out = dict(f_stat=f_stat, f_p_value=p_value, alpha=alpha)
    test = f"F-test USL vs Amdahl (kappa = 0): F(1, {dof}) = {f_stat:.3g}, p = {p_value:.3g}"
    if p_value >= alpha:
        out["n_star_reason"] = (f"{test} >= alpha {alpha:g}: no retrograde scaling shown, "
                                "so no peak N* is claimed")
        return out
    n_star = float(_n_star(p_hat[0], p_hat[1]))
    out.update(n_star=n_star, n_star_ci=_interval(_n_star(est[:, 0], est[:, 1]), confidence),
               x_at_n_star=float(usl(n_star, *p_hat)),
               n_star_reason=f"{test} < alpha {alpha:g}: Amdahl rejected")
    if n_star > n.max():
        warns.append(f"N* = {n_star:.4g} lies beyond the largest N measured ({n.max():g}): "
                     "an extrapolation; measure above it")
    return out


def fit_usl(n, x, *, confidence: float = 0.95, alpha: float = 0.05, n_resamples: int = 1000,
            seed: int | None = 0, bootstrap: str = "residual", n_column: str | None = None
            ) -> ScalingFit:
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
        Level of the bootstrap percentile intervals.
    alpha : float
        Level of the F-test of the USL against Amdahl that gates the peak N*.
    n_resamples, seed : int
        Bootstrap size and seed (results are reproducible for a given seed).
    bootstrap : {'residual', 'runs'}
        ``residual``: centred residuals, inflated by sqrt(n/(n-p)), added to the fitted curve
        (Efron & Tibshirani 1993, sec. 9.5); ``runs``: resample runs within each N.
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
    return _fit("usl", n, x, confidence, alpha, n_resamples, seed, bootstrap, n_column)


def fit_amdahl(n, x, *, confidence: float = 0.95, n_resamples: int = 1000,
               seed: int | None = 0, bootstrap: str = "residual", n_column: str | None = None
               ) -> ScalingFit:
    """Fit Amdahl's law ``X(N) = gamma N / (1 + sigma (N - 1))`` (the USL with kappa = 0).

    Same inputs, bounds and bootstrap as :func:`fit_usl`; needs at least 3 distinct N.
    """
    return _fit("amdahl", n, x, confidence, None, n_resamples, seed, bootstrap, n_column)
