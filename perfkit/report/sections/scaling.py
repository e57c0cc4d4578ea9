"""The scaling notebook's analysis: load curves, SLO brackets, heat maps, USL and Little's law.

Open-loop runs (wrk2 at fixed offered rates) answer "how does latency grow with the offered
rate, and up to which rate is the SLO met"; closed-loop runs (wrk connections, Locust users)
answer "how does throughput scale with concurrency" (the USL: N is a concurrency, never a rate).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from perfkit.errors import PerfkitError
from perfkit.model import percentile_column
from perfkit.report.sections.common import Experiment, config_labels, fmt_ci, select
from perfkit.scaling import ScalingFit, fit_amdahl, fit_usl, littles_law
from perfkit.scaling.slo import slo_bracket

MODEL_NAMES = {"usl": "USL", "amdahl": "Amdahl"}
#: fewest distinct concurrency levels for each model (a 3- and a 2-parameter curve)
MIN_LEVELS_USL = 4
MIN_LEVELS_AMDAHL = 3


def runs_with_config(exp: Experiment, by: Sequence[str], where: Mapping[str, Any] | None = None
                     ) -> tuple[pd.DataFrame, list]:
    """Rows of ``exp`` matching ``where`` with a ``config`` column, and their Runs (aligned).

    Locust contributes its ``Aggregated`` rows only.
    """
    frame = exp.frame
    mask = select(frame, where)
    if "is_aggregate" in frame:
        locust = frame["tool"].eq("locust")
        mask &= ~locust | frame["is_aggregate"].fillna(False).astype(bool)
    idx = np.flatnonzero(mask.to_numpy())
    out = frame.iloc[idx].reset_index(drop=True)
    out.insert(1, "config", config_labels(out, list(by)).to_numpy())
    return out, [exp.runs[i] for i in idx]


def concurrency_column(frame: pd.DataFrame) -> str:
    """``users`` for Locust runs, ``connections`` otherwise."""
    if "users" in frame and frame["users"].notna().any() and frame["tool"].eq("locust").all():
        return "users"
    return "connections"


# -- SLO ----------------------------------------------------------------------------------------
def slo_tables(frame: pd.DataFrame, runs: list, slo_ms: float, percentile: float = 99.0,
               confidence: float = 0.95, seed: int = 0, n_resamples: int = 2000
               ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per configuration: the bracket ``[last pass, first fail]``; and the verdict per rate."""
    brackets, verdicts = [], []
    for config in sorted(frame["config"].unique()):
        idx = np.flatnonzero(frame["config"].to_numpy() == config)
        result = slo_bracket([runs[i] for i in idx], slo_ms, percentile, confidence,
                             seed=seed, n_resamples=n_resamples)
        brackets.append({"config": config, "last_pass_rps": result.last_pass_rps,
                         "first_fail_rps": result.first_fail_rps,
                         "monotone": result.monotone, "notes": "; ".join(result.warnings)})
        for v in result.rates:
            verdicts.append({"config": config, "rate_rps": v.rate_rps, "verdict": v.verdict,
                             "n_runs": v.n_runs, "estimate_ms": v.estimate_ms,
                             "ci_low_ms": v.ci_low_ms, "ci_high_ms": v.ci_high_ms,
                             "method": v.method, "runs_needed": v.runs_needed,
                             "reason": v.reason})
    return pd.DataFrame(brackets), pd.DataFrame(verdicts)


def bracket_text(row: Mapping[str, Any]) -> str:
    """``"[30000, 45000] req/s"``; an open side prints as ``below lowest`` / ``none failed``."""
    lo, hi = row["last_pass_rps"], row["first_fail_rps"]
    low = "below the lowest rate" if lo is None or _nan(lo) else f"{lo:g}"
    high = "none failed" if hi is None or _nan(hi) else f"{hi:g}"
    return f"[{low}, {high}] req/s"


def _nan(v: Any) -> bool:
    return isinstance(v, float) and math.isnan(v)


# -- heat map -----------------------------------------------------------------------------------
def heat_tables(frame: pd.DataFrame, value: str, split: str | None,
                rows: str = "connections", cols: str = "target_rate_rps"
                ) -> dict[str, pd.DataFrame]:
    """Median of ``value`` over runs on a ``rows`` x ``cols`` grid, one grid per ``split`` level."""
    parts = [("all runs", frame)] if not split else [
        (str(k), g) for k, g in frame.groupby(split, sort=True)]
    out = {}
    for key, group in parts:
        grid = group.pivot_table(index=rows, columns=cols, values=value, aggfunc="median")
        grid.index = [_level(v) for v in grid.index]
        grid.columns = [_level(v) for v in grid.columns]
        out[key] = grid
    return out


def _level(v: Any) -> Any:
    return int(v) if isinstance(v, float) and v.is_integer() else v


# -- USL ----------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class ScalingResult:
    """A fit of one configuration (``fit`` None when impossible, ``reason`` says why)."""

    config: str
    fit: ScalingFit | None
    reason: str
    n_column: str
    frame: pd.DataFrame


