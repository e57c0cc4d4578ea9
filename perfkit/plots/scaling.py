"""Throughput and latency against load, the USL curve, and heat maps over two load axes."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.colors import LogNorm, Normalize
from matplotlib.legend_handler import HandlerBase
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

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
from perfkit.vocabulary import RunStatus

#: how far (a factor, on a log axis) an interval band may stretch the y axis of a load curve
#: beyond the runs and estimates before it is cut at the edge with an arrow
BAND_REACH = 3.0
#: how a run whose status is not ``ok`` is marked over its point: a black ring (saturated), a
#: grey diamond (short), a black cross (failed); none is a configuration's marker or colour
STATUS_MARKS = {
    RunStatus.SATURATED: {"marker": "o", "markersize": 8.5, "color": THRESHOLD,
                          "label": f"{RunStatus.SATURATED} run"},
    RunStatus.SHORT: {"marker": "D", "markersize": 7.5, "color": GREY,
                      "label": f"{RunStatus.SHORT} run"},
    RunStatus.FAILED: {"marker": "x", "markersize": 7.5, "color": THRESHOLD,
                       "label": f"{RunStatus.FAILED} run"},
}
#: hatches of heat-map cells holding such runs (the worst status of the cell)
STATUS_HATCHES = {RunStatus.FAILED: "xx", RunStatus.SATURATED: "//", RunStatus.SHORT: ".."}


def load_curve(frame: pd.DataFrame, ax: Axes, x: str, y: str, xlabel: str, ylabel: str,
               by: str | None = None, slo: float | None = None, slo_label: str = "SLO",
               logy: bool | None = None, identity: bool = False,
               identity_label: str = "achieved = offered", legend_title: str | None = None,
               *, palette: Palette | None = None, summary: pd.DataFrame | None = None,
               estimate: str | None = None, low: str | None = None, high: str | None = None,
               reference: float | None = None, reference_label: str = "",
               status: str | None = None, logx: bool = False) -> Axes:
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
    reference, reference_label
        A horizontal reference line (grey, dotted), e.g. achieved / offered = 1.
    logx
        Log x axis (base 2, the levels as plain numbers): for concurrency levels that double
        (2, 4, ... 256 connections), which a linear axis crowds into its left tenth.
    status
        Column of ``frame`` holding each run's status (``ok``, ``saturated``, ``short``,
        ``failed``: :mod:`perfkit.analysis.core._runstatus`); a run that is not ``ok`` is marked
        over its point as :data:`STATUS_MARKS` says, with a legend entry per status shown.
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
        xs = frame[x].to_numpy(dtype=float)
        start = float(np.nanmin(xs[xs > 0])) if logx else 0.0
        lim = float(np.nanmax(xs))
        ax.plot([start, lim], [start, lim], color=GREY, linestyle=":", linewidth=0.8,
                label=identity_label)
    if reference is not None:
        ax.axhline(reference, color=GREY, linestyle=":", linewidth=0.8,
                   label=reference_label or None)
    marked = _mark_statuses(ax, frame, x, y, status) if status else {}
    if slo is not None:
        ax.axhline(slo, color=THRESHOLD, linestyle=(0, (4, 2)), linewidth=0.9, label=slo_label)
    core = [frame[y].to_numpy(dtype=float)]
    if summary is not None and est in summary:
        core.append(summary[est].to_numpy(dtype=float))
    core += [np.array([v], dtype=float) for v in (slo, reference) if v is not None]
    bounds = [summary[c].to_numpy(dtype=float) for c in (low, high)
              if summary is not None and c and c in summary]
    log = resolve_log(logy, np.concatenate(core + bounds), is_latency_column(y))
    _scale_axes(ax, log)
    if logx:
        levels = np.unique(frame[x].to_numpy(dtype=float))
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_locator(FixedLocator(levels[levels > 0].tolist()))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.xaxis.set_minor_locator(NullLocator())
    cut = (_cut_bands(ax, lines, x, low, high, np.concatenate(core), log)
           if lines and low and high else 0)  # a band is drawn only with both bounds
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if by is not None or slo is not None or identity or marked:
        ax.legend(title=legend_title, loc="best")
    what = "the analysis' estimate" if summary is not None else "the median of the runs"
    band = " with its CI band" if summary is not None and low and high else ""
    more = f"; {cut} interval bounds beyond the axis, marked by arrows at its edge" if cut else ""
    flagged = "; marked: " + ", ".join(f"{n} {s}" for s, n in marked.items()) if marked else ""
    note(ax, f"runs as points, {what} per load level as a line{band}{more}{flagged}")
    return ax


def _mark_statuses(ax: Axes, frame: pd.DataFrame, x: str, y: str, status: str
                   ) -> dict[str, int]:
    """Mark each run whose ``status`` is not ``ok`` over its point; returns the count of each
    status marked."""
    out = {}
    for name, mark in STATUS_MARKS.items():
        runs = frame[frame[status] == name]
        if len(runs):
            ax.plot(runs[x], runs[y], linestyle="none", marker=mark["marker"],
                    markersize=mark["markersize"], markerfacecolor="none",
                    markeredgecolor=mark["color"], markeredgewidth=0.9, color=mark["color"],
                    label=f"{mark['label']}{'s' if len(runs) > 1 else ''} ({len(runs)})",
                    zorder=4)
            out[f"{name} run{'s' if len(runs) > 1 else ''}"] = len(runs)
    return out


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
                 palette: Palette | None = None, confidence: float | None = None) -> Axes:
    """Scaling models of several configurations: runs as points, each fitted curve as a line
    (``curves``: ``by, n, fit``, and a CI band where ``low, high`` columns hold values), and a
    claimed peak N* as a dotted line with its interval shaded (``peaks``: ``by, n_star,
    n_star_low, n_star_high``). The legend sits above: each configuration's marker over its
    curve's line, and, when a peak is drawn, one neutral entry for it, a dotted vertical line
    over a shaded band (:class:`PeakHandler`).

    Parameters
    ----------
    logx
        Concurrency on a base-2 log axis labelled 1, 2, 4, 8, ... as plain numbers.
    palette
        Colour, marker and line style of each ``by`` label (one look per configuration).
    confidence
        Coverage of the peaks' intervals (e.g. 0.95), named in the legend when given.
    """
    keys = list(dict.fromkeys(curves[by])) if len(curves) else list(dict.fromkeys(points[by]))
    for key in dict.fromkeys(points[by]) if len(points) else []:
        if key not in keys:
            keys.append(key)  # runs of a configuration without a fitted model still show
    handles: list = []
    n_peaks_drawn = 0
    for key, st in zip(keys, styles_for(keys, palette), strict=True):
        pts = points[points[by] == key]
        ax.plot(pts[x], pts[y], linestyle="none", marker=st["marker"], color=st["color"],
                alpha=0.45, markeredgewidth=0)
        cur = curves[curves[by] == key]
        fitted = bool(len(cur)) and bool(np.isfinite(cur["fit"].to_numpy(dtype=float)).any())
        handles.append(Line2D([], [], color=st["color"], marker=st["marker"],
                              markeredgewidth=0,
                              linestyle=st["linestyle"] if fitted else "none"))
        ax.plot(cur["n"], cur["fit"], color=st["color"], linestyle=st["linestyle"],
                label=str(key))
        if {"low", "high"} <= set(cur.columns) and cur["low"].notna().any():
            ax.fill_between(cur["n"], cur["low"], cur["high"], color=st["color"], alpha=0.15,
                            linewidth=0)
        peak = peaks[peaks[by] == key] if peaks is not None and len(peaks) else None
        for _, row in (peak.iterrows() if peak is not None and len(peak) else []):
            ax.axvline(row["n_star"], color=st["color"], linestyle=":", linewidth=0.9)
            n_peaks_drawn += 1
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
    labels = [str(k) for k in keys]
    handler_map = {}
    if n_peaks_drawn:
        level = f"{confidence:.0%} " if confidence is not None else ""
        peak_key = (Patch(color=GREY, alpha=0.2, linewidth=0),
                    Line2D([], [], color=GREY, linestyle=":", linewidth=0.9))
        handles.append(peak_key)
        labels.append(f"N* (peak concurrency)\nwith its {level}interval")
        handler_map[peak_key] = PeakHandler()
    ax.figure.legend(handles, labels, title=legend_title, loc="outside upper center",
                     ncols=min(2, max(1, len(handles))), handler_map=handler_map)
    n_peaks = 0 if peaks is None else len(peaks)
    n_curves = curves[by].nunique() if len(curves) else 0
    peaks_text = ("no claimed peak N*" if not n_peaks else "1 claimed peak N* with its interval"
                  if n_peaks == 1 else f"{n_peaks} claimed peaks N* with their intervals")
    note(ax, f"scalability models: {len(points)} runs as points, {n_curves} fitted "
             f"curve{'s' if n_curves != 1 else ''}, {peaks_text}")
    return ax


class PeakHandler(HandlerBase):
    """Legend glyph of a peak as :func:`model_curves` draws it, for a handle ``(band,
    line)`` (a :class:`~matplotlib.patches.Patch` and a :class:`~matplotlib.lines.Line2D`):
    a vertical line of ``line``'s look over a shaded band of ``band``'s colour."""

    def create_artists(self, legend, orig_handle, xdescent, ydescent, width, height,
                       fontsize, trans):
        band, line = orig_handle
        x0, y0 = -xdescent, -ydescent - 0.5 * height  # taller than a line glyph: upright
        rect = Rectangle((x0 + 0.25 * width, y0), 0.5 * width, 2 * height,
                         facecolor=band.get_facecolor(), edgecolor="none", transform=trans)
        mid = x0 + 0.5 * width
        vertical = Line2D([mid, mid], [y0, y0 + 2 * height], color=line.get_color(),
                          linestyle=line.get_linestyle(), linewidth=line.get_linewidth(),
                          transform=trans)
        return [rect, vertical]


def heatmap(table: pd.DataFrame, ax: Axes, xlabel: str, ylabel: str, cbar_label: str,
            fmt: str = "{:.3g}", log: bool = True, title: str | None = None, *,
            norm: Normalize | None = None, colorbar: bool = True,
            marks: pd.DataFrame | None = None) -> Axes:
    """A grid of values (rows = ``table.index``, columns = ``table.columns``), each cell labelled.

    Missing cells stay blank. ``log`` uses a logarithmic colour scale (latencies span decades).

    Parameters
    ----------
    norm
        The colour scale to use (for panels that must share one: see :func:`heatmaps`);
        ``None`` makes one from this grid's values (log when ``log`` and all are positive).
    colorbar
        Draw this panel's colour bar (:func:`heatmaps` draws one for all its panels instead).
    marks
        Per cell (same index and columns as ``table``) the worst status of its runs
        (``saturated``, ``short``, ``failed``; anything else: none): such a cell is hatched
        (:data:`STATUS_HATCHES`) in the ink of its value's text.
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
                    color=_ink(cmap(image.norm(v))),
                    bbox={"boxstyle": "round,pad=0.3", "linewidth": 0,
                          "facecolor": cmap(image.norm(v))})
    hatched = _hatch_cells(ax, table, marks, lambda v: _ink(cmap(image.norm(v)))) \
        if marks is not None else {}
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
    flagged = "; hatched: " + ", ".join(f"{n_} cell{'s' if n_ > 1 else ''} {k}"
                                        for k, n_ in hatched.items()) if hatched else ""
    note(ax, f"heat map of {cbar_label}, {n} cells with their values printed{flagged}")
    return ax


