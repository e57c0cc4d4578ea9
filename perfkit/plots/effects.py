"""Forest plots of effects (ratios with confidence intervals)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from perfkit.plots.style import GREY, series_style


def forest(frame: pd.DataFrame, ax: Axes, xlabel: str, label: str = "term",
           value: str = "ratio", low: str = "ratio_ci_low", high: str = "ratio_ci_high",
           by: str | None = None, log: bool = True, legend_title: str | None = None,
           significant: str | None = None) -> Axes:
    """One row per effect: the point estimate and its CI, with a reference line at 1 (no effect).

    A filled marker means the effect is significant: the boolean column ``significant`` when
    given (the analysis' verdict, e.g. after Holm's adjustment), else the CI excludes 1; an open
    marker that it is not. Rows whose CI is
    missing (too few runs) are drawn as a point with "(no CI)" in their label. ``by`` colours
    rows by a grouping column (for example the connection level); its legend sits above the
    axes, outside the data.
    """
    rows = frame.reset_index(drop=True)
    y = np.arange(len(rows))[::-1]
    groups = list(dict.fromkeys(rows[by])) if by else [None]
    handles = {}
    for i, row in rows.iterrows():
        st = series_style(groups.index(row[by]) if by else 0)
        lo, hi, v = row[low], row[high], row[value]
        has_ci = np.isfinite(lo) and np.isfinite(hi)
        excludes = (bool(row[significant]) if significant else has_ci and (lo > 1 or hi < 1))
        if has_ci:
            ax.plot([lo, hi], [y[i], y[i]], color=st["color"], linewidth=1.1)
        (h,) = ax.plot([v], [y[i]], marker=st["marker"], color=st["color"], linestyle="none",
                       markerfacecolor=st["color"] if excludes else "white", markersize=4)
        if by:
            handles.setdefault(str(row[by]), h)
    ax.axvline(1.0, color=GREY, linewidth=0.8, linestyle="--")
    labels = [f"{t}" if np.isfinite(rows.loc[i, low]) else f"{t} (no CI)"
              for i, t in enumerate(rows[label])]
    ax.set_yticks(y, labels)
    ax.set_ylim(-0.7, len(rows) - 0.3)
    ax.grid(False, axis="y")
    if log:
        ax.set_xscale("log")
        _ratio_ticks(ax, rows[[low, high, value]].to_numpy(dtype=float))
    ax.set_xlabel(xlabel)
    if by:
        ax.figure.legend(list(handles.values()), list(handles.keys()), title=legend_title,
                         loc="outside upper center", ncols=min(4, len(handles)))
    return ax


def _ratio_ticks(ax: Axes, values: np.ndarray) -> None:
    """Readable ticks for ratios on a log axis (0.5, 0.8, 1, 1.25, 2, ...), not 10^k only."""
    finite = values[np.isfinite(values) & (values > 0)]
    if not finite.size:
        return
    lo, hi = min(finite.min(), 1.0), max(finite.max(), 1.0)
    candidates = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 0.67, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 2.0,
                  5.0, 10.0, 20.0, 50.0, 100.0]
    span = np.log(hi / lo)
    ticks = [c for c in candidates if lo / 1.05 <= c <= hi * 1.05]
    # keep ticks at least ~12% of the span apart so their labels never touch
    kept: list[float] = []
    for c in sorted(ticks, key=lambda t: (t != 1.0, abs(np.log(t)))):
        if all(abs(np.log(c / k)) >= 0.12 * max(span, 0.2) for k in kept):
            kept.append(c)
    kept.sort()
    ax.set_xlim(lo / 1.08, hi * 1.08)
    ax.set_xticks(kept, [f"{t:g}" for t in kept])
    ax.minorticks_off()


def variation(frame: pd.DataFrame, ax: Axes, xlabel: str = "variation explained (%)",
              term: str = "term", by: str = "by", value: str = "variation_pct",
              ylabel: str | None = None) -> Axes:
    """Allocation of variation: one stacked bar per ``by`` level, a segment per term (Jain's
    "percentage of variation explained"), the unexplained ``error`` last in grey."""
    data = frame[frame[term] != "block"]
    terms = [t for t in dict.fromkeys(data[term]) if t != "error"] + ["error"]
    levels = list(dict.fromkeys(data[by]))
    y = np.arange(len(levels))[::-1]
    left = np.zeros(len(levels))
    for i, t in enumerate(terms):
        vals = np.array([_first(data, term, t, by, lv, value) for lv in levels])
        color = "#bbbbbb" if t == "error" else series_style(i)["color"]
        ax.barh(y, np.nan_to_num(vals), left=left, color=color, height=0.6,
                label=t.replace(":", " × "), edgecolor="white", linewidth=0.5)
        left += np.nan_to_num(vals)
    ax.set_yticks(y, [_level_text(lv) for lv in levels])
    ax.set_xlim(0, 100)
    ax.grid(False, axis="y")
    ax.set_xlabel(xlabel)
    if ylabel:
        ax.set_ylabel(ylabel)
    ax.figure.legend(loc="outside upper center", ncols=min(3, len(terms)))
    return ax


def _first(data: pd.DataFrame, term: str, t: str, by: str, level, value: str) -> float:
    hit = data[(data[term] == t) & (data[by] == level)][value]
    return float(hit.iloc[0]) if len(hit) else np.nan


def _level_text(v) -> str:
    return str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)
