"""Power and minimum detectable effect of perfkit's run-vs-run comparison.

The comparison is :func:`perfkit.stats.compare`: a two-sided Mann-Whitney U test over
per-run values (exact up to 25 runs per side), whose effect is a ratio new/base (the
Hodges-Lehmann shift of log values). Its power is found by simulating that same test on runs
drawn from the observed run-to-run spread (see :mod:`perfkit.stats.powersim` for the model):
a predictive power that averages over the uncertainty of a spread seen in few runs.

Calibration (benchmarks/calibration_power.py; 400 pilots a row, 4-12 runs a side, log sd
0.05-0.1; each pilot states a ratio from its own runs, fresh experiments from the truth then
measure the power achieved there; Monte Carlo error of each mean <= 0.023):

- stated 50% / 80% / 90%: achieved 48-53% / 80-84% / 91-93% for normal log values and
  54-55% / 77-82% / 85-91% for Student-t3 ones;
- plugging in the observed spread instead achieved 69-74% at a stated 80% with 4 or 5 runs;
- ``runs_needed``: the designs it named had a simulated power of 81-83% (runs are whole
  numbers) and achieved 84-88%.

A single statement from 5 runs a side is still uncertain (the achieved power of an "80%"
ranged 60-99% between the 10th and 90th percentile of pilots): few runs pin the spread down
poorly. Noether's (1987) normal-theory formula is given beside the simulated run count as a
check (2.5-6% above the simulation for normal log values at 19-105 runs per arm).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from perfkit.stats import _simcache, powersim
from perfkit.stats.mannwhitney import min_attainable_p, runs_to_reach_alpha
from perfkit.units import to_float
from perfkit.warning import Code, Warn

#: simulated experiments per answer: the Monte Carlo error of a power near 0.8 is 0.006
DEFAULT_SIMULATIONS = 4000
#: the largest design :func:`runs_needed` searches
MAX_RUNS = 200
#: the warning of an answer from runs without a spread
ZERO_SPREAD_NOTE = Warn(Code.NO_SPREAD)

Values = Sequence[float] | np.ndarray | None


@dataclasses.dataclass(frozen=True)
class _Answer:
    def to_dict(self) -> dict:
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out["warnings"] = [w.to_dict() for w in out["warnings"]]  # each subclass has warnings
        for name in getattr(self, "_derived", ()):
            out[name] = getattr(self, name)
        return out


@dataclasses.dataclass(frozen=True)
class MinDetectable(_Answer):
    """Smallest change new/base a design detects with the stated power.

    ``ratio_high`` (> 1) and ``ratio_low`` (< 1) are the ratios nearest 1 that the two-sided
    test detects with probability >= ``power`` at ``alpha_adjusted``; None when not
    ``testable`` (``reason`` says why and ``runs_needed_per_arm`` how many equal runs per side
    could reach the adjusted alpha at all). ``log_sd`` is the run-to-run spread of log values
    used; ``mc_se`` the Monte Carlo standard error of a power of ``power``.
    """

    testable: bool
    ratio_high: float | None
    ratio_low: float | None
    lower_is_better: bool
    n_base: int
    n_new: int
    alpha: float
    alpha_adjusted: float
    family_size: int
    power: float
    log_sd: float
    spread_source: str
    runs_needed_per_arm: int | None
    reason: str | None
    method: str
    n_sim: int
    seed: int
    mc_se: float
    warnings: tuple[Warn, ...]

    _derived = ("regression_ratio", "improvement_ratio", "statement", "any_change")

    @property
    def any_change(self) -> bool:
        """Testable without a run-to-run spread (every run of a side had the same value): in
        the model any change, however small, is detected (``ratio_high == ratio_low == 1``);
        a change below the metric's rounding would not show in such runs."""
        return self.testable and self.ratio_high == 1.0 == self.ratio_low

    @property
    def regression_ratio(self) -> float | None:
        """The detectable ratio in the bad direction (up for latencies, down otherwise)."""
        return self.ratio_high if self.lower_is_better else self.ratio_low

    @property
    def improvement_ratio(self) -> float | None:
        return self.ratio_low if self.lower_is_better else self.ratio_high

    @property
    def statement(self) -> str:
        """One line for a table cell, e.g. "could have detected >= +7.1% or <= -6.6% ..."."""
        design = f"{self.n_base} vs {self.n_new} runs"
        if not self.testable:
            return f"not testable with {design}: {self.reason}"
        if self.any_change:
            return (f"could have detected any change ({design}, alpha "
                    f"{self.alpha_adjusted:.3g}): the runs had no run-to-run spread")
        return (f"could have detected {_pct(self.ratio_high)} or {_pct(self.ratio_low)} at "
                f"{self.power:.0%} power ({design}, alpha {self.alpha_adjusted:.3g})")


