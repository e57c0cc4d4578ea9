"""Overview plots: Locust time series, drift against run order, per-run quality bars."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.lines import Line2D

from perfkit.plots.alt import note
from perfkit.plots.style import (
    GREY,
    THRESHOLD,
    Neutral,
    Palette,
    is_latency_column,
    neutral_style,
    plain_log,
    resolve_log,
    styles_for,
)

#: about how many markers a time series carries (its marker tells a load level apart: the
#: palette gives a configuration its colour and line style, a load level its marker)
MARKS_PER_SERIES = 8
#: markers of values beyond the axis, drawn at its edge (arrows: no series uses them)
UP, DOWN = r"$\uparrow$", r"$\downarrow$"


def _groups(data: pd.DataFrame, by: str | None) -> list[tuple[object, pd.DataFrame]]:
    return [(None, data)] if by is None else list(data.groupby(by, sort=False))


def _log_y(ax: Axes, logy: bool | None, values, latency: bool) -> None:
    if resolve_log(logy, values, latency):
        ax.set_yscale("log")
        plain_log(ax.yaxis)


def timeseries(frame: pd.DataFrame, ax: Axes, x: str, y: str, xlabel: str, ylabel: str,
               by: str | None = None, step: bool = False, legend: str | None = "axes",
               legend_title: str | None = None, *, palette: Palette | None = None,
               logy: bool | None = None) -> Axes:
    """A time series per ``by`` group (e.g. throughput per second of each Locust run).

    ``legend``: ``"axes"`` (inside), ``"figure"`` (above all panels), or None.

    Parameters
    ----------
    palette
        Colour, line style and marker of each ``by`` label (one look per configuration; the
        marker, about :data:`MARKS_PER_SERIES` per line, tells its load level apart).
    logy
        Log y axis; ``None`` (the default) is automatic: log when ``y`` is a latency column
        (``_ms``) whose values span more than a decade.
    """
    groups = _groups(frame, by)
    for (key, group), st in zip(groups, styles_for([k for k, _ in groups], palette),
                                strict=True):
        group = group.sort_values(x)
        draw = ax.step if step else ax.plot
        kwargs: dict[str, Any] = {"where": "post"} if step else {}
        draw(group[x], group[y], color=st["color"], linestyle=st["linestyle"],
             marker=st["marker"], markevery=max(1, len(group) // MARKS_PER_SERIES),
             markersize=3, label=None if key is None else str(key), **kwargs)
    _log_y(ax, logy, frame[y].to_numpy(dtype=float), is_latency_column(y))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if legend == "axes" and by is not None and len(groups) > 1:
        ax.legend(loc="best", title=legend_title)
    elif legend == "figure" and by is not None:
        ax.figure.legend(loc="outside upper center", ncols=min(3, len(groups)),
                         title=legend_title)
    note(ax, f"{len(groups)} time series")
    return ax


def robust_limits(values, fence: float = 3.0, include: float | None = 0.0
                  ) -> tuple[float, float]:
    """Y limits that a few wild values cannot stretch: Tukey's outer fences (quartiles -/+
    ``fence`` x IQR; Tukey 1977, *Exploratory Data Analysis*), narrowed to the data's range and
    widened to hold ``include`` (the zero line), plus 8% padding."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if not v.size:
        return (-1.0, 1.0)
    q1, q3 = np.percentile(v, [25, 75])
    iqr = q3 - q1
    lo, hi = (max(v.min(), q1 - fence * iqr), min(v.max(), q3 + fence * iqr)) if iqr > 0 else (
        v.min(), v.max())
    if include is not None:
        lo, hi = min(lo, include), max(hi, include)
    pad = 0.08 * (hi - lo) if hi > lo else max(abs(hi), 1.0) * 0.1
    return float(lo - pad), float(hi + pad)


