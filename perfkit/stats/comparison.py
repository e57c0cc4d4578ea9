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
from perfkit.warning import Code, Warn, texts

#: the fields of :class:`Comparison`, in order (also the columns of :meth:`Comparison.to_frame`)
COLUMNS = (
    "n_base", "n_new",
    "median_base", "median_base_ci_low", "median_base_ci_high",
    "median_new", "median_new_ci_low", "median_new_ci_high",
    "ratio", "ratio_ci_low", "ratio_ci_high",
    "p_value", "p_method", "min_attainable_p", "alpha", "significant",
    "n_failed_base", "n_failed_new", "warnings",
)

_NAN = math.nan


@dataclasses.dataclass(frozen=True)
class Comparison:
    """The run-vs-run comparison of one metric between a base and a new configuration.

    ``ratio`` is new over base (the Hodges-Lehmann shift of log values, exponentiated) with its
    Moses interval at 1 - ``alpha``; ``significant`` is True/False, or None when the test could
    not decide: the run counts cannot reach ``p < alpha`` (``min_attainable_p >= alpha``), or a
    side has no finished run. Every number that could not be computed is NaN, never 0 or 1.
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
    p_value: float = _NAN
    p_method: str | None = None
    min_attainable_p: float = _NAN
    alpha: float = 0.05
    significant: bool | None = None
    n_failed_base: int = 0
    n_failed_new: int = 0
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
        interval inverts the same test at 1 - alpha.
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
        Comparisons Holm adjusts together with this one (the rows of one table). Only the
        runs the "run more" warning names depend on it (Holm's first step: the smallest p
        times ``family`` below ``alpha``); ``p_value`` and ``significant`` are this test's own.

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
    - The ratio interval is the closure of the shifts the test accepts, so a significant result
      has its whole interval on one side of 1; with tied values the interval may end exactly
      at 1 (it is open there). A non-significant result has 1 inside its interval.
    - A side whose runs all failed still ranks (worst), so "new failed every run" is a result;
      its ratio is then infinite or 0.

    Mann and Whitney (1947); exact distribution with ties after Klotz (1966); Hodges and
    Lehmann (1963); Moses interval as in Hollander, Wolfe and Chicken (2014), section 4.3.
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
    test, null = mann_whitney(n, b)
    min_p = min_attainable_p(len(n), len(b))
    testable = min_p < alpha
    fields.update(p_value=test.p_value, p_method=test.method, min_attainable_p=min_p,
                  significant=bool(test.p_value < alpha) if testable else None)
    if not testable:
        warnings.append(_too_few(len(b), len(n), alpha, min_p, family))
    fields.update(_ratio(b, n, null, alpha, testable, warnings))
    return Comparison(len(b), len(n), alpha=alpha, warnings=tuple(warnings), **counts, **fields)


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


def _ratio(b: np.ndarray, n: np.ndarray, null, alpha: float, testable: bool,
           warnings: list[Warn]) -> dict:
    finished = np.concatenate([b[np.isfinite(b)], n[np.isfinite(n)]])
    if (finished <= 0).any():
        warnings.append(Warn(Code.NONPOSITIVE_VALUES))
        return {}
    shift, low, high = hodges_lehmann_moses(_log(n), _log(b), null, alpha)
    out = {"ratio": _exp(shift), "ratio_ci_low": _exp(low), "ratio_ci_high": _exp(high)}
    if not testable:
        out["ratio_ci_low"] = out["ratio_ci_high"] = math.nan
        warnings.append(Warn(Code.NO_RATIO_CI, confidence=1 - alpha, n_base=len(b),
                             n_new=len(n)))
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
