"""The interval of the peak concurrency N* = sqrt((1 - sigma) / kappa).

:func:`n_star_wald_hc3`: a Wald interval on log N* from the least-squares fit, with the
heteroscedasticity-consistent HC3 covariance (MacKinnon and White, J. Econometrics 29, 1985;
Long and Ervin, Am. Statistician 54, 2000) and Student t on n_obs - 3 df. The log scale keeps
the interval positive and asymmetric; HC3 keeps it honest when the noise grows with
throughput, which the textbook covariance s^2 (J'J)^-1 does not.

Measured coverage of nominal 95% (benchmarks/calibration_usl.py) is in fit_usl's docstring.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats as sps

from perfkit.scaling._model import jacobian, usl


def hc3_covariance(p: np.ndarray, n: np.ndarray, x: np.ndarray) -> np.ndarray | None:
    """HC3 sandwich covariance of (sigma, kappa, gamma) at the fit ``p``; None if singular."""
    jac = jacobian(p, n, np.array([True, True, True]))
    resid = x - usl(n, *p)
    try:
        bread = np.linalg.inv(jac.T @ jac)
    except np.linalg.LinAlgError:
        return None
    leverage = np.clip(np.einsum("ij,jk,ik->i", jac, bread, jac), 0.0, 0.999)
    weights = resid ** 2 / (1.0 - leverage) ** 2
    return bread @ (jac.T * weights) @ jac @ bread


def n_star_wald_hc3(p: np.ndarray, n: np.ndarray, x: np.ndarray,
                    confidence: float) -> tuple[float, float]:
    """``(low, high)`` for N* at the fit ``p`` (kappa > 0); (0, inf) when it cannot be had."""
    sigma, kappa = float(p[0]), float(p[1])
    cov = hc3_covariance(p, n, x)
    dof = len(x) - 3
    if kappa <= 0 or sigma >= 1 or cov is None or dof <= 0:
        return 0.0, math.inf
    grad = np.array([-0.5 / (1.0 - sigma), -0.5 / kappa, 0.0])  # d log N* / d (s, k, g)
    se = math.sqrt(max(float(grad @ cov @ grad), 0.0))
    centre = 0.5 * math.log((1.0 - sigma) / kappa)
    half = float(sps.t.ppf(0.5 + confidence / 2.0, dof)) * se
    return math.exp(centre - half), math.exp(centre + half)