@dataclasses.dataclass(frozen=True)
class PowerAtRatio(_Answer):
    """Probability that the design detects a true ratio new/base (None if not testable)."""

    ratio: float
    power: float | None
    mc_se: float | None
    n_base: int
    n_new: int
    alpha: float
    alpha_adjusted: float
    family_size: int
    log_sd: float
    spread_source: str
    testable: bool
    method: str
    n_sim: int
    seed: int
    warnings: tuple[Warn, ...]


@dataclasses.dataclass(frozen=True)
class RunsNeeded(_Answer):
    """Fewest equal runs per arm that detect ``ratio`` with ``power`` (None: > ``max_runs``).

    ``power_stated`` is the simulated power at ``runs_per_arm`` (MC error ``mc_se``);
    ``noether_runs_per_arm`` Noether's normal-theory approximation, for comparison.
    """

    ratio: float
    runs_per_arm: int | None
    power: float
    power_stated: float | None
    mc_se: float | None
    noether_runs_per_arm: float
    alpha: float
    alpha_adjusted: float
    family_size: int
    log_sd: float
    spread_source: str
    max_runs: int
    method: str
    n_sim: int
    seed: int
    warnings: tuple[Warn, ...]


def min_detectable_ratio(base: Values = None, new: Values = None, *, n_base: int | None = None,
                         n_new: int | None = None, log_sd: float | None = None,
                         log_sd_df: float | None = None, alpha: float = 0.05,
                         power: float = 0.8, lower_is_better: bool = True,
                         family_size: int = 1, n_sim: int = DEFAULT_SIMULATIONS,
                         seed: int = 0) -> MinDetectable:
    """Smallest ratio new/base, each way, that the design detects with the given power.

    Parameters
    ----------
    base, new : array-like of float, optional
        Observed per-run values (e.g. each run's p99 in ms; positive). Their pooled log
        residuals give the run-to-run spread. NaN/None (failed runs) are left out of it.
    n_base, n_new : int, optional
        Runs per side of the design; default: the finite values given.
    log_sd, log_sd_df : float, optional
        Instead of values: the run-to-run standard deviation of log values (0.05 is a 5%
        spread), known exactly unless its degrees of freedom are given.
    alpha : float
        Level of the two-sided test.
    power : float
        Target probability of detection, in (0, 1).
    lower_is_better : bool
        Only names the directions: ``regression_ratio`` is ``ratio_high`` when True.
    family_size : int
        Comparisons in the Holm family: a change is detected only when its p beats
        ``alpha / family_size``, Holm's first step (Holm, Scand. J. Statist. 6, 1979).
    n_sim, seed : int
        Simulated experiments and the seed of their generator.

    Returns
    -------
    MinDetectable
        Not ``testable`` (ratios None, with the reason and the runs per arm needed) when the
        smallest p the design can reach (:func:`perfkit.stats.mannwhitney.min_attainable_p`)
        is not below the adjusted alpha.

    Notes
    -----
    Simulation from the spread model of :mod:`perfkit.stats.powersim`; for each simulated
    experiment the shifts at which the test starts to reject are order statistics of the
    pairwise differences, so one set of draws gives power at every ratio (common random
    numbers) and the ratio is exact for those draws.
    """
    _check(alpha, power, family_size, n_sim)
    spread, sizes, warnings = _spread(base, new, log_sd, log_sd_df, n_base, n_new)
    n_b, n_n = sizes
    alpha_adj = alpha / family_size
    common: dict[str, Any] = {
        "lower_is_better": lower_is_better, "n_base": n_b, "n_new": n_n, "alpha": alpha,
        "alpha_adjusted": alpha_adj, "family_size": family_size, "power": power,
        "log_sd": spread.log_sd, "spread_source": spread.source,
        "method": _method(n_sim), "n_sim": n_sim, "seed": seed,
        "mc_se": math.sqrt(power * (1 - power) / n_sim)}
    u_hi = powersim.upper_critical_u(n_n, n_b, alpha_adj)
    if u_hi is None:
        need, reason = _untestable(n_b, n_n, alpha_adj, family_size)
        return MinDetectable(False, None, None, runs_needed_per_arm=need, reason=str(reason),
                             warnings=tuple(warnings + [reason]), **common)
    if spread.zero:  # every shift > 0 puts each new run above each base run: U = K
        return MinDetectable(True, 1.0, 1.0, runs_needed_per_arm=None, reason=None,
                             warnings=tuple(warnings), **common)

    def simulated() -> tuple[float, float]:
        rng = np.random.default_rng(seed)
        highs, lows = powersim.shift_thresholds(spread, n_b, n_n, u_hi, n_sim, rng)
        return (powersim.smallest_shift(highs, lows, power),
                powersim.smallest_shift(-lows[::-1], -highs[::-1], power))

    digest = _simcache.key("min_detectable_ratio", spread.log_sd, spread.df, spread.draw_df,
                           n_b, n_n, u_hi, n_sim, seed, power, residuals=spread.residuals)
    up, down = _simcache.remembered_many(digest, simulated)
    return MinDetectable(True, math.exp(up), math.exp(-down), runs_needed_per_arm=None,
                         reason=None, warnings=tuple(warnings), **common)


