"""Latency plots on the tail axis: the percentile spectrum as HdrHistogram's plotter draws it.

The x axis is 1/(1 - p) on a log scale, so each "nine" gets the same width and the tail is not
squeezed against 100 %: 50 % sits at 2, 90 % at 10, 99 % at 100, 99.9 % at 1000 (Gil Tene's
HdrHistogram plotter, http://hdrhistogram.github.io/HdrHistogram/plotFiles.html).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

from perfkit.plots.style import label, plain_log, series_style

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
             legend_title: str | None = None) -> Axes:
    """Percentile spectra, one line per ``by`` group, with a CI band where ``low``/``high`` exist.

    ``frame`` is long form: ``by, percentile`` (0-100), ``y`` (ms) and optionally the band
    columns. The 100th percentile (the maximum) has no place on a tail axis and is left out.
    """
    data = frame[frame["percentile"] < 100]
    for i, (key, group) in enumerate(data.groupby(by, sort=False)):
        group = group.sort_values("percentile")
        st = series_style(i)
        x = tail_x(group["percentile"])
        ax.plot(x, group[y], color=st["color"], linestyle=st["linestyle"], label=str(key))
        if low and high and low in group and high in group and group[low].notna().any():
            ax.fill_between(x, group[low], group[high], color=st["color"], alpha=0.2,
                            linewidth=0)
    percentile_axis(ax, _top_percentile(data["percentile"]))
    if logy:
        ax.set_yscale("log")
        plain_log(ax.yaxis)
    ax.set_ylabel(label(quantity, "ms"))
    if data[by].nunique() > 1:
        ax.legend(title=legend_title, loc="upper left")
    return ax


def percentile_points(frame: pd.DataFrame, ax: Axes, by: str = "config",
                      y: str = "latency_ms", logy: bool = True) -> Axes:
    """Printed percentiles of each run (wrk's 50/75/90/99 %) as markers on the tail axis.

    Runs of one group share a colour and marker; nothing is interpolated between the printed
    points, since a closed-loop tool's four percentiles are not a spectrum.
    """
    data = frame[frame["percentile"] < 100]
    for i, (key, group) in enumerate(data.groupby(by, sort=False)):
        st = series_style(i)
        # spread the groups slightly along x so their markers do not hide each other
        shift = 1.0 + 0.06 * (i - (data[by].nunique() - 1) / 2)
        ax.plot(tail_x(group["percentile"]) * shift, group[y], linestyle="none",
                marker=st["marker"], color=st["color"], alpha=0.8, label=str(key))
    percentile_axis(ax, _top_percentile(data["percentile"]))
    if logy:
        ax.set_yscale("log")
        plain_log(ax.yaxis)
    ax.set_ylabel(label("latency", "ms"))
    if data[by].nunique() > 1:
        ax.legend(title=by, loc="upper left")
    return ax


def run_intervals(within: pd.DataFrame, across: pd.DataFrame, ax: Axes,
                  quantity: str = "p99 latency", logy: bool = True,
                  xlabel: str | None = None) -> Axes:
    """Each run's percentile with its within-run CI (bars), over its configuration's across-run
    CI (shaded band): runs that disagree beyond their own bars show run-to-run variation.

    ``within``: ``config, latency_ms, ci_low_ms, ci_high_ms`` per run; ``across``: ``config,
    latency_ms, ci_low_ms, ci_high_ms`` per configuration.
    """
    x = 0
    ticks, names = [], []
    for i, (config, group) in enumerate(within.groupby("config", sort=True)):
        st = series_style(i)
        xs = np.arange(x, x + len(group))
        y = group["latency_ms"].to_numpy(dtype=float)
        lo = np.clip(y - group["ci_low_ms"].to_numpy(dtype=float), 0, None)
        hi = np.clip(group["ci_high_ms"].to_numpy(dtype=float) - y, 0, None)
        ax.errorbar(xs, y, yerr=[np.nan_to_num(lo), np.nan_to_num(hi, posinf=0)],
                    fmt=st["marker"], color=st["color"], capsize=2, markersize=3.5,
                    linewidth=0.9)
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
    ax.grid(False, axis="x")
    if logy:
        ax.set_yscale("log")
        plain_log(ax.yaxis)
    ax.set_ylabel(label(quantity, "ms"))
    if xlabel:
        ax.set_xlabel(xlabel)
    return ax
