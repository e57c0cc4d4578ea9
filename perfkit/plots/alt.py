"""Alt text: a figure described in a sentence or two, from what was drawn.

:func:`describe` reads a drawn figure (axis labels and scales, series labels, numbers of points
and curves, heat map grids and their colour scale, reference lines) and the notes the plot
functions leave with :func:`note` ("forest plot of 9 effects, 5 significant"), so the text
follows the figure rather than a caption typed apart from it. The report puts it in the HTML
``alt`` attribute; a screen reader then says what a sighted reader sees.
"""

from __future__ import annotations

import weakref
from typing import cast

import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import LogNorm
from matplotlib.figure import Figure, SubFigure
from matplotlib.lines import Line2D

from perfkit.formatting import fmt_sig
from perfkit.plots.checks import _draw, data_axes, data_values, unit_of

_NOTES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def note(ax: Axes, text: str) -> None:
    """Leave a note on ``ax`` saying what a plot function drew (read by :func:`describe`)."""
    _NOTES.setdefault(ax, []).append(text)


def notes(ax: Axes) -> list[str]:
    """The notes left on ``ax``."""
    return list(_NOTES.get(ax, []))


def _flat(text: str) -> str:
    """A figure's text on one line: a legend entry broken over lines reads as one sentence."""
    return " ".join(str(text).split())


def _num(v: float) -> str:
    """3 significant digits in one form: 9140, 44800, 0.0123 (never 9.14e+03)."""
    if not np.isfinite(v):
        return str(v)
    return fmt_sig(float(v), 3)


def _axis_text(ax: Axes, letter: str) -> str:
    axis = ax.xaxis if letter == "x" else ax.yaxis
    text = _flat(axis.get_label().get_text())
    if not text:
        return ""
    return f"{text}, log scale" if axis.get_scale() == "log" else text


def _series_labels(ax: Axes, fig: Figure | SubFigure) -> list[str]:
    _, labels = ax.get_legend_handles_labels()
    return [_flat(lbl) for lbl in dict.fromkeys(labels) if lbl and not lbl.startswith("_")]


def _counts(ax: Axes) -> tuple[int, int]:
    """(markers drawn in data coordinates, curves drawn without markers)."""
    points = curves = 0
    for line in ax.lines:
        if not line.get_visible() or line.get_transform() != ax.transData:
            continue
        n = int(np.isfinite(np.asarray(line.get_ydata(), dtype=float)).sum())
        if line.get_marker() not in (None, "None", "", " ") and line.get_linestyle() in (
                "None", "none", "", " "):
            points += n
        elif n > 1:
            curves += 1
    return points, curves


def _references(ax: Axes) -> list[str]:
    return [label for line in ax.lines
            if isinstance(line, Line2D) and line.get_transform() != ax.transData
            and isinstance(label := line.get_label(), str) and label
            and not label.startswith("_")]


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _number(text: str) -> float | None:
    t = text.strip().replace("\u2212", "-").rstrip("%")
    scale = 1000.0 if t.endswith("k") else 1.0
    try:
        return float(t.rstrip("k")) * scale
    except ValueError:
        return None


def _categorical_axis(axis) -> bool:
    """An axis whose tick labels name categories (forest rows, bars, configurations) rather
    than print the tick positions."""
    for tick in axis.get_major_ticks():
        text = tick.label1.get_text()
        if not text.strip():
            continue
        value = _number(text)
        loc = tick.get_loc()
        if value is None or abs(value - loc) > 0.02 * max(abs(loc), 1e-12):
            return True
    return False


def _categorical(ax: Axes) -> bool:
    return _categorical_axis(ax.xaxis) or _categorical_axis(ax.yaxis)


def _image_text(ax: Axes) -> str:
    parts = []
    for image in ax.images:
        array = cast(np.ndarray, image.get_array())  # drawn: set
        values = np.ma.compressed(array)
        rows, cols = np.shape(array)[:2]
        scale = "log" if isinstance(image.norm, LogNorm) else "linear"
        span = (f" from {_num(values.min())} to {_num(values.max())}" if values.size else "")
        parts.append(f"a {rows} x {cols} grid{span} on a {scale} colour scale from "
                     f"{_num(cast(float, image.norm.vmin))} to "
                     f"{_num(cast(float, image.norm.vmax))}")
    return "; ".join(parts)


def describe_axes(ax: Axes) -> str:
    """One sentence about one panel."""
    fig = ax.figure
    head = "; ".join(notes(ax))
    x, y = _axis_text(ax, "x"), _axis_text(ax, "y")
    bits = []
    if ax.images:
        bits.append(_image_text(ax))
    elif y and x:
        bits.append(f"{y} against {x}")
    elif x or y:
        bits.append(x or y)
    labels = _series_labels(ax, fig)
    refs = set(_references(ax))
    series = [lbl for lbl in labels if lbl not in refs]
    if series:
        shown = "; ".join(series[:8]) + ("; ..." if len(series) > 8 else "")
        bits.append(f"{len(series)} labelled series ({shown})")
    categorical = _categorical(ax)
    points, curves = (0, 0) if categorical else _counts(ax)
    drawn = [_plural(points, "point") if points else "", _plural(curves, "curve") if curves else ""]
    if any(drawn):
        bits.append(" and ".join(d for d in drawn if d))
    low, high = sorted(ax.get_ylim())
    values = data_values(ax, "y")
    values = values[(values >= low) & (values <= high)]
    unit = unit_of(ax.yaxis.get_label().get_text()) or ""
    numeric_y = not _categorical_axis(ax.yaxis)
    if values.size and numeric_y and not ax.images and unit not in ("", "level", "index"):
        sep = "" if unit == "%" else " "
        bits.append(f"y from {_num(values.min())} to {_num(values.max())}{sep}{unit}")
    if refs:
        bits.append("reference lines: " + ", ".join(sorted(refs)))
    title = _flat(ax.get_title())
    text = ", ".join(b for b in bits if b)
    if head:
        text = f"{head}: {text}" if text else head
    return (f"Panel {title!r}: " if title else "") + text


def describe(fig: Figure, drawn: bool = False) -> str:
    """Alt text of a drawn figure: one sentence per panel (two panels or fewer read as one
    or two sentences), built from its labels, series, counts and notes. ``drawn``: the figure
    was just drawn as it is (by :func:`perfkit.plots.checks.check`): not drawn again."""
    if not drawn:
        _draw(fig)  # tick labels exist only once drawn
    panels = data_axes(fig)
    sentences = [describe_axes(ax) for ax in panels]
    legend_titles = [_flat(lg.get_title().get_text()) for lg in fig.legends
                     if lg.get_title().get_text()]
    named = {lbl for ax in panels for lbl in _series_labels(ax, fig)}
    fig_labels = [_flat(t.get_text()) for lg in fig.legends for t in lg.get_texts()
                  if _flat(t.get_text()) not in named]
    prefix = f"{len(panels)} panels. " if len(panels) > 1 else ""
    text = prefix + " ".join(s[0].upper() + s[1:] + "." for s in sentences if s)
    if fig_labels:
        title = f" ({', '.join(legend_titles)})" if legend_titles else ""
        text += f" Legend{title}: {'; '.join(dict.fromkeys(fig_labels))}."
    return text
