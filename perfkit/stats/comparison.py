"""Compare two configurations run by run, as benchstat does: one :class:`Comparison` out.

The observations are per-run summaries (a run's p99, its throughput, ...), never requests.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from perfkit.errors import UsageError
from perfkit.stats.mannwhitney import (
    hodges_lehmann_moses,
    mann_whitney,
    min_attainable_p,
    runs_to_reach_alpha,
)
from perfkit.stats.orderstats import median_ci
from perfkit.stats.welch import WelchLog, welch_log
from perfkit.warning import Code, Warn, texts

#: the fields of :class:`Comparison`, in order (also the columns of :meth:`Comparison.to_frame`)
COLUMNS = (
    "n_base", "n_new",
    "median_base", "median_base_ci_low", "median_base_ci_high",
    "median_new", "median_new_ci_low", "median_new_ci_high",
    "ratio", "ratio_ci_low", "ratio_ci_high", "ratio_ci_level",
    "p_value", "p_method", "min_attainable_p", "alpha", "significant",
    "n_failed_base", "n_failed_new", "df", "warnings",
)
#: the ``p_method`` of a comparison decided by Welch's t on log values (:mod:`perfkit.stats.welch`)
WELCH = "welch_log"
#: the fewest runs a side for Welch's t to stand in for the rank test at its floor (3 df a side)
WELCH_MIN_RUNS = 4

_NAN = math.nan


@dataclasses.dataclass(frozen=True)
class Comparison:
    """The run-vs-run comparison of one metric between a base and a new configuration.

    ``ratio`` is new over base (the Hodges-Lehmann shift of log values, exponentiated) with its
    Moses interval at ``ratio_ci_level``: 1 - ``alpha`` / family (Bonferroni over the
    comparisons adjusted together, so that the interval excludes 1 only where the family's
    Holm-adjusted verdict is significant); ``significant`` is True/False, or None when the
    test could not decide: the run counts cannot reach ``p < alpha`` (``min_attainable_p >=
    alpha``), or a side has no finished run. Every number that could not be computed is NaN,
    never 0 or 1.
    """

    n_base: int
    n_new: int
    median_base: float = _NAN
    median_base_ci_low: float = _NAN
    median_base_ci_high: float = _NAN
    median_new: float = _NAN
    median_new_ci_low: float = _NAN
    median_new_ci_high: float = _NAN
    ratio: float = _NAN
    ratio_ci_low: float = _NAN
    ratio_ci_high: float = _NAN
    #: the coverage the ratio interval is built for: 1 - alpha / family
    ratio_ci_level: float = _NAN
    p_value: float = _NAN
    p_method: str | None = None
    min_attainable_p: float = _NAN
    alpha: float = 0.05
    significant: bool | None = None
    n_failed_base: int = 0
    n_failed_new: int = 0
    #: the degrees of freedom of Welch's t (``p_method`` :data:`WELCH`), else NaN
    df: float = _NAN
    warnings: tuple[Warn, ...] = ()

    @property
    def testable(self) -> bool:
        """Whether the run counts can reach ``p < alpha`` at all."""
        return self.min_attainable_p < self.alpha

    def to_dict(self) -> dict[str, Any]:
        """The fields as a plain dict (``warnings`` as a list of :meth:`Warn.to_dict`)."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out["warnings"] = [w.to_dict() for w in self.warnings]
        return out

    def to_frame(self) -> pd.DataFrame:
        """One row with the columns of :data:`COLUMNS` (a pingouin-style tidy row; its
        ``warnings``, the list of their words)."""
        frame = pd.DataFrame([{**self.to_dict(), "warnings": texts(self.warnings)}],
                             columns=list(COLUMNS))
        frame["significant"] = pd.Series([self.significant], dtype=object)
        return frame


