"""Adjusted p-values for many comparisons (metrics x endpoints x configurations)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def adjust_pvalues(p: Sequence[float] | np.ndarray, method: str = "holm") -> np.ndarray:
    """Adjust p-values for multiple comparisons; NaN entries stay NaN and do not count.

    Parameters
    ----------
    p : array-like of float
        Raw p-values in [0, 1].
    method : {"holm", "bh"}
        ``holm``: Holm's step-down method, controls the family-wise error rate (Holm, "A simple
        sequentially rejective multiple test procedure", Scand. J. Statist. 6, 1979).
        ``bh``: Benjamini and Hochberg's step-up method, controls the false discovery rate
        for independent or positively dependent tests (JRSS B 57, 1995).

    Returns
    -------
    numpy.ndarray
        Adjusted p-values in the input's order, capped at 1 (as R's ``p.adjust``).
    """
    values = np.asarray(p, dtype=np.float64)
    flat = values.ravel()
    out = np.full(flat.shape, np.nan)
    keep = ~np.isnan(flat)
    q = flat[keep]
    if ((q < 0) | (q > 1)).any():
        raise ValueError("p-values must be in [0, 1]")
    m = len(q)
    if m:
        order = np.argsort(q, kind="stable")
        ranked = q[order]
        if method == "holm":
            adjusted = np.maximum.accumulate((m - np.arange(m)) * ranked)
        elif method == "bh":
            scaled = ranked * m / np.arange(1, m + 1)
            adjusted = np.minimum.accumulate(scaled[::-1])[::-1]
        else:
            raise ValueError(f"method must be 'holm' or 'bh', got {method!r}")
        result = np.empty(m)
        result[order] = np.minimum(adjusted, 1.0)
        out[keep] = result
    elif method not in ("holm", "bh"):
        raise ValueError(f"method must be 'holm' or 'bh', got {method!r}")
    return out.reshape(values.shape)
