"""Checks of a drawn figure, so figure quality is tested rather than judged by eye.

- :func:`labels_without_units`: every axis label names a unit, ``"latency (ms)"`` or
  ``"latency [ms]"``, and no axis shows numbers without a label.
- :func:`overlapping_texts`: no two pieces of text drawn in the figure overlap (their bounding
  boxes, from the renderer after a draw, intersect by more than ``tolerance_px``).
- :func:`texts_outside`: no text is cut off by the figure's edge.
- :func:`linear_wide_axes`: a latency axis (or colour bar) whose data span more than a decade
  is on a log scale.
- :func:`split_colour_scales`: panels that draw the same quantity as colours share one scale.
- :func:`series_colours`: the label -> colour mapping of a drawn figure, read from its legends
  and labelled series, so tests can assert that one :class:`~perfkit.plots.style.Palette`
  gives a configuration the same colour in every figure (:func:`colour_conflicts`).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator
from typing import Any, cast

import numpy as np
from matplotlib.axes import Axes
from matplotlib.axis import Axis
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import Collection, LineCollection, PathCollection
from matplotlib.colors import LogNorm, to_hex
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle
from matplotlib.text import Text

from perfkit.plots.style import spans_decade

UNIT_RE = re.compile(r"[(\[][^()\[\]]+[)\]]\s*$")
#: units that make an axis a latency axis (log scale when it spans more than a decade)
LATENCY_UNITS = ("ms", "us", "µs")
_NUMBER_RE = re.compile(r"^[\s\u2212+\-]*[\d.,]+(?:e[\u2212+\-]?\d+)?\s*[%kMG×x]?$|^\$.*\$$")


def has_unit(text: str) -> bool:
    """True when ``text`` ends in a unit in parentheses or brackets: ``"rate (req/s)"``."""
    return bool(UNIT_RE.search(text.strip()))


def _draw(fig: Figure):
    if not hasattr(fig.canvas, "get_renderer"):
        FigureCanvasAgg(fig)
    fig.canvas.draw()  # lays out (constrained layout) and places every tick
    return cast(FigureCanvasAgg, fig.canvas).get_renderer()


def _in_view(axis: Axis, loc: float) -> bool:
    low, high = sorted(axis.get_view_interval())
    span = high - low
    return low - 1e-9 * abs(span or 1) <= loc <= high + 1e-9 * abs(span or 1)


def _hidden_tick_labels(fig: Figure) -> set[int]:
    hidden: set[int] = set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                if not _in_view(axis, tick.get_loc()):
                    hidden.update((id(tick.label1), id(tick.label2)))
    return hidden


def drawn_texts(fig: Figure, drawn: bool = False) -> list[Text]:
    """Every visible, non-empty text as drawn (tick labels outside the view excluded)."""
    if not drawn:
        _draw(fig)
    hidden = _hidden_tick_labels(fig)
    texts = []
    for t in fig.findobj(Text):
        if id(t) in hidden or not t.get_visible() or not t.get_text().strip():
            continue
        if t.axes is not None and not t.axes.get_visible():
            continue
        texts.append(t)
    return texts


def overlapping_texts(fig: Figure, tolerance_px: float = 0.5, drawn: bool = False
                      ) -> list[tuple[str, str]]:
    """Pairs of drawn texts whose bounding boxes overlap by more than ``tolerance_px``."""
    renderer = cast(FigureCanvasAgg, fig.canvas).get_renderer() if drawn else _draw(fig)
    boxes = []
    for t in drawn_texts(fig, drawn=True):
        bb = t.get_window_extent(renderer)
        if bb.width <= 0 or bb.height <= 0:
            continue
        boxes.append((t.get_text(), bb))
    found = []
    for (ta, a), (tb, b) in itertools.combinations(boxes, 2):
        dx = min(a.x1, b.x1) - max(a.x0, b.x0)
        dy = min(a.y1, b.y1) - max(a.y0, b.y0)
        if dx > tolerance_px and dy > tolerance_px:
            found.append((ta, tb))
    return found


def texts_outside(fig: Figure, tolerance_px: float = 1.0, drawn: bool = False) -> list[str]:
    """Texts that reach beyond the figure's edges (they would be cut off)."""
    renderer = cast(FigureCanvasAgg, fig.canvas).get_renderer() if drawn else _draw(fig)
    width, height = fig.canvas.get_width_height()
    out = []
    for t in drawn_texts(fig, drawn=True):
        bb = t.get_window_extent(renderer)
        if (bb.x0 < -tolerance_px or bb.y0 < -tolerance_px or bb.x1 > width + tolerance_px
                or bb.y1 > height + tolerance_px):
            out.append(t.get_text())
    return out


