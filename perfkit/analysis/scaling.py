"""Throughput scaling over concurrency, and the SLO bracket over offered rates: one rule each.

- :func:`scaling_fits`: per configuration, the model is chosen by one rule
  (:func:`choose_model`): the USL with four or more concurrency levels (a peak N* only when
  its F-test rejects Amdahl), Amdahl's law with three, no model below. N is a concurrency
  (connections for wrk, users for Locust), never an offered rate; open-loop wrk2 runs are
  refused. Little's law is checked per run (:attr:`ScalingResult.littles_runs`, with the think
  time given) and summarised per level (:attr:`ScalingResult.littles`).
- :func:`slo_brackets`: per configuration (the load columns that vary, connections always),
  :func:`perfkit.scaling.slo_bracket` over the offered rates.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from perfkit.analysis.compare import _records
from perfkit.analysis.experiment import RunSet, match
from perfkit.analysis.grouping import parse_by
from perfkit.analysis.metrics import Metric
from perfkit.analysis.runstatus import (
    FAILED,
    SHORT,
    RunStatus,
    peer_columns,
    percentile_statuses,
)
from perfkit.errors import DataError, PerfkitError, UsageError
from perfkit.formatting import fmt_num, level_text, plain
from perfkit.scaling import ScalingFit, fit_amdahl, fit_usl, littles_law, slo_bracket
from perfkit.scaling.littles import FLAGS
from perfkit.scaling.slo import SLOBracket

CONCURRENCY = ("connections", "users")
#: fewest distinct concurrency levels for each model (a 3- and a 2-parameter curve)
MIN_LEVELS_USL = 4
MIN_LEVELS_AMDAHL = 3
MODEL_NAMES = {"usl": "USL", "amdahl": "Amdahl"}


def choose_model(levels: int) -> tuple[str | None, str]:
    """The one model-choice rule: ``("usl" | "amdahl" | None, reason)``."""
    if levels >= MIN_LEVELS_USL:
        return "usl", ""
    if levels >= MIN_LEVELS_AMDAHL:
        return "amdahl", (f"{levels} concurrency levels: Amdahl's law only (the USL needs "
                          f">= {MIN_LEVELS_USL})")
    return None, (f"{levels} concurrency level(s): no scaling model can be fitted (Amdahl "
                  f"needs >= {MIN_LEVELS_AMDAHL})")


def _groups(rows: RunSet, by: Sequence[str]) -> list[tuple[tuple, RunSet]]:
    if not by:
        return [((), rows)]
    frame = rows.frame[list(by)].drop_duplicates()
    out = []
    for key in sorted((tuple(plain(v) for v in r) for r in frame.itertuples(index=False)),
                      key=lambda k: tuple(str(v) for v in k)):
        mask = np.ones(len(rows), dtype=bool)
        for col, value in zip(by, key, strict=True):
            mask &= match(rows.frame[col], [level_text(value)])
        out.append((key, rows.subset(mask)))
    return out


def _by_columns(rows: RunSet, by: Any) -> list[str]:
    wanted = parse_by(by)
    cols = list(rows.factors) if wanted == "auto" else wanted
    missing = [c for c in cols if c not in rows.frame]
    if missing:
        raise UsageError(f"no column {missing[0]!r} to group by")
    return [c for c in cols if rows.frame[c].astype(str).nunique() > 1] \
        if wanted == "auto" else cols


@dataclasses.dataclass(frozen=True)
class ScalingResult:
    """The scaling model of one configuration (``fit`` None when none could be fitted)."""

    by: tuple[str, ...]
    key: tuple[Any, ...]
    n_column: str
    metric: Metric
    fit: ScalingFit | None
    reason: str
    rows: RunSet
    littles: pd.DataFrame
    littles_runs: pd.DataFrame
    warnings: tuple[str, ...] = ()

    @property
    def model(self) -> str | None:
        return self.fit.model if self.fit is not None else None

    @property
    def verdict(self) -> str:
        """``peak`` (N* claimed: the F-test rejected Amdahl), ``no peak`` (the USL was fitted,
        no retrograde scaling shown) or ``not testable`` (Amdahl's law only, which has no peak,
        or no model: too few levels, or the fit failed)."""
        if self.fit is None or self.fit.model != "usl":
            return "not testable"
        return "peak" if self.fit.n_star is not None else "no peak"

    @property
    def label(self) -> str:
        return ", ".join(level_text(v) for v in self.key) or "all runs"

    def to_record(self) -> dict[str, Any]:
        u = self.metric.suffix
        rec: dict[str, Any] = dict(zip(self.by, self.key, strict=True))
        rec.update({"concurrency": self.n_column, "model": MODEL_NAMES.get(self.model, "none"),
                    "n_runs": len(self.rows)})
        f = self.fit
        nan2 = (math.nan, math.nan)
        rec["n_levels"] = f.n_levels if f else self.rows.frame[self.n_column].nunique()
        for name, value, ci, unit in (
                ("sigma", f.sigma if f else math.nan, f.sigma_ci if f else nan2, ""),
                ("kappa", f.kappa if f else math.nan, f.kappa_ci if f else nan2, ""),
                ("gamma", f.gamma if f else math.nan, f.gamma_ci if f else nan2, u),
                ("n_star", (f.n_star if f and f.n_star is not None else math.nan),
                 (f.n_star_ci if f and f.n_star_ci else nan2), "")):
            rec[f"{name}{unit}"] = value
            rec[f"{name}_ci_low{unit}"], rec[f"{name}_ci_high{unit}"] = ci
        rec[f"x_at_n_star{u}"] = f.x_at_n_star if f and f.x_at_n_star is not None else math.nan
        rec["f_stat"] = f.f_stat if f and f.f_stat is not None else math.nan
        rec["f_p_value"] = f.f_p_value if f and f.f_p_value is not None else math.nan
        rec[f"residual_se{u}"] = f.residual_se if f else math.nan
        rec["note"] = self.reason
        rec["warnings"] = "; ".join(self.warnings)
        return rec


@dataclasses.dataclass(frozen=True)
class ScalingTable:
    """Every configuration's :class:`ScalingResult`."""

    results: tuple[ScalingResult, ...]
    n_column: str
    metric: Metric
    confidence: float
    alpha: float
    n_resamples: int
    seed: int
    warnings: tuple[str, ...] = ()

    def describe(self) -> str:
        """The method, in a sentence a reader can paste into a paper."""
        return (f"Throughput scaling over {self.n_column} was modelled by the Universal "
                "Scalability Law (Gunther 2007) with four or more concurrency levels, Amdahl's "
                "law with three, fitted by bounded nonlinear least squares to every run (not "
                f"to means), with {self.confidence:.0%} wild bootstrap-t intervals "
                f"({self.n_resamples} resamples, seed {self.seed}; a percentile interval of "
                "the same refits for N* and for a parameter on its bound); a peak concurrency "
                "N* is "
                f"claimed only where an F-test rejects Amdahl's law at alpha {self.alpha:g}; "
                "Little's law was checked per run.")

    def to_frame(self) -> pd.DataFrame:
        """One row per configuration: model, parameters with CIs (gamma in the metric's unit
        per unit of concurrency), N* (only when claimed), the F-test and a note."""
        return pd.DataFrame.from_records([r.to_record() for r in self.results])

    def littles_frame(self) -> pd.DataFrame:
        """Per configuration and concurrency level: runs, median ratio X(R+Z)/N, and the runs
        of each flag (``runs_<flag>``)."""
        parts = [r.littles for r in self.results if len(r.littles)]
        return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()

    def littles_runs_frame(self) -> pd.DataFrame:
        """Per run: the configuration's columns, then :func:`perfkit.scaling.littles_law`'s
        check (concurrency, X, R, think time, implied concurrency X(R+Z), ratio, flag): the
        runs behind :meth:`littles_frame`."""
        parts = [r.littles_runs for r in self.results if len(r.littles_runs)]
        return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()

    def to_dict(self) -> dict[str, Any]:
        return {"metric": self.metric.name, "concurrency": self.n_column,
                "confidence": self.confidence, "alpha": self.alpha,
                "n_resamples": self.n_resamples, "seed": self.seed,
                "warnings": list(self.warnings), "models": _records(self.to_frame()),
                "littles_law": _records(self.littles_frame())}


