"""The scaling notebook: load curves, SLO brackets, heat maps, scalability models, Little's law.

Open-loop runs (wrk2 at fixed offered rates) answer "how does latency grow with the offered
rate, and up to which rate is the SLO met"; closed-loop runs (wrk connections, Locust users)
answer "how does throughput scale with concurrency". The analysis is
:mod:`perfkit.analysis.scaling` (the same calls as ``perfkit scaling``); this module shapes it
for the page and the plots. The heat map draws the SLO verdicts' estimates, so a cell holds the
number the SLO table and the latency page give for it. Without a closed-loop experiment the
model functions take None and return None (nothing to show).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from perfkit.analysis import RunSet, metric
from perfkit.analysis.scaling import (
    MODEL_NAMES,
    ScalingResult,
    ScalingTable,
    SloTable,
    scaling_fits,
    slo_brackets,
)
from perfkit.analysis.scaling import concurrency_column as _concurrency
from perfkit.formatting import fmt_ci
from perfkit.model import percentile_column
from perfkit.report.nb import Answer
from perfkit.report.sections.common import (
    Experiment,
    config_labels,
    config_text,
    load_experiment,
)


def runs_with_config(exp: Experiment, by: Sequence[str],
                     where: Mapping[str, Any] | None = None) -> tuple[RunSet, pd.DataFrame]:
    """The analysis rows of ``exp`` matching ``where``, and their frame with a ``config``
    legend label (for plots)."""
    rows = exp.rows(where)
    frame = rows.frame.copy()
    frame.insert(1, "config", config_labels(frame, list(by)).to_numpy())
    return rows, frame


def concurrency_column(rows: RunSet) -> str:
    return _concurrency(rows)


def percentile_col(percentile: float) -> str:
    """The runs-frame column of a printed percentile: ``latency_p99_ms``."""
    return percentile_column(percentile)


# -- SLO ------------------------------------------------------------------------------------
def slo(rows: RunSet, by: Sequence[str], slo_ms: float, percentile: float = 99.0,
        confidence: float = 0.95, seed: int = 0, n_resamples: int = 2000) -> SloTable:
    """The SLO bracket of every configuration (as ``perfkit scaling --x target_rate_rps``)."""
    return slo_brackets(rows, slo_ms, percentile=percentile, by=list(by) or "none",
                        confidence=confidence, seed=seed, n_resamples=n_resamples)


def bracket_text(last_pass: float, first_fail: float) -> str:
    """``"[30000, 45000] req/s"``; an open side prints as ``below lowest`` / ``none failed``."""
    low = "below the lowest rate" if _missing(last_pass) else f"{last_pass:g}"
    high = "none failed" if _missing(first_fail) else f"{first_fail:g}"
    return f"[{low}, {high}] req/s"


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


# -- heat map -----------------------------------------------------------------------------------
def heat_tables(slo_table: SloTable, rows: str = "connections", cols: str = "rate_rps"
                ) -> dict[str, pd.DataFrame]:
    """The SLO verdicts' estimates (``estimate_ms``: the median run's percentile, under the
    run-status rule) on a ``rows`` x ``cols`` grid, one grid per configuration of the SLO
    table's other columns (``"all runs"`` without any)."""
    verdicts = slo_table.verdicts_frame()
    if not len(verdicts):
        return {}
    split = [c for c in (slo_table.brackets[0].by if slo_table.brackets else ()) if c != rows]
    labels = config_labels(verdicts, split) if split else pd.Series("all runs",
                                                                    index=verdicts.index)
    if rows not in verdicts:
        verdicts = verdicts.assign(**{rows: "all"})
    out = {}
    for key in sorted(set(labels)):
        grid = verdicts[labels == key].pivot(index=rows, columns=cols, values="estimate_ms")
        grid.index = [_whole(v) for v in grid.index]
        grid.columns = [_whole(v) for v in grid.columns]
        out[key] = grid
    return out


def _whole(v: Any) -> Any:
    return int(v) if isinstance(v, float) and v.is_integer() else v


