"""One figure style for every perfkit plot: single-column paper width, colour-blind-safe colours.

- Size: 3.5 in wide (one column of a two-column paper), 8 pt text, so a figure reads the same in
  print as on screen; :func:`figure` makes figures of this size with a constrained layout.
- Colours: the Okabe-Ito palette (Okabe & Ito 2008, "Color Universal Design"), distinguishable
  under the common colour-vision deficiencies; series are told apart by line style and marker as
  well, so a grey-scale print still works.
- One colour per configuration across a report (:mod:`perfkit.plots.palette`): a
  :class:`Palette` gives a configuration (its configuration factors' levels, ``profile =
  default``) one colour on every page; a load level (connections, users) is a marker inside
  that colour, never another colour; series that are not configurations (experiments, effect
  names, load-level blocks) are black and grey (:class:`Neutral`), as are reference lines
  (grey) and thresholds (black, dashed).
- Units: every axis label names its unit, as :func:`label` writes it: ``"latency (ms)"``.
- Log scales: a latency axis whose data span more than a decade is logarithmic
  (:func:`spans_decade`), labelled with plain numbers (:func:`plain_log`), never bare 10^k.
- Reproducible files: SVG ids are salted with a constant and no date is written.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import matplotlib as mpl
import numpy as np
from cycler import cycler
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

if TYPE_CHECKING:
    from matplotlib.typing import RcKeyType

from perfkit.plots.palette import (  # noqa: F401  (re-exported: one place to import from)
    GREY,
    HATCHES,
    LINESTYLES,
    LOAD_COLUMNS,
    MARKERS,
    NEUTRAL_COLORS,
    OKABE_ITO,
    PALETTE_COLORS,
    SERIES,
    THRESHOLD,
    Neutral,
    Palette,
    natural_key,
    neutral_style,
)

#: sequential colour map for heat maps (perceptually uniform, colour-blind safe)
SEQUENTIAL_CMAP = "cividis"

WIDTH_IN = 3.5
HEIGHT_IN = 2.4
FONT_PT = 8

RC: dict[RcKeyType, Any] = {
    "figure.figsize": (WIDTH_IN, HEIGHT_IN),
    "figure.dpi": 150,
    "figure.constrained_layout.use": True,
    "savefig.dpi": 300,
    "font.size": FONT_PT,
    "axes.titlesize": FONT_PT,
    "axes.labelsize": FONT_PT,
    "xtick.labelsize": FONT_PT - 1,
    "ytick.labelsize": FONT_PT - 1,
    "legend.fontsize": FONT_PT - 1,
    "legend.frameon": True,
    "legend.framealpha": 0.85,
    "legend.edgecolor": "none",
    "legend.handlelength": 2.2,
    "axes.prop_cycle": cycler(color=SERIES),
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.color": "#dddddd",
    "grid.linewidth": 0.5,
    "lines.linewidth": 1.2,
    "lines.markersize": 3.5,
    "svg.fonttype": "path",
    "svg.hashsalt": "perfkit",
    "pdf.fonttype": 42,
    "image.cmap": SEQUENTIAL_CMAP,
}


def use() -> None:
    """Apply the style to matplotlib's global settings (for notebooks)."""
    mpl.rcParams.update(RC)


def figure(nrows: int = 1, ncols: int = 1, height_in: float | None = None,
           width_in: float = WIDTH_IN, **subplot_kw):
    """A new styled figure and its axes (``Figure``, not pyplot: nothing is shown implicitly).

    The style is applied globally first (matplotlib reads most settings when it draws, not when
    the figure is made). Returns ``(fig, ax)``; ``ax`` is an array when ``nrows * ncols > 1``.
    """
    use()
    height = height_in if height_in is not None else HEIGHT_IN * (0.75 * nrows + 0.25)
    fig = Figure(figsize=(width_in, height), layout="constrained")
    FigureCanvasAgg(fig)  # a canvas that can draw, without pyplot
    axes = fig.subplots(nrows, ncols, squeeze=True, **subplot_kw)
    return fig, axes


def label(quantity: str, unit: str) -> str:
    """An axis label with its unit: ``label("p99 latency", "ms")`` -> ``"p99 latency (ms)"``."""
    return f"{quantity} ({unit})"


def series_style(i: int) -> dict:
    """Colour, line style and marker of the ``i``-th series."""
    return {"color": SERIES[i % len(SERIES)], "linestyle": LINESTYLES[i % len(LINESTYLES)],
            "marker": MARKERS[i % len(MARKERS)]}


def styles_for(keys: Iterable[object], palette: Palette | Neutral | None = None) -> list[dict]:
    """The style of each series key: from ``palette`` by label when given (a
    :class:`Palette` for configurations, :class:`Neutral` for anything else), else by position
    (:func:`series_style`, the behaviour without a palette). A ``None`` key (one unnamed
    series) takes the first style."""
    out = []
    for i, key in enumerate(keys):
        out.append(palette.style(key) if palette is not None and key is not None
                   else series_style(i))
    return out


