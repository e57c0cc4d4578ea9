"""Forest plots of effects (ratios with confidence intervals) and the allocation of variation."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from perfkit.formatting import fmt_ci
from perfkit.plots.alt import note
from perfkit.plots.style import FONT_PT, GREY, WIDTH_IN, Neutral, Palette, neutral_style

#: colours of the two non-factor segments of a variation bar (the terms are dark greys: effect
#: names are not configurations, so they never take a configuration's colour)
BLOCK_COLOR = "#8C8C8C"
ERROR_COLOR = "#D9D9D9"
#: fills of the terms of a variation bar, told apart by hatch as well
TERM_COLORS = ("#262626", "#595959", "#404040", "#737373")
#: how far (as a factor on the ratio axis) an interval may stretch the axis beyond the point
#: estimates, 1 and the threshold band before it is cut at the edge with an arrow
REACH = 10.0


def forest_height_in(n_rows: int, n_blocks: int = 0) -> float:
    """Figure height for a forest plot of ``n_rows`` effects in ``n_blocks`` labelled blocks
    (readable row spacing, room for the legend above)."""
    return 1.0 + 0.17 * (n_rows + (n_blocks if n_blocks > 1 else 0))


def forest(frame: pd.DataFrame, ax: Axes, xlabel: str, label: str = "term",
           value: str = "ratio", low: str = "ratio_ci_low", high: str = "ratio_ci_high",
           by: str | None = None, log: bool = True, legend_title: str | None = None,
           significant: str | None = None, *, palette: Palette | None = None,
           threshold: float | None = None, xlim: tuple[float, float] | None = None,
           values: bool = True, digits: int = 3, blocks: bool = True,
           artefact: str | None = None, caution: str | None = None) -> Axes:
    """One row per effect: the point estimate and its CI, with a reference line at 1 (no effect).

    A filled marker means the effect is significant: the boolean column ``significant`` when
    given (the analysis' verdict, e.g. after Holm's adjustment), else the CI excludes 1; an open
    marker that it is not; a small legend above the axes says which rule was used. Rows whose
    CI is missing (too few runs) are drawn as a point with "(no CI)" in their label.

    Parameters
    ----------
    by
        Grouping column (e.g. the connection level). With ``blocks`` its levels become labelled
        row blocks: a bold heading ("connections: 16") and a separator line, every row
        black; without, each level has its own grey and marker
        (:class:`~perfkit.plots.style.Neutral`) and a legend sits above. Levels are load
        levels or effects, not configurations: never a configuration's colour.
    legend_title
        Name of ``by`` in the block headings and the legend.
    palette
        Accepted for callers that pass the report's palette; the rows are not configurations
        and are drawn in neutral looks whatever it holds.
    threshold
        A practical threshold as a fraction (``0.05``: changes under ±5%, ratios within
        [1 - t, 1 + t]), drawn as a grey band around the line at 1.
    xlim
        Ratio-axis limits; ``None``: every estimate, 1 and the threshold band, with intervals
        allowed to stretch the axis by up to a factor of :data:`REACH` beyond them. A bound
        beyond the axis is cut at the edge with an arrow; its value is still printed.
    values
        Print each row's estimate and interval beside it, right of the axes:
        ``"0.82 [0.71, 0.94]"`` (``digits`` significant digits).
    blocks
        Labelled row blocks per ``by`` level (see ``by``).
    artefact
        Boolean column: effects computed from values on a known cap (a timeout): drawn as a
        cross, not as a filled or open marker, since they measure the cap, not the setting;
        the legend says so.
    caution
        Boolean column: effects measured on runs a known cap affects (throughput of runs whose
        requests waited for a timeout): drawn as a diamond, filled or open like the others;
        the legend says so.
    """
    rows = frame.reset_index(drop=True)
    levels = list(dict.fromkeys(rows[by])) if by else [None]
    headed = bool(by) and blocks and len(levels) > 1
    # headed blocks need no look of their own (black); unheaded levels are told apart in greys
    looks = Neutral(tuple(str(v) for v in levels)) if by and not headed else None
    styles = {lv: (looks.style(lv) if looks else neutral_style(0)) for lv in levels}
    layout = _layout(rows, by, levels, headed)
    n = len(layout)
    ypos = {item: n - 1 - i for i, item in enumerate(layout)}
    lim = xlim or _limits(rows, value, low, high, threshold, log)
    cut = 0
    seen: set = set()
    for i, row in rows.iterrows():
        key = row[by] if by else None
        st, y = styles[key], ypos[("row", i)]
        lo, hi, v = float(row[low]), float(row[high]), float(row[value])
        has_ci = np.isfinite(lo) and np.isfinite(hi)
        filled = (bool(row[significant]) if significant else has_ci and (lo > 1 or hi < 1))
        if has_ci:
            cut += _interval(ax, lo, hi, y, lim, st["color"])
        elif np.isfinite(v):
            cut += _interval(ax, v, v, y, lim, st["color"])  # an estimate beyond the axis
        name = f"{legend_title}: {key}" if legend_title else str(key)
        on_cap = bool(row[artefact]) if artefact else False
        marker = "x" if on_cap else "D" if caution and bool(row[caution]) else st["marker"]
        ax.plot([v], [y], marker=marker, color=st["color"],
                linestyle="none", markerfacecolor=st["color"] if filled else "white",
                markersize=5 if on_cap else 4, zorder=3,
                label=name if by and key not in seen else None)
        seen.add(key)
    _reference(ax, threshold)
    _row_labels(ax, rows, layout, ypos, label, low, by, levels, styles, legend_title)
    if headed:
        for y_head in [ypos[item] + 0.5 for item in layout[1:] if item[0] == "head"]:
            ax.axhline(y_head, color="#999999", linewidth=0.6)
    ax.set_ylim(-0.7, n - 0.3)
    ax.grid(False, axis="y")
    if log:
        ax.set_xscale("log")
        _ratio_ticks(ax, np.array(lim, dtype=float))
    ax.set_xlim(*lim)
    ax.set_xlabel(xlabel)
    if values:
        _value_column(ax, rows, layout, ypos, value, low, high, digits)
    n_cap = int(rows[artefact].astype(bool).sum()) if artefact else 0
    n_caution = int((rows[caution].astype(bool) & ~(rows[artefact].astype(bool) if artefact
                                                     else False)).sum()) if caution else 0
    _legend(ax, significant, threshold, None if headed or not by else (levels, styles),
            legend_title, n_cap > 0, n_caution > 0)
    n_sig = sum(bool(rows.loc[i, significant]) and not (artefact and bool(rows.loc[i, artefact]))
                for i in range(len(rows))) if significant else (
        int(((rows[low] > 1) | (rows[high] < 1)).sum()))
    note(ax, f"forest plot of {len(rows)} effects"
             + (f" in {len(levels)} blocks by {legend_title or by}" if headed else "")
             + f", {n_sig} significant (filled)"
             + (f", {n_cap} artefacts of a timeout cap (crosses)" if n_cap else "")
             + (f", {n_caution} affected by a timeout cap (diamonds)" if n_caution else "")
             + (f", {cut} intervals cut at the axis edge (arrows)" if cut else ""))
    return ax


def _layout(rows: pd.DataFrame, by: str | None, levels: list, headed: bool) -> list[tuple]:
    """Top-to-bottom items: ``("head", level)`` then that block's ``("row", index)``."""
    if not headed:
        return [("row", i) for i in range(len(rows))]
    out: list[tuple] = []
    for level in levels:
        out.append(("head", level))
        out.extend(("row", i) for i in rows.index[rows[by] == level])
    return out


