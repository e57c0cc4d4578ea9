"""The scaling page's figures and the frames they draw: load curves with the run statuses,
the heat map over connections x offered rate, the scalability models and Little's law.

Everything here shapes the analysis results of :mod:`perfkit.analysis.scaling._scaling` for
:mod:`perfkit.plots` (:mod:`perfkit.report.sections.scaling` re-exports it for the notebook);
nothing here decides anything.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, cast

import numpy as np
import pandas as pd

from perfkit.analysis.scaling import ScalingResult, ScalingTable, SloTable
from perfkit.model import percentile_column
from perfkit.report.sections.common import config_labels
from perfkit.vocabulary import RunStatus


# -- heat map -----------------------------------------------------------------------------------
def heat_tables(slo_table: SloTable, rows: str = "connections", cols: str = "rate_rps"
                ) -> dict[str, pd.DataFrame]:
    """The SLO verdicts' estimates (``estimate_ms``: each rate's across-runs estimate under the
    run-status rule; :meth:`SloTable.value_text` says which) on a ``rows`` x ``cols`` grid, one
    grid per configuration of the SLO table's other columns (``"all runs"`` without any)."""
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


#: how bad each run status is for a heat-map cell: the worst of its runs is marked
STATUS_ORDER = (RunStatus.OK, RunStatus.SHORT, RunStatus.SATURATED, RunStatus.FAILED)


def heat_marks(slo_table: SloTable, rows: str = "connections", cols: str = "rate_rps"
               ) -> dict[str, pd.DataFrame]:
    """The worst run status of each cell of :func:`heat_tables`' grids (``ok``, ``short``,
    ``saturated``, ``failed``: the statuses the SLO verdicts judged the runs by), for hatching
    the cells that hold a saturated or short run."""
    runs = slo_table.run_status_frame()
    if not len(runs):
        return {}
    split = [c for c in (slo_table.brackets[0].by if slo_table.brackets else ()) if c != rows]
    labels = config_labels(runs, split) if split else pd.Series("all runs", index=runs.index)
    if rows not in runs:
        runs = runs.assign(**{rows: "all"})
    runs = runs.assign(rank=[STATUS_ORDER.index(s) if s in STATUS_ORDER else 0
                             for s in runs["status"]])
    out = {}
    for key in sorted(set(labels)):
        grid = runs[labels == key].pivot_table(index=rows, columns=cols, values="rank",
                                               aggfunc="max")
        grid = grid.map(lambda r: STATUS_ORDER[int(r)] if pd.notna(r) else "")
        grid.index = [_whole(v) for v in grid.index]
        grid.columns = [_whole(v) for v in grid.columns]
        out[key] = grid
    return out


def _whole(v: Any) -> Any:
    return int(v) if isinstance(v, float) and v.is_integer() else v


def heatmap_caption(slo_table: SloTable) -> str:
    """The heat map's caption: the percentile over connections x offered rate, what each cell's
    number is and what a hatched cell holds."""
    split = [c for c in (slo_table.brackets[0].by if slo_table.brackets else ())
             if c != "connections"]
    per = f", per {', '.join(split)}" if split else ""
    marks = {m for g in heat_marks(slo_table).values() for m in g.to_numpy().ravel()}
    hatched = [f"{STATUS_HATCH_WORDS[m]}: a {m} run" for m in STATUS_HATCH_WORDS if m in marks]
    return (f"p{slo_table.percentile:g} over connections x offered rate{per}: the SLO "
            f"verdicts' estimate in each cell ({slo_table.value_text()}), one log colour "
            "scale" + (f"; hatched cells hold a run that did not keep up ({'; '.join(hatched)})"
                       if hatched else ""))


def heatmap_text(slo_table: SloTable) -> str:
    """What a heat-map cell holds, from the SLO verdicts' own methods: the number the SLO
    verdict and the latency page give for the same cell."""
    return (f"Each cell holds the SLO table's estimate of p{slo_table.percentile:g} at that "
            f"load point: {slo_table.value_text()}, failed runs left out; the number the SLO "
            "verdict and the latency page give for the same cell.")