def heatmap_caption(slo_table: SloTable) -> str:
    split = [c for c in (slo_table.brackets[0].by if slo_table.brackets else ())
             if c != "connections"]
    per = f", per {', '.join(split)}" if split else ""
    return (f"p{slo_table.percentile:g} over connections x offered rate{per}: the SLO "
            "verdicts' estimate in each cell (the median run's percentile), one log colour "
            "scale")


# -- scalability models ----------------------------------------------------------------------
def fits(rows: RunSet, by: Sequence[str], confidence: float = 0.95, alpha: float = 0.05,
         n_resamples: int = 1000, seed: int = 0,
         think_time_ms: float | None = None) -> ScalingTable:
    """The scalability model of every configuration (as ``perfkit scaling --x connections``;
    ``think_time_ms`` as ``--think-time-ms``)."""
    return scaling_fits(rows, metric("throughput_rps", rows.frame.columns),
                        by=list(by) or "none", confidence=confidence, alpha=alpha,
                        n_resamples=n_resamples, seed=seed, think_time_ms=think_time_ms)


def closed_experiment(name: str, data_root: str | None = None) -> Experiment | None:
    """The closed-loop experiment named, or None when none is."""
    return load_experiment(name, data_root) if name else None


def closed_models(closed: Experiment | None, select: Mapping[str, Any] | None,
                  by: Sequence[str], confidence: float = 0.95, alpha: float = 0.05,
                  n_resamples: int = 1000, seed: int = 0,
                  think_time_ms: float | None = None) -> ScalingTable | None:
    """:func:`fits` on the analysis rows of ``closed`` matching ``select``; None without it."""
    if closed is None:
        return None
    return fits(closed.rows(select), by, confidence, alpha, n_resamples, seed, think_time_ms)


def threats(exp: Experiment, closed: Experiment | None, slo_table: SloTable | None = None,
            models: ScalingTable | None = None) -> list[str]:
    """The threats to validity of the experiments on this page, naming the analyses run on
    each (the SLO bracket on ``exp``, the scalability fit on ``closed``)."""
    from perfkit.report.sections.common import threats as _threats

    analyses = {exp.name: [slo_table] if slo_table is not None else []}
    if closed is not None:
        analyses[closed.name] = [models] if models is not None else []
    return _threats([e for e in (exp, closed) if e is not None], analyses)


