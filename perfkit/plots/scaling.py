"""Throughput and latency against load, the USL curve, and heat maps over two load axes."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.colors import LogNorm, Normalize

from perfkit.plots.alt import note
from perfkit.plots.style import (
    GREY,
    SEQUENTIAL_CMAP,
    THRESHOLD,
    Palette,
    _compact,
    as_list,
    compact_numbers,
    count_log,
    is_latency_column,
    plain_log,
    resolve_log,
    styles_for,
)

#: how far (a factor, on a log axis) an interval band may stretch the y axis of a load curve
#: beyond the runs and estimates before it is cut at the edge with an arrow
BAND_REACH = 3.0


def load_curve(frame: pd.DataFrame, ax: Axes, x: str, y: str, xlabel: str, ylabel: str,
               by: str | None = None, slo: float | None = None, slo_label: str = "SLO",
               logy: bool | None = None, identity: bool = False,
               identity_label: str = "achieved = offered", legend_title: str | None = None,
               *, palette: Palette | None = None, summary: pd.DataFrame | None = None,
               estimate: str | None = None, low: str | None = None, high: str | None = None
               ) -> Axes:
    """Every run as a point, and per load level a summary line: the median of the runs, or the
    analysis' estimate with its CI band when ``summary`` is given.

    ``slo`` draws a horizontal threshold line; ``identity`` draws y = x (achieved = offered).

    Parameters
    ----------
    logy
        Log y axis. ``None`` (the default) is automatic: log when ``y`` is a latency column
        (``_ms``) and the values drawn span more than a decade, else linear.
    palette
        Colour, marker and line style of each ``by`` label (one look per configuration
        across a report); without it series take the style order.
    summary
        One row per ``by`` group (column ``by``) and load level (column ``x``) holding the
        analysis' estimate (column ``estimate``, default ``y``) and, when ``low`` and ``high``
        name columns, its CI drawn as a band (e.g. the SLO verdicts' ``estimate_ms``,
        ``ci_low_ms``, ``ci_high_ms``). The line then joins the estimates instead of the
        medians of the runs; nothing is computed here.
    estimate, low, high
        Columns of ``summary``: the estimate and the interval's bounds. The y axis is fitted
        to the runs, the estimates and the SLO; a band may stretch it by up to a factor of
        :data:`BAND_REACH` (log axis) or one span (linear), and a bound beyond that is cut at
        the edge and marked there with an arrow (never clipped silently).
    """
    groups = [(None, frame)] if by is None else list(frame.groupby(by, sort=False))
    styles = styles_for([k for k, _ in groups], palette)
    est = estimate or y
    lines = []
    for (key, group), st in zip(groups, styles, strict=True):
        ax.plot(group[x], group[y], linestyle="none", marker=st["marker"], color=st["color"],
                alpha=0.45, markeredgewidth=0)
        line = _summary_of(summary, by, key, x, est, low, high)
        if line is None:
            med = group.groupby(x, sort=True)[y].median()
            line = pd.DataFrame({x: med.index, est: med.values})
        ax.plot(line[x], line[est], color=st["color"], linestyle=st["linestyle"],
                marker=st["marker"], label=None if key is None else str(key))
        if low and high and low in line and line[low].notna().any():
            ax.fill_between(line[x], line[low], line[high], color=st["color"], alpha=0.18,
                            linewidth=0)
            lines.append((line, st["color"]))
    if identity:
        lim = float(np.nanmax(frame[x]))
        ax.plot([0, lim], [0, lim], color=GREY, linestyle=":", linewidth=0.8,
                label=identity_label)
    if slo is not None:
        ax.axhline(slo, color=THRESHOLD, linestyle=(0, (4, 2)), linewidth=0.9, label=slo_label)
    core = [frame[y].to_numpy(dtype=float)]
    if summary is not None and est in summary:
        core.append(summary[est].to_numpy(dtype=float))
    if slo is not None:
        core.append(np.array([slo], dtype=float))
    bounds = [summary[c].to_numpy(dtype=float) for c in (low, high)
              if summary is not None and c and c in summary]
    log = resolve_log(logy, np.concatenate(core + bounds), is_latency_column(y))
    _scale_axes(ax, log)
    cut = _cut_bands(ax, lines, x, low, high, np.concatenate(core), log) if lines else 0
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if by is not None or slo is not None or identity:
        ax.legend(title=legend_title, loc="best")
    what = "the analysis' estimate" if summary is not None else "the median of the runs"
    band = " with its CI band" if summary is not None and low and high else ""
    more = f"; {cut} interval bounds beyond the axis, marked by arrows at its edge" if cut else ""
    note(ax, f"runs as points, {what} per load level as a line{band}{more}")
    return ax


def _cut_bands(ax: Axes, lines: list, x: str, low: str, high: str, core: np.ndarray,
               log: bool) -> int:
    """Y limits from the runs, estimates and threshold, which an interval band may stretch by
    up to a factor of :data:`BAND_REACH` (log) or one span (linear); a bound beyond is cut at
    the edge and marked with an arrow there. Returns the number of bounds cut."""
    core = core[np.isfinite(core) & ((core > 0) | (not log))]
    if not core.size:
        return 0
    lo, hi = float(core.min()), float(core.max())
    bounds = np.concatenate([ln[c].to_numpy(dtype=float) for ln, _ in lines for c in (low, high)])
    bounds = bounds[np.isfinite(bounds) & ((bounds > 0) | (not log))]
    if log:
        top, bottom = hi * BAND_REACH, lo / BAND_REACH
    else:
        top, bottom = hi + (hi - lo), lo - (hi - lo)
    ymax, ymin = min(max(hi, bounds.max(initial=hi)), top), max(min(lo, bounds.min(initial=lo)),
                                                                bottom)
    pad = (ymax / ymin) ** 0.04 if log else 0.04 * (ymax - ymin or 1.0)
    ymin, ymax = (ymin / pad, ymax * pad) if log else (ymin - pad, ymax + pad)
    ax.set_ylim(ymin, ymax)
    cut = 0
    for line, colour in lines:
        for column, edge, arrow in ((high, ymax, r"$\uparrow$"), (low, ymin, r"$\downarrow$")):
            beyond = (line[column] > edge) if column == high else (line[column] < edge)
            if beyond.any():
                cut += int(beyond.sum())
                ax.plot(line[x][beyond], np.full(int(beyond.sum()), edge), linestyle="none",
                        marker=arrow, color=colour, markersize=7, clip_on=False)
    return cut


def _summary_of(summary: pd.DataFrame | None, by: str | None, key, x: str, est: str,
                low: str | None, high: str | None) -> pd.DataFrame | None:
    if summary is None:
        return None
    part = summary if by is None or key is None else summary[summary[by] == key]
    cols = [c for c in (x, est, low, high) if c and c in part]
    return part[cols].sort_values(x)


def model_curves(points: pd.DataFrame, curves: pd.DataFrame, ax: Axes, x: str, y: str,
                 xlabel: str, ylabel: str, by: str = "config",
                 peaks: pd.DataFrame | None = None, logy: bool = True,
                 legend_title: str | None = None, *, logx: bool = True,
                 palette: Palette | None = None) -> Axes:
    """Scaling models of several configurations: runs as points, each fitted curve as a line
    (``curves``: ``by, n, fit``, and a CI band where ``low, high`` columns hold values), and a
    claimed peak N* as a dotted line with its interval shaded (``peaks``: ``by, n_star,
    n_star_low, n_star_high``). The legend sits above.

    Parameters
    ----------
    logx
        Concurrency on a base-2 log axis labelled 1, 2, 4, 8, ... as plain numbers.
    palette
        Colour, marker and line style of each ``by`` label (one look per configuration).
    """
    keys = list(dict.fromkeys(curves[by])) if len(curves) else list(dict.fromkeys(points[by]))
    for key in dict.fromkeys(points[by]) if len(points) else []:
        if key not in keys:
            keys.append(key)  # runs of a configuration without a fitted model still show
    for key, st in zip(keys, styles_for(keys, palette), strict=True):
        pts = points[points[by] == key]
        ax.plot(pts[x], pts[y], linestyle="none", marker=st["marker"], color=st["color"],
                alpha=0.45, markeredgewidth=0)
        cur = curves[curves[by] == key]
        ax.plot(cur["n"], cur["fit"], color=st["color"], linestyle=st["linestyle"],
                label=str(key))
        if {"low", "high"} <= set(cur.columns) and cur["low"].notna().any():
            ax.fill_between(cur["n"], cur["low"], cur["high"], color=st["color"], alpha=0.15,
                            linewidth=0)
        peak = peaks[peaks[by] == key] if peaks is not None and len(peaks) else []
        for _, row in (peak.iterrows() if len(peak) else []):
            ax.axvline(row["n_star"], color=st["color"], linestyle=":", linewidth=0.9)
            if np.isfinite(row["n_star_low"]) and np.isfinite(row["n_star_high"]):
                ax.axvspan(row["n_star_low"], row["n_star_high"], color=st["color"],
                           alpha=0.1, linewidth=0)
    _scale_axes(ax, logy)
    if logx:
        count_log(ax.xaxis)
    if not logy:
        ax.set_ylim(bottom=0)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.figure.legend(title=legend_title, loc="outside upper center",
                     ncols=min(2, max(1, len(keys))))
    n_peaks = 0 if peaks is None else len(peaks)
    n_curves = curves[by].nunique() if len(curves) else 0
    peaks_text = ("no claimed peak N*" if not n_peaks else "1 claimed peak N* with its interval"
                  if n_peaks == 1 else f"{n_peaks} claimed peaks N* with their intervals")
    note(ax, f"scalability models: {len(points)} runs as points, {n_curves} fitted "
             f"curve{'s' if n_curves != 1 else ''}, {peaks_text}")
    return ax


def heatmap(table: pd.DataFrame, ax: Axes, xlabel: str, ylabel: str, cbar_label: str,
            fmt: str = "{:.3g}", log: bool = True, title: str | None = None, *,
            norm: Normalize | None = None, colorbar: bool = True) -> Axes:
    """A grid of values (rows = ``table.index``, columns = ``table.columns``), each cell labelled.

    Missing cells stay blank. ``log`` uses a logarithmic colour scale (latencies span decades).

    Parameters
    ----------
    norm
        The colour scale to use (for panels that must share one: see :func:`heatmaps`);
        ``None`` makes one from this grid's values (log when ``log`` and all are positive).
    colorbar
        Draw this panel's colour bar (:func:`heatmaps` draws one for all its panels instead).
    """
    values = table.to_numpy(dtype=float)
    if norm is None:
        norm = shared_norm([table], log)
    image = ax.imshow(np.ma.masked_invalid(values), cmap=SEQUENTIAL_CMAP, norm=norm,
                      aspect="auto", origin="lower")
    ax.set_xticks(range(len(table.columns)), [_tick(c) for c in table.columns])
    ax.set_yticks(range(len(table.index)), [_tick(r) for r in table.index])
    ax.grid(False)
    for spine in ax.spines.values():
        spine.set_visible(False)
    cmap = image.get_cmap()
    for (r, c), v in np.ndenumerate(values):
        if np.isfinite(v):
            ax.text(c, r, fmt.format(v), ha="center", va="center", fontsize=6,
                    color=_ink(cmap(image.norm(v))))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if colorbar:
        cbar = ax.figure.colorbar(image, ax=ax, pad=0.02)
        cbar.set_label(cbar_label)
        if isinstance(image.norm, LogNorm):
            plain_log(cbar.ax.yaxis)
    if title:
        ax.set_title(title)
    n = int(np.isfinite(values).sum())
    note(ax, f"heat map of {cbar_label}, {n} cells with their values printed")
    return ax


def shared_norm(tables, log: bool = True) -> Normalize:
    """One colour scale over every value of ``tables``: logarithmic when ``log`` and every
    value is positive, else linear."""
    parts = [t.to_numpy(dtype=float).ravel() for t in tables]
    values = np.concatenate(parts) if parts else np.array([])
    finite = values[np.isfinite(values)]
    if not finite.size:
        return Normalize()
    lo, hi = float(finite.min()), float(finite.max())
    if log and lo > 0:
        return LogNorm(vmin=lo, vmax=max(hi, lo * 1.01))
    return Normalize(vmin=lo, vmax=hi if hi > lo else lo + 1)


def heatmaps(grids: Mapping[str, pd.DataFrame], axes, xlabel: str, ylabel: str,
             cbar_label: str, fmt: str = "{:.3g}", log: bool = True, titles: bool = True
             ) -> list[Axes]:
    """Several grids (one per panel, e.g. one per profile) on one shared colour scale with one
    colour bar, so equal colours mean equal values across panels; each cell's value printed.

    Parameters
    ----------
    grids
        Panel title -> grid (rows = ``index``, columns = ``columns``), in panel order.
    axes
        As many axes as grids (an array from :func:`perfkit.plots.figure` is fine).
    log
        A logarithmic shared scale (when every value is positive): latencies span decades.
    titles
        Title each panel with its key.
    """
    panels = as_list(axes)
    if len(panels) != len(grids):
        raise ValueError(f"{len(grids)} grids need as many axes, got {len(panels)}")
    norm = shared_norm(list(grids.values()), log)
    for ax, (key, grid) in zip(panels, grids.items(), strict=True):
        heatmap(grid, ax, xlabel, ylabel, cbar_label, fmt=fmt, title=key if titles else None,
                norm=norm, colorbar=False)
    mappable = panels[0].images[0] if panels and panels[0].images else None
    if mappable is not None:
        cbar = panels[0].figure.colorbar(mappable, ax=panels, pad=0.02,
                                         shrink=1.0 if len(panels) == 1 else 0.8)
        cbar.set_label(cbar_label)
        if isinstance(norm, LogNorm):
            plain_log(cbar.ax.yaxis)
    return panels


def _ink(rgba) -> str:
    """Black text on light cells, white on dark (relative luminance, ITU-R BT.709)."""
    r, g, b = rgba[:3]
    return "black" if 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.45 else "white"


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