#: the hatch of each status in words (:data:`perfkit.plots.scaling.STATUS_HATCHES`)
STATUS_HATCH_WORDS = {RunStatus.FAILED: "crossed", RunStatus.SATURATED: "diagonal lines",
                      RunStatus.SHORT: "dots"}


# -- scalability models ----------------------------------------------------------------------
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


def littles_points(table: ScalingTable) -> pd.DataFrame:
    """Per run: configured vs implied concurrency (``config, concurrency,
    implied_concurrency``), for the Little's-law plot: the analysis result's per-run check
    (:meth:`ScalingTable.littles_runs_frame`, with the think time it was given)."""
    parts = []
    for r in table.results:
        if len(r.littles_runs):
            parts.append(r.littles_runs.assign(config=r.label))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


# -- figures (a notebook cell is a call and a display) ------------------------------------------
def heatmap_figure(grids: Mapping[str, pd.DataFrame], percentile: float,
                   marks: Mapping[str, pd.DataFrame] | None = None):
    """One heat map panel (connections x offered rate) per level of the split column, on one
    shared log colour scale, each cell's value printed; cells holding a saturated or short
    run (``marks``: :func:`heat_marks`) hatched, with a legend."""
    from perfkit import plots

    legend = 0.3 if marks and any(m in STATUS_ORDER[1:]
                                  for g in marks.values() for m in g.to_numpy().ravel()) else 0
    fig, axes = plots.figure(nrows=len(grids), height_in=1.2 + legend + 1.5 * len(grids))
    plots.heatmaps(grids, axes, plots.label("offered rate", "req/s"),
                   plots.label("connections", "count"), plots.label(f"p{percentile:g}", "ms"),
                   marks=marks)
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
                       palette=palette(points["config"], by) if palette else None,
                       confidence=table.confidence)
    return fig


def _by(table: ScalingTable) -> tuple[str, ...]:
    return table.results[0].by if table.results else ()


def littles_figure(table: ScalingTable | None, palette=None):
    """Little's law: the concurrency X x R (X x (R + Z) with Locust's think time) implied by
    each run against the configured one (None without a table), on log axes: the levels
    double (2 to 256 connections), and a linear axis crowded 2-32 into its first tenth."""
    from perfkit import plots

    if table is None:
        return None
    points = littles_points(table)
    implied = "X x (R + Z)" if (points["tool"] == "locust").any() else "X x R"  # Z: Locust
    fig, ax = plots.figure()
    plots.load_curve(points, ax, "concurrency", "implied_concurrency",
                     plots.label(f"{table.n_column} N", "count"),
                     plots.label(implied, "requests"), by="config", identity=True,
                     identity_label=f"{implied} = N", logy=True, logx=True,
                     palette=palette(points["config"], _by(table)) if palette else None)
    return fig


def with_status(frame: pd.DataFrame, slo_table: SloTable | None) -> pd.DataFrame:
    """``frame`` with each run's ``status`` as the SLO verdicts judged it
    (:meth:`SloTable.run_status_frame`; ``ok`` for a run they did not judge) and its
    ``achieved_ratio`` (achieved / offered rate)."""
    status = pd.Series("ok", index=frame.index)
    if slo_table is not None:
        judged = slo_table.run_status_frame().drop_duplicates("run_id").set_index("run_id")
        status = frame["run_id"].map(judged["status"]).fillna("ok")
    return frame.assign(status=status.to_numpy(),
                        achieved_ratio=frame["throughput_rps"] / frame["target_rate_rps"])