def concurrency_column(rows: RunSet) -> str:
    """``users`` for Locust runs, ``connections`` otherwise."""
    f = rows.frame
    if "users" in f and f["users"].notna().any() and f["tool"].eq("locust").all():
        return "users"
    return "connections"


def scaling_fits(rows: RunSet, metric: Metric, *, x: str | None = None, by: Any = "auto",
                 confidence: float = 0.95, alpha: float = 0.05, n_resamples: int = 1000,
                 seed: int = 0, think_time_ms: float | None = None) -> ScalingTable:
    """The scaling model of every configuration (see the module docstring)."""
    x = x or concurrency_column(rows)
    if x not in CONCURRENCY:
        raise UsageError(f"{x!r} is not a concurrency: the USL needs N = connections or users "
                         "(an offered rate is judged with the SLO bracket instead)")
    if (rows.frame["tool"] == "wrk2").any():
        raise UsageError("wrk2 runs are open loop: their throughput follows the offered rate, "
                         "not the connections; judge them with the SLO bracket (--x "
                         "target_rate_rps with --slo-ms)")
    if metric.name not in rows.frame:
        raise UsageError(f"no metric column {metric.name!r}")
    notes = []
    lacking = rows.frame[x].isna().to_numpy() if x in rows.frame else np.ones(len(rows), bool)
    hint = "Locust runs use --x users, wrk runs --x connections"
    if lacking.all():
        raise DataError(f"no run has {x} ({hint})")
    if lacking.any():
        notes.append(f"{int(lacking.sum())} run(s) without {x} left out ({hint})")
        rows = rows.subset(~lacking)
    by_cols = _by_columns(rows, by)
    results = [_fit_one(key, group, by_cols, x, metric, confidence, alpha, n_resamples, seed,
                        think_time_ms) for key, group in _groups(rows, by_cols)]
    return ScalingTable(tuple(results), x, metric, confidence, alpha, n_resamples, seed,
                        tuple(notes))


