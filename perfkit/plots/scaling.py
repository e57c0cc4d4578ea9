"""Throughput and latency against load, the USL curve, and heat maps over two load axes."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.colors import LogNorm

from perfkit.plots.style import (
    GREY,
    SEQUENTIAL_CMAP,
    THRESHOLD,
    _compact,
    compact_numbers,
    plain_log,
    series_style,
)


def load_curve(frame: pd.DataFrame, ax: Axes, x: str, y: str, xlabel: str, ylabel: str,
               by: str | None = None, slo: float | None = None, slo_label: str = "SLO",
               logy: bool = False, identity: bool = False,
               identity_label: str = "achieved = offered", legend_title: str | None = None
               ) -> Axes:
    """Every run as a point, and the median of the runs at each load level as a line.

    ``slo`` draws a horizontal threshold line; ``identity`` draws y = x (achieved = offered).
    """
    groups = [(None, frame)] if by is None else list(frame.groupby(by, sort=False))
    for i, (key, group) in enumerate(groups):
        st = series_style(i)
        ax.plot(group[x], group[y], linestyle="none", marker=st["marker"], color=st["color"],
                alpha=0.45, markeredgewidth=0)
        med = group.groupby(x, sort=True)[y].median()
        ax.plot(med.index, med.values, color=st["color"], linestyle=st["linestyle"],
                marker=st["marker"], label=None if key is None else str(key))
    if identity:
        lim = float(np.nanmax(frame[x]))
        ax.plot([0, lim], [0, lim], color=GREY, linestyle=":", linewidth=0.8,
                label=identity_label)
    if slo is not None:
        ax.axhline(slo, color=THRESHOLD, linestyle=(0, (4, 2)), linewidth=0.9, label=slo_label)
    _scale_axes(ax, logy)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if by is not None or slo is not None or identity:
        ax.legend(title=legend_title, loc="best")
    return ax


def usl_curve(frame: pd.DataFrame, ax: Axes, curve: pd.DataFrame, x: str, y: str,
              xlabel: str, ylabel: str, n_star: float | None = None,
              n_star_ci: tuple[float, float] | None = None,
              model_label: str = "USL fit", title: str | None = None) -> Axes:
    """Observed runs, the fitted curve (``curve``: ``n, fit``, optional band ``low, high``),
    and the peak N* with its interval when one is claimed."""
    st = series_style(0)
    ax.plot(frame[x], frame[y], linestyle="none", marker="o", color=st["color"], alpha=0.5,
            markeredgewidth=0, label="runs")
    fit = series_style(1)
    ax.plot(curve["n"], curve["fit"], color=fit["color"], label=model_label)
    if {"low", "high"} <= set(curve.columns) and curve["low"].notna().any():
        ax.fill_between(curve["n"], curve["low"], curve["high"], color=fit["color"], alpha=0.2,
                        linewidth=0, label="95% CI")
    if n_star is not None and np.isfinite(n_star):
        ax.axvline(n_star, color=GREY, linestyle=":", linewidth=0.9,
                   label=f"N* = {n_star:.0f}")
        if n_star_ci is not None and all(np.isfinite(n_star_ci)):
            ax.axvspan(n_star_ci[0], n_star_ci[1], color=GREY, alpha=0.12, linewidth=0)
    compact_numbers(ax.xaxis)
    compact_numbers(ax.yaxis)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_ylim(bottom=0)
    ax.legend(loc="lower right")
    if title:
        ax.set_title(title)
    return ax


def model_curves(points: pd.DataFrame, curves: pd.DataFrame, ax: Axes, x: str, y: str,
                 xlabel: str, ylabel: str, by: str = "config",
                 peaks: pd.DataFrame | None = None, logy: bool = True,
                 legend_title: str | None = None) -> Axes:
    """Scaling models of several configurations: runs as points, each fitted curve as a line
    (``curves``: ``by, n, fit``), and a claimed peak N* as a dotted line with its interval
    shaded (``peaks``: ``by, n_star, n_star_low, n_star_high``). The legend sits above."""
    keys = list(dict.fromkeys(curves[by])) if len(curves) else list(dict.fromkeys(points[by]))
    for i, key in enumerate(keys):
        st = series_style(i)
        pts = points[points[by] == key]
        ax.plot(pts[x], pts[y], linestyle="none", marker=st["marker"], color=st["color"],
                alpha=0.45, markeredgewidth=0)
        cur = curves[curves[by] == key]
        ax.plot(cur["n"], cur["fit"], color=st["color"], linestyle=st["linestyle"],
                label=str(key))
        peak = peaks[peaks[by] == key] if peaks is not None and len(peaks) else []
        for _, row in (peak.iterrows() if len(peak) else []):
            ax.axvline(row["n_star"], color=st["color"], linestyle=":", linewidth=0.9)
            if np.isfinite(row["n_star_low"]) and np.isfinite(row["n_star_high"]):
                ax.axvspan(row["n_star_low"], row["n_star_high"], color=st["color"],
                           alpha=0.1, linewidth=0)
    _scale_axes(ax, logy)
    if not logy:
        ax.set_ylim(bottom=0)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.figure.legend(title=legend_title, loc="outside upper center",
                     ncols=min(2, max(1, len(keys))))
    return ax


def heatmap(table: pd.DataFrame, ax: Axes, xlabel: str, ylabel: str, cbar_label: str,
            fmt: str = "{:.3g}", log: bool = True, title: str | None = None) -> Axes:
    """A grid of values (rows = ``table.index``, columns = ``table.columns``), each cell labelled.

    Missing cells stay blank. ``log`` uses a logarithmic colour scale (latencies span decades).
    """
    values = table.to_numpy(dtype=float)
    finite = values[np.isfinite(values)]
    norm = None
    if log and finite.size and finite.min() > 0:
        norm = LogNorm(vmin=finite.min(), vmax=max(finite.max(), finite.min() * 1.01))
    image = ax.imshow(np.ma.masked_invalid(values), cmap=SEQUENTIAL_CMAP, norm=norm,
                      aspect="auto", origin="lower")
    ax.set_xticks(range(len(table.columns)), [_tick(c) for c in table.columns])
    ax.set_yticks(range(len(table.index)), [_tick(r) for r in table.index])
    ax.grid(False)
    for spine in ax.spines.values():
        spine.set_visible(False)
    mid = np.sqrt(finite.min() * finite.max()) if norm is not None else (
        finite.mean() if finite.size else 0)
    for (r, c), v in np.ndenumerate(values):
        if np.isfinite(v):
            ax.text(c, r, fmt.format(v), ha="center", va="center", fontsize=6,
                    color="black" if v > mid else "white")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    cbar = ax.figure.colorbar(image, ax=ax, pad=0.02)
    cbar.set_label(cbar_label)
    if norm is not None:
        plain_log(cbar.ax.yaxis)
    if title:
        ax.set_title(title)
    return ax


def _tick(value) -> str:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return _compact(float(value))
    return str(value)


def _scale_axes(ax, logy: bool) -> None:
    """Compact tick labels on x; y logarithmic with plain labels, or compact."""
    compact_numbers(ax.xaxis)
    if logy:
        ax.set_yscale("log")
        plain_log(ax.yaxis)
    else:
        compact_numbers(ax.yaxis)
