"""Checks of a drawn figure, so figure quality is tested rather than judged by eye.

- :func:`labels_without_units`: every axis label names a unit, ``"latency (ms)"`` or
  ``"latency [ms]"``, and no axis shows numbers without a label.
- :func:`overlapping_texts`: no two pieces of text drawn in the figure overlap (their bounding
  boxes, from the renderer after a draw, intersect by more than ``tolerance_px``).
- :func:`texts_outside`: no text is cut off by the figure's edge.
"""

from __future__ import annotations

import itertools
import re

from matplotlib.axis import Axis
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text

UNIT_RE = re.compile(r"[(\[][^()\[\]]+[)\]]\s*$")
_NUMBER_RE = re.compile(r"^[\s\u2212+\-]*[\d.,]+(?:e[\u2212+\-]?\d+)?\s*[%kMG×x]?$|^\$.*\$$")


def has_unit(text: str) -> bool:
    """True when ``text`` ends in a unit in parentheses or brackets: ``"rate (req/s)"``."""
    return bool(UNIT_RE.search(text.strip()))


def _draw(fig: Figure):
    if not hasattr(fig.canvas, "get_renderer"):
        FigureCanvasAgg(fig)
    fig.canvas.draw()  # lays out (constrained layout) and places every tick
    return fig.canvas.get_renderer()


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
    renderer = fig.canvas.get_renderer() if drawn else _draw(fig)
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
    renderer = fig.canvas.get_renderer() if drawn else _draw(fig)
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


def check(fig: Figure) -> dict[str, list]:
    """All the checks after one draw: ``overlapping_text``, ``labels_without_units``,
    ``text_outside`` (each an empty list when the figure is fine)."""
    _draw(fig)
    return {"overlapping_text": [list(p) for p in overlapping_texts(fig, drawn=True)],
            "labels_without_units": labels_without_units(fig, drawn=True),
            "text_outside": texts_outside(fig, drawn=True)}