def _fit_one(key, group: RunSet, by, x, metric, confidence, alpha, n_resamples, seed,
             think_time_ms) -> ScalingResult:
    frame = group.frame.dropna(subset=[x, metric.name])
    levels = int(frame[x].nunique())
    model, reason = choose_model(levels)
    fit = None
    n, v = frame[x].astype(float), frame[metric.name].astype(float)
    try:
        if model == "usl":
            fit = fit_usl(n, v, confidence=confidence, alpha=alpha, n_resamples=n_resamples,
                          seed=seed, n_column=x)
            reason = fit.n_star_reason
        elif model == "amdahl":
            fit = fit_amdahl(n, v, confidence=confidence, n_resamples=n_resamples, seed=seed,
                             n_column=x)
    except (PerfkitError, ValueError) as exc:
        fit, reason = None, f"fit failed: {exc}"
    littles, per_run = _littles(group, by, key, x, think_time_ms)
    return ScalingResult(tuple(by), key, x, metric, fit, reason, group, littles, per_run,
                         fit.warnings if fit is not None else ())


def _littles(group: RunSet, by, key, x: str, think_time_ms
             ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Little's law per level (medians of runs) and per run, with ``think_time_ms``."""
    checked = littles_law(group.frame, think_time_ms=think_time_ms)
    if not len(checked):
        return pd.DataFrame(), pd.DataFrame()
    checked[x] = group.frame.loc[checked.index, x]
    per_run = checked.reset_index(drop=True)
    for i, (col, value) in enumerate((c, v) for c, v in zip(by, key, strict=True)
                                     if c not in per_run):
        per_run.insert(i, col, value)
    rows = []
    for level, sub in checked.groupby(x, sort=True):
        rec = dict(zip(by, key, strict=True))
        rec.update({x: plain(level), "runs": len(sub),
                    "throughput_rps": float(sub["throughput_rps"].median()),
                    "latency_mean_ms": float(sub["latency_mean_ms"].median()),
                    "ratio": float(sub["ratio"].median()),
                    "implied_think_time_ms": float(sub["implied_think_time_ms"].median()),
                    **_flag_counts(sub["flag"])})
        rows.append(rec)
    return pd.DataFrame(rows), per_run


def _flag_counts(flags: pd.Series) -> dict[str, int]:
    """``runs_<flag>``: how many runs got each flag other than ``ok`` (one column per flag,
    :data:`perfkit.scaling.littles.FLAGS`)."""
    return {f"runs_{f}": int((flags == f).sum()) for f in FLAGS if f != "ok"}


# -- SLO bracket over offered rates -------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class SloBracket:
    """The SLO bracket of one configuration: ``bracket`` is :class:`SLOBracket`;
    ``run_statuses`` each run's ``(run_id, rate_rps, status, reason)`` under the run-status
    rule the verdicts used (:mod:`perfkit.analysis.runstatus`), so figures can mark the
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
    def verdict(self) -> str:
        """The bracket's verdict: ``bracketed`` (a pass, then a fail at the next rate tested
        above it), ``inconclusive between`` (rates between the last pass and the first fail
        are inconclusive), ``inconclusive above`` (no rate failed, and the rates above the
        last pass are inconclusive: run more there), ``open above`` (every rate passed: test
        higher rates), ``none passed`` or ``not monotone`` (a pass above a fail: repeat)."""
        b = self.bracket
        if not b.monotone:
            return "not monotone"
        if b.last_pass_rps is None:
            return "none passed"
        if b.first_fail_rps is None:
            return "inconclusive above" if self.inconclusive_rps else "open above"
        return "inconclusive between" if self.inconclusive_rps else "bracketed"

    @property
    def inconclusive_rps(self) -> tuple[float, ...]:
        """The inconclusive rates the bracket leaves open: above the last pass (from the
        lowest rate without one) and below the first fail (every one above without one)."""
        b = self.bracket
        low = -math.inf if b.last_pass_rps is None else b.last_pass_rps
        high = math.inf if b.first_fail_rps is None else b.first_fail_rps
        return tuple(v.rate_rps for v in b.rates
                     if v.verdict == "inconclusive" and low < v.rate_rps < high)

    @property
    def warnings(self) -> tuple[str, ...]:
        """What the bracket rests on: its own warnings, then those of the offered rates that
        decide it (every rate up to its first failing one): why a rate did not pass (a run
        not keeping up, an interval holding the SLO) and what its interval assumes."""
        b = self.bracket
        limit = math.inf if b.first_fail_rps is None else b.first_fail_rps
        out = list(b.warnings)
        for v in b.rates:
            if v.rate_rps <= limit:
                if v.verdict != "pass":
                    out.append(f"{fmt_num(v.rate_rps)} req/s: {v.reason}")
                out += [w for w in v.warnings if not any(w in o for o in out)]
        return tuple(dict.fromkeys(out))

    def to_record(self) -> dict[str, Any]:
        rec: dict[str, Any] = dict(zip(self.by, self.key, strict=True))
        rec.update({"n_runs": self.n_runs,
                    "last_pass_rps": _none_nan(self.bracket.last_pass_rps),
                    "first_fail_rps": _none_nan(self.bracket.first_fail_rps),
                    "monotone": self.bracket.monotone,
                    "warnings": "; ".join(self.bracket.warnings)})
        return rec

    def verdict_records(self) -> list[dict[str, Any]]:
        out = []
        for v in self.bracket.rates:
            rec: dict[str, Any] = dict(zip(self.by, self.key, strict=True))
            rec.update({"rate_rps": v.rate_rps, "verdict": v.verdict, "n_runs": v.n_runs,
                        "n_kept_up": v.n_kept_up, "n_short": v.n_short,
                        "n_saturated": v.n_saturated, "n_failed": v.n_failed,
                        "estimate_ms": v.estimate_ms,
                        "ci_low_ms": v.ci_low_ms, "ci_high_ms": v.ci_high_ms,
                        "method": v.method, "estimand": v.estimand,
                        "runs_needed": v.runs_needed if v.runs_needed is not None else math.nan,
                        "reason": v.reason, "warnings": "; ".join(v.warnings)})
            out.append(rec)
        return out


def _none_nan(value: float | None) -> float:
    return math.nan if value is None else float(value)


@dataclasses.dataclass(frozen=True)
class SloTable:
    """Every configuration's :class:`SloBracket` under one SLO."""

    brackets: tuple[SloBracket, ...]
    slo_ms: float
    percentile: float
    confidence: float
    warnings: tuple[str, ...] = ()

    def describe(self) -> str:
        """The method, in a sentence a reader can paste into a paper."""
        return (f"Each offered rate was judged against the objective p{self.percentile:g} < "
                f"{self.slo_ms:g} ms: a pass when every run sustained the rate and the upper "
                f"bound of the {self.confidence:.0%} across-runs interval lay below the "
                "objective, a fail when a run did not sustain it, errors exceeded 1%, or the "
                "lower bound lay above it, else inconclusive; the largest rate meeting it is "
                "reported as the bracket [last pass, first fail].")

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
                "confidence": self.confidence, "warnings": list(self.warnings),
                "brackets": _records(self.to_frame()),
                "verdicts": _records(self.verdicts_frame())}