def compare(base: Sequence[float] | np.ndarray, new: Sequence[float] | np.ndarray,
            alpha: float = 0.05, *, confidence: float = 0.95, lower_is_better: bool = True,
            failed_base: Sequence[bool] | np.ndarray | None = None,
            failed_new: Sequence[bool] | np.ndarray | None = None,
            exclude_failed: str | None = None, family: int = 1) -> Comparison:
    """Compare per-run values of a base and a new configuration.

    Parameters
    ----------
    base, new : array-like of float
        One value per run (e.g. each run's p99 in ms). None/NaN marks a failed run, and so
        does +-inf (with a warning).
    alpha : float
        Significance level in (0, 1) of the two-sided Mann-Whitney U test; the Moses ratio
        interval inverts the same test at 1 - alpha / ``family``.
    confidence : float
        Coverage of the order-statistic intervals of the two medians.
    lower_is_better : bool
        True for latencies (the default): a failed run ranks worse, i.e. above every finished
        run. False for throughput-like metrics: a failed run ranks below every finished run.
    failed_base, failed_new : array-like of bool, optional
        Runs to treat as failed although they have a value (e.g. saturated runs).
    exclude_failed : str, optional
        Drop failed runs instead of ranking them, for this stated reason (echoed in warnings).
    family : int
        Comparisons Holm adjusts together with this one (the rows of one table). The ratio
        interval is Bonferroni's over them (level 1 - alpha / family: simultaneous coverage
        of at least 1 - alpha for the family, Dunn 1961), so a row whose interval excludes 1
        has p < alpha / family and is significant after Holm's adjustment too (Holm's
        adjusted p is at most family x p); the "run more" warning names the runs Holm's first
        step needs. ``p_value`` and ``significant`` are this test's own.

    Returns
    -------
    Comparison
        The medians with their CIs, the ratio new/base with its interval, ``p_value`` and
        ``p_method`` ("exact" when both n <= 25, midranks with ties, else "normal" with tie and
        continuity correction), ``min_attainable_p``, ``significant`` and ``warnings`` (each
        naming the next step). ``to_frame()`` gives the former one-row frame.

    Notes
    -----
    What holds, exactly:

    - ``significant`` is None when ``min_attainable_p >= alpha`` (no data of these sizes could
      reject) or when neither side has a finished run (nothing to compare: every estimate is
      NaN). Otherwise it is ``p_value < alpha``.
    - The ratio interval is the closure of the shifts the test accepts at alpha / family, so
      a result with p < alpha / family has its whole interval on one side of 1; with tied
      values the interval may end exactly at 1 (it is open there). Any other has 1 inside its
      interval; none exists (NaN) when no data of these sizes reach alpha / family.
    - A side whose runs all failed still ranks (worst), so "new failed every run" is a result;
      its ratio is then infinite or 0.

    Mann and Whitney (1947); exact distribution with ties after Klotz (1966); Hodges and
    Lehmann (1963); Moses interval as in Hollander, Wolfe and Chicken (2014), section 4.3;
    Bonferroni intervals: Dunn, "Multiple comparisons among means", JASA 56 (1961).
    The rules (exact limit, p = 2 P(U <= min(U1, U2)) capped at 1, warnings) follow benchstat.
    """
    if not 0.0 < alpha < 1.0:
        raise UsageError(f"alpha must be in (0, 1), got {alpha!r}")
    warnings: list[Warn] = []
    b, b_failed = _values(base, failed_base, "base", warnings)
    n, n_failed = _values(new, failed_new, "new", warnings)
    counts: dict[str, Any] = {"n_failed_base": int(b_failed.sum()),
                              "n_failed_new": int(n_failed.sum())}
    if exclude_failed is not None:
        b, n = b[~b_failed], n[~n_failed]
        b_failed, n_failed = b_failed[~b_failed], n_failed[~n_failed]
        if counts["n_failed_base"] or counts["n_failed_new"]:
            warnings.append(Warn(Code.EXCLUDED_FAILED, n_base=counts["n_failed_base"],
                                 n_new=counts["n_failed_new"], reason=exclude_failed))
    if len(b) == 0 or len(n) == 0:
        warnings.append(Warn(Code.NOTHING_TO_COMPARE))
        return Comparison(len(b), len(n), alpha=alpha, warnings=tuple(warnings), **counts)
    if b_failed.all() and n_failed.all():
        warnings.append(Warn(Code.NO_FINISHED_RUN))
        return Comparison(len(b), len(n), alpha=alpha, warnings=tuple(warnings), **counts)
    worst = math.inf if lower_is_better else -math.inf
    for label, values, failed in (("base", b, b_failed), ("new", n, n_failed)):
        values[failed] = worst
        if failed.any():
            warnings.append(Warn(Code.FAILED_RANKED_WORST, side=label, runs=int(failed.sum()),
                                 lower_is_better=lower_is_better))
    fields: dict[str, Any] = {}
    fields.update(_medians(b, n, confidence, warnings))
    min_p = min_attainable_p(len(n), len(b))
    near = min_p * family >= alpha / 2
    any_failed = bool(b_failed.any() or n_failed.any())
    welch = _welch(b, n, any_failed, alpha, family) if near else None
    if welch is not None or near and min_p * family < alpha:  # else: not testable, said so
        warnings.append(floor_note(len(b), len(n), alpha, min_p, family, welch is not None))
    if welch is not None:
        fields.update(p_value=welch.p_value, p_method=WELCH, min_attainable_p=0.0,
                      significant=bool(welch.p_value < alpha), ratio=welch.ratio,
                      ratio_ci_low=welch.low, ratio_ci_high=welch.high,
                      ratio_ci_level=welch.level, df=welch.df)
        return Comparison(len(b), len(n), alpha=alpha, warnings=tuple(warnings), **counts,
                          **fields)
    test, null = mann_whitney(n, b)
    testable = min_p < alpha
    fields.update(p_value=test.p_value, p_method=test.method, min_attainable_p=min_p,
                  significant=bool(test.p_value < alpha) if testable else None)
    if not testable:
        warnings.append(_too_few(len(b), len(n), alpha, min_p, family))
    fields.update(_ratio(b, n, null, alpha, family, min_p, warnings))
    return Comparison(len(b), len(n), alpha=alpha, warnings=tuple(warnings), **counts, **fields)