def power_at_ratio(ratio: float, base: Values = None, new: Values = None, *,
                   n_base: int | None = None, n_new: int | None = None,
                   log_sd: float | None = None, log_sd_df: float | None = None,
                   alpha: float = 0.05, family_size: int = 1,
                   n_sim: int = DEFAULT_SIMULATIONS, seed: int = 0) -> PowerAtRatio:
    """Probability that the design detects a true ratio new/base of ``ratio``.

    Parameters are those of :func:`min_detectable_ratio`; ``ratio`` is positive (1.05: new is
    5% higher). The same simulation, run at one shift. Returns power None when the design
    cannot reach the adjusted alpha.
    """
    _check(alpha, 0.5, family_size, n_sim)
    shift = _log_ratio(ratio)
    spread, (n_b, n_n), warnings = _spread(base, new, log_sd, log_sd_df, n_base, n_new)
    alpha_adj = alpha / family_size
    u_hi = powersim.upper_critical_u(n_n, n_b, alpha_adj)
    got = None
    if u_hi is None:
        warnings.append(_untestable(n_b, n_n, alpha_adj, family_size)[1])
    else:
        rng = np.random.default_rng(seed)
        got = powersim.rejection_rate(spread, n_b, n_n, shift, u_hi, n_sim, rng)
    se = None if got is None else math.sqrt(max(got * (1 - got), 1.0 / n_sim) / n_sim)
    return PowerAtRatio(ratio, got, se, n_b, n_n, alpha, alpha_adj, family_size,
                        spread.log_sd, spread.source, u_hi is not None, _method(n_sim), n_sim,
                        seed, tuple(warnings))


def runs_needed(ratio: float, base: Values = None, new: Values = None, *,
                log_sd: float | None = None, log_sd_df: float | None = None,
                alpha: float = 0.05, power: float = 0.8, family_size: int = 1,
                max_runs: int = MAX_RUNS, n_sim: int = DEFAULT_SIMULATIONS,
                seed: int = 0) -> RunsNeeded:
    """Fewest equal runs per arm that detect a true ratio new/base with the given power.

    Parameters are those of :func:`min_detectable_ratio`; ``ratio`` is the change to detect
    (1.03 or 0.97 for 3%). The search starts at the fewest runs whose smallest attainable p
    beats the adjusted alpha and bisects on the simulated power (each design simulated with
    the same seed); ``runs_per_arm`` is None when even ``max_runs`` falls short.

    Notes
    -----
    Power grows with the runs per arm up to Monte Carlo noise, so the answer is the first n
    whose simulated power reaches the target where n - 1's did not, good to about one run.
    Noether's formula (JASA 82, 1987) is returned beside it.
    """
    _check(alpha, power, family_size, n_sim)
    shift = _log_ratio(ratio)
    spread, _, warnings = _spread(base, new, log_sd, log_sd_df, 1, 1)
    alpha_adj = alpha / family_size
    noether = powersim.noether_runs_per_arm(spread.log_sd, shift, alpha_adj, power)

    def simulated(n: int) -> float:
        u_hi = powersim.upper_critical_u(n, n, alpha_adj)
        assert u_hi is not None  # _bisect tries no n below runs_to_reach_alpha's
        digest = _simcache.key("rejection_rate", spread.log_sd, spread.df, spread.draw_df, n, n,
                               shift, u_hi, n_sim, seed, residuals=spread.residuals)
        return _simcache.remembered(digest, lambda: powersim.rejection_rate(
            spread, n, n, shift, u_hi, n_sim, np.random.default_rng(seed)))

    low = runs_to_reach_alpha(alpha_adj, limit=max_runs)
    found, stated = None, None
    if low is not None and shift != 0:
        found, stated = _bisect(simulated, low, max_runs, power)
    if found is None:
        warnings.append(Warn(Code.MORE_RUNS_THAN, runs=max_runs)
                        if low is not None and shift != 0 else Warn(Code.RATIO_OF_ONE))
    se = None if stated is None else math.sqrt(stated * (1 - stated) / n_sim)
    return RunsNeeded(ratio, found, power, stated, se, noether, alpha, alpha_adj, family_size,
                      spread.log_sd, spread.source, max_runs, _method(n_sim), n_sim, seed,
                      tuple(warnings))


