"""The SLO bracket over offered rates, per configuration: one rule.

:func:`slo_brackets`: per configuration (the load columns that vary, connections always),
:func:`perfkit.stats.slo.slo_bracket` over the offered rates, each run judged by the run-status
rule (:mod:`perfkit.analysis.core._runstatus`: failed runs fail their rate, short ones are kept in
doubt, runs that did not measure the percentile are left out, named, and fail nothing).
Re-exported by :mod:`perfkit.analysis.scaling._scaling`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any, cast

import numpy as np
import pandas as pd

from perfkit.analysis.core import (
    FAILED,
    NO_DATA,
    NOT_ESTIMABLE_COLUMN,
    SHORT,
    RunJudgement,
    RunSet,
    by_columns,
    json_records,
    judge_interval,
    metric,
    peer_columns,
    percentile_statuses,
    split_groups,
    unmeasured_note,
)
from perfkit.errors import DataError, UsageError
from perfkit.formatting import level_text
from perfkit.model import percentile_column
from perfkit.stats.acrossruns import FEW_RUNS_METHOD, interval_text, value_text
from perfkit.stats.slo import RateVerdict, SLOBracket, slo_bracket
from perfkit.units import to_float
from perfkit.vocabulary import BracketVerdict, SloVerdict
from perfkit.warning import Code, Warn, texts


def not_estimable(v: RateVerdict) -> str:
    """Why the interval of a rate's percentile may not be printed
    (:func:`perfkit.analysis.core._intervals.judge`): ends more than 100x apart, or resting on a run
    that did not sustain the rate (its latency is a queue's), else ``""``."""
    return judge_interval(v.ci_low_ms, v.ci_high_ms, n_saturated=v.n_saturated,
                           n_runs=v.n_runs - v.n_failed,
                           every_run_counts=v.method == FEW_RUNS_METHOD or v.n_saturated > 0)


@dataclasses.dataclass(frozen=True)
class SloBracket:
    """The SLO bracket of one configuration: ``bracket`` is :class:`SLOBracket`;
    ``run_statuses`` each run's ``(run_id, rate_rps, status, reason)`` under the run-status
    rule the verdicts used (:mod:`perfkit.analysis.core._runstatus`), so figures can mark the
    saturated and short runs."""

    by: tuple[str, ...]
    key: tuple[Any, ...]
    bracket: SLOBracket
    n_runs: int
    run_statuses: tuple[tuple[str, float, str, str], ...] = ()

    @property
    def label(self) -> str:
        return ", ".join(level_text(v) for v in self.key) or "all runs"

    @property
    def verdict(self) -> BracketVerdict:
        """The bracket's verdict: ``bracketed`` (a pass, then a fail at the next rate tested
        above it), ``inconclusive between`` (rates between the last pass and the first fail
        are inconclusive), ``inconclusive above`` (no rate failed, and the rates above the
        last pass are inconclusive: run more there), ``open above`` (every rate passed: test
        higher rates), ``none passed`` or ``not monotone`` (a pass above a fail: repeat)."""
        b = self.bracket
        if not b.monotone:
            return BracketVerdict.NOT_MONOTONE
        if b.last_pass_rps is None:
            return BracketVerdict.NONE_PASSED
        if b.first_fail_rps is None:
            return (BracketVerdict.INCONCLUSIVE_ABOVE if self.inconclusive_rps
                    else BracketVerdict.OPEN_ABOVE)
        return (BracketVerdict.INCONCLUSIVE_BETWEEN if self.inconclusive_rps
                else BracketVerdict.BRACKETED)

    @property
    def inconclusive_rps(self) -> tuple[float, ...]:
        """The inconclusive rates the bracket leaves open: above the last pass (from the
        lowest rate without one) and below the first fail (every one above without one)."""
        b = self.bracket
        low = -math.inf if b.last_pass_rps is None else b.last_pass_rps
        high = math.inf if b.first_fail_rps is None else b.first_fail_rps
        return tuple(v.rate_rps for v in b.rates
                     if v.verdict == SloVerdict.INCONCLUSIVE and low < v.rate_rps < high)

    @property
    def warnings(self) -> tuple[Warn, ...]:
        """What the bracket rests on: its own warnings, then those of the offered rates that
        decide it (every rate up to its first failing one): why a rate did not pass (a run
        not keeping up, an interval holding the SLO) and what its interval assumes (a rate's
        warning the bracket already says at its rate, :attr:`Code.AT_RATE`, once)."""
        b = self.bracket
        limit = math.inf if b.first_fail_rps is None else b.first_fail_rps
        out = list(b.warnings)
        for v in b.rates:
            if v.rate_rps <= limit:
                if v.verdict != SloVerdict.PASS:
                    out.append(rate_reason(v))
                out += [w for w in v.warnings if stated(w, out) is None]
        return tuple(dict.fromkeys(out))

    def to_record(self) -> dict[str, Any]:
        rec: dict[str, Any] = dict(zip(self.by, self.key, strict=True))
        rec.update({"n_runs": self.n_runs,
                    "last_pass_rps": to_float(self.bracket.last_pass_rps),
                    "first_fail_rps": to_float(self.bracket.first_fail_rps),
                    "monotone": self.bracket.monotone,
                    "warnings": "; ".join(texts(self.bracket.warnings))})
        return rec

    def verdict_records(self) -> list[dict[str, Any]]:
        out = []
        for v in self.bracket.rates:
            rec: dict[str, Any] = dict(zip(self.by, self.key, strict=True))
            why = not_estimable(v)
            rec.update({"rate_rps": v.rate_rps, "verdict": v.verdict, "n_runs": v.n_runs,
                        "n_kept_up": v.n_kept_up, "n_short": v.n_short,
                        "n_saturated": v.n_saturated, "n_failed": v.n_failed,
                        "estimate_ms": v.estimate_ms,
                        "ci_low_ms": math.nan if why else v.ci_low_ms,
                        "ci_high_ms": math.nan if why else v.ci_high_ms,
                        NOT_ESTIMABLE_COLUMN: why,
                        "method": v.method, "estimand": v.estimand,
                        "runs_needed": v.runs_needed if v.runs_needed is not None else math.nan,
                        "reason": str(v.reason), "warnings": "; ".join(texts(v.warnings))})
            out.append(rec)
        return out



@dataclasses.dataclass(frozen=True)
class SloTable:
    """Every configuration's :class:`SloBracket` under one SLO."""

    brackets: tuple[SloBracket, ...]
    slo_ms: float
    percentile: float
    confidence: float
    warnings: tuple[Warn, ...] = ()

    def found(self) -> list[tuple[str, int]]:
        """``(method, runs in the estimate)`` of every rate's estimate (failed runs are left
        out of it): what :func:`perfkit.stats.acrossruns.value_text` words."""
        return [(v.method, v.n_runs - v.n_failed) for b in self.brackets for v in b.bracket.rates
                if v.n_runs > v.n_failed]

    def value_text(self) -> str:
        """What every rate's estimate is, each method named once (``"the geometric mean of the
        3 runs' p99 (the median run's under a log-normal run-to-run spread)"``)."""
        return value_text(self.found(), f"p{self.percentile:g}")

    def describe(self) -> str:
        """The method, in a sentence a reader can paste into a paper: what each rate's
        estimate is comes from the estimates' own methods."""
        return (f"Each offered rate was judged against the objective p{self.percentile:g} < "
                f"{self.slo_ms:g} ms on its estimate, {self.value_text()}, with its "
                f"{self.confidence:.0%} across-runs interval ({interval_text(self.found())}): "
                "a pass when every run sustained the rate (kept up, or fell short of it with "
                "its latency like its peers': in doubt, kept and reported) and the upper "
                "bound lay below the objective, a fail when a run did not sustain it (a "
                "shortfall not in doubt) or failed, errors exceeded 1%, or the lower bound "
                "lay above it, else inconclusive; the largest rate meeting it is reported as "
                "the bracket [last pass, first fail].")

    def block_treatment(self) -> tuple[str, str, bool]:
        """How this result treats an experiment's blocks: what it is, of what, and
        whether it models them (:func:`perfkit.analysis.context._validity.block_treatment`)."""
        return "the SLO bracket", "", False

    def to_frame(self) -> pd.DataFrame:
        """One row per configuration: ``[last_pass_rps, first_fail_rps]`` and its warnings."""
        return pd.DataFrame.from_records([b.to_record() for b in self.brackets])

    def verdicts_frame(self) -> pd.DataFrame:
        """One row per configuration and offered rate: the verdict and its interval."""
        return pd.DataFrame.from_records([r for b in self.brackets for r in b.verdict_records()])

    def run_status_frame(self) -> pd.DataFrame:
        """One row per run: its configuration (the ``by`` columns), ``rate_rps``, ``run_id``,
        and its ``status`` (ok, failed, saturated, short) with the ``reason``, as the verdicts
        judged it."""
        records = [{**dict(zip(b.by, b.key, strict=True)), "rate_rps": rate, "run_id": run_id,
                    "status": status, "reason": reason}
                   for b in self.brackets for run_id, rate, status, reason in b.run_statuses]
        by = list(self.brackets[0].by) if self.brackets else []
        return pd.DataFrame.from_records(
            records, columns=[*by, "rate_rps", "run_id", "status", "reason"])

    def to_dict(self) -> dict[str, Any]:
        return {"slo_ms": self.slo_ms, "percentile": self.percentile,
                "confidence": self.confidence,
                "warnings": [w.to_dict() for w in self.warnings],
                "brackets": json_records(self.to_frame()),
                "verdicts": json_records(self.verdicts_frame())}


def rate_reason(v: RateVerdict) -> Warn:
    """Why an offered rate (a :class:`perfkit.stats.slo.RateVerdict`) did not pass, at its
    rate: ``"5000 req/s: 2 of 3 runs did not keep up ..."``."""
    return Warn(Code.RATE_REASON, rate_rps=v.rate_rps, reason=v.reason)


def stated(warning: Warn, said: Sequence[Warn]) -> Warn | None:
    """The warning of ``said`` that states ``warning``: itself, or the bracket's warning at a
    rate that holds it (:attr:`Code.AT_RATE`); None when none does."""
    return next((s for s in said if s == warning or (s.code is Code.AT_RATE
                                                      and s["warning"] == warning)), None)


def _status_flags(statuses: Sequence[RunJudgement]) -> dict[str, Any]:
    """Per run of one configuration, from its status under the run-status rule (as on the
    latency page, :mod:`perfkit.analysis.latency`): ``in_doubt``, a shortfall it calls
    ``short`` (the generator fell slightly short, latency like its peers' at the same rate),
    not a failure; ``failed``, a run left out of the interval that fails its rate."""
    return dict(in_doubt=[s.status == SHORT for s in statuses],
                failed=[s.status == FAILED for s in statuses])


def _slo_bracket(by_cols: list[str], key: tuple, group: RunSet, slo_ms: float,
                 percentile: float, confidence: float, seed: int,
                 n_resamples: int) -> SloBracket:
    statuses = percentile_statuses(group, percentile, peer_columns(group))
    measured = [s.status != NO_DATA for s in statuses]
    if not any(measured):
        raise DataError(f"no run measured p{percentile:g}: "
                        + "; ".join(dict.fromkeys(s.reason for s in statuses)))
    kept = [s for s, m in zip(statuses, measured, strict=True) if m]
    bracket = slo_bracket([r for r, m in zip(group.runs, measured, strict=True) if m], slo_ms,
                          percentile, confidence, seed=seed, n_resamples=n_resamples,
                          **_status_flags(kept))
    if not all(measured):
        bracket = dataclasses.replace(bracket, warnings=(*unmeasured_note(
            "", [s.reason for s in statuses if s.status == NO_DATA],
            metric(percentile_column(percentile))), *bracket.warnings))
    # slo_brackets kept only the runs with a target rate
    runs = tuple((str(r.run_id or r.source), float(cast(float, r.target_rate_rps)), s.status,
                  s.reason) for r, s in zip(group.runs, statuses, strict=True))
    return SloBracket(tuple(by_cols), key, bracket, len(group), runs)


def slo_brackets(rows: RunSet, slo_ms: float, *, percentile: float = 99.0, by: Any = "auto",
                 confidence: float = 0.95, seed: int = 0,
                 n_resamples: int = 2000) -> SloTable:
    """The SLO bracket of every configuration (connections is always part of it)."""
    if not slo_ms or slo_ms <= 0:
        raise UsageError("the SLO bracket needs a latency objective > 0 ms (--slo-ms)")
    if not 1 < percentile <= 100:
        raise UsageError(f"the percentile is on the 0-100 scale (99 for p99), got {percentile:g}")
    rated = rows.frame["target_rate_rps"].notna().to_numpy() if "target_rate_rps" in \
        rows.frame else np.zeros(len(rows), bool)
    if not rated.any():
        raise DataError("no run has a target rate: the SLO bracket needs wrk2 runs with -R")
    notes = []
    if (~rated).any():
        notes.append(Warn(Code.RUNS_WITHOUT_TARGET_RATE, runs=int((~rated).sum())))
        rows = rows.subset(rated)
    by_cols = by_columns(rows, by)
    if "connections" in rows.frame and "connections" not in by_cols:
        by_cols.append("connections")
    out = [_slo_bracket(by_cols, key, group, slo_ms, percentile, confidence, seed, n_resamples)
           for key, group in split_groups(rows, by_cols)]
    return SloTable(tuple(out), slo_ms, percentile, confidence, tuple(notes))
