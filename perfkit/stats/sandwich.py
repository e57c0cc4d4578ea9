"""Heteroscedasticity-consistent inference on least-squares coefficients: the HC2 sandwich
with a Satterthwaite (Welch) degrees of freedom per coefficient.

The factorial's cells differ in spread by orders of magnitude (per-run log p99 sds from 0.016
to 1.3 in one design), so a t interval on one pooled residual variance is too narrow for the
effects that lean on the wide cells and too wide for the others. Each coefficient of the OLS
fit ``y = X b + e`` is a linear function ``b_j = w_j' y`` of the runs (``w_j`` the j-th row of
``(X'X)^-1 X'``), so with independent runs of variances ``s_i^2``

    var(b_j) = sum_i w_ji^2 s_i^2.

HC2 estimates ``s_i^2`` by ``e_i^2 / (1 - h_ii)`` (``h`` the leverages; MacKinnon & White,
"Some heteroskedasticity-consistent covariance matrix estimators with improved finite sample
properties", J. Econometrics 29, 1985). In a cell-means model (a 2^k design without blocks)
``h_ii = 1 / n_cell`` and this is exactly ``sum_c w_c^2 s_c^2 / n_c`` with each cell's own
sample variance: the separate-variance (Welch) variance of a contrast of means (Maxwell &
Delaney, *Designing Experiments and Analyzing Data*, 2nd ed., 2004, ch. 5; for two cells
Welch's t). HC2 is unbiased when the variances are equal and is the variant Imbens & Kolesár
recommend for few observations ("Robust standard errors in small samples: some practical
advice", Rev. Econ. Stat. 98, 2016).

The degrees of freedom are Satterthwaite's for the quadratic form ``V_j = e' A e``
(``A = diag(w_ji^2 / (1 - h_ii))``, ``e = M y``, ``M = I - H``): with normal runs
``E V = tr(G)``, ``var V = 2 tr(G^2)``, ``G = A M Omega M``, so

    df_j = tr(G)^2 / tr(G^2)

(Satterthwaite, "An approximate distribution of estimates of variance components",
Biometrics Bulletin 2, 1946; the Bell-McCaffrey adjustment, Bell & McCaffrey, Survey
Methodology 28, 2002, evaluates it at ``Omega = I``). Here ``Omega`` is evaluated at each
cell's own variance (:func:`cell_variances`: unbiased from the cells' residual sums of
squares, with blocks too), so in
the cell-means model ``df_j`` is the Welch-Satterthwaite df of the contrast,
``(sum c^2 s^2/n)^2 / sum (c^2 s^2/n)^2/(n - 1)``: near ``n - 1`` when one cell's spread
dominates, the pooled ``N - 2^k`` when the spreads are equal. ``benchmarks/
calibration_factorial.py`` measures the coverage and size this gives against the pooled t.
"""

from __future__ import annotations

import dataclasses

import numpy as np

#: a leverage this close to 1 leaves its run no residual: its cell's spread is unknown
_LEVERAGE_ONE = 1e-9


@dataclasses.dataclass(frozen=True)
class RobustCoefficients:
    """Per coefficient of an OLS fit: its HC2 standard error and Satterthwaite df (NaN where
    a run the coefficient rests on has no residual: a cell of one run)."""

    se: np.ndarray
    df: np.ndarray
    #: the HC2 covariance of all coefficients (for joint Wald tests)
    cov: np.ndarray


def hc2(x: np.ndarray, resid: np.ndarray, cells: np.ndarray) -> RobustCoefficients:
    """HC2 standard errors and Satterthwaite df of every coefficient (module docstring).

    Parameters
    ----------
    x : numpy.ndarray
        The design matrix (N x p, full column rank).
    resid : numpy.ndarray
        The OLS residuals (N).
    cells : numpy.ndarray
        A label per run: the groups whose runs share one variance in ``Omega`` (the design's
        cells), used for the df only.
    """
    xtx_inv = np.linalg.inv(x.T @ x)
    w = xtx_inv @ x.T                                    # p x N: b = w @ y
    lev = np.einsum("ij,ji->i", x, w)                    # h_ii
    m_diag = 1.0 - lev
    bad = m_diag < _LEVERAGE_ONE
    m_safe = np.where(bad, np.nan, m_diag)
    omega_i = resid ** 2 / m_safe                        # HC2: e_i^2 / (1 - h_ii)
    cov = (w * np.where(bad, 0.0, omega_i)) @ w.T
    weights = w ** 2 / m_safe                            # a_i of V_j, per coefficient
    leans = (w[:, bad] ** 2).sum(axis=1) > 1e-12 * (w ** 2).sum(axis=1)  # rests on such a run
    se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    se[leans] = np.nan
    df = _satterthwaite(x, w, resid, cells, m_diag, np.where(bad, 0.0, weights))
    df[leans] = np.nan
    return RobustCoefficients(se=se, df=df, cov=cov)


def _satterthwaite(x: np.ndarray, w: np.ndarray, resid: np.ndarray, cells: np.ndarray,
                   m_diag: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``tr(G)^2 / tr(G^2)`` per coefficient, ``G = A M Omega M``, ``Omega`` at the cells'
    variances (:func:`cell_variances`)."""
    m = np.eye(len(resid)) - x @ w                       # M = I - H
    sigma2 = cell_variances(m, resid, cells)
    p = (m * sigma2) @ m.T                               # M Omega M
    tr_g = weights @ np.diag(p)
    tr_g2 = np.einsum("ji,ik,jk->j", weights, p ** 2, weights)
    with np.errstate(invalid="ignore", divide="ignore"):
        df = tr_g ** 2 / tr_g2
    return np.where(tr_g2 > 0, df, np.nan)


def cell_variances(m: np.ndarray, resid: np.ndarray, cells: np.ndarray) -> np.ndarray:
    """Per run, its cell's variance, estimated without bias from the residual sums of squares
    of the cells: ``E SS_c = sum_d Q_cd s_d^2`` with ``Q_cd = sum_{i in c, k in d} M_ik^2``
    (a run's residual carries the noise of every run its fit leans on: with blocks, the other
    cells of its block), solved for ``s^2`` and floored at 0. Without blocks ``Q`` is diagonal
    (``n_c - 1``): each cell's sample variance."""
    labels, index = np.unique(cells, return_inverse=True)
    one_hot = np.eye(len(labels))[index]                 # N x C
    q = one_hot.T @ (m ** 2) @ one_hot                   # C x C
    ss = one_hot.T @ resid ** 2
    try:
        s2 = np.linalg.solve(q, ss)
    except np.linalg.LinAlgError:                        # a cell without residual df
        s2 = np.linalg.lstsq(q, ss, rcond=None)[0]
    return np.clip(s2, 0.0, None)[index]
