"""Overview plots: Locust time series, drift against run order, per-run quality bars."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from perfkit.plots.style import GREY, THRESHOLD, series_style


def timeseries(frame: pd.DataFrame, ax: Axes, x: str, y: str, xlabel: str, ylabel: str,
               by: str | None = None, step: bool = False, legend: str | None = "axes",
               legend_title: str | None = None) -> Axes:
    """A time series per ``by`` group (e.g. throughput per second of each Locust run).

    ``legend``: ``"axes"`` (inside), ``"figure"`` (above all panels), or None.
    """
    groups = [(None, frame)] if by is None else list(frame.groupby(by, sort=False))
    for i, (key, group) in enumerate(groups):
        st = series_style(i)
        group = group.sort_values(x)
        draw = ax.step if step else ax.plot
        kwargs = {"where": "post"} if step else {}
        draw(group[x], group[y], color=st["color"], linestyle=st["linestyle"],
             label=None if key is None else str(key), **kwargs)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if legend == "axes" and by is not None and len(groups) > 1:
        ax.legend(loc="best", title=legend_title)
    elif legend == "figure" and by is not None:
        ax.figure.legend(loc="outside upper center", ncols=min(3, len(groups)),
                         title=legend_title)
    return ax


def drift(frame: pd.DataFrame, ax: Axes, x: str = "order", y: str = "residual",
          by: str | None = None, xlabel: str = "run order (index)",
          ylabel: str = "residual (log ratio)", window: int = 5) -> Axes:
    """Residuals (run minus its cell's mean) against run order, with a running median.

    A trend or a step says the system drifted during the experiment (warm-up, thermal, noisy
    neighbours); randomized run order keeps such drift from biasing the effects, but it still
    widens their CIs.
    """
    data = frame.dropna(subset=[x, y]).sort_values(x)
    groups = [(None, data)] if by is None else list(data.groupby(by, sort=False))
    for i, (key, group) in enumerate(groups):
        st = series_style(i)
        ax.plot(group[x], group[y], linestyle="none", marker=st["marker"], color=st["color"],
                alpha=0.7, markeredgewidth=0, label=None if key is None else str(key))
    if len(data) >= window:
        med = data[y].rolling(window, center=True, min_periods=max(2, window // 2)).median()
        ax.plot(data[x], med, color="black", linewidth=1.0,
                label=f"running median ({window} runs)")
    ax.axhline(0.0, color=GREY, linewidth=0.8, linestyle="--")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(loc="best", title=by)
    return ax


def bars(frame: pd.DataFrame, ax: Axes, label: str, value: str, xlabel: str,
         threshold: float | None = None, threshold_label: str = "") -> Axes:
    """Horizontal bars, one per row (e.g. error ratio or generator CPU per run)."""
    rows = frame.reset_index(drop=True)
    y = np.arange(len(rows))[::-1]
    ax.barh(y, rows[value].astype(float), color=series_style(0)["color"], height=0.7)
    ax.set_yticks(y, [str(v) for v in rows[label]])
    ax.grid(False, axis="y")
    if threshold is not None:
        ax.axvline(threshold, color=series_style(1)["color"], linestyle="--", linewidth=0.9,
                   label=threshold_label or None)
        if threshold_label:
            ax.legend(loc="best")
    ax.set_xlabel(xlabel)
    return ax


def points(frame: pd.DataFrame, ax: Axes, x: str, y: str, xlabel: str, ylabel: str,
           by: str | None = None, threshold: float | None = None,
           threshold_label: str = "") -> Axes:
    """A scatter of ``y`` against ``x`` per ``by`` group, with an optional threshold line."""
    data = frame.dropna(subset=[x, y])
    groups = [(None, data)] if by is None else list(data.groupby(by, sort=False))
    for i, (key, group) in enumerate(groups):
        st = series_style(i)
        ax.plot(group[x], group[y], linestyle="none", marker=st["marker"], color=st["color"],
                alpha=0.75, markeredgewidth=0, label=None if key is None else str(key))
    if threshold is not None:
        ax.axhline(threshold, color=THRESHOLD, linestyle=(0, (4, 2)), linewidth=0.9,
                   label=threshold_label or None)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if (by is not None and len(groups) > 1) or threshold_label:
        ax.legend(loc="best", title=None)
    return ax