def drift(frame: pd.DataFrame, ax: Axes, x: str = "order", y: str = "residual",
          by: str | None = None, xlabel: str = "run order (index)",
          ylabel: str = "residual (log ratio)", window: int = 5, *,
          palette: Palette | Neutral | None = None, fence: float | None = 3.0,
          legend: str | None = "figure") -> Axes:
    """Residuals (run minus its cell's mean) against run order, with a running median of each
    ``by`` group (each experiment's own runs, in its run order). The legend has one entry per
    group, its marker and the line style of its running median (so greys that repeat are still
    told apart); its title says what points and lines are.

    A trend or a step says the system drifted during the experiment (warm-up, thermal, noisy
    neighbours); randomized run order keeps such drift from biasing the effects, but it still
    widens their CIs.

    Parameters
    ----------
    palette
        Colour and marker of each ``by`` label (one look per experiment or configuration).
    fence
        Robust y limits: Tukey's outer fences, quartiles -/+ ``fence`` x IQR
        (:func:`robust_limits`). Points beyond them are drawn at the edge as arrows
        pointing out, in their series' colour, and counted in the legend ("beyond the axis
        (11)"; per series in the alt text); the running medians use every point.
        ``None``: limits from all the data (no point drawn at the edge).
    legend
        ``"figure"`` (above the axes, out of the data: the default), ``"axes"`` (inside) or
        None (none: a panel of several, whose figure says what the marks are).
    """
    data = frame.dropna(subset=[x, y]).sort_values(x)
    groups = _groups(data, by)
    styles = styles_for([k for k, _ in groups], palette)
    limits = robust_limits(data[y], fence) if fence is not None and len(data) else None
    off_total, off_by = 0, []
    handles: list[Line2D] = []
    labels: list[str] = []
    for (key, group), st in zip(groups, styles, strict=True):
        yv = group[y].to_numpy(dtype=float)
        inside = np.ones(len(yv), bool) if limits is None else (
            (yv >= limits[0]) & (yv <= limits[1]))
        off = int((~inside).sum())
        off_total += off
        if off and key is not None:
            off_by.append(f"{key} {off}")
        ax.plot(group[x][inside], yv[inside], linestyle="none", marker=st["marker"],
                color=st["color"], alpha=0.7, markeredgewidth=0)
        if limits is not None and off:
            _edge_marks(ax, group[x].to_numpy(dtype=float), yv, limits, st["color"])
        median = key is not None and len(group) >= window
        if median:
            ax.plot(group[x], _running_median(group[y], window), color=st["color"],
                    linestyle=st["linestyle"], linewidth=1.1)
        if key is not None:  # one entry per series: its marker, and its line when drawn
            handles.append(Line2D([], [], color=st["color"], marker=st["marker"],
                                  linestyle=st["linestyle"] if median else "none",
                                  linewidth=1.1))
            labels.append(str(key))
    if by is None and len(data) >= window:
        ax.plot(data[x], _running_median(data[y], window), color="black", linewidth=1.0)
        handles.append(Line2D([], [], color="black", linewidth=1.0))
        labels.append(f"running median ({window} runs)")
    ax.axhline(0.0, color=GREY, linewidth=0.8, linestyle="--")
    if limits is not None:
        ax.set_ylim(*limits)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if off_total:
        handles.append(Line2D([], [], color=GREY, marker=UP, linestyle="none", markersize=7))
        labels.append(f"beyond the axis ({off_total})")
    title = (f"{by} (points: runs; line: running median of {window} runs)"
             if by is not None else None)
    if legend is None:
        pass
    elif legend == "axes":
        ax.legend(handles, labels, loc="best", title=title)
    else:
        wide = max(len(t) for t in labels) > 26 if labels else False
        ax.figure.legend(handles, labels, loc="outside upper center", title=title,
                         ncols=1 if wide or len(labels) <= 3 else 2)
    note(ax, f"drift: {len(data)} runs' residuals against run order with a running median"
             + (f" of each {by}" if by else "")
             + (f"; {off_total} beyond the axis, drawn as arrows at its edge"
                + (f" ({', '.join(off_by)})" if off_by else "") if off_total else ""))
    return ax


