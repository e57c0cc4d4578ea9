"""The few distribution functions the commands use, from ``scipy.special`` (issue 33).

``scipy.stats`` costs about 1.5x the import of numpy and pandas together; ``compare``, ``gate``
and ``effects`` need only the normal, t, F, chi-square and binomial tails below and midranks.
Each is the same special function ``scipy.stats`` calls for that distribution, so the values
are unchanged. Tests that are used once (Fisher's exact test, one-way ANOVA, Kendall's tau)
import ``scipy.stats`` inside the function that needs them instead.

``scipy.special`` itself costs about a third of the import of numpy and pandas (its array-API
layer imports most of numpy's optional submodules): it is imported on the first value not
remembered (:func:`perfkit.stats._simcache.remembered_value`: in the process, and beside the
run store where a command names it), so that a second command on the same runs imports no
scipy at all. A remembered value is the one scipy returned, bit for bit.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from perfkit.stats import _simcache


def _special(name: str, *args: Any) -> Any:
    """``scipy.special.<name>(*args)``, remembered by its arguments (module docstring)."""

    def compute() -> Any:
        from scipy import special  # on the first value not remembered

        return getattr(special, name)(*args)

    return _simcache.remembered_value(name, args, compute)


def norm_cdf(x: Any) -> Any:
    """P(Z <= x) for a standard normal Z."""
    return _special("ndtr", x)


def norm_sf(x: Any) -> Any:
    """P(Z > x) for a standard normal Z (no cancellation in the upper tail)."""
    return _special("ndtr", -np.asarray(x, dtype=float))


def norm_ppf(q: Any) -> Any:
    """The q-quantile of a standard normal."""
    return _special("ndtri", q)


def t_ppf(q: Any, df: Any) -> Any:
    """The q-quantile of Student's t with ``df`` degrees of freedom."""
    return _special("stdtrit", df, q)


def t_sf(x: Any, df: Any) -> Any:
    """P(T > x) for Student's t with ``df`` degrees of freedom."""
    return _special("stdtr", df, -np.asarray(x, dtype=float))


def f_sf(x: Any, dfn: Any, dfd: Any) -> Any:
    """P(F > x) for Fisher's F with ``(dfn, dfd)`` degrees of freedom."""
    return _special("fdtrc", dfn, dfd, x)


def chi2_ppf(q: Any, df: Any) -> Any:
    """The q-quantile of a chi-square with ``df`` degrees of freedom."""
    return 2.0 * _special("gammaincinv", np.asarray(df, dtype=float) / 2.0, q)


class Binom:
    """Binomial(n, p): ``cdf``, ``sf`` and ``ppf`` on integer counts, as ``scipy.stats.binom``."""

    def __init__(self, n: int, p: float) -> None:
        self.n, self.p = int(n), float(p)

    def cdf(self, k: float) -> float:
        """P(B <= k)."""
        return float(binom_cdf(k, self.n, self.p))

    def sf(self, k: float) -> float:
        """P(B > k)."""
        k = math.floor(k)
        if k < 0:
            return 1.0
        if k >= self.n:
            return 0.0
        return float(_special("betaincc", self.n - k, k + 1, 1.0 - self.p))

    def ppf(self, q: float) -> float:
        """The smallest k with P(B <= k) >= q (-1 at q = 0, as scipy)."""
        if q <= 0.0:
            return -1.0
        if q >= 1.0:
            return float(self.n)
        k = max(0, min(self.n, math.ceil(float(_special("bdtrik", q, self.n, self.p)))))
        while k > 0 and self.cdf(k - 1) >= q:
            k -= 1
        while k < self.n and self.cdf(k) < q:
            k += 1
        return float(k)


def binom_cdf(k: Any, n: int, p: float) -> Any:
    """P(B <= k) for B ~ Binomial(n, p), elementwise (the regularized incomplete beta, as scipy)."""
    k = np.floor(np.asarray(k, dtype=float))
    inside = np.clip(k, 0, max(n - 1, 0))
    cdf = _special("betainc", n - inside, inside + 1, 1.0 - p)
    return np.where(k < 0, 0.0, np.where(k >= n, 1.0, cdf))


def rankdata(values: Any) -> np.ndarray:
    """Midranks (1-based; ties share the mean of their ranks), as ``scipy.stats.rankdata``."""
    a = np.asarray(values).ravel()
    order = np.argsort(a, kind="mergesort")
    sorted_a = a[order]
    starts = np.r_[True, sorted_a[1:] != sorted_a[:-1]]
    group = np.cumsum(starts) - 1
    first = np.flatnonzero(starts)
    ends = np.r_[first[1:], a.size]
    mid = (first + ends + 1) / 2.0  # mean of 1-based ranks first+1 .. end
    ranks = np.empty(a.size, dtype=float)
    ranks[order] = mid[group]
    return ranks
