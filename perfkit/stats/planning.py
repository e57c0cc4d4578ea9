"""The runs per arm that decide a change two sets of runs show, planned from bounds, not guesses.

Planning a follow-up from the change a pilot shows (its ratio new/base) and the spread it shows
treats two noisy estimates as the truth: a pilot of 3 or 5 runs a side overstates a change as
often as it understates it, the runs needed grow as 1 / change², and the overstated changes
promise far too few runs (and a spread seen small by chance, too few again). Designs planned
that way (``runs_needed`` at the observed ratio, as ``perfkit plan`` and ``gate`` did) decided
a real x1.1-x1.5 change, from pilots of 3 or 5 runs a side at log sd 0.15-0.3, in 28-93% of
the pilots (x1.1 and x1.2: 28-79%), not the 80% stated (``benchmarks/calibration_runs_needed.py``,
200 pilots a row, the follow-up analysed as :func:`perfkit.stats.compare` analyses it).

:func:`plan_observed` plans instead for what the pilot can vouch for:

- **the change**: the end nearest the reference (1, no change; a gate's threshold) of the
  one-sided :data:`PLANNING_CONFIDENCE` (80%) interval of the observed change, Student's t on
  the log ratio with the pooled run-to-run spread (``N - 2`` degrees of freedom). When that
  interval reaches the reference the pilot cannot tell the change from none (or from the
  threshold) and no number of runs is promised: :attr:`Code.CHANGE_COMPATIBLE_WITH_NONE`;
- **the spread**: the upper :data:`SPREAD_CONFIDENCE` (95%) bound of the run-to-run log sd,
  ``s * sqrt(df / chi2_{0.05, df})`` (the chi-square interval of a variance), taken as known
  in :func:`perfkit.stats.power.runs_needed` (normal log values). A pilot that overstates the
  change by chance mostly saw a small spread (its t is large), so the spread's bound is the
  stronger of the two.

Measured by the same simulation: following the advice decided the change in 75-99% of the
pilots given a count (± 0.004-0.078, twice the Monte Carlo error), at a median 1.5-4.1 times the
runs of the estimates' advice (x1.2 at log sd 0.15 from 5 runs: 57 runs per arm, not 14);
0-54% of the pilots got no count (compatible with no change), 1-34% more than 200 runs.
The two levels were chosen by that simulation among (change, spread) = (0.8, 0.8), (0.9, 0.8),
(0.9, 0.9), (0.95, 0.95), (0.8, 0.95) and (0.9, 0.99) (the spread's predictive draws of
``runs_needed`` without a bound fell short too): 0.8 and 0.95 met the target where the others
did, with fewer pilots left without a count.

What no rule can do: where the true change is small beside the pilot's own uncertainty
(x1.1 at log sd 0.3 from 3 or 5 runs a side: the change is a third of the spread), the pilots
that show a change at all are mostly those that overstate it, whatever the confidence (at 0.9
or 0.95 as at 0.8); about half the pilots there get no count (the code above), and the counts
given decide in 39-53%, against 28-35% before. A bound corrected for that selection (the
lower bound of the noncentral t's noncentrality conditional on the pilot showing a change,
Lee et al. 2016's truncated pivot) did worse there (32-38%): it refuses the pilots near the
truth and counts the flukes. Pilot data cannot tell a fluke of a small change from a typical
pilot of a larger one, so the advice holds from a size of true change, which each plan states
(:attr:`PlannedChange.decides_from`): the change :func:`decides_from_se` standard errors of
the pilot's log change away from the reference. Swept over the true change (``--sweep``,
300-400 pilots a point, +- 0.03-0.06), the advice decided >= 75% of the pilots given a count
from 0.9 standard errors at 3 runs a side (0.808), 1.0 at 5 (0.820), 1.25 at 10 (0.814) and
1.5 at 20 (0.821); half a standard error nearer the reference it decided 0.33-0.72. The
threshold grows with the pilot because more of its advice passes the most runs searched
(200), which leaves out plans for the small changes.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np

from perfkit.stats._dist import chi2_ppf, t_ppf
from perfkit.stats.power import DEFAULT_SIMULATIONS, MAX_RUNS, RunsNeeded, runs_needed
from perfkit.warning import Code, Warn

#: one-sided confidence of the bound on the change a follow-up is planned for
PLANNING_CONFIDENCE = 0.8
#: one-sided confidence of the upper bound on the run-to-run spread it is planned at
SPREAD_CONFIDENCE = 0.95
#: (pilot df, true change in standard errors of the pilot's log change from which following
#: the advice decided >= 75% of pilots): measured at 3, 5, 10 and 20 runs a side
DECIDES_FROM = ((4, 0.9), (8, 1.0), (18, 1.25), (38, 1.5))


def decides_from_se(df: float) -> float:
    """The true change, in standard errors of the pilot's log change (``log_sd * sqrt(1/n_base
    + 1/n_new)``), from which the advice of a pilot on ``df`` degrees of freedom was measured to
    decide >= 75% of the time (:data:`DECIDES_FROM`; between two measured pilots the larger
    pilot's figure, beyond the largest its figure: an estimate there)."""
    for measured_df, se in DECIDES_FROM:
        if df <= measured_df:
            return se
    return DECIDES_FROM[-1][1]

Values = Sequence[float] | np.ndarray


@dataclasses.dataclass(frozen=True)
class PlannedChange:
    """The change and spread a follow-up is planned for, from two sets of per-run values.

    ``observed`` is the change seen new/base; ``planned`` the end nearest
    ``reference`` of its one-sided ``confidence`` interval (None: the interval reaches the
    reference, ``warnings`` says so with :attr:`Code.CHANGE_COMPATIBLE_WITH_NONE`);
    ``log_sd`` the pooled run-to-run spread of log values on ``df`` degrees of freedom and
    ``log_sd_planned`` its upper bound at ``spread_confidence``; ``needed`` the runs per arm that
    detect ``planned / reference`` at ``log_sd_planned`` (None when nothing is planned);
    ``decides_from`` the smallest true change, on the side of the change seen, for which the
    advice was measured to decide >= 75% of pilots (:func:`decides_from_se` of the pilot's
    standard errors from ``reference``, at the spread seen: an estimate; None when nothing is
    planned). Nearer the reference a pilot of this size cannot vouch for the count.
    """

    observed: float
    reference: float
    confidence: float
    spread_confidence: float
    log_sd: float
    log_sd_planned: float
    df: float
    planned: float | None
    needed: RunsNeeded | None
    warnings: tuple[Warn, ...]
    decides_from: float | None = None

    @property
    def runs_per_arm(self) -> int | None:
        """The runs per arm advised (None: none promised, or more than the most searched)."""
        return None if self.needed is None else self.needed.runs_per_arm

    def to_dict(self) -> dict:
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out["needed"] = None if self.needed is None else self.needed.to_dict()
        out["warnings"] = [w.to_dict() for w in self.warnings]
        return out


def plan_observed(base: Values, new: Values, *, ratio: float | None = None,
                  reference: float = 1.0, confidence: float = PLANNING_CONFIDENCE,
                  spread_confidence: float = SPREAD_CONFIDENCE, alpha: float = 0.05,
                  power: float = 0.8, family_size: int = 1, max_runs: int = MAX_RUNS,
                  n_sim: int = DEFAULT_SIMULATIONS, seed: int = 0) -> PlannedChange:
    """Runs per arm that decide the change ``new`` shows against ``base`` (module docstring).

    Parameters
    ----------
    base, new : array-like of float
        Positive finite per-run values of the two sides (>= 1 each, >= 3 in all).
    ratio : float, optional
        The change seen, new/base, the interval is centred on (a comparison's Hodges-Lehmann
        ratio, so that the bound belongs to the ratio printed); default the ratio of the
        geometric means.
    reference : float
        The ratio the follow-up must tell the change from: 1 (is there a change?) or a gate's
        threshold ratio (is the change beyond it?).
    confidence, spread_confidence : float
        One-sided confidence of the bound on the change (:data:`PLANNING_CONFIDENCE`) and of
        the spread's upper bound (:data:`SPREAD_CONFIDENCE`), each in (0.5, 1).
    alpha, power, family_size, max_runs, n_sim, seed :
        As for :func:`perfkit.stats.power.runs_needed`.
    """
    for value in (confidence, spread_confidence):
        if not 0.5 < value < 1.0:
            raise ValueError(f"confidence must be in (0.5, 1), got {value!r}")
    if not (math.isfinite(reference) and reference > 0):
        raise ValueError(f"reference must be a positive ratio, got {reference!r}")
    change, half, log_sd, df, se = _change_and_spread(base, new, ratio, confidence)
    sd_high = log_sd * math.sqrt(df / float(chi2_ppf(1 - spread_confidence, df)))
    common = (math.exp(change), reference, confidence, spread_confidence, log_sd, sd_high, df)
    distance = change - math.log(reference)
    if abs(distance) <= half:
        note = Warn(Code.CHANGE_COMPATIBLE_WITH_NONE, ratio=math.exp(change),
                    low=math.exp(change - half), high=math.exp(change + half),
                    level=2 * confidence - 1, reference=reference)
        return PlannedChange(*common, planned=None, needed=None, warnings=(note,))
    planned = math.copysign(abs(distance) - half, distance)  # log distance from reference
    # equal values on both sides (no spread): any change shows once alpha is reachable
    needed = runs_needed(math.exp(planned), log_sd=max(sd_high, math.ulp(1.0)), alpha=alpha,
                         power=power, family_size=family_size, max_runs=max_runs,
                         n_sim=n_sim, seed=seed)
    decides_from = reference * math.exp(math.copysign(decides_from_se(df) * se, distance))
    return PlannedChange(*common, planned=reference * math.exp(planned), needed=needed,
                         warnings=needed.warnings, decides_from=decides_from)


def _change_and_spread(base: Values, new: Values, ratio: float | None,
                       confidence: float) -> tuple[float, float, float, float, float]:
    """(log change, half-width of its one-sided ``confidence`` t bound, pooled log sd, df, the
    log change's standard error)."""
    lb, ln = (np.log(_positive(v, label)) for v, label in ((base, "base"), (new, "new")))
    df = len(lb) + len(ln) - 2
    if min(len(lb), len(ln)) < 1 or df < 1:
        raise ValueError("planning from an observed change needs >= 1 run a side and >= 3 "
                         f"in all, found {len(lb)} and {len(ln)}")
    log_sd = math.sqrt(float(((lb - lb.mean()) ** 2).sum() + ((ln - ln.mean()) ** 2).sum())
                       / df)
    change = float(ln.mean() - lb.mean()) if ratio is None else _log_ratio(ratio)
    se = log_sd * math.sqrt(1 / len(lb) + 1 / len(ln))
    return change, float(t_ppf(confidence, df)) * se, log_sd, float(df), se


def _log_ratio(ratio: float) -> float:
    if not (math.isfinite(ratio) and ratio > 0):
        raise ValueError(f"ratio must be a positive number, got {ratio!r}")
    return math.log(ratio)


def _positive(values: Values, label: str) -> np.ndarray:
    v = np.asarray(values, dtype=float).ravel()
    v = v[np.isfinite(v)]
    if (v <= 0).any():
        raise ValueError(f"{label}: per-run values must be > 0 (the change is a ratio)")
    return v
