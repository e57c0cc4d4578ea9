"""Simulation kernels behind :mod:`perfkit.stats.power`: the spread model and the U test.

The run-to-run spread is modelled on the log scale, where perfkit's comparison measures its
effect (a ratio new/base is a shift of log values):

- From observed per-run values: the log values of each side minus that side's mean, pooled
  (a side's own level is not spread). Simulated runs are drawn from a smoothed bootstrap of
  these residuals (Silverman, *Density Estimation*, 1986, eq. 3.31 bandwidth; the shrunk
  smoothed bootstrap of Efron and Tibshirani, *An Introduction to the Bootstrap*, 1993,
  section 16.5, here rescaled to the unbiased pooled variance with N - 2 degrees of freedom).
  Smoothing keeps the draws continuous: resampling ten values with replacement would create
  ties that real per-run values do not have, and ties cost the rank test power.
- Each simulated experiment then scales its residuals by ``sqrt(f / chi2_f)``, a draw of the
  spread from its sampling distribution (for normal data with f = df, the fiducial /
  Jeffreys-posterior distribution of a variance). The stated power is thus a predictive power
  that averages over what the few observed runs leave unknown about the spread
  (Spiegelhalter, Abrams and Myles, *Bayesian Approaches to Clinical Trials and Health-Care
  Evaluation*, 2004, section 6.5). A plain plug-in of the observed spread overstates power
  when runs are few: at 5 vs 5 runs the designs it said had 80% power had 73% on average.
- f allows for tails heavier than normal, which few runs cannot show: the variance of a
  sample variance is sigma^4 (2 / df + kappa / N) for excess kurtosis kappa (Box, Biometrika
  40, 1953), matched by a scaled chi-square with f = 1 / (1 / df + kappa / (2 N))
  (Satterthwaite's moment matching). kappa = :data:`EXCESS_KURTOSIS` = 1, what the log
  per-run throughput and p50 of the bundled factorial experiment show (0.8 and 1.0 over 60
  runs in 12 cells). With kappa = 0, designs said to have 90% power had 83% when log
  values were Student-t3 and runs 4 or 5 a side (benchmarks/calibration_power.py).
- Stated as a log standard deviation instead: normal log values with that spread, known
  exactly unless its degrees of freedom are given.

The test is the one :func:`perfkit.stats.compare` runs: two-sided Mann-Whitney U,
exact up to :data:`perfkit.stats.mannwhitney.EXACT_LIMIT` runs per side, else normal. Draws are
continuous, so U is an integer and the rejection region is ``U >= u_hi`` or ``U <= K - u_hi``.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from perfkit.stats import _simcache
from perfkit.stats._dist import norm_cdf, norm_ppf
from perfkit.stats.mannwhitney import null_distribution

#: excess kurtosis assumed for the run-to-run spread of log values (see the module docstring)
EXCESS_KURTOSIS = 1.0
#: a log standard deviation below this is no spread (equal values, up to rounding of logs)
ZERO_SPREAD = 1e-12
#: bound on the floats held at once by one simulation chunk (32 MB)
CHUNK_FLOATS = 4_000_000


@dataclasses.dataclass(frozen=True, eq=False)
class Spread:
    """Run-to-run spread of log values, with what it was estimated from.

    ``residuals`` is None when the spread was stated (normal model); ``df`` is ``math.inf``
    for a spread known exactly; ``draw_df`` is f of the spread draws.
    """

    log_sd: float
    df: float
    source: str
    residuals: np.ndarray | None = None
    draw_df: float = math.inf

    @property
    def zero(self) -> bool:
        """No run-to-run spread: every observed run of a side had the same value."""
        return self.log_sd == 0.0

    def draw(self, rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
        """Continuous residual draws with variance ``log_sd**2`` (before the spread scale);
        zeros without a spread."""
        if self.zero:
            return np.zeros(shape)
        if self.residuals is None:
            return self.log_sd * rng.standard_normal(shape)
        res = self.residuals
        h = _bandwidth(res)
        raw_var = float(np.mean(res ** 2))
        scale = self.log_sd / math.sqrt(raw_var + h * h)
        picks = res[rng.integers(0, len(res), shape)]
        return (picks + h * rng.standard_normal(shape)) * scale

    def scales(self, rng: np.random.Generator, n_sim: int) -> np.ndarray:
        """Per-experiment spread factors ``sqrt(f / chi2_f)`` as a column (ones if known)."""
        if math.isinf(self.draw_df):
            return np.ones((n_sim, 1))
        return np.sqrt(self.draw_df / rng.chisquare(self.draw_df, n_sim))[:, None]


def spread_from_values(base: np.ndarray, new: np.ndarray) -> Spread:
    """Pooled log residuals of two sides of positive finite per-run values."""
    sides = [np.log(v) for v in (base, new) if len(v)]
    residuals = np.concatenate([s - s.mean() for s in sides]) if sides else np.zeros(0)
    df = len(residuals) - len(sides)
    if df < 1:
        raise ValueError("the run-to-run spread needs >= 2 runs on one side "
                         "(or pass log_sd)")
    # equal values give residuals of a few ulps, not 0: a spread below 1e-12 is none
    log_sd = math.sqrt(float(np.sum(residuals ** 2)) / df)
    log_sd = 0.0 if log_sd < ZERO_SPREAD else log_sd
    draw_df = 1.0 / (1.0 / df + EXCESS_KURTOSIS / (2.0 * len(residuals)))
    return Spread(log_sd, float(df), f"observed per-run values ({df} df)", residuals, draw_df)


def spread_stated(log_sd: float, df: float | None) -> Spread:
    """A stated log standard deviation (normal model), known unless ``df`` is given."""
    if not (math.isfinite(log_sd) and log_sd > 0):
        raise ValueError(f"log_sd must be a positive number, got {log_sd!r}")
    if df is not None and not df >= 1:
        raise ValueError(f"log_sd_df must be >= 1, got {df!r}")
    known = df is None
    source = "stated log sd" + ("" if known else f" ({df:g} df)")
    df_value = math.inf if df is None else float(df)
    return Spread(float(log_sd), df_value, source, None, df_value)


def upper_critical_u(n_x: int, n_y: int, alpha: float) -> int | None:
    """Smallest integer U above the centre whose two-sided p is < alpha (None: unreachable).

    Remembered by its three inputs (:mod:`perfkit.stats._simcache`): the null distribution
    behind it is an array of 2 n_x n_y + 1 p-values, too large to remember value by value."""
    digest = _simcache.key("upper_critical_u", int(n_x), int(n_y), float(alpha))
    found = _simcache.remembered(digest, lambda: _upper_critical_u(n_x, n_y, alpha))
    return None if math.isnan(found) else int(found)


def _upper_critical_u(n_x: int, n_y: int, alpha: float) -> float:
    """:func:`upper_critical_u`, NaN for None."""
    k = n_x * n_y
    p = null_distribution(n_x, n_y).pvalues[::2]  # integer U = 0..k
    u = np.arange(k + 1)
    hits = np.flatnonzero((u > k / 2) & (p < alpha))
    return float(hits[0]) if len(hits) else math.nan


def shift_thresholds(spread: Spread, n_base: int, n_new: int, u_hi: int, n_sim: int,
                     rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Per simulated experiment, the log shifts at which the test starts to reject.

    With diffs D = base_j - new_i, U of ``new + d`` is #{D < d}: the test rejects upwards for
    d > D_(u_hi) and downwards for d < D_(K - u_hi + 1) (order statistics, 1-based). Common
    random numbers across d make power(d) a step function read off these two sorted arrays.
    """
    k = n_base * n_new
    chunk = max(1, CHUNK_FLOATS // k)
    highs, lows = [], []
    for start in range(0, n_sim, chunk):
        b = min(chunk, n_sim - start)
        scale = spread.scales(rng, b)
        base = spread.draw(rng, (b, n_base)) * scale
        new = spread.draw(rng, (b, n_new)) * scale
        diffs = (base[:, None, :] - new[:, :, None]).reshape(b, k)
        part = np.partition(diffs, sorted({k - u_hi, u_hi - 1}), axis=1)
        highs.append(part[:, u_hi - 1])
        lows.append(part[:, k - u_hi])
    return np.sort(np.concatenate(highs)), np.sort(np.concatenate(lows))


def smallest_shift(highs: np.ndarray, lows: np.ndarray, power: float) -> float:
    """Smallest d >= 0 with P(reject at d) >= power, from :func:`shift_thresholds`."""
    n_sim = len(highs)
    candidates = highs[highs >= 0]
    reject = (np.searchsorted(highs, candidates, side="right")
              + n_sim - np.searchsorted(lows, candidates, side="right")) / n_sim
    hit = np.flatnonzero(reject >= power)
    return float(candidates[hit[0]]) if len(hit) else math.inf


def rejection_rate(spread: Spread, n_base: int, n_new: int, shift: float, u_hi: int,
                   n_sim: int, rng: np.random.Generator) -> float:
    """Share of simulated experiments (new shifted by ``shift`` in logs) that reject."""
    k = n_base * n_new
    if spread.zero:  # every new run above (below) every base run, or all tied: U = K, 0 or p 1
        return float(shift != 0 and k >= u_hi)
    chunk = max(1, CHUNK_FLOATS // (4 * (n_base + n_new)))
    hits = 0
    for start in range(0, n_sim, chunk):
        b = min(chunk, n_sim - start)
        scale = spread.scales(rng, b)
        base = spread.draw(rng, (b, n_base)) * scale
        new = spread.draw(rng, (b, n_new)) * scale + shift
        pooled = np.concatenate([new, base], axis=1)
        ranks = np.argsort(np.argsort(pooled, axis=1), axis=1) + 1
        u = ranks[:, :n_new].sum(axis=1) - n_new * (n_new + 1) // 2
        hits += int(np.count_nonzero((u >= u_hi) | (u <= k - u_hi)))
    return hits / n_sim


def noether_runs_per_arm(log_sd: float, shift: float, alpha: float, power: float) -> float:
    """Noether's (1987) runs per arm for equal arms: (z_a/2 + z_b)^2 / (6 (p' - 1/2)^2).

    p' = P(new > base) = Phi(|shift| / (log_sd sqrt 2)) for normal log values (Noether, "Sample
    size determination for some common nonparametric tests", JASA 82, 1987). A large-sample
    approximation that ignores the exact test's discreteness: a cross-check of the simulation.
    """
    if log_sd == 0:  # no spread: every pair is ordered by the shift (p' = 1), if any
        p_prime = 1.0 if shift else 0.5
    else:
        p_prime = float(norm_cdf(abs(shift) / (log_sd * math.sqrt(2.0))))
    if p_prime <= 0.5:
        return math.inf
    z = norm_ppf(1 - alpha / 2) + norm_ppf(power)
    return float(z * z / (6.0 * (p_prime - 0.5) ** 2))


def _bandwidth(res: np.ndarray) -> float:
    """Silverman's rule of thumb, 0.9 min(sd, IQR / 1.34) n^(-1/5)."""
    sd = math.sqrt(float(np.mean(res ** 2)))
    q75, q25 = np.percentile(res, [75, 25])
    iqr = (q75 - q25) / 1.34
    width = min(sd, iqr) if iqr > 0 else sd
    return 0.9 * width * len(res) ** -0.2