def throughput_figure(frame: pd.DataFrame, by: Sequence[str], slo_table: SloTable | None = None,
                      palette=None):
    """Every run's achieved / offered rate against the offered rate (a shortfall of a few
    percent shows, unlike on an achieved-vs-offered axis), the median per rate as a line, the
    line at 1 and the :data:`perfkit.model.SATURATION_RATIO` below which a run did not keep
    up; saturated and short runs (the SLO verdicts' run statuses) marked."""
    from perfkit import plots
    from perfkit.model import SATURATION_RATIO

    data = with_status(frame, slo_table)
    fig, ax = plots.figure(height_in=2.9)
    plots.load_curve(data, ax, "target_rate_rps", "achieved_ratio",
                     plots.label("offered rate", "req/s"),
                     plots.label("achieved / offered", "ratio"), by="config",
                     slo=SATURATION_RATIO, slo_label=f"kept up above {SATURATION_RATIO:g}",
                     reference=1.0, reference_label="achieved = offered",
                     legend_title=", ".join(by), status="status",
                     palette=palette(data["config"], by) if palette else None)
    return fig


def throughput_caption(frame: pd.DataFrame, slo_table: SloTable | None = None) -> str:
    """What the throughput figure shows, with the lowest achieved / offered ratio."""
    from perfkit.model import SATURATION_RATIO

    data = with_status(frame, slo_table)
    low = data.loc[cast(Any, data["achieved_ratio"].idxmin())] if len(data) else None
    lowest = (f"; the lowest, {low['achieved_ratio']:.3f}, is {low['config']} at "
              f"{low['target_rate_rps']:g} req/s" if low is not None else "")
    counts = data["status"].value_counts()
    marked = [f"{counts[s]} {s} ({w})" for s, w in ((RunStatus.SATURATED, "ringed"),
                                                   (RunStatus.SHORT, "diamond"),
                                                   (RunStatus.FAILED, "crossed"))
              if s in counts]
    return (f"Achieved / offered rate of every run ({len(data)} runs, points) and the median "
            f"per rate (lines), per configuration; dotted: achieved = offered, dashed: "
            f"{SATURATION_RATIO:g}, below which a run did not keep up{lowest}"
            + (f"; runs marked by their status: {', '.join(marked)}" if marked else ""))


def verdict_points(slo_table: SloTable, frame: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """The SLO verdicts' estimates and intervals per configuration and rate, labelled as the
    runs frame's ``config`` (what the latency figure draws over the runs)."""
    verdicts = slo_table.verdicts_frame()
    if not len(verdicts):
        return verdicts
    verdicts = verdicts.rename(columns={"rate_rps": "target_rate_rps"})
    verdicts.insert(0, "config", config_labels(verdicts, list(by)).to_numpy())
    return verdicts


def latency_caption(slo_table: SloTable | None, percentile: float, slo_ms: float,
                    confidence: float = 0.95) -> str:
    """What the latency figure shows: the runs, and the line and band of the SLO verdicts'
    estimates, named from their own methods (:meth:`SloTable.value_text`)."""
    line = (f", with the SLO verdicts' across-run estimate at each rate as a line "
            f"({slo_table.value_text()}) and its {confidence:.0%} interval (band)"
            if slo_table is not None else "")
    return (f"p{percentile:g} latency of every run (points) against the offered rate{line}, "
            f"and the SLO {slo_ms:g} ms; saturated runs ringed, short runs marked by a diamond")


def latency_figure(frame: pd.DataFrame, by: Sequence[str], percentile: float, slo_ms: float,
                   slo_table: SloTable | None = None, palette=None):
    """Every run's percentile against the offered rate, with the SLO line and, when given, the
    SLO verdicts' across-run estimates and intervals (the numbers the bracket rests on) and
    their run statuses (saturated and short runs marked)."""
    from perfkit import plots

    summary = verdict_points(slo_table, frame, by) if slo_table is not None else None
    frame = with_status(frame, slo_table)
    fig, ax = plots.figure(height_in=2.9)
    plots.load_curve(frame, ax, "target_rate_rps", percentile_column(percentile),
                     plots.label("offered rate", "req/s"),
                     plots.label(f"p{percentile:g} latency", "ms"), by="config", slo=slo_ms,
                     slo_label=f"SLO {slo_ms:g} ms", legend_title=", ".join(by),
                     palette=palette(frame["config"], by) if palette else None,
                     summary=summary, status="status",
                     estimate="estimate_ms" if summary is not None else None,
                     low="ci_low_ms" if summary is not None else None,
                     high="ci_high_ms" if summary is not None else None)
    return fig
