"""The largest offered rate that meets a latency SLO, as a bracket [last pass, first fail].

Open-loop runs (wrk2 ``-R``) at increasing target rates are judged one rate at a time
(:func:`slo_verdict`):

- **fail** when a run is marked ``failed`` (by :mod:`perfkit.analysis.core._runstatus`: the tool
  failed or every response did; its value, if any, is left out of the interval), when any run
  did not keep up (achieved < 0.99 x target: the rate is beyond what the
  system sustains) and is not marked ``in_doubt`` (a run whose generator fell slightly short
  while its latency stayed like its peers', judged by :mod:`perfkit.analysis.core._runstatus`: it
  keeps its value and is warned about), when any run's error ratio exceeds
  ``max_error_ratio`` (failed requests never enter the latency histogram, so they would
  otherwise look fast), or when the *lower*
  confidence bound of the percentile is above the SLO;
- **pass** when every run sustained the rate (kept up, or fell short with the shortfall in
  doubt) and the *upper* confidence bound is below the SLO;
- **inconclusive** otherwise, with an estimate of the runs needed for the interval to exclude
  the SLO.

The interval is the across-runs one of :func:`perfkit.stats.percentile_ci_across_runs`: runs,
not requests, are the unit, and the method and its estimand (the median run's percentile) are
reported with each verdict (Runs with histograms give each run's percentile from its histogram;
a runs frame gives the printed per-run percentiles). :func:`slo_bracket`
scans the rates upward: ``last_pass`` is the highest rate of the unbroken run of passes from the
lowest rate, ``first_fail`` the first failing rate above it; a pass above a fail is warned about
as non-monotone.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from perfkit.errors import PerfkitError
from perfkit.model import ERROR_RATIO_WARN, SATURATION_RATIO, Run, percentile_column
from perfkit.stats import percentile_ci_across_runs
from perfkit.stats._dist import norm_ppf, t_ppf
from perfkit.stats.acrossruns import FEW_RUNS_METHOD
from perfkit.vocabulary import SloVerdict
from perfkit.warning import Code, Warn

#: the column of the judged table flagging runs whose shortfall is in doubt (not a failure)
IN_DOUBT = "in_doubt_"
#: the column of the judged table flagging failed runs (left out of the interval, fail the rate)
FAILED = "failed_"
#: the most runs a "runs needed" estimate will name; beyond it, the estimate sits on the SLO
MAX_RUNS_NEEDED = 100


@dataclasses.dataclass(frozen=True)
class RateVerdict:
    """The SLO verdict at one offered rate, with the interval and the runs behind it."""

    rate_rps: float
    verdict: SloVerdict
    slo_ms: float
    percentile: float
    n_runs: int
    n_kept_up: int
    min_achieved_ratio: float
    max_error_ratio: float
    estimate_ms: float
    ci_low_ms: float
    ci_high_ms: float
    confidence: float
    method: str
    estimand: str
    runs_needed: int | None
    #: why the rate got its verdict (:attr:`Code.RATE_RUNS_FAILED`, ``RATE_NOT_KEPT_UP``,
    #: ``RATE_ERRORS``, ``RATE_INTERVAL``)
    reason: Warn
    warnings: tuple[Warn, ...] = ()
    #: runs of each status under the run-status rule (:mod:`perfkit.analysis.core._runstatus`):
    #: ``n_kept_up`` achieved >= 0.99 x the rate; ``n_short`` fell short with a shortfall in
    #: doubt (kept, not a failure); ``n_saturated`` did not sustain the rate (it fails);
    #: ``n_failed`` failed (left out of the interval; it fails)
    n_short: int = 0
    n_saturated: int = 0
    n_failed: int = 0


@dataclasses.dataclass(frozen=True)
class SLOBracket:
    """[last_pass_rps, first_fail_rps] under the SLO, with the verdict at every rate tested.

    ``last_pass_rps`` is None when the lowest rate did not pass; ``first_fail_rps`` is None when
    no tested rate above the last pass failed (the bracket is then open above).
    """

    slo_ms: float
    percentile: float
    confidence: float
    last_pass_rps: float | None
    first_fail_rps: float | None
    rates: tuple[RateVerdict, ...]
    monotone: bool
    warnings: tuple[Warn, ...] = ()

    @property
    def bracket(self) -> tuple[float | None, float | None]:
        return (self.last_pass_rps, self.first_fail_rps)

    def to_frame(self) -> pd.DataFrame:
        """One row per rate (the per-rate detail)."""
        rows = [{f.name: getattr(r, f.name) for f in dataclasses.fields(r)
                 if f.name != "warnings"} | {"reason": str(r.reason)} for r in self.rates]
        return pd.DataFrame.from_records(rows)


# -- inputs ---------------------------------------------------------------------------------
def _as_table(data: Any, q: float, in_doubt: Sequence[bool] | None = None,
              failed: Sequence[bool] | None = None) -> tuple[pd.DataFrame, list]:
    """A frame with rate, achieved, error ratio and factor columns, plus one item per row for
    the across-runs interval (a Run, whose histogram is used, or the printed percentile)."""
    table, items = _as_table_plain(data, q)
    flags_given = dict(in_doubt=in_doubt, failed=failed)
    for (name, given), column in zip(flags_given.items(), (IN_DOUBT, FAILED), strict=True):
        if given is not None:
            flags = np.asarray(given, dtype=bool)
            if flags.shape != (len(table),):
                raise PerfkitError(f"{name} has {flags.size} flags for {len(table)} runs")
            table = table.assign(**{column: flags})
    return table, items


def _as_table_plain(data: Any, q: float) -> tuple[pd.DataFrame, list]:
    if isinstance(data, pd.DataFrame):
        col = percentile_column(q)
        if col not in data:
            raise PerfkitError(f"the runs frame has no {col!r} column for p{q:g}")
        return data.reset_index(drop=True), list(data[col].astype("float64"))
    runs = list(data)
    if not all(isinstance(r, Run) for r in runs):
        raise TypeError("give a runs frame or a sequence of perfkit Run objects")
    from perfkit.frames import runs_frame  # a view of the same runs, for grouping

    return runs_frame(runs), runs


def _rates(table: pd.DataFrame) -> np.ndarray:
    if "target_rate_rps" not in table:
        raise PerfkitError("no target_rate_rps: the SLO bracket needs open-loop (wrk2 -R) runs")
    rates = pd.to_numeric(table["target_rate_rps"], errors="coerce").to_numpy(dtype=float)
    if np.isnan(rates).any():
        raise PerfkitError(
            f"{int(np.isnan(rates).sum())} run(s) have no target rate: the SLO bracket needs "
            "open-loop runs with -R (closed-loop wrk/Locust runs have no offered rate)")
    return rates


def _column(table: pd.DataFrame, name: str) -> np.ndarray:
    if name not in table:
        return np.full(len(table), np.nan)
    return pd.to_numeric(table[name], errors="coerce").to_numpy(dtype=float)


# -- runs needed ----------------------------------------------------------------------------
def _crit(method: str, n: float, confidence: float) -> float:
    tail = 0.5 + confidence / 2.0
    if method in ("t_log", FEW_RUNS_METHOD, "order_stats"):
        return float(t_ppf(tail, n - 1))
    return float(norm_ppf(tail))


def runs_to_exclude_slo(estimate_ms: float, low_ms: float, high_ms: float, n_runs: int,
                        slo_ms: float, method: str, confidence: float = 0.95) -> int | None:
    """Runs for the interval to exclude the SLO, if the estimate and the spread stay as they are.

    The spread s comes from the interval's half-width on the log scale,
    h = (log(high) - log(low)) / 2 = crit(n) * s / sqrt(n), with crit Student's t on n - 1 df
    (``t_log``, ``median_t_log`` and ``order_stats``; for the median's order statistics this
    is an approximation) or the normal quantile; the answer is the smallest n' > n with
    crit(n') * s / sqrt(n') < |log(slo) - log(estimate)|. None when it cannot be estimated (one
    run, an infinite bound) or exceeds :data:`MAX_RUNS_NEEDED`.
    """
    values = (estimate_ms, low_ms, high_ms, slo_ms)
    if n_runs < 2 or not all(math.isfinite(v) and v > 0 for v in values):
        return None
    gap = abs(math.log(slo_ms) - math.log(estimate_ms))
    half = (math.log(high_ms) - math.log(low_ms)) / 2.0
    spread = half * math.sqrt(n_runs) / _crit(method, n_runs, confidence)
    if gap == 0:
        return None
    for n in range(n_runs + 1, MAX_RUNS_NEEDED + 1):
        if _crit(method, n, confidence) * spread / math.sqrt(n) < gap:
            return n
    return None


# -- verdicts -------------------------------------------------------------------------------
def _judge(table: pd.DataFrame, items: list, rate: float, slo_ms: float, q: float,
           confidence: float, seed: int | None, n_resamples: int,
           max_error_ratio: float | None, method: str) -> RateVerdict:
    achieved = _column(table, "throughput_rps") / rate
    doubt, failed = (table[c].to_numpy(dtype=bool) if c in table else np.zeros(len(table), bool)
                     for c in (IN_DOUBT, FAILED))
    items = [None if f else it for it, f in zip(items, failed, strict=True)]
    # the run-status rule, counted: NaN (a run without a result) never keeps up; a shortfall
    # in doubt (short) is kept and is not a failure; any other shortfall did not sustain it
    kept_up = (achieved >= SATURATION_RATIO) & ~failed
    short = doubt & np.isfinite(achieved) & ~kept_up & ~failed
    saturated = ~kept_up & ~short & ~failed
    errors = _column(table, "error_ratio")
    ci = percentile_ci_across_runs(items, q, confidence, seed, n_resamples=n_resamples,
                                   method=method)
    n = len(table)
    base: dict[str, Any] = dict(rate_rps=rate, slo_ms=slo_ms, percentile=q, n_runs=n,
                n_kept_up=int(kept_up.sum()), n_short=int(short.sum()),
                n_saturated=int(saturated.sum()), n_failed=int(failed.sum()),
                min_achieved_ratio=float(np.nanmin(achieved)) if np.isfinite(achieved).any()
                else math.nan,
                max_error_ratio=float(np.nanmax(errors)) if np.isfinite(errors).any()
                else math.nan, estimate_ms=ci.estimate_ms, ci_low_ms=ci.low_ms,
                ci_high_ms=ci.high_ms, confidence=confidence, method=ci.method,
                estimand=ci.estimand, warnings=ci.warnings + _doubt_warning(achieved, doubt))
    interval = dict(confidence=confidence, q=q, low_ms=ci.low_ms, high_ms=ci.high_ms,
                    slo_ms=slo_ms)
    if failed.any():
        return RateVerdict(**base, verdict=SloVerdict.FAIL, runs_needed=None,
                           reason=Warn(Code.RATE_RUNS_FAILED, failed=int(failed.sum()), runs=n))
    if saturated.any():
        lowest = achieved[saturated]
        return RateVerdict(**base, verdict=SloVerdict.FAIL, runs_needed=None, reason=Warn(
            Code.RATE_NOT_KEPT_UP, not_kept_up=int(saturated.sum()), runs=n,
            ratio=SATURATION_RATIO,
            lowest=float(np.nanmin(lowest)) if np.isfinite(lowest).any() else None))
    if max_error_ratio is not None and np.nanmax(errors, initial=0.0) > max_error_ratio:
        return RateVerdict(**base, verdict=SloVerdict.FAIL, runs_needed=None, reason=Warn(
            Code.RATE_ERRORS, highest=base["max_error_ratio"], most=max_error_ratio))
    if ci.low_ms > slo_ms:
        return RateVerdict(**base, verdict=SloVerdict.FAIL, runs_needed=None,
                           reason=Warn(Code.RATE_INTERVAL, where="above", **interval))
    if ci.high_ms < slo_ms:
        return RateVerdict(**base, verdict=SloVerdict.PASS, runs_needed=None,
                           reason=Warn(Code.RATE_INTERVAL, where="below", **interval))
    need = runs_to_exclude_slo(ci.estimate_ms, ci.low_ms, ci.high_ms, ci.n_runs, slo_ms, ci.method,
                       confidence)
    return RateVerdict(**base, verdict=SloVerdict.INCONCLUSIVE, runs_needed=need,
                       reason=Warn(Code.RATE_INTERVAL, where="contains", need=need,
                                   runs=ci.n_runs, **interval))


def _doubt_warning(achieved: np.ndarray, doubt: np.ndarray) -> tuple[Warn, ...]:
    short = doubt & (achieved < SATURATION_RATIO)
    if not short.any():
        return ()
    return (Warn(Code.RUNS_SHORT_OF_TARGET, ratios=tuple(float(r) for r in achieved[short])),)


def _select(table: pd.DataFrame, items: list, rate: float) -> tuple[pd.DataFrame, list]:
    rates = _rates(table)
    mask = np.isclose(rates, rate, rtol=1e-9, atol=0.0)
    if not mask.any():
        have = ", ".join(f"{r:g}" for r in np.unique(rates))
        raise PerfkitError(f"no runs at {rate:g} req/s (rates present: {have})")
    return table[mask], [it for it, m in zip(items, mask, strict=True) if m]


def slo_verdict(data: Any, rate: float, slo_ms: float, percentile: float = 99.0,
                confidence: float = 0.95, *, seed: int | None = 0, n_resamples: int = 2000,
                max_error_ratio: float | None = ERROR_RATIO_WARN,
                method: str = "auto") -> RateVerdict:
    """Pass, fail or inconclusive for one offered rate.

    Parameters
    ----------
    data : DataFrame or sequence of Run
        A runs frame (uses the printed percentile column) or Runs (uses their histograms).
    rate : float
        The target rate (``target_rate_rps``, req/s) to judge.
    slo_ms : float
        The latency objective in milliseconds.
    percentile : float
        Percentile on the 0-100 scale (99 for p99).
    confidence : float
        Level of the across-runs interval.
    seed, n_resamples, method :
        Passed to :func:`perfkit.stats.percentile_ci_across_runs` (``method`` picks the
        interval; ``auto`` lets it choose one that holds its coverage at this many runs).
    max_error_ratio : float or None
        A run above this error ratio fails the rate (None: ignore errors).

    Returns
    -------
    RateVerdict
        ``verdict`` is ``pass`` (CI upper < SLO, every run kept up), ``fail`` (a run did not
        keep up, too many errors, or CI lower > SLO) or ``inconclusive`` with ``runs_needed``.
    """
    table, items = _as_table(data, percentile)
    table, items = _select(table, items, float(rate))
    return _judge(table.reset_index(drop=True), items, float(rate), slo_ms, float(percentile),
                  confidence, seed, n_resamples, max_error_ratio, method)


def _scan(verdicts: list[RateVerdict]) -> tuple[float | None, float | None, bool, list[Warn]]:
    i = 0
    while i < len(verdicts) and verdicts[i].verdict == SloVerdict.PASS:
        i += 1
    last_pass = verdicts[i - 1].rate_rps if i else None
    fails = [v for v in verdicts[i:] if v.verdict == SloVerdict.FAIL]
    first_fail = fails[0].rate_rps if fails else None
    warns = []
    seen_fail = [j for j, v in enumerate(verdicts) if v.verdict == SloVerdict.FAIL]
    late = [v.rate_rps for v in verdicts[seen_fail[0] + 1:] if v.verdict == SloVerdict.PASS] \
        if seen_fail else []
    if late:
        failed = verdicts[seen_fail[0]].rate_rps
        warns.append(Warn(Code.NOT_MONOTONE, passed_rps=tuple(late), failed_rps=failed))
    between = [v for v in verdicts[i:] if v.verdict == SloVerdict.INCONCLUSIVE
               and (first_fail is None or v.rate_rps < first_fail)]
    if between:
        warns.append(Warn(Code.INCONCLUSIVE_ABOVE_PASS, rates_rps=tuple(v.rate_rps
                                                                        for v in between)))
    if last_pass is None:
        warns.append(Warn(Code.LOWEST_RATE_FAILED, rate_rps=verdicts[0].rate_rps))
    if first_fail is None and not between:
        warns.append(Warn(Code.BRACKET_OPEN_ABOVE))
    return last_pass, first_fail, not late, warns


def slo_bracket(data: Any, slo_ms: float, percentile: float = 99.0, confidence: float = 0.95,
                *, seed: int | None = 0, n_resamples: int = 2000,
                max_error_ratio: float | None = ERROR_RATIO_WARN,
                method: str = "auto", in_doubt: Sequence[bool] | None = None,
                failed: Sequence[bool] | None = None) -> SLOBracket:
    """Scan the offered rates upward and bracket the largest rate that meets the SLO.

    Same inputs as :func:`slo_verdict`, for the runs of one configuration (group by profile
    and connections first, e.g. with :func:`slo_brackets_by_group`). ``in_doubt`` flags, per run, a
    shortfall of the generator that is not a failure (the analysis layer's run status
    ``short``): such a run below 0.99 x its target does not fail its rate. ``failed`` flags
    the runs whose status is ``failed``: left out of the interval, they fail their rate.
    Returns an :class:`SLOBracket` whose ``bracket`` is ``(last_pass_rps, first_fail_rps)``.
    """
    table, items = _as_table(data, percentile, in_doubt, failed)
    rates = np.unique(_rates(table))
    verdicts = []
    for rate in rates:
        sub, sub_items = _select(table, items, float(rate))
        verdicts.append(_judge(sub.reset_index(drop=True), sub_items, float(rate), slo_ms,
                               float(percentile), confidence, seed, n_resamples,
                               max_error_ratio, method))
    last_pass, first_fail, monotone, warns = _scan(verdicts)
    warns += [Warn(Code.AT_RATE, rate_rps=v.rate_rps, warning=w) for v in verdicts
              for w in v.warnings if w.code is Code.RUNS_SHORT_OF_TARGET]
    if "connections" in table and table["connections"].nunique() > 1:
        warns.insert(0, Warn(Code.CONNECTIONS_MIXED))
    return SLOBracket(slo_ms, float(percentile), confidence, last_pass, first_fail,
                      tuple(verdicts), monotone, tuple(warns))


def slo_brackets_by_group(data: Any, slo_ms: float, by: Sequence[str], percentile: float = 99.0,
                          confidence: float = 0.95, **kwargs: Any) -> dict[tuple, SLOBracket]:
    """:func:`slo_bracket` per group of ``by`` columns (e.g. ``profile``, ``connections``)."""
    table, items = _as_table(data, percentile)
    missing = [c for c in by if c not in table]
    if missing:
        raise PerfkitError(f"no column {missing[0]!r} to group by")
    out: dict[tuple, SLOBracket] = {}
    if not by:
        return {(): slo_bracket(data, slo_ms, percentile, confidence, **kwargs)}
    for key, sub in table.groupby(list(by), sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        sub_items = [items[i] for i in sub.index]
        if isinstance(data, pd.DataFrame):
            out[key] = slo_bracket(data.reset_index(drop=True).loc[sub.index], slo_ms,
                                   percentile, confidence, **kwargs)
        else:
            out[key] = slo_bracket(sub_items, slo_ms, percentile, confidence, **kwargs)
    return out
