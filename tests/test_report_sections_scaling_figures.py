"""The scaling page's figures (perfkit.report.sections.scaling_figures): the heat maps share
one log colour scale and say what their cells are, and the models' legend shows the runs'
markers and the peak N* as drawn."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from _legend import assert_publishable, legend_entries, peak_entries
from matplotlib.colors import to_hex
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle

from perfkit import plots
from perfkit.analysis import load_experiment
from perfkit.plots import checks
from perfkit.report.sections import scaling

#: the closed-loop sweep recorded on a busy shared VM: its default profile has a claimed peak
SHARED_VM = (Path(__file__).resolve().parent / "fixtures" / "scaling"
             / "wrk-connections-shared-vm")



@pytest.fixture(scope="module")
def models():
    closed = load_experiment(SHARED_VM, name="demo-wrk-connections").rows()
    return scaling.fits(closed, ["profile"], 0.95, 0.05, 50, 1)


def test_heat_map_panels_share_one_log_colour_scale(demo_sweep, demo_slo):
    import matplotlib

    matplotlib.use("Agg")
    from perfkit.plots import checks

    grids = scaling.heat_tables(demo_slo)
    assert len(grids) == 2
    fig = scaling.heatmap_figure(grids, 99.0)
    assert checks.split_colour_scales(fig) == []
    norms = {type(im.norm).__name__ for ax in fig.axes for im in ax.images}
    assert norms == {"LogNorm"}


@pytest.mark.parametrize("by, words", [(["profile", "connections"], "geometric mean of the 3"),
                                       (["connections"], "median of the 6 runs' p99")])
def test_the_heat_map_and_the_latency_line_say_what_their_cells_are(demo_sweep, by, words):
    table = scaling.slo(demo_sweep.rows(), by, 5.0, 99.0, seed=1, n_resamples=100)
    for text in (scaling.heatmap_caption(table), scaling.heatmap_text(table),
                 scaling.latency_caption(table, 99.0, 5.0), table.describe()):
        assert words in text
        assert "median run's percentile)" not in text and "medians" not in text
    grid = scaling.heat_tables(table)
    cell = grid["default"] if "profile" in by else grid["all runs"]
    v = table.verdicts_frame()
    row = v[(v["rate_rps"] == 30000) & (v["connections"] == 64)]
    if "profile" in by:
        row = row[row["profile"] == "default"]
    assert cell.loc[64, 30000] == pytest.approx(row["estimate_ms"].iloc[0])


def test_scaling_models_legend_shows_the_runs_markers_and_the_peak(models):
    """The defect: the legend held only the fitted curves' lines; the runs' markers and the
    dotted N* line over its shaded interval were not explained. Each configuration's entry is
    now its marker over its curve's line, and one neutral entry shows N* as drawn: a dotted
    vertical line over a band."""
    points, curves, peaks = scaling.model_frames(models)
    assert len(peaks) >= 1  # the shared VM's sweep: its default has a claimed peak
    palette = plots.Palette.for_labels(points["config"], ["profile"])
    fig = scaling.models_figure(models, ["profile"], lambda labels, by: palette)
    assert_publishable(fig)
    (ax,) = checks.data_axes(fig)
    entries = legend_entries(fig.legends[0])
    for config in points["config"].unique():
        st = {**palette.style(config), "color": to_hex(palette.color(config))}
        dots = [ln for ln in ax.lines if ln.get_linestyle() == "None"
                and to_hex(ln.get_color()) == st["color"] and len(ln.get_xdata())]
        assert len(dots) == 1 and dots[0].get_marker() == st["marker"]
        (glyph,) = [a for a in entries[config] if isinstance(a, Line2D)]
        assert (glyph.get_marker(), to_hex(glyph.get_color())) == (st["marker"], st["color"])
        curve = [ln for ln in ax.lines if ln.get_label() == config]
        assert glyph.get_linestyle() == curve[0].get_linestyle() != "None"
    vlines = [ln for ln in ax.lines if ln.get_linestyle() == ":"]
    assert len(vlines) == len(peaks)
    ((label, artists),) = peak_entries(entries).items()
    assert label == "N* (peak concurrency)\nwith its 95% interval"
    (band,) = [a for a in artists if isinstance(a, Rectangle)]
    (line,) = [a for a in artists if isinstance(a, Line2D)]
    x = np.asarray(line.get_xdata(), dtype=float)
    y = np.asarray(line.get_ydata(), dtype=float)
    assert line.get_linestyle() == ":" and x[0] == x[-1] and y[0] != y[-1]  # upright, dotted
    assert band.get_height() >= np.ptp(y) and band.get_width() < band.get_height() * 3
    assert to_hex(band.get_facecolor()) == to_hex(line.get_color()) == to_hex(plots.style.GREY)


def test_scaling_models_name_a_peak_only_when_one_is_drawn(models):
    points, curves, peaks = scaling.model_frames(models)
    fig, ax = plots.figure(height_in=2.9)
    plots.model_curves(points, curves, ax, "n", "x", "connections (count)",
                       "throughput (req/s)", peaks=peaks.iloc[0:0], confidence=0.95)
    entries = legend_entries(fig.legends[0])
    assert peak_entries(entries) == {}
    assert set(entries) == set(points["config"])
    assert not [ln for ln in ax.lines if ln.get_linestyle() == ":"]