def _shows_numbers(axis: Axis) -> bool:
    labels = [t.get_text() for t in axis.get_ticklabels()
              if t.get_visible() and t.get_text().strip()]
    return bool(labels) and all(_NUMBER_RE.match(s.strip()) for s in labels)


def labels_without_units(fig: Figure, drawn: bool = False) -> list[str]:
    """Axis labels without a unit, and numeric axes without a label (as readable strings)."""
    if not drawn:
        _draw(fig)
    problems = []
    for i, ax in enumerate(fig.axes):
        if not ax.get_visible() or not ax.axison:
            continue
        name = ax.get_title() or ax.get_label() or f"axes {i}"
        for letter, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            if not axis.get_visible():
                continue
            text = axis.get_label().get_text()
            if text.strip() and not has_unit(text):
                problems.append(f"{name}: {letter} label {text!r} has no unit")
            elif not text.strip() and _shows_numbers(axis):
                problems.append(f"{name}: {letter} axis shows numbers but has no label")
    return problems


def unit_of(text: str) -> str | None:
    """The unit at the end of an axis label: ``"p99 latency (ms, log)"`` -> ``"ms"``."""
    m = UNIT_RE.search(text.strip())
    return m.group(0).strip()[1:-1].split(",")[0].strip() if m else None


def is_colorbar(ax: Axes) -> bool:
    return ax.get_label() == "<colorbar>"


def data_axes(fig: Figure) -> list[Axes]:
    """The visible axes that hold data (colour bars excluded)."""
    return [ax for ax in fig.axes if ax.get_visible() and ax.axison and not is_colorbar(ax)]


def _points(artist, ax: Axes) -> np.ndarray | None:
    """The data coordinates (n x 2) an artist draws, or None when it is not drawn in data
    coordinates (reference lines such as axhline, spans, texts)."""
    if isinstance(artist, Line2D):
        return (np.asarray(artist.get_xydata()) if artist.get_transform() == ax.transData
                else None)
    if isinstance(artist, PathCollection):
        ok = artist.get_offset_transform() == ax.transData
        return np.asarray(artist.get_offsets(), dtype=float) if ok else None
    if isinstance(artist, LineCollection):
        if artist.get_transform() != ax.transData:
            return None
        segs = [np.asarray(s, dtype=float) for s in artist.get_segments() if len(s)]
        return np.concatenate(segs) if segs else None
    if isinstance(artist, Collection):
        if artist.get_transform() != ax.transData:
            return None
        paths = [p.vertices for p in artist.get_paths() if len(cast(np.ndarray, p.vertices))]
        return np.concatenate(paths) if paths else None
    if isinstance(artist, Rectangle) and artist.get_data_transform() == ax.transData:
        x, y = artist.get_xy()
        return np.array([[x, y], [x + artist.get_width(), y + artist.get_height()]])
    return None


def data_values(ax: Axes, letter: str) -> np.ndarray:
    """Every finite data value drawn along the ``"x"`` or ``"y"`` axis of ``ax``."""
    col = 0 if letter == "x" else 1
    parts: list[np.ndarray] = []
    for artist in [*ax.lines, *ax.collections, *ax.patches]:
        if not artist.get_visible():
            continue
        xy = _points(artist, ax)
        if xy is not None and xy.size:
            parts.append(np.ma.filled(np.ma.asarray(xy, dtype=float)[:, col], np.nan))
    values = np.concatenate(parts) if parts else np.array([])
    return values[np.isfinite(values)]


def _colorbar_label(cbar) -> str:
    return cbar.ax.get_ylabel() or cbar.ax.get_xlabel()


def linear_wide_axes(fig: Figure, units: Iterable[str] = LATENCY_UNITS, decades: float = 1.0
                     ) -> list[str]:
    """Axes and colour bars in ``units`` whose data span more than ``decades`` powers of ten
    on a linear scale (as readable strings)."""
    units = tuple(units)
    problems = []
    for i, ax in enumerate(data_axes(fig)):
        name = ax.get_title() or f"axes {i}"
        for letter, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            text = axis.get_label().get_text()
            values = data_values(ax, letter)
            if unit_of(text) in units and axis.get_scale() == "linear" and spans_decade(
                    values, decades):
                problems.append(f"{name}: {letter} axis {text!r} spans "
                                f"{_span(values)} on a linear scale")
        for image in ax.images:
            cbar = image.colorbar
            values = np.ma.compressed(cast(np.ndarray, image.get_array()))  # drawn: set
            if (cbar is not None and unit_of(_colorbar_label(cbar)) in units
                    and not isinstance(image.norm, LogNorm) and spans_decade(values, decades)):
                problems.append(f"{name}: colour scale {_colorbar_label(cbar)!r} spans "
                                f"{_span(values)} on a linear scale")
    return problems


