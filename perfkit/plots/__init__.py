"""Plots: pure ``f(frame, ax, ...) -> ax`` functions in one publication style.

Each function draws on the axes it is given and returns them; it computes nothing that a reader
would need as a number (those come from :mod:`perfkit.analysis`).
:mod:`perfkit.plots.style` sets size, fonts and the colour-blind-safe
:class:`~perfkit.plots.style.Palette` (one look per configuration across a report);
:mod:`perfkit.plots.checks` tests a drawn figure (units, overlapping text, log scales, the
label -> colour mapping); :func:`perfkit.plots.alt.describe` writes its alt text.

Public: ``perfkit.plots`` is part of perfkit's public surface (docs/api.md, "Figures").
"""

from typing import TYPE_CHECKING, Any

from perfkit import _lazy

if TYPE_CHECKING:
    from perfkit.plots import alt, checks, style
    from perfkit.plots.alt import describe
    from perfkit.plots.effects import forest, forest_height_in, variation
    from perfkit.plots.latency import (
        percentile_axis,
        percentile_points,
        run_intervals,
        spectrum,
        tail_x,
    )
    from perfkit.plots.overview import bars, drift, drift_panels, points, timeseries
    from perfkit.plots.scaling import heatmap, heatmaps, load_curve, model_curves
    from perfkit.plots.style import Palette, figure, label

#: each name's module, imported when the name is first asked for: importing one submodule
#: (perfkit.plots.palette, matplotlib-free, for a report's colours) ran this file, which
#: imported every one and matplotlib with them (0.3 s before a report's first page)
_EXPORTS = {
    **{m: (f"perfkit.plots.{m}", None) for m in ("alt", "checks", "style")},
    **_lazy.same_name("perfkit.plots.alt", "describe"),
    **_lazy.same_name("perfkit.plots.effects", "forest", "forest_height_in", "variation"),
    **_lazy.same_name("perfkit.plots.latency", "percentile_axis", "percentile_points",
                      "run_intervals", "spectrum", "tail_x"),
    **_lazy.same_name("perfkit.plots.overview", "bars", "drift", "drift_panels", "points",
                      "timeseries"),
    **_lazy.same_name("perfkit.plots.scaling", "heatmap", "heatmaps", "load_curve",
                      "model_curves"),
    **_lazy.same_name("perfkit.plots.style", "Palette", "figure", "label"),
}


def __getattr__(name: str) -> Any:
    return _lazy.attribute(globals(), _EXPORTS, name)


def __dir__() -> list[str]:
    return _lazy.names(globals(), _EXPORTS)


__all__ = [
    "Palette", "alt", "bars", "checks", "describe", "drift", "drift_panels", "figure", "forest",
    "forest_height_in", "heatmap", "heatmaps", "label", "load_curve", "model_curves",
    "percentile_axis", "percentile_points", "points", "run_intervals", "spectrum", "style",
    "tail_x", "timeseries", "variation",
]