def _limits(rows: pd.DataFrame, value: str, low: str, high: str, threshold: float | None,
            log: bool) -> tuple[float, float]:
    core = [1.0, *rows[value].to_numpy(dtype=float)]
    if threshold:
        core += [1 - threshold, 1 + threshold]
    core_v = np.array([c for c in core if np.isfinite(c) and (c > 0 or not log)])
    bounds = rows[[low, high]].to_numpy(dtype=float).ravel()
    bounds = bounds[np.isfinite(bounds) & ((bounds > 0) | (not log))]
    lo, hi = core_v.min(), core_v.max()
    if log:
        lo = min(lo, max(bounds.min(), lo / REACH)) if bounds.size else lo
        hi = max(hi, min(bounds.max(), hi * REACH)) if bounds.size else hi
        return (lo / 1.08, hi * 1.08)
    span = hi - lo or 1.0
    if bounds.size:
        lo = min(lo, max(bounds.min(), lo - REACH * span))
        hi = max(hi, min(bounds.max(), hi + REACH * span))
    pad = 0.05 * (hi - lo or 1.0)
    return (lo - pad, hi + pad)


def _interval(ax: Axes, lo: float, hi: float, y: float, lim: tuple[float, float],
              color: str) -> int:
    """Draw [lo, hi] within ``lim``; a side beyond the axis ends in an arrow. Returns 1 when
    the interval was cut."""
    a, b = max(lo, lim[0]), min(hi, lim[1])
    if a < b:
        ax.plot([a, b], [y, y], color=color, linewidth=1.1, solid_capstyle="butt")
    cut = 0
    for beyond, edge, marker in ((lo < lim[0], lim[0], "<"), (hi > lim[1], lim[1], ">")):
        if beyond:
            ax.plot([edge], [y], marker=marker, color=color, markersize=4, linestyle="none",
                    clip_on=False, zorder=4)
            cut = 1
    return cut