def _status_flags(statuses: Sequence[RunStatus]) -> dict[str, list[bool]]:
    """Per run of one configuration, from its status under the run-status rule (as on the
    latency page, :mod:`perfkit.analysis.latency`): ``in_doubt``, a shortfall it calls
    ``short`` (the generator fell slightly short, latency like its peers' at the same rate),
    not a failure; ``failed``, a run left out of the interval that fails its rate."""
    return {"in_doubt": [s.status == SHORT for s in statuses],
            "failed": [s.status == FAILED for s in statuses]}


def _slo_bracket(by_cols: list[str], key: tuple, group: RunSet, slo_ms: float,
                 percentile: float, confidence: float, seed: int,
                 n_resamples: int) -> SloBracket:
    statuses = percentile_statuses(group, percentile, peer_columns(group))
    bracket = slo_bracket(list(group.runs), slo_ms, percentile, confidence, seed=seed,
                          n_resamples=n_resamples, **_status_flags(statuses))
    runs = tuple((str(r.run_id or r.source), float(r.target_rate_rps), s.status, s.reason)
                 for r, s in zip(group.runs, statuses, strict=True))
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
        notes.append(f"{int((~rated).sum())} run(s) without a target rate (closed loop) left out")
        rows = rows.subset(rated)
    by_cols = _by_columns(rows, by)
    if "connections" in rows.frame and "connections" not in by_cols:
        by_cols.append("connections")
    out = [_slo_bracket(by_cols, key, group, slo_ms, percentile, confidence, seed, n_resamples)
           for key, group in _groups(rows, by_cols)]
    return SloTable(tuple(out), slo_ms, percentile, confidence, tuple(notes))