def model_frames(table: ScalingTable, points: int = 200
                 ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """For :func:`perfkit.plots.model_curves`: the runs (``config, n, x``), the fitted curves
    (``config, n, fit``) and the claimed peaks (``config, n_star, n_star_low, n_star_high``)."""
    runs, curves, peaks = [], [], []
    for r in table.results:
        f = r.rows.frame
        runs.append(pd.DataFrame({"config": r.label, "n": f[r.n_column].astype(float),
                                  "x": f[r.metric.name].astype(float)}))
        if r.fit is None:
            continue
        curve = scaling_curve(r, points)
        curve.insert(0, "config", r.label)
        curves.append(curve)
        if r.fit.n_star is not None:
            lo, hi = r.fit.n_star_ci or (math.nan, math.nan)
            peaks.append({"config": r.label, "n_star": r.fit.n_star, "n_star_low": lo,
                          "n_star_high": hi})
    return (pd.concat(runs, ignore_index=True) if runs else
            pd.DataFrame(columns=["config", "n", "x"]),
            pd.concat(curves, ignore_index=True) if curves else
            pd.DataFrame(columns=["config", "n", "fit"]),
            pd.DataFrame(peaks, columns=["config", "n_star", "n_star_low", "n_star_high"]))


def scaling_curve(result: ScalingResult, points: int = 200) -> pd.DataFrame:
    """The fitted curve over the observed concurrency range (``n, fit``)."""
    n_max = float(result.rows.frame[result.n_column].max())
    if result.fit is not None and result.fit.n_star:
        n_max = max(n_max, 1.2 * result.fit.n_star)
    n = np.geomspace(1.0, max(n_max, 1.0), points)
    fit = result.fit.predict(n) if result.fit is not None else np.full(points, np.nan)
    return pd.DataFrame({"n": n, "fit": fit})


def models_caption(table: ScalingTable | None) -> str:
    """One sentence per configuration: the model fitted and whether a peak is claimed."""
    parts = []
    for r in table.results if table is not None else ():
        model = MODEL_NAMES.get(r.model, "no model") if r.fit else "no model"
        peak = "" if r.fit is None or r.fit.n_star is None else f", N* = {r.fit.n_star:.0f}"
        parts.append(f"{r.label}: {model}{peak}.")
    return " ".join(parts)


def littles_points(table: ScalingTable) -> pd.DataFrame:
    """Per run: configured vs implied concurrency (``config, concurrency,
    implied_concurrency``), for the Little's-law plot: the analysis result's per-run check
    (:meth:`ScalingTable.littles_runs_frame`, with the think time it was given)."""
    parts = []
    for r in table.results:
        if len(r.littles_runs):
            parts.append(r.littles_runs.assign(config=r.label))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


# -- answers ---------------------------------------------------------------------------------
def answers(slo_table: SloTable | None, table: ScalingTable | None,
            exp: Experiment | None = None, closed: Experiment | None = None) -> list[Answer]:
    """The SLO bracket of every configuration and the claimed peaks, each with the warnings
    its result attached (:attr:`SloBracket.warnings`, the fit's) and the threats of its
    experiment that bear on its metric (a drift, blocks that differ:
    :func:`perfkit.analysis.validity.threats_for`)."""
    from perfkit.analysis.validity import threats_for

    out = []
    if slo_table is not None:
        q = f"p{slo_table.percentile:g}"
        around = threats_for(exp, percentile_col(slo_table.percentile), [slo_table]) \
            if exp is not None else ()
        for b in slo_table.brackets:
            out.append(Answer(f"Largest offered rate with {q} < {slo_table.slo_ms:g} ms, "
                              f"{config_text(b.by, b.key)}",
                              bracket_text(b.bracket.last_pass_rps, b.bracket.first_fail_rps),
                              b.verdict, f"{b.n_runs} runs", (*b.warnings, *around)))
    around = threats_for(closed, table.metric.name, [table]) \
        if closed is not None and table is not None else ()
    for r in table.results if table is not None else ():
        model = MODEL_NAMES.get(r.model, "no model")
        if r.fit is not None and r.fit.n_star is not None:
            lo, hi = r.fit.n_star_ci or (math.nan, math.nan)
            text = f"{fmt_ci(r.fit.n_star, lo, hi, r.n_column)} ({model})"
        else:
            text = f"none claimed ({model})"
        out.append(Answer(f"Peak concurrency N*, {config_text(r.by, r.key)}", text, r.verdict,
                          f"{len(r.rows)} runs", tuple(dict.fromkeys((r.reason, *r.warnings,
                                                                      *around)))))
    return out


# -- figures (a notebook cell is a call and a display) ------------------------------------------
def heatmap_figure(grids: Mapping[str, pd.DataFrame], percentile: float):
    """One heat map panel (connections x offered rate) per level of the split column, on one
    shared log colour scale, each cell's value printed."""
    from perfkit import plots

    fig, axes = plots.figure(nrows=len(grids), height_in=1.2 + 1.5 * len(grids))
    plots.heatmaps(grids, axes, plots.label("offered rate", "req/s"),
                   plots.label("connections", "count"), plots.label(f"p{percentile:g}", "ms"))
    return fig


def models_figure(table: ScalingTable | None, by: Sequence[str], palette=None):
    """Every run's throughput against its concurrency, with each configuration's fitted model
    and its claimed peak (None without a table)."""
    from perfkit import plots

    if table is None:
        return None
    points, curves, peaks = model_frames(table)
    fig, ax = plots.figure(height_in=2.9)
    plots.model_curves(points, curves, ax, "n", "x", plots.label(table.n_column, "count"),
                       plots.label("throughput", "req/s"), peaks=peaks,
                       legend_title=", ".join(by) or None,
                       palette=palette(points["config"]) if palette else None)
    return fig


def littles_figure(table: ScalingTable | None, palette=None):
    """Little's law: the concurrency X x (R + Z) implied by each run against the configured
    one (None without a table)."""
    from perfkit import plots

    if table is None:
        return None
    points = littles_points(table)
    fig, ax = plots.figure()
    plots.load_curve(points, ax, "concurrency", "implied_concurrency",
                     plots.label("concurrency N", "count"),
                     plots.label("X x (R + Z)", "requests"), by="config", identity=True,
                     identity_label="X x (R + Z) = N",
                     palette=palette(points["config"]) if palette else None)
    return fig


def throughput_figure(frame: pd.DataFrame, by: Sequence[str], palette=None):
    from perfkit import plots

    fig, ax = plots.figure()
    plots.load_curve(frame, ax, "target_rate_rps", "throughput_rps",
                     plots.label("offered rate", "req/s"),
                     plots.label("achieved throughput", "req/s"), by="config", identity=True,
                     legend_title=", ".join(by),
                     palette=palette(frame["config"]) if palette else None)
    return fig


def verdict_points(slo_table: SloTable, frame: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """The SLO verdicts' estimates and intervals per configuration and rate, labelled as the
    runs frame's ``config`` (what the latency figure draws over the runs)."""
    verdicts = slo_table.verdicts_frame()
    if not len(verdicts):
        return verdicts
    verdicts = verdicts.rename(columns={"rate_rps": "target_rate_rps"})
    verdicts.insert(0, "config", config_labels(verdicts, list(by)).to_numpy())
    return verdicts


def latency_figure(frame: pd.DataFrame, by: Sequence[str], percentile: float, slo_ms: float,
                   slo_table: SloTable | None = None, palette=None):
    """Every run's percentile against the offered rate, with the SLO line and, when given, the
    SLO verdicts' across-run estimates and intervals (the numbers the bracket rests on)."""
    from perfkit import plots

    summary = verdict_points(slo_table, frame, by) if slo_table is not None else None
    fig, ax = plots.figure()
    plots.load_curve(frame, ax, "target_rate_rps", percentile_col(percentile),
                     plots.label("offered rate", "req/s"),
                     plots.label(f"p{percentile:g} latency", "ms"), by="config", slo=slo_ms,
                     slo_label=f"SLO {slo_ms:g} ms", legend_title=", ".join(by),
                     palette=palette(frame["config"]) if palette else None, summary=summary,
                     estimate="estimate_ms" if summary is not None else None,
                     low="ci_low_ms" if summary is not None else None,
                     high="ci_high_ms" if summary is not None else None)
    return fig


def present_slo(table: SloTable):
    from perfkit import present

    return present.slo(table)


def present_models(table: ScalingTable | None):
    """The models' parameters as paper tables (Little's law has its own section and table)."""
    from perfkit import present

    return present.scaling(table, littles=False) if table is not None else None


def models_table(table: ScalingTable | None) -> pd.DataFrame | None:
    """The models' parameters (:meth:`ScalingTable.to_frame`); None without a table."""
    return table.to_frame() if table is not None else None


def littles_table(table: ScalingTable | None) -> pd.DataFrame | None:
    """Little's law per configuration and level (:meth:`ScalingTable.littles_frame`)."""
    return table.littles_frame() if table is not None else None


def models_missing(table: ScalingTable | None) -> str | None:
    """The note shown instead of the models when there is no closed-loop experiment."""
    return "No closed-loop experiment given (closed_experiment)." if table is None else None


def methods(exp, slo_table: SloTable | None, closed, models: ScalingTable | None) -> dict:
    """The Methods records of the experiments on this page, with their analyses' methods."""
    from perfkit.report.sections.common import methods as records

    out = records([exp], [slo_table.describe()] if slo_table is not None else [])
    if closed is not None and models is not None:
        out.update(records([closed], [models.describe()]))
    return out
