"""Reading a drawn figure's legend back: the glyph of each entry, as matplotlib drew it."""

from __future__ import annotations

from matplotlib.colors import to_hex
from matplotlib.lines import Line2D
from matplotlib.offsetbox import DrawingArea, HPacker, TextArea

from perfkit.plots import checks


def assert_publishable(fig):
    assert {k: v for k, v in checks.check(fig).items() if v} == {}


def legend_entries(legend) -> dict[str, list]:
    """``label -> the artists of its glyph`` of each entry of ``legend`` (as drawn)."""
    out = {}

    def walk(box):
        for child in box.get_children():
            kids = child.get_children() if isinstance(child, HPacker) else []
            if len(kids) == 2 and isinstance(kids[0], DrawingArea) \
                    and isinstance(kids[1], TextArea):
                out[kids[1].get_text()] = list(kids[0].get_children())
            elif hasattr(child, "get_children") and not isinstance(child, DrawingArea | TextArea):
                walk(child)

    walk(legend._legend_box)
    return out


def marks(artists) -> list[tuple[object, str]]:
    """``(marker, colour)`` of every marker glyph among ``artists``."""
    return [(ln.get_marker(), to_hex(ln.get_color())) for ln in artists
            if isinstance(ln, Line2D) and ln.get_marker() not in ("None", "none", None, "")]


def peak_entries(entries):
    return {t: a for t, a in entries.items() if t.startswith("N* (peak concurrency)")}