def _span(values: np.ndarray) -> str:
    v = values[values > 0]
    return f"{v.min():.3g} to {v.max():.3g} ({np.log10(v.max() / v.min()):.1f} decades)"


def split_colour_scales(fig: Figure) -> list[str]:
    """Quantities drawn as colours (heat maps with the same colour-bar label) on more than one
    colour scale in one figure: panels compared by eye must share one scale."""
    scales: dict[str, set[tuple]] = {}
    for ax in data_axes(fig):
        for image in ax.images:
            cbar = image.colorbar
            key = _colorbar_label(cbar) if cbar is not None else ax.get_title() or "image"
            norm = image.norm
            scales.setdefault(key, set()).add(
                (type(norm).__name__, round(float(cast(float, norm.vmin)), 12),
                 round(float(cast(float, norm.vmax)), 12)))
    return [f"{key!r} is drawn on {len(s)} colour scales" for key, s in scales.items()
            if len(s) > 1]


def _handle_colour(handle) -> str | None:
    if hasattr(handle, "lines") and isinstance(getattr(handle, "lines", None), tuple):
        handle = handle.lines[0]  # an errorbar container: its data line
    colour: Any
    try:
        if isinstance(handle, Line2D):
            colour = handle.get_color()
        elif isinstance(handle, Patch):
            colour = handle.get_facecolor()
        elif isinstance(handle, Collection):
            faces = handle.get_facecolor()
            colour = faces[0] if len(faces) else handle.get_edgecolor()[0]
        else:
            return None
        return to_hex(colour, keep_alpha=False)
    except (ValueError, IndexError, TypeError):
        return None


def _labelled(fig: Figure) -> Iterator[tuple[str, object]]:
    for ax in data_axes(fig):
        handles, labels = ax.get_legend_handles_labels()
        yield from zip(labels, handles, strict=True)
        legend = ax.get_legend()
        if legend is not None:
            texts = [t.get_text() for t in legend.get_texts()]
            yield from zip(texts, legend.legend_handles, strict=False)
    for legend in fig.legends:
        texts = [t.get_text() for t in legend.get_texts()]
        yield from zip(texts, legend.legend_handles, strict=False)


def series_colours(fig: Figure) -> dict[str, str]:
    """``label -> "#rrggbb"`` of every labelled series and legend entry of ``fig`` (the first
    colour seen for a label; :func:`colour_conflicts` of ``[series_colours(fig)]`` is empty
    unless the figure itself gives one label two colours, see :func:`label_colours`)."""
    out: dict[str, str] = {}
    for label, colour in label_colours(fig):
        out.setdefault(label, colour)
    return out


def label_colours(fig: Figure) -> list[tuple[str, str]]:
    """Every ``(label, colour)`` pair drawn in ``fig``, repeats included."""
    pairs = []
    for label, handle in _labelled(fig):
        colour = _handle_colour(handle)
        if label and not label.startswith("_") and colour is not None:
            pairs.append((label, colour))
    return pairs


def colour_conflicts(mappings: Iterable[dict[str, str]]) -> dict[str, set[str]]:
    """Labels that take more than one colour across ``mappings`` (one per figure of a report,
    from :func:`series_colours`): empty when the palette is stable."""
    seen: dict[str, set[str]] = {}
    for mapping in mappings:
        for label, colour in mapping.items():
            seen.setdefault(label, set()).add(colour.lower())
    return {label: colours for label, colours in seen.items() if len(colours) > 1}


def check(fig: Figure, drawn: bool = False) -> dict[str, list]:
    """All the checks after one draw: ``overlapping_text``, ``labels_without_units``,
    ``text_outside``, ``linear_wide_axes`` (a latency axis spanning more than a decade on a
    linear scale), ``split_colour_scales`` (each an empty list when the figure is fine).
    ``drawn``: the figure's Agg canvas has just drawn it at its own dpi (a PNG saved at
    ``fig.dpi`` draws it so): that draw is checked, none is made."""
    if not drawn:
        _draw(fig)
    within = [f"{label!r} has colours {sorted(c)}" for label, c in
              colour_conflicts([{lbl: col} for lbl, col in label_colours(fig)]).items()]
    return {"overlapping_text": [list(p) for p in overlapping_texts(fig, drawn=True)],
            "labels_without_units": labels_without_units(fig, drawn=True),
            "text_outside": texts_outside(fig, drawn=True),
            "linear_wide_axes": linear_wide_axes(fig),
            "split_colour_scales": split_colour_scales(fig),
            "label_colour_conflicts": within}
