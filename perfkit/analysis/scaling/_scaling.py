"""Throughput scaling over concurrency, and the SLO bracket over offered rates: one rule each.

- :func:`scaling_fits`: per configuration, the model is chosen by one rule
  (:func:`choose_model`): the USL with four or more concurrency levels (a peak N* only when
  its F-test rejects Amdahl), Amdahl's law with three, no model below. N is a concurrency
  (connections for wrk, users for Locust), never an offered rate; open-loop wrk2 runs are
  refused. Little's law is checked per run (:attr:`ScalingResult.littles_runs`, with the think
  time given) and summarised per level (:attr:`ScalingResult.littles`).
- :func:`slo_brackets`: per configuration (the load columns that vary, connections always),
  :func:`perfkit.stats.slo.slo_bracket` over the offered rates
  (:mod:`perfkit.analysis.scaling._slo`, re-exported here).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import pandas as pd

from perfkit.analysis.context import HOST_BUSY_PERCENT, HostCpu, host_cpu
from perfkit.analysis.core import (
    NOT_ESTIMABLE_COLUMN,
    Metric,
    RunSet,
    by_columns,
    json_records,
    judge_interval,
    split_groups,
)
from perfkit.errors import DataError, PerfkitError, UsageError
from perfkit.formatting import level_text, plain
from perfkit.stats.littles import FLAGS, littles_law
from perfkit.stats.littles import LITTLE_TOLERANCE as LITTLE_TOLERANCE  # re-exported for the pages
from perfkit.stats.usl import ScalingFit, fit_amdahl, fit_usl
from perfkit.vocabulary import ScalingVerdict
from perfkit.warning import Code, Warn, texts

CONCURRENCY = ("connections", "users")
#: fewest distinct concurrency levels for each model (a 3- and a 2-parameter curve)
MIN_LEVELS_USL = 4
MIN_LEVELS_AMDAHL = 3
MODEL_NAMES: dict[str | None, str] = {"usl": "USL", "amdahl": "Amdahl"}  # None: no model


def choose_model(levels: int) -> tuple[str | None, Warn | None]:
    """The one model-choice rule: ``("usl" | "amdahl" | None, reason)``."""
    if levels >= MIN_LEVELS_USL:
        return "usl", None
    if levels >= MIN_LEVELS_AMDAHL:
        return "amdahl", Warn(Code.AMDAHL_ONLY, levels=levels, least=MIN_LEVELS_USL)
    return None, Warn(Code.NO_SCALING_MODEL, levels=levels, least=MIN_LEVELS_AMDAHL)


@dataclasses.dataclass(frozen=True)
class ScalingResult:
    """The scaling model of one configuration (``fit`` None when none could be fitted)."""

    by: tuple[str, ...]
    key: tuple[Any, ...]
    n_column: str
    metric: Metric
    fit: ScalingFit | None
    #: why the model (or none) was chosen, or the fit's N* reason (None: nothing to say)
    reason: Warn | None
    rows: RunSet
    littles: pd.DataFrame
    littles_runs: pd.DataFrame
    warnings: tuple[Warn, ...] = ()
    #: the host CPU of the runs fitted (:func:`perfkit.analysis.context._conditions.host_cpu`)
    host: HostCpu | None = None

    @property
    def peak_scope(self) -> str:
        """What a peak N* is the peak of: ``""`` when the host was not saturated (or not
        recorded), else ``"the whole box's peak: client and server share 2 cores (host CPU
        >= 90% in 45 of 48 runs)"``: the runs measure the box, not the server alone."""
        h = self.host
        if h is None or not h.box_bound:
            return ""
        cores = f"{h.cpus} cores" if h.cpus else "the host's cores"
        return (f"the whole box's peak, not the server's: client and server share {cores} "
                f"(host CPU >= {HOST_BUSY_PERCENT:g}% in {h.busy} of {h.known} runs)")

    @property
    def peak_scope_brief(self) -> str:
        """:attr:`peak_scope` as an answer says it beside N*: ``"the box's peak: host CPU >=
        90% in 45 of 48 runs"`` (``""`` when the host was not saturated)."""
        h = self.host
        if not self.peak_scope or h is None:
            return ""
        return f"the box's peak: host CPU >= {HOST_BUSY_PERCENT:g}% in {h.busy} of {h.known} runs"

    @property
    def n_star_not_estimable(self) -> str:
        """Why N*'s interval may not be printed (:func:`perfkit.analysis.core._intervals.judge`:
        ends more than 100x apart), else ``""``."""
        f = self.fit
        if f is None or f.n_star is None or not f.n_star_ci:
            return ""
        return judge_interval(*f.n_star_ci)

    @property
    def model(self) -> str | None:
        return self.fit.model if self.fit is not None else None

    @property
    def verdict(self) -> ScalingVerdict:
        """``peak`` (N* claimed: the F-test rejected Amdahl), ``no peak`` (the USL was fitted,
        no retrograde scaling shown) or ``not testable`` (Amdahl's law only, which has no peak,
        or no model: too few levels, or the fit failed)."""
        if self.fit is None or self.fit.model != "usl":
            return ScalingVerdict.NOT_TESTABLE
        return ScalingVerdict.PEAK if self.fit.n_star is not None else ScalingVerdict.NO_PEAK

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
                 (f.n_star_ci if f and f.n_star_ci and not self.n_star_not_estimable
                  else nan2), "")):
            rec[f"{name}{unit}"] = value
            rec[f"{name}_ci_low{unit}"], rec[f"{name}_ci_high{unit}"] = ci
        rec[NOT_ESTIMABLE_COLUMN] = (f"n_star: {self.n_star_not_estimable}"
                                      if self.n_star_not_estimable else "")
        h = self.host
        rec["host_cpu_runs"] = h.known if h else 0
        rec["host_cpu_busy_runs"] = h.busy if h else 0
        rec["peak_scope"] = self.peak_scope if f and f.n_star is not None else ""
        rec[f"x_at_n_star{u}"] = f.x_at_n_star if f and f.x_at_n_star is not None else math.nan
        rec["f_stat"] = f.f_stat if f and f.f_stat is not None else math.nan
        rec["f_p_value"] = f.f_p_value if f and f.f_p_value is not None else math.nan
        rec[f"residual_se{u}"] = f.residual_se if f else math.nan
        rec["note"] = "" if self.reason is None else str(self.reason)
        rec["warnings"] = "; ".join(texts(self.warnings))
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
    warnings: tuple[Warn, ...] = ()

    def describe(self) -> str:
        """The method, in a sentence a reader can paste into a paper."""
        return (f"Throughput scaling over {self.n_column} was modelled by the Universal "
                "Scalability Law (Gunther 2007) with four or more concurrency levels, Amdahl's "
                "law with three, fitted by bounded nonlinear least squares to every run (not "
                f"to means), with {self.confidence:.0%} wild bootstrap-t intervals "
                f"({self.n_resamples} resamples, seed {self.seed}; a percentile interval of "
                "the same refits for N*, whose measured coverage is 0.875 at nominal 95% "
                "(benchmarks/calibration_usl.py), and for a parameter on its bound); a peak "
                "concurrency "
                "N* is "
                f"claimed only where an F-test rejects Amdahl's law at alpha {self.alpha:g}; "
                "Little's law was checked per run.")

    def block_treatment(self) -> tuple[str, str, bool]:
        """How this result treats an experiment's blocks: what it is, of what, and
        whether it models them (:func:`perfkit.analysis.context._validity.block_treatment`)."""
        return "the scalability fit", "", False

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
        """Per run: the configuration's columns, then :func:`perfkit.stats.littles.littles_law`'s
        check (concurrency, X, R, think time, implied concurrency X(R+Z), ratio, flag): the
        runs behind :meth:`littles_frame`."""
        parts = [r.littles_runs for r in self.results if len(r.littles_runs)]
        return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()

    def to_dict(self) -> dict[str, Any]:
        return {"metric": self.metric.name, "concurrency": self.n_column,
                "confidence": self.confidence, "alpha": self.alpha,
                "n_resamples": self.n_resamples, "seed": self.seed,
                "warnings": [w.to_dict() for w in self.warnings],
                "models": json_records(self.to_frame()),
                "littles_law": json_records(self.littles_frame())}


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
    if lacking.all():
        raise DataError(f"no run has {x} (Locust runs use --x users, wrk runs --x connections)")
    if lacking.any():
        notes.append(Warn(Code.RUNS_WITHOUT_CONCURRENCY, runs=int(lacking.sum()), column=x))
        rows = rows.subset(~lacking)
    by_cols = by_columns(rows, by)
    results = [_fit_one(key, group, by_cols, x, metric, confidence, alpha, n_resamples, seed,
                        think_time_ms) for key, group in split_groups(rows, by_cols)]
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
        fit, reason = None, Warn(Code.FIT_FAILED, error=str(exc))
    littles, per_run = _littles(group, by, key, x, think_time_ms)
    return ScalingResult(tuple(by), key, x, metric, fit, reason, group, littles, per_run,
                         fit.warnings if fit is not None else (), host_cpu(group.runs))


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
    :data:`perfkit.stats.littles.FLAGS`)."""
    return {f"runs_{f}": int((flags == f).sum()) for f in FLAGS if f != "ok"}