def _welch(b: np.ndarray, n: np.ndarray, failed: bool, alpha: float,
           family: int) -> WelchLog | None:
    """Welch's t on log values where it may stand in for the rank test at its floor: at least
    :data:`WELCH_MIN_RUNS` runs a side, no failed run ranked worst (it has no value a mean
    could take), every value finite and positive, and some spread; else None."""
    if min(len(b), len(n)) < WELCH_MIN_RUNS or failed:
        return None
    if not (np.isfinite(b).all() and np.isfinite(n).all() and (b > 0).all() and (n > 0).all()):
        return None
    return welch_log(b, n, 1 - alpha / family)


def floor_note(n_b: int, n_n: int, alpha: float, min_p: float, family: int,
               switched: bool) -> Warn:
    """The note of a comparison whose rank test's smallest attainable p, times ``family``
    (Holm's first step), is within a factor of 2 of ``alpha`` or not below it
    (:attr:`Code.RANK_TEST_FLOOR`): ``"5 vs 5 runs: the smallest p the rank test can give is
    0.0079; with 6 comparisons 0.048, ..."``;
    ``switched``: Welch's t on log values decided instead (:mod:`perfkit.stats.welch`)."""
    floor = min(1.0, min_p * family)
    return Warn(Code.RANK_TEST_FLOOR, n_base=n_b, n_new=n_n, min_p=min_p, family=family,
                floor=floor, alpha=alpha, switched=switched, min_runs=WELCH_MIN_RUNS)


def _values(values, failed, label: str, warnings: list[Warn]) -> tuple[np.ndarray, np.ndarray]:
    """The values as floats and the failed mask: NaN/None, and +-inf, which no tool measures
    (a value out of range, not a latency or a rate), are failed runs."""
    raw = np.ravel(np.asarray(values, dtype=object))
    v = np.array([math.nan if pd.isna(x) else x for x in raw], dtype=np.float64)
    infinite = np.isinf(v)
    if infinite.any():
        warnings.append(Warn(Code.INFINITE_VALUES, side=label, values=int(infinite.sum())))
        v[infinite] = math.nan
    mask = np.isnan(v)
    if failed is not None:
        extra = np.asarray(failed, dtype=bool).ravel()
        if extra.shape != v.shape:
            raise UsageError(f"failed_{label} must have one flag per {label} run")
        mask |= extra
    return v, mask


def _medians(b: np.ndarray, n: np.ndarray, confidence: float, warnings: list[Warn]) -> dict:
    out, notes = {}, {}
    for label, values in (("base", b), ("new", n)):
        m = median_ci(values, confidence)
        out.update({f"median_{label}": m.estimate, f"median_{label}_ci_low": m.low,
                    f"median_{label}_ci_high": m.high})
        notes[label] = m.warnings
    if notes["base"] and notes["base"] == notes["new"]:
        warnings.extend(Warn(Code.ON_SIDE, side="base and new", warning=w) for w in notes["base"])
    else:
        warnings.extend(Warn(Code.ON_SIDE, side=k, warning=w) for k, ws in notes.items()
                        for w in ws)
    return out


def _ratio(b: np.ndarray, n: np.ndarray, null, alpha: float, family: int, min_p: float,
           warnings: list[Warn]) -> dict:
    """The Hodges-Lehmann ratio with its Moses interval at 1 - ``alpha`` / ``family``
    (Bonferroni); none when the smallest attainable p (``min_p``) cannot reach that level."""
    finished = np.concatenate([b[np.isfinite(b)], n[np.isfinite(n)]])
    if (finished <= 0).any():
        warnings.append(Warn(Code.NONPOSITIVE_VALUES))
        return {}
    level = alpha / family
    shift, low, high = hodges_lehmann_moses(_log(n), _log(b), null, level)
    out = {"ratio": _exp(shift), "ratio_ci_low": _exp(low), "ratio_ci_high": _exp(high),
           "ratio_ci_level": 1 - level}
    if not min_p < level:
        out["ratio_ci_low"] = out["ratio_ci_high"] = math.nan
        warnings.append(Warn(Code.NO_RATIO_CI, confidence=1 - level, n_base=len(b),
                             n_new=len(n), family=family))
    return out


def _log(values: np.ndarray) -> np.ndarray:
    """log of positive values; failed runs keep their rank at +-inf."""
    out = values.copy()
    finite = np.isfinite(values)
    out[finite] = np.log(values[finite])
    return out


def _too_few(n_b: int, n_n: int, alpha: float, min_p: float, family: int = 1) -> Warn:
    return Warn(Code.TOO_FEW_RUNS, n_base=n_b, n_new=n_n, alpha=alpha, min_p=min_p,
                need=runs_to_reach_alpha(alpha, family=family), family=family)


def _exp(x: float) -> float:
    return math.nan if math.isnan(x) else math.exp(x)