# -- internals ---------------------------------------------------------------------------------
def _bisect(simulated, low: int, high: int, power: float) -> tuple[int | None, float | None]:
    """First n in [low, high] with simulated(n) >= power, by doubling then bisection."""
    cache: dict[int, float] = {}

    def at(n: int) -> float:
        if n not in cache:
            cache[n] = simulated(n)
        return cache[n]

    before, hi = low - 1, low
    while at(hi) < power:
        if hi >= high:
            return None, None
        before, hi = hi, min(high, 2 * hi)
    lo = before + 1
    while lo < hi:
        mid = (lo + hi) // 2
        if at(mid) >= power:
            hi = mid
        else:
            lo = mid + 1
    return hi, at(hi)


def _spread(base: Values, new: Values, log_sd: float | None, log_sd_df: float | None,
            n_base: int | None, n_new: int | None
            ) -> tuple[powersim.Spread, tuple[int, int], list[Warn]]:
    warnings: list[Warn] = []
    if log_sd is not None:
        if base is not None or new is not None:
            raise ValueError("give per-run values or log_sd, not both")
        spread = powersim.spread_stated(log_sd, log_sd_df)
        n_obs = (0, 0)
    else:
        if base is None or new is None:
            raise ValueError("give the per-run values of both sides, or log_sd")
        sides = [_finite(v, label, warnings) for v, label in ((base, "base"), (new, "new"))]
        spread = powersim.spread_from_values(*sides)
        n_obs = (len(sides[0]), len(sides[1]))
        if len(np.unique(np.concatenate(sides))) < sum(n_obs):
            warnings.append(Warn(Code.TIED_VALUES))
        if spread.zero:
            warnings.append(ZERO_SPREAD_NOTE)
        elif spread.df < 5:
            warnings.append(Warn(Code.SPREAD_FEW_DF, df=spread.df))
    sizes = (n_obs[0] if n_base is None else int(n_base),
             n_obs[1] if n_new is None else int(n_new))
    if min(sizes) < 1:
        raise ValueError(f"each side needs >= 1 run, got n_base={sizes[0]}, n_new={sizes[1]}")
    return spread, sizes, warnings


def _finite(values, label: str, warnings: list[Warn]) -> np.ndarray:
    raw = np.ravel(np.asarray(values, dtype=object))
    v = np.array([to_float(x) for x in raw], dtype=np.float64)
    keep = np.isfinite(v)
    if (v[keep] <= 0).any():
        raise ValueError(f"{label}: per-run values must be > 0 (the effect is a ratio)")
    if not keep.all():
        warnings.append(Warn(Code.RUNS_LEFT_OUT_OF_SPREAD, side=label, runs=int((~keep).sum())))
    return v[keep]


def _untestable(n_b: int, n_n: int, alpha_adj: float, family: int) -> tuple[int | None, Warn]:
    need = runs_to_reach_alpha(alpha_adj, limit=MAX_RUNS)
    return need, Warn(Code.DESIGN_CANNOT_REACH_ALPHA, n_base=n_b, n_new=n_n,
                      min_p=min_attainable_p(n_n, n_b), alpha=alpha_adj, family=family,
                      need=need, most=MAX_RUNS)


def _method(n_sim: int) -> str:
    return (f"simulation of {n_sim} experiments: smoothed bootstrap of the pooled log "
            "residuals, spread drawn from its sampling distribution (f / chi2_f), two-sided "
            "Mann-Whitney U as compare() runs it (exact <= 25 runs per side)")


def _check(alpha: float, power: float, family_size: int, n_sim: int) -> None:
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    if not 0.0 < power < 1.0:
        raise ValueError(f"power must be in (0, 1), got {power!r}")
    if int(family_size) != family_size or family_size < 1:
        raise ValueError(f"family_size must be an integer >= 1, got {family_size!r}")
    if n_sim < 100:
        raise ValueError(f"n_sim must be >= 100, got {n_sim!r}")


def _log_ratio(ratio: float) -> float:
    if not (math.isfinite(ratio) and ratio > 0):
        raise ValueError(f"ratio must be a positive number (1.05 for +5%), got {ratio!r}")
    return math.log(ratio)


def _pct(ratio: float | None) -> str:
    if ratio is None or math.isinf(ratio):
        return "no change"
    sign = ">=" if ratio >= 1 else "<="
    return f"{sign} {(ratio - 1) * 100:+.1f}%"
