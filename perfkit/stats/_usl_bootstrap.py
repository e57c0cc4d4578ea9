"""Bootstrap intervals for the USL/Amdahl parameters (seeded; every refit is bounded).

Resampling schemes:

- ``wild`` (default): Rademacher signs on leverage-adjusted residuals. Each run keeps its own
  noise level, so the intervals hold when throughput noise grows with throughput (Wu 1986;
  Davidson and Flachaire, "The wild bootstrap, tamed at last", J. Econometrics 146, 2008).
- ``residual``: centred residuals, inflated by sqrt(n / (n - p)), drawn with replacement
  (Efron and Tibshirani, *An Introduction to the Bootstrap*, 1993, sec. 9.5); assumes the
  same noise at every N.
- ``runs``: runs resampled within each N (needs >= 2 runs at every N).

Intervals are studentized by default (bootstrap-t: Efron and Tibshirani sec. 12.5), using the
asymptotic standard error from the Jacobian in every resample, and clipped to the parameter
bounds; ``percentile`` gives plain percentile intervals, which are also used for an estimate
sitting on its bound (kappa = 0), where bootstrap-t degenerates to a point.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from perfkit.stats import _simcache
from perfkit.stats._usl_model import jacobian, snap, solve, standard_errors, usl
from perfkit.warning import Code, Warn

_LOWER = np.array([0.0, 0.0, 0.0])
_UPPER = np.array([1.0, np.inf, np.inf])
SCHEMES = ("wild", "residual", "runs")
INTERVALS = ("studentized", "percentile")


@dataclasses.dataclass(frozen=True)
class Replicates:
    """Bootstrap estimates and standard errors, one row per resample (sigma, kappa, gamma)."""

    estimates: np.ndarray
    std_errors: np.ndarray
    failed: int
    scheme: str
    note: Warn | None = None


def _residual(n, x, p_hat, free, rng, size) -> np.ndarray:
    fitted = usl(n, *p_hat)
    r = x - fitted
    r = (r - r.mean()) * math.sqrt(len(r) / (len(r) - int(free.sum())))
    return fitted[None, :] + r[rng.integers(0, len(r), size=(size, len(r)))]


def _wild(n, x, p_hat, free, rng, size) -> np.ndarray:
    fitted = usl(n, *p_hat)
    q, _ = np.linalg.qr(jacobian(p_hat, n, free))
    leverage = np.clip(np.sum(q * q, axis=1), 0.0, 0.999)
    r = (x - fitted) / np.sqrt(1.0 - leverage)
    signs = rng.choice(np.array([-1.0, 1.0]), size=(size, len(r)))
    return fitted[None, :] + signs * r[None, :]


def _runs(n, x, rng, size) -> np.ndarray:
    out = np.empty((size, len(x)))
    for level in np.unique(n):
        pos = np.flatnonzero(n == level)
        out[:, pos] = x[pos][rng.integers(0, len(pos), size=(size, len(pos)))]
    return out


def bootstrap_estimates(n, x, p_hat, free, scheme: str, n_resamples: int,
                        seed: int | None) -> Replicates:
    """Refit the model on ``n_resamples`` resampled data sets."""
    if scheme not in SCHEMES:
        raise ValueError(f"bootstrap must be one of {SCHEMES}, got {scheme!r}")
    rng = np.random.default_rng(seed)
    note = None
    if scheme == "runs" and np.unique(n, return_counts=True)[1].min() < 2:
        scheme, note = "wild", Warn(Code.RUNS_BOOTSTRAP_SINGLE_RUN)

    def refits() -> tuple[float, ...]:
        if scheme == "runs":
            ys = _runs(n, x, rng, n_resamples)
        else:
            ys = (_wild if scheme == "wild" else _residual)(n, x, p_hat, free, rng, n_resamples)
        est = np.empty((n_resamples, 3))
        se = np.empty((n_resamples, 3))
        failed = 0
        n_max = float(np.max(n))
        for i, y in enumerate(ys):
            p, ok = solve(n, y, p_hat, free, tight=False)
            est[i] = snap(p, n_max)
            se[i] = standard_errors(est[i], n, y, free)
            failed += not ok
        return (*est.ravel(), *se.ravel(), float(failed))

    # seeded, the refits are a function of their inputs: remembered by them, as the power
    # simulations are (_simcache; a report's second build refits nothing: 1.3 s of its
    # scaling page); unseeded, drawn anew every time
    values = np.array(refits() if seed is None else _simcache.remembered_many(
        _refits_key(n, x, p_hat, free, scheme, n_resamples, seed), refits))
    cut = 3 * n_resamples
    return Replicates(values[:cut].reshape(-1, 3), values[cut:2 * cut].reshape(-1, 3),
                      int(values[-1]), scheme, note)


def _refits_key(n, x, p_hat, free, scheme: str, n_resamples: int, seed: int) -> str:
    import scipy

    data = np.concatenate([np.asarray(a, dtype=np.float64).ravel() for a in (n, x, p_hat, free)])
    return _simcache.key("usl-bootstrap", 1, scheme, n_resamples, seed, np.__version__,
                         scipy.__version__, len(n), residuals=data)


def percentile_interval(values: np.ndarray, confidence: float) -> tuple[float, float]:
    tail = (1.0 - confidence) / 2.0
    lo, hi = np.quantile(values, [tail, 1.0 - tail], method="inverted_cdf")
    return float(lo), float(hi)


def interval_method(reps: Replicates, j: int, estimate: float, std_error: float,
                    kind: str) -> str:
    """What :func:`interval` gives parameter ``j``: ``"bootstrap-t"``, or ``"percentile"``
    when asked, or for an estimate on its bound, or without usable standard errors."""
    if kind not in INTERVALS:
        raise ValueError(f"interval must be one of {INTERVALS}, got {kind!r}")
    se_b = reps.std_errors[:, j]
    on_bound = estimate <= _LOWER[j] or estimate >= _UPPER[j]
    usable = std_error > 0 and np.all(np.isfinite(se_b)) and np.all(se_b > 0)
    return "percentile" if kind == "percentile" or on_bound or not usable else "bootstrap-t"


def interval(reps: Replicates, j: int, estimate: float, std_error: float, confidence: float,
             kind: str) -> tuple[float, float]:
    """Interval for parameter ``j``: bootstrap-t when the standard errors allow, else percentile
    (:func:`interval_method`)."""
    se_b = reps.std_errors[:, j]
    if interval_method(reps, j, estimate, std_error, kind) == "percentile":
        # bootstrap-t is degenerate for an estimate on its bound (e.g. kappa = 0)
        return percentile_interval(reps.estimates[:, j], confidence)
    t = (reps.estimates[:, j] - estimate) / se_b
    t_lo, t_hi = percentile_interval(t, confidence)
    lo = max(estimate - t_hi * std_error, _LOWER[j])
    hi = min(estimate - t_lo * std_error, _UPPER[j])
    return float(lo), float(hi)


def n_star_of(sigma: float | np.ndarray, kappa: float | np.ndarray) -> np.ndarray:
    """sqrt((1 - sigma) / kappa); infinite where kappa = 0 or sigma = 1 (no peak)."""
    sigma, kappa = np.asarray(sigma, float), np.asarray(kappa, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.sqrt((1.0 - sigma) / kappa)
    return np.where((kappa > 0) & (sigma < 1), out, np.inf)
