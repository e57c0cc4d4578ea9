"""Plots: pure ``f(frame, ax, ...) -> ax`` functions in one publication style.

Each function draws on the axes it is given and returns them; it computes nothing that a reader
would need as a number (those come from :mod:`perfkit.stats` and :mod:`perfkit.scaling`).
:mod:`perfkit.plots.style` sets size, fonts and the colour-blind-safe palette;
:mod:`perfkit.plots.checks` tests a drawn figure for units and overlapping text.
"""

from perfkit.plots import checks, style
from perfkit.plots.effects import forest, variation
from perfkit.plots.latency import (
    percentile_axis,
    percentile_points,
    run_intervals,
    spectrum,
    tail_x,
)
from perfkit.plots.overview import bars, drift, points, timeseries
from perfkit.plots.scaling import heatmap, load_curve, model_curves, usl_curve
from perfkit.plots.style import figure, label

__all__ = [
    "bars", "checks", "drift", "figure", "forest", "heatmap", "label", "load_curve",
    "model_curves",
    "percentile_axis", "percentile_points", "points", "run_intervals", "spectrum", "style",
    "tail_x", "timeseries", "usl_curve", "variation",
]
