"""Latency plots on the tail axis: the percentile spectrum as HdrHistogram's plotter draws it.

The x axis is 1/(1 - p) on a log scale, so each "nine" gets the same width and the tail is not
squeezed against 100 %: 50 % sits at 2, 90 % at 10, 99 % at 100, 99.9 % at 1000 (Gil Tene's
HdrHistogram plotter, http://hdrhistogram.github.io/HdrHistogram/plotFiles.html).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.legend_handler import HandlerTuple
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

from perfkit.plots.alt import note
from perfkit.plots.style import (
    GREY,
    Neutral,
    Palette,
    label,
    plain_log,
    resolve_log,
    series_style,
    styles_for,
)

if TYPE_CHECKING:
    from matplotlib.typing import LegendLocType

TAIL_TICKS = (50.0, 90.0, 99.0, 99.9, 99.99, 99.999, 99.9999)


def tail_x(percentile) -> np.ndarray:
    """Position on the tail axis of percentile ``p`` in [0, 100): 1 / (1 - p/100)."""
    p = np.asarray(percentile, dtype=float)
    with np.errstate(divide="ignore"):
        return 1.0 / (1.0 - p / 100.0)


def _percent_text(x: float, _pos=None) -> str:
    q = 100.0 * (1.0 - 1.0 / x) if x > 0 else 0.0
    return f"{q:.6f}".rstrip("0").rstrip(".") + "%"


def percentile_axis(ax: Axes, max_percentile: float = 99.99) -> Axes:
    """Make the x axis of ``ax`` a tail axis up to ``max_percentile``, ticks 50 %, 90 %, 99 %..."""
    ax.set_xscale("log")
    top = float(tail_x(max_percentile))
    ticks = [float(tail_x(q)) for q in TAIL_TICKS if q <= max_percentile + 1e-9]
    ax.set_xlim(1.0, top * 1.05)
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(FuncFormatter(_percent_text))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xlabel(label("percentile", "%"))
    return ax


def _top_percentile(percentiles: pd.Series) -> float:
    finite = percentiles[percentiles < 100]
    top = float(finite.max()) if len(finite) else 99.0
    nines = [q for q in TAIL_TICKS if q >= top - 1e-9]
    return nines[0] if nines else top


def spectrum(frame: pd.DataFrame, ax: Axes, by: str = "config", y: str = "latency_ms",
             low: str | None = "ci_low_ms", high: str | None = "ci_high_ms",
             logy: bool = True, quantity: str = "latency",
             legend_title: str | None = None, *, palette: Palette | Neutral | None = None,
             runs: pd.DataFrame | None = None, run: str = "run_id",
             legend_loc: LegendLocType = "upper left", series: str = "configurations") -> Axes:
    """Percentile spectra, one line per ``by`` group, with a CI band where ``low``/``high`` exist.

    ``frame`` is long form: ``by, percentile`` (0-100), ``y`` (ms) and optionally the band
    columns. The 100th percentile (the maximum) has no place on a tail axis and is left out.

    Parameters
    ----------
    palette
        Colour and line style of each ``by`` label (one look per configuration).
    runs
        Each run's own spectrum, long form ``by, run, percentile, y``: drawn as thin lines of
        its configuration's colour behind the summary, so the spread the band summarises shows.
    run
        The column of ``runs`` naming the run.
    legend_loc
        Where the legend sits inside the axes.
    series
        What the lines are, for the alt text (``"configurations"``; two measurements of one
        run are not configurations).
    """
    data = frame[frame["percentile"] < 100]
    keys = list(dict.fromkeys(data[by]))
    styles = dict(zip(keys, styles_for(keys, palette), strict=True))
    if runs is not None and len(runs):
        per_run = runs[runs["percentile"] < 100]
        for (key, _), group in per_run.groupby([by, run], sort=False):
            st = styles.get(key) or (palette.style(key) if palette else series_style(0))
            group = group.sort_values("percentile")
            ax.plot(tail_x(group["percentile"]), group[y], color=st["color"], linewidth=0.5,
                    alpha=0.45, zorder=1.5)
    for key, group in data.groupby(by, sort=False):
        group = group.sort_values("percentile")
        st = styles[key]
        x = tail_x(group["percentile"])
        ax.plot(x, group[y], color=st["color"], linestyle=st["linestyle"], label=str(key),
                zorder=3)
        if low and high and low in group and high in group and group[low].notna().any():
            ax.fill_between(x, group[low], group[high], color=st["color"], alpha=0.2,
                            linewidth=0)
    percentile_axis(ax, _top_percentile(data["percentile"]))
    if logy:
        ax.set_yscale("log")
        plain_log(ax.yaxis)
    ax.set_ylabel(label(quantity, "ms"))
    if data[by].nunique() > 1:
        ax.legend(title=legend_title, loc=legend_loc)
    n_runs = 0 if runs is None or not len(runs) else runs.groupby([by, run]).ngroups
    note(ax, f"percentile spectra of {len(keys)} {series} on the 1/(1-p) tail axis"
             + (", with CI bands" if low and high and low in data else "")
             + (f", behind them {n_runs} runs' own spectra" if n_runs else ""))
    return ax


def percentile_points(frame: pd.DataFrame, ax: Axes, by: str = "config",
                      y: str = "latency_ms", logy: bool = True, *,
                      palette: Palette | None = None) -> Axes:
    """Printed percentiles of each run (wrk's 50/75/90/99 %) as markers on the tail axis.

    Runs of one group share a colour and marker; nothing is interpolated between the printed
    points, since a closed-loop tool's four percentiles are not a spectrum. ``palette`` gives
    each ``by`` label its colour and marker (one look per configuration).
    """
    data = frame[frame["percentile"] < 100]
    groups = list(data.groupby(by, sort=False))
    styles = styles_for([k for k, _ in groups], palette)
    for i, ((key, group), st) in enumerate(zip(groups, styles, strict=True)):
        # spread the groups slightly along x so their markers do not hide each other
        shift = 1.0 + 0.06 * (i - (len(groups) - 1) / 2)
        ax.plot(tail_x(group["percentile"]) * shift, group[y], linestyle="none",
                marker=st["marker"], color=st["color"], alpha=0.8, label=str(key))
    percentile_axis(ax, _top_percentile(data["percentile"]))
    if logy:
        ax.set_yscale("log")
        plain_log(ax.yaxis)
    ax.set_ylabel(label("latency", "ms"))
    if data[by].nunique() > 1:
        ax.legend(title=by, loc="upper left")
    note(ax, "printed percentiles of each run as points on the 1/(1-p) tail axis")
    return ax


#: a bar shorter than this share of the y axis is narrower than the marker: it is drawn at
#: its true size (hidden by the marker) and the legend and alt text say so
NARROW_SHARE = 0.04


def run_intervals(within: pd.DataFrame, across: pd.DataFrame, ax: Axes,
                  quantity: str = "p99 latency", logy: bool | None = None,
                  xlabel: str | None = None, *, palette: Palette | None = None,
                  confidence: float | None = None) -> Axes:
    """Each run's percentile with its within-run CI (bars), over its configuration's across-run
    CI (shaded band): runs that disagree beyond their own bars show run-to-run variation.

    ``within``: ``config, latency_ms, ci_low_ms, ci_high_ms`` per run, in the order drawn;
    ``across``: ``config, latency_ms, ci_low_ms, ci_high_ms`` per configuration.

    A run is an open marker crossed by its bar, every bar at its true size: one shorter than
    :data:`NARROW_SHARE` of the y axis (a within-run interval of 0.04% is far narrower than
    any marker) hides under its marker, and the legend and the alt text say so (a bar drawn
    larger than the interval would show a spread the data do not have).

    Parameters
    ----------
    logy
        Log y axis; ``None`` (the default) is automatic: log when the values drawn span more
        than a decade.
    xlabel
        Label of the configuration axis; ``None``: ``"configuration (level)"``.
    palette
        Colour and marker of each configuration label (one look per configuration).
    confidence
        Coverage of both intervals (e.g. 0.95), named in the legend when given.
    """
    x = 0
    ticks, names, placed = [], [], []
    groups = list(within.groupby("config", sort=True))
    styles = styles_for([c for c, _ in groups], palette)
    for (config, group), st in zip(groups, styles, strict=True):
        xs = np.arange(x, x + len(group))
        placed.append((xs, group, st))
        row = across[across["config"] == config]
        if len(row):
            r = row.iloc[0]
            ax.fill_between([xs[0] - 0.4, xs[-1] + 0.4], r["ci_low_ms"], r["ci_high_ms"],
                            color=st["color"], alpha=0.15, linewidth=0)
            ax.plot([xs[0] - 0.4, xs[-1] + 0.4], [r["latency_ms"]] * 2, color=st["color"],
                    linestyle=st["linestyle"], linewidth=0.9)
        ticks.append(float(xs.mean()))
        names.append(str(config))
        x += len(group) + 1
    ax.set_xticks(ticks, names)
    ax.set_xlim(-0.8, x - 0.2)
    ax.grid(False, axis="x")
    drawn = np.concatenate([within[c].to_numpy(dtype=float) for c in
                            ("latency_ms", "ci_low_ms", "ci_high_ms")]
                           + [across[c].to_numpy(dtype=float) for c in
                              ("latency_ms", "ci_low_ms", "ci_high_ms") if c in across])
    log = resolve_log(logy, drawn)
    if log:
        ax.set_yscale("log")
    ax.update_datalim(np.column_stack([np.zeros(drawn.size), drawn])[np.isfinite(drawn)
                                                                      & (drawn > 0)])
    ax.autoscale_view()
    n_narrow = sum(_run_bars(ax, xs, group, st, log, name)
                   for (name, _), (xs, group, st) in zip(groups, placed, strict=True))
    if log:
        plain_log(ax.yaxis)
    ax.set_ylabel(label(quantity, "ms"))
    ax.set_xlabel(xlabel if xlabel is not None else label("configuration", "level"))
    _intervals_legend(ax, confidence, n_narrow,
                      [(str(name), st) for (name, _), (_, _, st) in zip(groups, placed,
                                                                          strict=True)])
    widths = ((within["ci_high_ms"] - within["ci_low_ms"]) / within["latency_ms"]).to_numpy(
        dtype=float)
    widths = widths[np.isfinite(widths)]  # wrk's runs have no within-run interval at all
    width = float(np.median(widths)) if widths.size else math.nan
    narrow = (f"; {n_narrow} within-run intervals are narrower than their marker, drawn at "
              "their true size" if n_narrow else "")
    note(ax, f"{len(within)} runs of {len(groups)} configurations, each with its within-run "
             f"interval (median width {100 * width:.2g}% of the value) over the across-run "
             f"interval band{narrow}" if np.isfinite(width) else
             f"{len(within)} runs of {len(groups)} configurations over the across-run band")
    return ax


def _run_bars(ax: Axes, xs: np.ndarray, group: pd.DataFrame, st: dict, log: bool,
              name: object) -> int:
    """One configuration's runs, each bar at its true size. Returns how many bars are
    narrower than the marker (hidden by it)."""
    y = group["latency_ms"].to_numpy(dtype=float)
    low = group["ci_low_ms"].to_numpy(dtype=float)
    high = group["ci_high_ms"].to_numpy(dtype=float)
    bottom, top = ax.get_ylim()
    f = np.log if log else (lambda v: v)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = (f(np.clip(high, 1e-300, None)) - f(np.clip(low, 1e-300, None))) / (
            f(top) - f(bottom))
    narrow = np.isfinite(share) & (share < NARROW_SHARE)
    bars = np.isfinite(low)
    if bars.any():
        ax.errorbar(xs[bars], y[bars], yerr=[np.clip(y - low, 0, None)[bars],
                                             np.nan_to_num(np.clip(high - y, 0, None),
                                                           posinf=0)[bars]],
                    fmt="none", capsize=3.5, capthick=1.0, color=st["color"], linewidth=1.0,
                    zorder=2.5)
    ax.plot(xs, y, linestyle="none", marker=st["marker"], color=st["color"],
            markerfacecolor="white", markersize=3.5, zorder=3, label=str(name))
    return int(narrow.sum())


def _intervals_legend(ax: Axes, confidence: float | None, n_narrow: int,
                      looks: list[tuple[str, dict]]) -> None:
    """The legend above the figure, each glyph as the plot draws it: one entry per
    configuration (its open marker in its colour), then neutral entries for what every
    configuration shares: the within-run bar (said to hide under the marker when it does) and
    the across-run estimate over its band (a line over a shaded patch)."""
    level = f"{confidence:.0%} " if confidence is not None else ""
    handles: list = [Line2D([], [], linestyle="none", marker=st["marker"], color=st["color"],
                            markerfacecolor="white", markersize=3.5) for _, st in looks]
    labels = [name for name, _ in looks]
    beam = Line2D([], [], linestyle="none", marker="|", markersize=9, markeredgewidth=1.0,
                  color=GREY)
    band = (Patch(color=GREY, alpha=0.3, linewidth=0),
            Line2D([], [], color=GREY, linewidth=0.9))
    bar = "bar;\nat true size: narrower than the marker here" if n_narrow else "bar"
    handles += [beam, band]
    labels += [f"one run (marker), its within-run {level}CI ({bar})",
               f"across runs: estimate (line), {level}CI (band)"]
    ax.figure.legend(handles, labels, loc="outside upper center", ncols=1,
                     handler_map={tuple: HandlerTuple(ndivide=1)})