def _reference(ax: Axes, threshold: float | None) -> None:
    ax.axvline(1.0, color=GREY, linewidth=0.8, linestyle="--", zorder=1)
    if threshold:
        ax.axvspan(1 - threshold, 1 + threshold, color=GREY, alpha=0.15, linewidth=0,
                   zorder=0)


def _row_labels(ax: Axes, rows: pd.DataFrame, layout: list[tuple], ypos: dict, label: str,
                low: str, by: str | None, levels: list, styles: dict,
                legend_title: str | None) -> None:
    texts = []
    for kind, key in layout:
        if kind == "head":
            texts.append(f"{legend_title}: {key}" if legend_title else str(key))
        else:
            t = rows.loc[key, label]
            texts.append(f"{t}" if np.isfinite(rows.loc[key, low]) else f"{t} (no CI)")
    ax.set_yticks([ypos[item] for item in layout], texts)
    for (kind, _), tick in zip(layout, ax.yaxis.get_major_ticks(), strict=True):
        if kind == "head":
            tick.label1.set_fontweight("bold")
            tick.tick1line.set_visible(False)


def _value_column(ax: Axes, rows: pd.DataFrame, layout: list[tuple], ypos: dict, value: str,
                  low: str, high: str, digits: int) -> None:
    """Each row's ``estimate [low, high]`` as tick labels of a right-hand axis."""
    items = [item for item in layout if item[0] == "row"]
    sec = ax.secondary_yaxis("right")
    sec.set_yticks([ypos[item] for item in items],
                   [fmt_ci(rows.loc[i, value], rows.loc[i, low], rows.loc[i, high],
                           digits=digits) for _, i in items])
    sec.tick_params(length=0, pad=2)
    sec.spines["right"].set_visible(False)


def _legend(ax: Axes, significant: str | None, threshold: float | None, colours,
            legend_title: str | None, capped: bool = False, caution: bool = False) -> None:
    rule = ("significant", "not significant") if significant else (
        "CI excludes 1", "CI includes 1")
    handles: list[Artist] = [
        Line2D([], [], marker="o", color="black", linestyle="none", markersize=4),
        Line2D([], [], marker="o", color="black", markerfacecolor="white", linestyle="none",
               markersize=4)]
    labels = [f"filled: {rule[0]}", f"open: {rule[1]}"]
    if capped:
        handles.append(Line2D([], [], marker="x", color="black", linestyle="none",
                              markersize=5))
        labels.append("cross: artefact of a cap")
    if caution:
        handles.append(Line2D([], [], marker="D", color="black", linestyle="none",
                              markersize=4))
        labels.append("diamond: affected by a cap")
    if threshold:
        handles.append(Patch(color=GREY, alpha=0.3, linewidth=0))
        labels.append(f"within ±{threshold:.0%}")
    if colours is not None:
        levels, styles = colours
        for level in levels:
            handles.append(Line2D([], [], color=styles[level]["color"], linewidth=1,
                                  marker=styles[level]["marker"], markersize=4))
            labels.append(f"{legend_title}: {level}" if legend_title else str(level))
    ax.figure.legend(handles, labels, loc="outside upper center",
                     ncols=2 if len(labels) == 4 else min(3, len(labels)), handletextpad=0.3,
                     columnspacing=1.0)


