"""Colours of a report: one colour per configuration on every page, black and greys for the rest.

The rule a reader can follow (the notebooks repeat it where colours first appear):

1. **Colour names a configuration**: the levels of its configuration factors (``profile =
   default``; ``keepalive = on, cache = off``), never a load level. ``default`` has one colour
   on every page of a report, whether a figure shows it alone, at one load point (the latency
   page) or at every load level (the scaling page).
2. **A load level is a marker**: where a figure also splits by a load column
   (:data:`LOAD_COLUMNS`: connections, users, threads, offered rate, endpoint), each level
   has its own marker, the same on every page (16 connections a circle, 64 a square),
   inside its configuration's colour: ``"default, 16"`` and ``"default, 64"`` are both
   default's colour.
3. **Line style follows the configuration**, so a grey-scale print still tells them apart; in
   a figure without a load split the marker follows the configuration too.
4. **What is not a configuration is black or grey**: experiments, effect names, blocks of
   load levels, corrected vs uncorrected latency take :class:`Neutral` looks (black and greys
   told apart by marker, line style and hatch); reference lines are :data:`GREY` and
   thresholds :data:`THRESHOLD` (black, dashed). None ever takes a configuration colour.
5. Colours are :data:`PALETTE_COLORS` in a fixed order: Okabe-Ito's six line colours (Okabe &
   Ito 2008), then Paul Tol's nine "muted" ones (Tol 2021, "Colour schemes", SRON/EPS/TN/09-002:
   both colour-blind safe): the first fifteen configurations of a report each get their own
   colour; from the sixteenth on colours repeat with another marker and line style.
6. The configuration named :data:`BASELINE` (``default``, nginx as installed) takes the first
   colour in every report, whatever the report showed first; the others take the next colours
   in the order they appear, unless the report's parameter folder has a ``palette.yaml``
   (``configurations: [default, buffered-log, ...]``) that fixes their order, so that the
   reports built from one folder of parameter files (the demo and the seeds) give a
   configuration the same colour and no colour to two configurations
   (:func:`perfkit.report.build.seed_palette`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# columns that set a run's load: a marker, never a colour
from perfkit.analysis.core import LOAD_COLUMNS

#: Okabe-Ito, by name
OKABE_ITO = {
    "black": "#000000", "orange": "#E69F00", "sky_blue": "#56B4E9", "bluish_green": "#009E73",
    "yellow": "#F0E442", "blue": "#0072B2", "vermillion": "#D55E00", "reddish_purple": "#CC79A7",
}
#: the order series take colours in outside a report (yellow last: it is faint on white)
SERIES = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
          "#F0E442")
LINESTYLES = ("-", "--", "-.", ":", (0, (5, 1)), (0, (3, 1, 1, 1, 1, 1)), (0, (1, 2)), "-")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
#: markers of configurations: not the star, which marks a published or reference value
CONFIG_MARKERS = MARKERS[:-1]
#: colours of configurations: Okabe-Ito without black (kept for thresholds and neutral
#: series) and yellow (too faint for lines and markers on white), neighbours differing most,
#: then Paul Tol's "muted" scheme (rose, indigo, sand, green, cyan, wine, teal, olive, purple)
PALETTE_COLORS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#56B4E9", "#E69F00",
                  "#CC6677", "#332288", "#DDCC77", "#117733", "#88CCEE", "#882255", "#44AA99",
                  "#999933", "#AA4499")
#: neutral elements: reference lines, grids
GREY = "#666666"
#: a threshold (SLO) line: black and dashed, so it is never mistaken for a series
THRESHOLD = OKABE_ITO["black"]
#: colours of series that are not configurations (experiments, effects, load blocks)
NEUTRAL_COLORS = ("#000000", "#6E6E6E", "#A6A6A6")
#: hatches that tell neutral bars apart
HATCHES = ("", "////", "\\\\\\\\", "xxxx", "....", "++++", "----", "oo")
#: the configuration that takes the first colour in every report (rule 6)
BASELINE = "default"
#: how :func:`perfkit.report.sections.common.config_labels` joins the levels of a label
SEPARATOR = ", "


def natural_key(text: str) -> tuple:
    """Sort key that orders numbers inside labels by value: ``"default, 16"`` before
    ``"default, 256"``, ``"demo-2"`` before ``"demo-10"``."""
    parts = [p for p in re.split(r"(\d+(?:\.\d+)?)", text) if p]
    return tuple((0, float(p), p) if p[0].isdigit() else (1, 0.0, p) for p in parts)


def _sorted(values: Iterable[str]) -> list[str]:
    return sorted(set(values), key=natural_key)


def split_label(label: object, columns: Sequence[str] | None) -> tuple[str, str]:
    """``(configuration, load)`` of a legend label joining the levels of ``columns``:
    ``split_label("default, 16", ["profile", "connections"]) == ("default",
    "connections=16")``. Without columns (or when the label does not split into one level per
    column) the whole label is the configuration."""
    text = str(label)
    cols = list(columns or ())
    parts = text.split(SEPARATOR) if cols else []
    if len(parts) != len(cols) or not any(c in LOAD_COLUMNS for c in cols):
        return text, ""
    config = SEPARATOR.join(p for c, p in zip(cols, parts, strict=True) if c not in LOAD_COLUMNS)
    load = SEPARATOR.join(f"{c}={p}" for c, p in zip(cols, parts, strict=True)
                          if c in LOAD_COLUMNS)
    return config, load


def _load_group(load: str) -> tuple[str, ...]:
    return tuple(part.split("=", 1)[0] for part in load.split(SEPARATOR))


def neutral_style(i: int) -> dict:
    """Colour (black or grey), marker, line style and hatch of the ``i``-th series that is not
    a configuration."""
    return {"color": NEUTRAL_COLORS[i % len(NEUTRAL_COLORS)], "marker": MARKERS[i % len(MARKERS)],
            "linestyle": LINESTYLES[i % len(LINESTYLES)], "hatch": HATCHES[i % len(HATCHES)]}


@dataclass(frozen=True)
class Palette:
    """One colour per configuration across every figure of a report (the rule of
    :mod:`perfkit.plots.palette`: colour = configuration, marker = load level, black and grey
    = anything else).

    ``labels`` are the configurations in colour order (configuration ``i`` takes
    ``PALETTE_COLORS[i mod 15]``), ``loads`` the load levels in marker order (``"connections=16"``;
    a level's marker is its rank among the levels of its column), ``parts`` the legend labels
    that join a configuration and a load level, each as ``(label, configuration, load)``.

    Build it with :meth:`for_labels` (sorted, so two notebooks building it from the same
    labels agree), or grow one report-wide palette with :meth:`extend`
    (:meth:`perfkit.report.nb.Report.palette` keeps it in ``palette.json``): a configuration
    keeps the colour it got the first time any figure showed it. Every series-drawing function
    of :mod:`perfkit.plots` takes ``palette=``; a label whose configuration is not in the
    palette raises ``KeyError`` (a figure silently taking another colour is what the palette
    exists to prevent).
    """

    labels: tuple[str, ...]
    loads: tuple[str, ...] = ()
    parts: tuple[tuple[str, str, str], ...] = ()
    reference: str = GREY
    threshold: str = THRESHOLD

    def __post_init__(self) -> None:
        for name, values in (("labels", self.labels), ("loads", self.loads)):
            if len(set(values)) != len(values):
                raise ValueError(f"palette {name} must be unique, got {list(values)}")

    @classmethod
    def for_labels(cls, labels: Iterable[object], columns: Sequence[str] | None = None
                   ) -> Palette:
        """A palette of the distinct ``labels`` (as ``str``), in natural sort order;
        ``columns``: the columns each label joins (``["profile", "connections"]``), so that
        its configuration takes the colour and its load level the marker."""
        return cls(()).extend(labels, columns)

    def extend(self, labels: Iterable[object], columns: Sequence[str] | None = None
               ) -> Palette:
        """This palette with the configurations and load levels of ``labels`` added (new ones
        after the known ones, in natural order); known ones keep their colour and marker."""
        split = {str(v): split_label(v, columns) for v in labels}
        configs = [c for c in _sorted(c for c, _ in split.values() if c)
                   if c not in self.labels]
        loads = [x for x in _sorted(x for _, x in split.values() if x) if x not in self.loads]
        parts = {lbl: (c, x) for lbl, c, x in self.parts}
        for lbl, (c, x) in split.items():
            if x:
                parts[lbl] = (c, x)
            else:
                parts.pop(lbl, None)  # now a configuration as a whole
        return Palette((*self.labels, *configs), (*self.loads, *loads),
                       tuple((lbl, c, x) for lbl, (c, x) in parts.items()),
                       self.reference, self.threshold)

    def split(self, label: object) -> tuple[str, str]:
        """``(configuration, load)`` of ``label`` (load ``""`` when it names none)."""
        key = str(label)
        for lbl, config, load in self.parts:
            if lbl == key:
                return config, load
        return key, ""

    def configuration(self, label: object) -> str:
        """The configuration ``label`` shows (``""`` when it shows only a load level)."""
        return self.split(label)[0]

    def __contains__(self, label: object) -> bool:
        config, load = self.split(label)
        return config in self.labels if config else bool(load)

    def __len__(self) -> int:
        return len(self.labels)

    def style(self, label: object) -> dict:
        """``{"color", "marker", "linestyle"}`` of ``label``: its configuration's colour and
        line style, its load level's marker (its configuration's marker without one)."""
        config, load = self.split(label)
        if config and config not in self.labels:
            raise KeyError(f"label {str(label)!r} is not in the palette; build it from every "
                           f"label of the report (it has {list(self.labels)})")
        if config:
            i = self.slot(config)
            n = len(PALETTE_COLORS)
            shift = i % n + i // n
            out = {"color": PALETTE_COLORS[i % n],
                   "marker": CONFIG_MARKERS[shift % len(CONFIG_MARKERS)],
                   "linestyle": LINESTYLES[(shift + i // n) % len(LINESTYLES)]}
        else:  # only a load level: not a configuration, so black
            out = {"color": NEUTRAL_COLORS[0], "marker": "o", "linestyle": "-"}
        if load:
            group = _load_group(load)
            same = [x for x in self.loads if _load_group(x) == group]
            rank = same.index(load)
            out["marker"] = MARKERS[rank % len(MARKERS)]
            if not config:
                out["linestyle"] = LINESTYLES[rank % len(LINESTYLES)]
        return out

    def slot(self, config: str) -> int:
        """The colour slot of a configuration: :data:`BASELINE` always 0, every other in the
        order the report first showed it, from 1."""
        if config == BASELINE:
            return 0
        return [c for c in self.labels if c != BASELINE].index(config) + 1

    def color(self, label: object) -> str:
        """The colour (``#rrggbb``) of ``label``."""
        return self.style(label)["color"]

    def mapping(self) -> dict[str, str]:
        """``label -> colour`` for every configuration and every joined label (to compare
        with :func:`perfkit.plots.checks.series_colours` of a drawn figure)."""
        out = {lbl: self.color(lbl) for lbl in self.labels}
        out.update({lbl: self.color(lbl) for lbl, _, _ in self.parts})
        return out

    def colours(self) -> dict[str, str]:
        """``configuration -> colour``, in colour order."""
        return {c: self.color(c) for c in sorted(self.labels, key=self.slot)}

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (``palette.json``), with each configuration's colour."""
        return {"configurations": list(self.labels), "loads": list(self.loads),
                "labels": {lbl: [c, x] for lbl, c, x in self.parts},
                "colours": self.colours()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Palette:
        """The palette :meth:`to_dict` wrote."""
        return cls(tuple(data.get("configurations", ())), tuple(data.get("loads", ())),
                   tuple((lbl, c, x) for lbl, (c, x) in data.get("labels", {}).items()))


@dataclass(frozen=True)
class Neutral:
    """Looks for series that are not configurations (experiments, effect names, blocks of load
    levels, kinds of measurement): black and greys (:data:`NEUTRAL_COLORS`) told apart by
    marker, line style and hatch, so they never take a configuration's colour. Same interface
    as :class:`Palette` (``style``, ``color``, ``in``)."""

    labels: tuple[str, ...]

    @classmethod
    def for_labels(cls, labels: Iterable[object]) -> Neutral:
        """The distinct ``labels`` (as ``str``) in natural sort order."""
        return cls(tuple(_sorted(str(v) for v in labels)))

    def __contains__(self, label: object) -> bool:
        return str(label) in self.labels

    def __len__(self) -> int:
        return len(self.labels)

    def style(self, label: object) -> dict:
        """``{"color", "marker", "linestyle", "hatch"}`` of ``label``."""
        key = str(label)
        if key not in self.labels:
            raise KeyError(f"label {key!r} is not among {list(self.labels)}")
        return neutral_style(self.labels.index(key))

    def color(self, label: object) -> str:
        return self.style(label)["color"]
