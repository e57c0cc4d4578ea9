"""The USL curve and its bounded least-squares solver (shared by the fit and the bootstrap).

Parameters are ordered (sigma, kappa, gamma); ``free`` masks the ones being fitted (Amdahl fixes
kappa at 0). Bounds: sigma in [0, 1], kappa >= 0, gamma > 0. Fits are on throughput, or on log
throughput (``log=True``) for the test of kappa = 0.
"""

from __future__ import annotations

import numpy as np
from scipy import optimize

_LOWER = np.array([0.0, 0.0, 1e-12])
_UPPER = np.array([1.0, np.inf, np.inf])


def usl(n: np.ndarray | float, sigma: float, kappa: float, gamma: float) -> np.ndarray:
    """Throughput the USL predicts at concurrency ``n`` (in the unit of ``gamma``)."""
    n = np.asarray(n, dtype=float)
    return gamma * n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0))


def jacobian(p: np.ndarray, n: np.ndarray, free: np.ndarray) -> np.ndarray:
    s, k, g = p
    d = 1.0 + s * (n - 1.0) + k * n * (n - 1.0)
    full = np.column_stack([-g * n * (n - 1.0) / d**2, -g * n * n * (n - 1.0) / d**2, n / d])
    return full[:, free]


def solve(n: np.ndarray, x: np.ndarray, p0: np.ndarray, free: np.ndarray, tight: bool,
          log: bool = False) -> tuple[np.ndarray, bool]:
    """Least squares over the free parameters; the rest stay at ``p0``.

    ``log``: residuals on the log scale, log X - log X(N), the fit that suits noise
    proportional to throughput.
    """
    fixed = p0.copy()

    def full(q: np.ndarray) -> np.ndarray:
        p = fixed.copy()
        p[free] = q
        return p

    if log:
        log_x = np.log(x)

        def fun(q: np.ndarray) -> np.ndarray:
            return np.log(usl(n, *full(q))) - log_x

        def jac(q: np.ndarray) -> np.ndarray:
            p = full(q)
            return jacobian(p, n, free) / usl(n, *p)[:, None]
    else:
        def fun(q: np.ndarray) -> np.ndarray:
            return usl(n, *full(q)) - x

        def jac(q: np.ndarray) -> np.ndarray:
            return jacobian(full(q), n, free)

    tol = 1e-15 if tight else 1e-10
    start = np.clip(p0[free], _LOWER[free], _UPPER[free])
    res = optimize.least_squares(fun, start, jac=jac, bounds=(_LOWER[free], _UPPER[free]),
                                 method="trf", x_scale="jac", ftol=tol, xtol=tol, gtol=tol,
                                 max_nfev=2000)
    return full(res.x), bool(res.status > 0)


def rss(n: np.ndarray, x: np.ndarray, p: np.ndarray, log: bool = False) -> float:
    """Residual sum of squares of the curve ``p`` (on the log scale with ``log``)."""
    r = np.log(x) - np.log(usl(n, *p)) if log else x - usl(n, *p)
    return float(r @ r)


def linearised_start(n: np.ndarray, x: np.ndarray, kappa_free: bool = True) -> np.ndarray:
    """Starting values from OLS on ``N/X = a + b(N-1) [+ c N(N-1)]``, clipped to the bounds."""
    cols = [np.ones_like(n), n - 1.0] + ([n * (n - 1.0)] if kappa_free else [])
    coef = np.linalg.lstsq(np.column_stack(cols), n / x, rcond=None)[0]
    a = coef[0] if coef[0] > 0 else float(np.min(n / x))
    sigma = float(np.clip(coef[1] / a, 0.0, 1.0))
    kappa = float(max(coef[2] / a, 0.0)) if kappa_free else 0.0
    return np.array([sigma, kappa, 1.0 / a])


def best_fit(n: np.ndarray, x: np.ndarray, free: np.ndarray, log: bool = False,
             starts: tuple[np.ndarray, ...] = ()) -> tuple[np.ndarray, bool]:
    """Fit from the linearised start, two generic ones and ``starts``; keep the lowest RSS.

    With kappa free, the boundary fit (kappa = 0) is also tried and kept when it is as good to
    1e-9 relative RSS, so an optimum on the bound is reported on it rather than at 1e-12.
    """
    p, ok = _best_of_starts(n, x, free, log, starts)
    if free[1] and p[1] > 0:
        edge, edge_ok = _best_of_starts(n, x, np.array([free[0], False, free[2]]), log, starts)
        if rss(n, x, edge, log) <= rss(n, x, p, log) * (1.0 + 1e-9):
            return edge, edge_ok
    return p, ok


def _best_of_starts(n: np.ndarray, x: np.ndarray, free: np.ndarray, log: bool,
                    extra: tuple[np.ndarray, ...]) -> tuple[np.ndarray, bool]:
    lin = linearised_start(n, x, kappa_free=bool(free[1]))
    g0 = float(np.max(x / n))
    starts = [lin, np.array([0.05, 1e-4 if free[1] else 0.0, g0]),
              np.array([0.5, 1e-3 if free[1] else 0.0, g0])]
    starts += [s if free[1] else np.array([s[0], 0.0, s[2]]) for s in extra]
    best, best_rss, ok = lin, np.inf, False
    for p0 in starts:
        p, conv = solve(n, x, p0, free, tight=True, log=log)
        value = rss(n, x, p, log)
        if value < best_rss:
            best, best_rss, ok = p, value, conv
    return snap(best, float(np.max(n))), ok


def snap(p: np.ndarray, n_max: float) -> np.ndarray:
    """Set a parameter within rounding of its bound onto the bound (kappa 1e-21 is 0)."""
    p = p.copy()
    if p[1] * n_max * n_max < 1e-12:
        p[1] = 0.0
    if p[0] < 1e-12:
        p[0] = 0.0
    elif p[0] > 1.0 - 1e-12:
        p[0] = 1.0
    return p


def standard_errors(p: np.ndarray, n: np.ndarray, x: np.ndarray, free: np.ndarray
                    ) -> np.ndarray:
    """Asymptotic standard errors sqrt(diag(s^2 (J'J)^-1)) of (sigma, kappa, gamma).

    Fixed parameters get 0; a singular J'J gives NaN (the caller falls back to percentiles).
    """
    jac = jacobian(p, n, free)
    resid = x - usl(n, *p)
    dof = len(x) - int(free.sum())
    out = np.zeros(3)
    if dof <= 0:
        out[free] = np.nan
        return out
    s2 = float(resid @ resid) / dof
    try:
        cov = s2 * np.linalg.inv(jac.T @ jac)
    except np.linalg.LinAlgError:
        out[free] = np.nan
        return out
    out[free] = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    return out