def spans_decade(values, decades: float = 1.0) -> bool:
    """True when the positive finite ``values`` span more than ``decades`` powers of ten
    (max / min > 10**decades): such a latency axis reads better on a log scale."""
    v = np.asarray(values, dtype=float).ravel()
    v = v[np.isfinite(v) & (v > 0)]
    return bool(v.size >= 2 and v.max() / v.min() > 10.0 ** decades)


def is_latency_column(column: str | None) -> bool:
    """A latency column by its unit suffix (``_ms``, ``_us``)."""
    return bool(column) and str(column).endswith(("_ms", "_us"))


def resolve_log(logy: bool | None, values, latency: bool = True) -> bool:
    """``logy`` when given; ``None`` means automatic: log when ``latency`` and the values
    span more than a decade."""
    if logy is not None:
        return bool(logy)
    return latency and spans_decade(values)


def plain_log(axis) -> None:
    """Label a log axis with plain numbers (0.5, 1, 2, 5, 10 ...) instead of powers of ten."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    low, high = sorted(axis.get_view_interval())
    decades = np.log10(high / low) if low > 0 and high > 0 else 10
    subs = ((1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 7.0) if decades <= 1 else
            (1.0, 2.0, 5.0) if decades <= 3 else (1.0,))
    axis.set_major_locator(LogLocator(base=10, subs=subs))
    axis.set_major_formatter(FuncFormatter(_compact))
    axis.set_minor_formatter(NullFormatter())


def count_log(axis, max_ticks: int = 10) -> None:
    """Make ``axis`` (an x or y :class:`~matplotlib.axis.Axis`) a base-2 log axis for counts
    (connections, users), ticks at 1, 2, 4, 8, ... printed as plain numbers (every other
    power of two when more than ``max_ticks`` would show)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator

    ax = axis.axes
    (ax.set_xscale if axis is ax.xaxis else ax.set_yscale)("log", base=2)
    axis.set_major_locator(LogLocator(base=2, numticks=max_ticks + 1))
    axis.set_major_formatter(FuncFormatter(_compact))
    axis.set_minor_locator(NullLocator())


def as_list(axes) -> list:
    """The axes of :func:`figure` as a flat list, whether one or many."""
    return list(np.atleast_1d(axes).ravel())


#: readable names and units of common frame columns
COLUMNS = {
    "target_rate_rps": ("offered rate", "req/s"),
    "throughput_rps": ("throughput", "req/s"),
    "connections": ("connections", "count"),
    "users": ("users", "count"),
    "threads": ("threads", "count"),
    "error_ratio": ("error ratio", "fraction"),
    "latency_mean_ms": ("mean latency", "ms"),
    "latency_max_ms": ("max latency", "ms"),
    "order": ("run order", "index"),
}
_SUFFIX_UNITS = (("_ms", "ms"), ("_rps", "req/s"), ("_s", "s"), ("_bytes", "B"),
                 ("_percent", "%"), ("_pct", "%"))


def column_name(column: str) -> str:
    """A readable name without unit: ``latency_p99_9_ms`` -> ``"p99.9 latency"``."""
    if column in COLUMNS:
        return COLUMNS[column][0]
    m = re.fullmatch(r"latency_(uncorrected_)?p(\d+)(?:_(\d+))?_ms", column)
    if m:
        q = m.group(2) + (f".{m.group(3)}" if m.group(3) else "")
        return f"{'uncorrected ' if m.group(1) else ''}p{q} latency"
    for suffix, _ in _SUFFIX_UNITS:
        if column.endswith(suffix):
            return column[: -len(suffix)].replace("_", " ")
    return column.replace("_", " ")


def column_unit(column: str) -> str:
    """The unit of a column from its name (``_ms`` -> ms); ``level`` when it has none."""
    if column in COLUMNS:
        return COLUMNS[column][1]
    for suffix, unit in _SUFFIX_UNITS:
        if column.endswith(suffix):
            return unit
    return "level"


def column_label(column: str) -> str:
    """Axis label of a column: ``"offered rate (req/s)"``, ``"p99 latency (ms)"``."""
    return label(column_name(column), column_unit(column))


def _compact(value: float, _pos=None) -> str:
    if abs(value) >= 10_000:
        return f"{value / 1000:g}k"
    return f"{value:g}"


def compact_numbers(axis, nbins: int = 6) -> None:
    """At most ``nbins`` ticks, with thousands as ``k`` (45000 -> 45k): labels never crowd."""
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    axis.set_major_locator(MaxNLocator(nbins=nbins, steps=[1, 2, 2.5, 5, 10]))
    axis.set_major_formatter(FuncFormatter(_compact))