def drift_panels(frame: pd.DataFrame, titles: dict, palette: Palette | Neutral | None = None,
                 by: str = "experiment"):
    """Small multiples of :func:`drift`: one panel per ``by`` group named in ``titles`` (group
    -> its panel's title), two a row, each on its own robust residual axis with its running
    median, in its ``palette`` look (None: black). Five experiments in five similar greys
    over the same run orders cannot be told apart in one panel; side by side they can."""
    from perfkit.plots.style import WIDTH_IN, figure, label

    rows = (len(titles) + 1) // 2
    fig, axes = figure(nrows=rows, ncols=2, height_in=0.4 + 1.75 * rows, width_in=WIDTH_IN * 1.5)
    axes = np.atleast_1d(axes).ravel()
    for ax, (name, title) in zip(axes, titles.items(), strict=False):
        drift(frame[frame[by] == name], ax, by=by, legend=None,
              palette=palette or Neutral.for_labels([name]),  # alone in its panel: black
              xlabel=label("run order", "index"), ylabel=label("residual", "log ratio"))
        ax.set_title(title, loc="left", fontsize="small")
    for ax in axes[len(titles):]:
        fig.delaxes(ax)
    return fig


def _running_median(values: pd.Series, window: int) -> pd.Series:
    return values.rolling(window, center=True, min_periods=max(2, window // 2)).median()


def _edge_marks(ax: Axes, xv: np.ndarray, yv: np.ndarray, limits: tuple[float, float],
                color: str) -> None:
    lo, hi = limits
    edge = 0.03 * (hi - lo)
    for mask, where, marker in ((yv > hi, hi - edge, UP), (yv < lo, lo + edge, DOWN)):
        if mask.any():
            ax.plot(xv[mask], np.full(int(mask.sum()), where), linestyle="none", marker=marker,
                    color=color, markersize=7, clip_on=False)


def bars(frame: pd.DataFrame, ax: Axes, label: str, value: str, xlabel: str,
         threshold: float | None = None, threshold_label: str = "") -> Axes:
    """Horizontal bars, one per row (e.g. error ratio or generator CPU per run), in grey (a
    run is not a configuration), with a black dashed threshold."""
    rows = frame.reset_index(drop=True)
    y = np.arange(len(rows))[::-1]
    ax.barh(y, rows[value].astype(float), color=neutral_style(1)["color"], height=0.7)
    ax.set_yticks(y, [str(v) for v in rows[label]])
    ax.grid(False, axis="y")
    if threshold is not None:
        ax.axvline(threshold, color=THRESHOLD, linestyle=(0, (4, 2)), linewidth=0.9,
                   label=threshold_label or None)
        if threshold_label:
            ax.legend(loc="best")
    ax.set_xlabel(xlabel)
    note(ax, f"{len(rows)} bars")
    return ax


def points(frame: pd.DataFrame, ax: Axes, x: str, y: str, xlabel: str, ylabel: str,
           by: str | None = None, threshold: float | None = None,
           threshold_label: str = "", *, palette: Palette | None = None,
           logy: bool | None = False) -> Axes:
    """A scatter of ``y`` against ``x`` per ``by`` group, with an optional threshold line.

    Parameters
    ----------
    palette
        Colour and marker of each ``by`` label (one look per configuration or experiment).
    logy
        Log y axis: ``False`` (the default) linear, ``True`` log, ``None`` automatic (log
        when ``y`` is a latency column, ``_ms``, whose values span more than a decade).
    """
    data = frame.dropna(subset=[x, y])
    groups = _groups(data, by)
    for (key, group), st in zip(groups, styles_for([k for k, _ in groups], palette),
                                strict=True):
        ax.plot(group[x], group[y], linestyle="none", marker=st["marker"], color=st["color"],
                alpha=0.75, markeredgewidth=0, label=None if key is None else str(key))
    if threshold is not None:
        ax.axhline(threshold, color=THRESHOLD, linestyle=(0, (4, 2)), linewidth=0.9,
                   label=threshold_label or None)
    _log_y(ax, logy, data[y].to_numpy(dtype=float), is_latency_column(y))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if (by is not None and len(groups) > 1) or threshold_label:
        ax.legend(loc="best", title=None)
    note(ax, f"{len(data)} runs as points")
    return ax