def _ratio_ticks(ax: Axes, values: np.ndarray) -> None:
    """Readable ticks for ratios on a log axis (0.5, 0.8, 1, 1.25, 2, ...), not 10^k only."""
    finite = values[np.isfinite(values) & (values > 0)]
    if not finite.size:
        return
    lo, hi = min(finite.min(), 1.0), max(finite.max(), 1.0)
    candidates = [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 0.67, 0.8, 0.9, 1.0,
                  1.1, 1.25, 1.5, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0]
    span = np.log(hi / lo)
    ticks = [c for c in candidates if lo <= c <= hi]
    # keep ticks at least ~18% of the span apart so their labels never touch
    kept: list[float] = []
    for c in sorted(ticks, key=lambda t: (t != 1.0, abs(np.log(t)))):
        if all(abs(np.log(c / k)) >= 0.18 * max(span, 0.2) for k in kept):
            kept.append(c)
    kept.sort()
    ax.set_xticks(kept, [f"{t:g}" for t in kept])
    ax.minorticks_off()


def variation(frame: pd.DataFrame, ax: Axes, xlabel: str = "variation explained (%)",
              term: str = "term", by: str = "by", value: str = "variation_pct",
              ylabel: str | None = None, flag: str | None = None) -> Axes:
    """Allocation of variation: one stacked bar per ``by`` level, a segment per term (Jain's
    "percentage of variation explained"), then the ``block`` term (run-order blocks, hatched
    grey, when the design has blocks) and the unexplained ``error`` last in light grey, so
    each bar sums to the 100% the analysis allocated. Terms are effects, not configurations:
    dark greys told apart by hatch (:data:`TERM_COLORS`), never a configuration's colour.
    ``flag``: a boolean column; a level with any row flagged is labelled with a ``*`` (a
    caption says what it marks: factors that interact there, whose shares split a variation
    they cause together)."""
    data = frame
    present = list(dict.fromkeys(data[term]))
    terms = [t for t in present if t not in ("block", "error")]
    terms += [t for t in ("block", "error") if t in present]
    levels = list(dict.fromkeys(data[by]))
    y = np.arange(len(levels))[::-1]
    left = np.zeros(len(levels))
    for i, t in enumerate(terms):
        vals = np.array([_first(data, term, t, by, lv, value) for lv in levels])
        extra: dict[str, Any] = {"color": ERROR_COLOR} if t == "error" else (
            {"color": BLOCK_COLOR, "hatch": "////"} if t == "block" else
            {"color": TERM_COLORS[i % len(TERM_COLORS)], "hatch": _TERM_HATCHES[i % 4]})
        ax.barh(y, np.nan_to_num(vals), left=left, height=0.6, label=t.replace(":", " × "),
                edgecolor="white", linewidth=0.5, **extra)
        left += np.nan_to_num(vals)
    marked = set(data.loc[data[flag].astype(bool), by]) if flag and flag in data else set()
    ax.set_yticks(y, [_level_text(lv) + (" *" if lv in marked else "") for lv in levels])
    ax.set_xlim(0, 100)
    ax.grid(False, axis="y")
    ax.set_xlabel(xlabel)
    if ylabel:
        ax.set_ylabel(ylabel)
    labels = [t.replace(":", " × ") for t in terms]
    ax.figure.legend(loc="outside upper center", ncols=legend_columns(labels, ax.figure))
    note(ax, f"allocation of variation: {len(levels)} stacked bars of {len(terms)} terms "
             f"({', '.join(t.replace(':', ' × ') for t in terms)}), each summing to "
             f"{_sums_text(left)}%")
    return ax


_TERM_HATCHES = ("", "\\\\\\", "....", "xxx")


def legend_columns(labels: Sequence[str], fig=None) -> int:
    """How many columns of ``labels`` a legend across the figure's width holds (1 to 3): a
    label's characters at half an em of the legend's font, plus its handle and padding (6
    characters); a 2^3 design's "client_keepalive × upstream_keepalive × cache" takes a row
    of its own, where three columns put it outside the figure."""
    width = fig.get_figwidth() if fig is not None else WIDTH_IN
    chars_per_in = 72 / (0.5 * (FONT_PT - 1))  # the legend's font: style's legend.fontsize
    longest = max((len(str(x)) for x in labels), default=1)
    return max(1, min(3, len(labels), int(width * chars_per_in) // (longest + 6)))


def _sums_text(sums: np.ndarray) -> str:
    lo, hi = float(np.min(sums)), float(np.max(sums))
    return f"{lo:.0f}" if round(lo) == round(hi) else f"{lo:.0f}-{hi:.0f}"


def _first(data: pd.DataFrame, term: str, t: str, by: str, level, value: str) -> float:
    hit = data[(data[term] == t) & (data[by] == level)][value]
    return float(hit.iloc[0]) if len(hit) else np.nan


def _level_text(v) -> str:
    return str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)