def _hatch_cells(ax: Axes, table: pd.DataFrame, marks: pd.DataFrame, ink) -> dict[str, int]:
    """Hatch the cells whose mark is a status of :data:`STATUS_HATCHES`; returns the number
    of cells with a run of each status (``"saturated runs": 2``)."""
    marks = marks.reindex(index=table.index, columns=table.columns)
    values = table.to_numpy(dtype=float)
    out: dict[str, int] = {}
    for (r, c), mark in np.ndenumerate(marks.to_numpy(dtype=object)):
        if mark in STATUS_HATCHES:
            v = values[r, c]
            colour = ink(v) if np.isfinite(v) else GREY
            ax.add_patch(Rectangle((c - 0.5, r - 0.5), 1, 1, fill=False,
                                   hatch=STATUS_HATCHES[mark], edgecolor=colour, linewidth=0,
                                   zorder=1.5))
            key = f"with {mark} runs"
            out[key] = out.get(key, 0) + 1
    return out


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
             cbar_label: str, fmt: str = "{:.3g}", log: bool = True, titles: bool = True,
             marks: Mapping[str, pd.DataFrame] | None = None) -> list[Axes]:
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
    marks
        Panel title -> the worst run status of each cell (see :func:`heatmap`); a figure
        legend above names each hatch shown.
    """
    panels = as_list(axes)
    if len(panels) != len(grids):
        raise ValueError(f"{len(grids)} grids need as many axes, got {len(panels)}")
    norm = shared_norm(list(grids.values()), log)
    for ax, (key, grid) in zip(panels, grids.items(), strict=True):
        heatmap(grid, ax, xlabel, ylabel, cbar_label, fmt=fmt, title=key if titles else None,
                norm=norm, colorbar=False, marks=(marks or {}).get(key))
    mappable = panels[0].images[0] if panels and panels[0].images else None
    if mappable is not None:
        cbar = panels[0].figure.colorbar(mappable, ax=panels, pad=0.02,
                                         shrink=1.0 if len(panels) == 1 else 0.8)
        cbar.set_label(cbar_label)
        if isinstance(norm, LogNorm):
            plain_log(cbar.ax.yaxis)
    shown = {m for grid in (marks or {}).values() for m in grid.to_numpy(dtype=object).ravel()
             if m in STATUS_HATCHES}
    if shown and panels:
        keys = [m for m in STATUS_HATCHES if m in shown]
        panels[0].figure.legend(
            [Patch(facecolor="white", edgecolor=THRESHOLD, hatch=STATUS_HATCHES[m],
                   linewidth=0.5) for m in keys],
            [f"cell with a {m} run" for m in keys], loc="outside upper center",
            ncols=len(keys))
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
