"""The normal, t, F and chi-squared functions perfkit's tests and intervals use, from
``scipy.special``, without importing ``scipy.stats``.

``import scipy.stats`` costs about as much CPU as ``import numpy, pandas`` together (it loads
every distribution, ``scipy.spatial`` and more), and ``compare``, ``gate`` and ``effects`` need
only these few functions. Each is the special function ``scipy.stats`` itself evaluates for
that distribution (scipy 1.17: ``norm._cdf`` is ``ndtr``, ``norm._ppf`` ``ndtri``, ``t._sf``
``stdtr(df, -x)``, ``t._ppf`` ``stdtrit``, ``f._sf`` ``fdtrc``, ``chi2._ppf``
``2 gammaincinv(df / 2, q)``), so the values are the same to the bit
(tests/test_stats_dist.py compares them with ``scipy.stats`` over a grid).

The binomial's tail probabilities are ``bdtr``/``bdtrc`` (Cephes), which differ from
``scipy.stats.binom`` (Boost) by at most 4e-12 over n <= 5000.

Rank-based helpers take ``pandas``' average rank (the midranks ``scipy.stats.rankdata`` gives).
Anything else (``fisher_exact``, ``kendalltau``, ``f_oneway``) is
imported from ``scipy.stats`` inside the function that needs it, when it runs.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import special

__all__ = ["binom_cdf", "binom_sf", "chi2_ppf", "f_sf", "midranks", "norm_cdf", "norm_ppf",
           "norm_sf", "t_ppf", "t_sf"]


def norm_cdf(x: Any) -> Any:
    """P(Z <= x) of the standard normal (``scipy.stats.norm.cdf``)."""
    return special.ndtr(x)


def norm_sf(x: Any) -> Any:
    """P(Z > x) of the standard normal (``scipy.stats.norm.sf``)."""
    return special.ndtr(np.negative(x))


def norm_ppf(q: Any) -> Any:
    """The q-quantile of the standard normal (``scipy.stats.norm.ppf``)."""
    return special.ndtri(q)


def t_sf(x: Any, df: Any) -> Any:
    """P(T > x) of Student's t with ``df`` degrees of freedom (``scipy.stats.t.sf``)."""
    return special.stdtr(df, np.negative(x))


def t_ppf(q: Any, df: Any) -> Any:
    """The q-quantile of Student's t with ``df`` degrees of freedom (``scipy.stats.t.ppf``)."""
    return special.stdtrit(df, q)


def f_sf(x: Any, dfn: Any, dfd: Any) -> Any:
    """P(F > x) of the F distribution (``scipy.stats.f.sf``)."""
    return special.fdtrc(dfn, dfd, x)


def chi2_ppf(q: Any, df: Any) -> Any:
    """The q-quantile of the chi-squared distribution (``scipy.stats.chi2.ppf``)."""
    return 2.0 * special.gammaincinv(np.asarray(df) / 2.0, q)


def binom_cdf(k: Any, n: int, p: float) -> Any:
    """P(B <= k) for B ~ Binomial(n, p): 0 below 0, 1 from n on."""
    k = np.asarray(k, dtype=np.float64)
    out = special.bdtr(np.clip(k, 0, n), n, p)
    return np.where(k < 0, 0.0, np.where(k >= n, 1.0, out))[()]


def binom_sf(k: Any, n: int, p: float) -> Any:
    """P(B > k) for B ~ Binomial(n, p): 1 below 0, 0 from n on."""
    k = np.asarray(k, dtype=np.float64)
    out = special.bdtrc(np.clip(k, 0, n), n, p)
    return np.where(k < 0, 1.0, np.where(k >= n, 0.0, out))[()]


def midranks(values: Any) -> np.ndarray:
    """The ranks of ``values`` (1-based, ties given their mean rank; +-inf rank beyond every
    finite value and tie with each other), as ``scipy.stats.rankdata`` gives them. NaN is the
    caller's to refuse."""
    import pandas as pd

    flat = np.asarray(values, dtype=np.float64).ravel()
    return pd.Series(flat).rank(method="average").to_numpy(dtype=np.float64)