def fit_scaling(frame: pd.DataFrame, n_column: str, x_column: str = "throughput_rps",
                confidence: float = 0.95, alpha: float = 0.05, n_resamples: int = 1000,
                seed: int = 0) -> list[ScalingResult]:
    """The USL per configuration (Amdahl when there are 3 concurrency levels, none below)."""
    out = []
    for config, group in frame.groupby("config", sort=True):
        group = group.dropna(subset=[n_column, x_column])
        levels = group[n_column].nunique()
        fit, reason = None, ""
        n, x = group[n_column].astype(float), group[x_column].astype(float)
        try:
            if levels >= MIN_LEVELS_USL:
                fit = fit_usl(n, x, confidence=confidence, alpha=alpha,
                              n_resamples=n_resamples, seed=seed, n_column=n_column)
                reason = fit.n_star_reason
            elif levels >= MIN_LEVELS_AMDAHL:
                fit = fit_amdahl(n, x, confidence=confidence, n_resamples=n_resamples,
                                 seed=seed, n_column=n_column)
                reason = (f"{levels} {n_column} levels: Amdahl's law only (the USL needs "
                          f">= {MIN_LEVELS_USL})")
            else:
                reason = (f"{levels} {n_column} level(s): no scaling model can be fitted "
                          f"(Amdahl needs >= {MIN_LEVELS_AMDAHL})")
        except (PerfkitError, ValueError) as exc:
            reason = f"fit failed: {exc}"
        out.append(ScalingResult(str(config), fit, reason, n_column, group))
    return out


def scaling_table(results: Sequence[ScalingResult]) -> pd.DataFrame:
    """``config, model, parameter, estimate, ci_low, ci_high`` plus the N* verdict."""
    rows = []
    for r in results:
        if r.fit is None:
            rows.append({"config": r.config, "model": "none", "parameter": "", "note": r.reason})
            continue
        for p in r.fit.parameters():
            rows.append({"config": r.config, "model": r.fit.model, **p,
                         "note": r.reason if p["parameter"] in ("n_star", "gamma") else ""})
    return pd.DataFrame(rows)


def model_frames(results: Sequence[ScalingResult], x_column: str = "throughput_rps",
                 points: int = 200) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """For :func:`perfkit.plots.model_curves`: the runs (``config, n, x``), the fitted curves
    (``config, n, fit``) and the claimed peaks (``config, n_star, n_star_low, n_star_high``)."""
    runs, curves, peaks = [], [], []
    for r in results:
        runs.append(pd.DataFrame({"config": r.config, "n": r.frame[r.n_column].astype(float),
                                  "x": r.frame[x_column].astype(float)}))
        if r.fit is None:
            continue
        curve = scaling_curve(r, points)
        curve.insert(0, "config", r.config)
        curves.append(curve)
        if r.fit.n_star is not None:
            lo, hi = r.fit.n_star_ci or (math.nan, math.nan)
            peaks.append({"config": r.config, "n_star": r.fit.n_star, "n_star_low": lo,
                          "n_star_high": hi})
    empty = pd.DataFrame(columns=["config", "n", "fit"])
    return (pd.concat(runs, ignore_index=True) if runs else pd.DataFrame(
                columns=["config", "n", "x"]),
            pd.concat(curves, ignore_index=True) if curves else empty,
            pd.DataFrame(peaks, columns=["config", "n_star", "n_star_low", "n_star_high"]))


def models_caption(results: Sequence[ScalingResult]) -> str:
    """One sentence per configuration: the model fitted and whether a peak is claimed."""
    parts = []
    for r in results:
        model = MODEL_NAMES.get(r.fit.model, r.fit.model) if r.fit else "no model"
        peak = "" if r.fit is None or r.fit.n_star is None else f", N* = {r.fit.n_star:.0f}"
        parts.append(f"{r.config}: {model}{peak}.")
    return " ".join(parts)


def scaling_curve(result: ScalingResult, points: int = 200) -> pd.DataFrame:
    """The fitted curve over the observed concurrency range (``n, fit``)."""
    n_max = float(result.frame[result.n_column].max())
    if result.fit is not None and result.fit.n_star:
        n_max = max(n_max, 1.2 * result.fit.n_star)
    n = np.linspace(1.0, n_max, points)
    fit = result.fit.predict(n) if result.fit is not None else np.full(points, np.nan)
    return pd.DataFrame({"n": n, "fit": fit})


# -- Little's law ----------------------------------------------------------------------------
def littles_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Little's-law check per run, keeping ``config`` (see :func:`perfkit.scaling.littles_law`)."""
    return littles_law(frame, keep=("config", "run_id"))


def littles_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per configuration and concurrency: median ratio X*(R+Z)/N and the flags seen."""
    rows = []
    for (config, n), g in table.groupby(["config", "concurrency"], sort=True):
        rows.append({"config": config, "concurrency": float(n), "runs": len(g),
                     "median_ratio": float(g["ratio"].median()),
                     "flags": ", ".join(sorted(set(g["flag"])))})
    return pd.DataFrame(rows)


# -- findings --------------------------------------------------------------------------------
def headline(brackets: pd.DataFrame, results: Sequence[ScalingResult], slo_ms: float,
             percentile: float) -> dict[str, str]:
    out = {}
    for _, row in brackets.iterrows():
        out[f"max rate with p{percentile:g} < {slo_ms:g} ms, {row['config']}"] = bracket_text(row)
    unclaimed: dict[str, list[str]] = {}
    for r in results:
        if r.fit is not None and r.fit.n_star is not None:
            lo, hi = r.fit.n_star_ci or (math.nan, math.nan)
            out[f"peak concurrency N*, {r.config}"] = fmt_ci(r.fit.n_star, lo, hi,
                                                             r.n_column)
        else:
            unclaimed.setdefault(r.reason, []).append(r.config)
    for reason, configs in unclaimed.items():
        which = "every configuration" if len(configs) == len(results) else "; ".join(configs)
        out[f"peak concurrency N*, {which}"] = f"not claimed ({reason})"
    return out


def percentile_col(percentile: float) -> str:
    """The runs-frame column of a printed percentile: ``latency_p99_ms``."""
    return percentile_column(percentile)
