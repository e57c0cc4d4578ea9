"""Figures are checked by tests, not by eye: units on every axis, no overlapping text, the tail
axis of the percentile spectrum, the colour-blind-safe palette, and the checks themselves."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.colors import to_rgb

from perfkit import plots
from perfkit.plots import checks, style
from perfkit.report.sections import common, latency, scaling

FIX = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture(scope="module")
def wrk2_sweep():
    return common.load_experiment(str(FIX / "wrk2" / "sweep"))


@pytest.fixture(scope="module")
def wrk_sweep():
    return common.load_experiment(str(FIX / "wrk" / "sweep"))


def assert_publishable(fig):
    result = checks.check(fig)
    assert set(result) >= {"overlapping_text", "labels_without_units", "text_outside",
                           "linear_wide_axes", "split_colour_scales"}
    assert {k: v for k, v in result.items() if v} == {}


# -- the checks can fail -----------------------------------------------------------------------
def test_has_unit_accepts_parentheses_and_brackets_only_at_the_end():
    assert checks.has_unit("p99 latency (ms)")
    assert checks.has_unit("rate [req/s]")
    assert not checks.has_unit("latency")
    assert not checks.has_unit("(ms) latency")
    assert not checks.has_unit("latency ()")


def test_overlapping_texts_finds_two_labels_at_the_same_place():
    fig, ax = plots.figure()
    ax.text(0.5, 0.5, "first label", transform=ax.transAxes)
    ax.text(0.52, 0.5, "second label", transform=ax.transAxes)
    ax.set_xlabel("x (s)")
    ax.set_ylabel("y (ms)")
    pairs = checks.overlapping_texts(fig)
    assert ("first label", "second label") in pairs


def test_overlapping_texts_finds_crowded_tick_labels():
    fig, ax = plots.figure(width_in=1.5)
    ax.set_xticks(range(10), [f"label-{i:03d}" for i in range(10)])
    assert checks.overlapping_texts(fig)


def test_labels_without_units_names_the_axis():
    fig, ax = plots.figure()
    ax.plot([1, 2], [3, 4])
    ax.set_xlabel("connections")
    found = checks.labels_without_units(fig)
    assert any("x label 'connections' has no unit" in p for p in found)
    assert any("y axis shows numbers but has no label" in p for p in found)


def test_text_outside_the_figure_is_reported():
    fig, ax = plots.figure()
    ax.set_xlabel("x (s)")
    ax.set_ylabel("y (ms)")
    fig.text(0.95, 0.5, "a long note that runs off the right edge")
    assert checks.texts_outside(fig) == ["a long note that runs off the right edge"]


def test_tick_labels_outside_the_view_are_not_counted():
    fig, ax = plots.figure()
    ax.plot([0, 1], [0, 1])
    ax.set_xticks([-100, 0, 1, 100])
    ax.set_xlim(0, 1)
    ax.set_xlabel("x (s)")
    ax.set_ylabel("y (ms)")
    texts = {t.get_text() for t in checks.drawn_texts(fig)}
    assert "100" not in texts and "−100" not in texts


def test_linear_wide_axes_flags_a_latency_axis_spanning_decades_on_a_linear_scale():
    fig, ax = plots.figure()
    ax.plot([1, 2, 3], [1.5, 40.0, 2500.0], marker="o")
    ax.set_xlabel("run (index)")
    ax.set_ylabel("p99 latency (ms)")
    found = checks.linear_wide_axes(fig)
    assert len(found) == 1 and "'p99 latency (ms)'" in found[0] and "3.2 decades" in found[0]
    ax.set_yscale("log")
    assert checks.linear_wide_axes(fig) == []


def test_linear_wide_axes_ignores_reference_lines_and_other_units():
    fig, ax = plots.figure()
    ax.plot([1, 2], [2.0, 3.0])
    ax.axhline(1000.0)  # a reference line is not data
    ax.set_ylabel("p99 latency (ms)")
    ax.set_xlabel("rate (req/s)")
    assert checks.linear_wide_axes(fig) == []
    fig, ax = plots.figure()
    ax.plot([1, 2], [10.0, 50000.0])
    ax.set_ylabel("throughput (req/s)")  # not a latency axis
    assert checks.linear_wide_axes(fig) == []


def test_split_colour_scales_flags_panels_each_on_their_own_scale():
    grids = [pd.DataFrame([[1.0, 2.0], [3.0, 300.0]]), pd.DataFrame([[1.5, 2.0], [3.0, 4.0]])]
    fig, axes = plots.figure(nrows=2, height_in=4)
    for ax, grid in zip(axes, grids, strict=True):
        plots.heatmap(grid, ax, "x (s)", "y (s)", "p99 (ms)")
    assert checks.split_colour_scales(fig) == ["'p99 (ms)' is drawn on 2 colour scales"]
    fig, axes = plots.figure(nrows=2, height_in=4)
    plots.heatmaps(dict(zip("ab", grids, strict=True)), axes, "x (s)", "y (s)", "p99 (ms)")
    assert checks.split_colour_scales(fig) == []


def test_series_colours_reads_legend_and_labelled_series():
    fig, ax = plots.figure()
    ax.plot([1, 2], [1, 2], color="#0072B2", label="tuned")
    ax.plot([1, 2], [2, 1], color="#D55E00", label="_hidden")
    ax.legend()
    fig.legend([plt_line("#009E73")], ["above"])
    assert checks.series_colours(fig) == {"tuned": "#0072b2", "above": "#009e73"}
    conflicts = checks.colour_conflicts([{"tuned": "#0072b2"}, {"tuned": "#d55e00"},
                                         {"default": "#009e73"}])
    assert conflicts == {"tuned": {"#0072b2", "#d55e00"}}


def plt_line(colour):
    from matplotlib.lines import Line2D

    return Line2D([], [], color=colour)


# -- style -------------------------------------------------------------------------------------
def test_palette_is_okabe_ito():
    okabe_ito = {"#000000", "#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00",
                 "#CC79A7"}
    assert set(style.SERIES) == okabe_ito
    assert style.SERIES[-1] == "#F0E442"  # yellow, faint on white, comes last


def test_series_differ_by_more_than_colour():
    a, b = style.series_style(0), style.series_style(1)
    assert a["linestyle"] != b["linestyle"] and a["marker"] != b["marker"]


def test_figure_is_single_column_width_with_readable_text():
    fig, _ = plots.figure()
    assert fig.get_figwidth() == pytest.approx(3.5)
    assert style.RC["font.size"] >= 7 and style.RC["xtick.labelsize"] >= 6


@pytest.mark.parametrize(("column", "label"), [
    ("latency_p99_ms", "p99 latency (ms)"),
    ("latency_p99_9_ms", "p99.9 latency (ms)"),
    ("latency_uncorrected_p50_ms", "uncorrected p50 latency (ms)"),
    ("target_rate_rps", "offered rate (req/s)"),
    ("connections", "connections (count)"),
    ("profile", "profile (level)"),
])
def test_column_labels_carry_units(column, label):
    assert style.column_label(column) == label


# -- the tail axis -----------------------------------------------------------------------------
def test_tail_positions_are_one_over_one_minus_p():
    np.testing.assert_allclose(plots.tail_x([50, 90, 99, 99.9, 99.99]),
                               [2, 10, 100, 1000, 10000])


def test_percentile_axis_ticks_read_as_percentiles():
    fig, ax = plots.figure()
    plots.percentile_axis(ax, 99.99)
    ax.set_ylabel("latency (ms)")
    fig.canvas.draw()
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == ["50%", "90%", "99%", "99.9%", "99.99%"]
    assert ax.get_xscale() == "log"
    assert ax.get_xlabel() == "percentile (%)"


# -- every plot on real data -------------------------------------------------------------------
def test_spectrum_of_the_wrk2_sweep_is_publishable(wrk2_sweep):
    groups = latency.grouped_runs(wrk2_sweep, ["profile"],
                                  {"target_rate_rps": 30000, "connections": 64})
    frame = latency.spectrum_frame(groups, n_resamples=200)
    fig, ax = plots.figure()
    plots.spectrum(frame, ax, legend_title="profile")
    assert_publishable(fig)
    assert len(ax.collections) == 2  # one CI band per configuration


def test_run_intervals_and_printed_points_are_publishable(wrk2_sweep, wrk_sweep):
    groups = latency.grouped_runs(wrk2_sweep, ["profile"],
                                  {"target_rate_rps": 15000, "connections": 16})
    table = latency.percentile_table(groups, (99.0,))
    fig, ax = plots.figure()
    plots.run_intervals(latency.within_run_table(groups), table, ax)
    assert_publishable(fig)
    printed = latency.spectrum_frame(latency.grouped_runs(wrk_sweep, ["profile"],
                                                          {"connections": 50}))
    fig, ax = plots.figure()
    plots.percentile_points(printed, ax)
    assert_publishable(fig)


def test_load_curves_and_heatmap_are_publishable(wrk2_sweep):
    _, frame = scaling.runs_with_config(wrk2_sweep, ["profile", "connections"])
    fig, ax = plots.figure()
    plots.load_curve(frame, ax, "target_rate_rps", "latency_p99_ms",
                     style.column_label("target_rate_rps"), style.column_label("latency_p99_ms"),
                     by="config", slo=5.0, slo_label="SLO 5 ms", logy=True)
    assert_publishable(fig)
    grids = scaling.heat_tables(scaling.slo(wrk2_sweep.rows(), ["profile", "connections"], 5.0,
                                            n_resamples=200))
    fig, axes = plots.figure(nrows=2, height_in=4.2)
    plots.heatmaps(grids, axes, "offered rate (req/s)", "connections (count)", "p99 (ms)")
    assert_publishable(fig)


def test_forest_marks_intervals_that_exclude_one():
    rows = pd.DataFrame({"term": ["a", "b"], "ratio": [0.5, 1.1],
                         "ratio_ci_low": [0.4, 0.9], "ratio_ci_high": [0.6, 1.3]})
    fig, ax = plots.figure()
    plots.forest(rows, ax, "effect on p99 latency (ratio)")
    assert_publishable(fig)
    faces = [line.get_markerfacecolor() for line in ax.lines if line.get_marker() not in
             ("None", "", None) and len(line.get_xdata()) == 1]
    white = (1.0, 1.0, 1.0)
    assert to_rgb(faces[0]) != white  # "a": [0.4, 0.6] excludes 1, filled
    assert to_rgb(faces[1]) == white  # "b": [0.9, 1.3] contains 1, open


def test_drift_plot_has_a_zero_line_and_a_running_median():
    frame = pd.DataFrame({"order": np.arange(12.0), "residual": np.linspace(-0.1, 0.1, 12),
                          "experiment": ["e"] * 12})
    fig, ax = plots.figure()
    plots.drift(frame, ax, by="experiment")
    assert_publishable(fig)
    assert ax.get_xlabel() == "run order (index)"
    assert "running median" in fig.legends[0].get_title().get_text()
    fig, ax = plots.figure()
    plots.drift(frame, ax, by="experiment", legend="axes")
    assert "running median" in ax.get_legend().get_title().get_text()
    fig, ax = plots.figure()
    plots.drift(frame.drop(columns="experiment"), ax)  # one unnamed series: a black median
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels == ["running median (5 runs)"]


def test_the_drift_legend_tells_every_experiment_apart():
    # five experiments in three greys: each has its own legend entry with its marker and the
    # line style of its running median (no one solid black "running medians" entry for all)
    from perfkit.plots.style import GREY, Neutral

    names = [f"exp-{i}" for i in range(5)]
    frame = pd.DataFrame({"order": np.tile(np.arange(12.0), 5),
                          "residual": np.random.default_rng(3).normal(0, 0.05, 60),
                          "experiment": np.repeat(names, 12)})
    fig, ax = plots.figure(height_in=3.2)
    plots.drift(frame, ax, by="experiment", palette=Neutral.for_labels(names))
    legend = fig.legends[0]
    labels = [t.get_text() for t in legend.get_texts()]
    assert labels == names
    looks = {(h.get_color(), h.get_marker(), str(h.get_linestyle()))
             for h in legend.legend_handles}
    assert len(looks) == 5 and all(h.get_linestyle() not in ("None", "none")
                                   for h in legend.legend_handles)
    drawn = {(ln.get_color(), str(ln.get_linestyle())) for ln in ax.lines
             if ln.get_linestyle() not in ("None", "none") and ln.get_color() != GREY}
    assert drawn == {(c, ls) for c, _, ls in looks}  # the legend's lines are the medians'


# -- the scaling page: shortfalls of a few percent and the run statuses show ---------------------
@pytest.fixture(scope="module")
def sweep_slo(wrk2_sweep):
    rows, frame = scaling.runs_with_config(wrk2_sweep, ["profile", "connections"])
    return frame, scaling.slo(rows, ["profile", "connections"], 5.0, n_resamples=100)


def test_the_slo_table_carries_each_runs_status(sweep_slo):
    frame, table = sweep_slo
    runs = table.run_status_frame()
    assert len(runs) == len(frame) and set(runs["run_id"]) == set(frame["run_id"])
    flagged = runs[runs["status"] != "ok"].set_index("run_id")["status"].to_dict()
    assert flagged == {"default_R45000_c16_rep1": "saturated",
                       "default_R45000_c64_rep2": "saturated", "tuned_R5000_c64_rep2": "short"}


def test_throughput_is_drawn_as_achieved_over_offered_so_a_few_percent_shows(sweep_slo):
    """The defect: on an achieved-vs-offered axis the 0.889x, 0.916x and 0.964x shortfalls
    were invisible (the four lines coincide)."""
    from perfkit.model import SATURATION_RATIO

    frame, table = sweep_slo
    fig = scaling.throughput_figure(frame, ["profile", "connections"], table)
    assert_publishable(fig)
    ax = fig.axes[0]
    assert ax.get_ylabel() == "achieved / offered (ratio)"
    low, high = ax.get_ylim()
    assert low < 0.889 and 1.0 < high < 1.02 and high - low < 0.2  # 1% is 5% of the axis
    levels = {round(float(ln.get_ydata()[0]), 4) for ln in ax.lines
              if len(ln.get_ydata()) == 2 and ln.get_ydata()[0] == ln.get_ydata()[1]}
    assert {1.0, SATURATION_RATIO} <= levels
    ratios = sorted((frame["throughput_rps"] / frame["target_rate_rps"]).round(3))[:3]
    assert ratios == [0.889, 0.916, 0.964]
    caption = scaling.throughput_caption(frame, table)
    assert "0.889" in caption and "2 saturated (ringed), 1 short (diamond)" in caption


@pytest.mark.parametrize("which", ["throughput", "latency"])
def test_saturated_and_short_runs_are_marked_with_a_legend_entry(sweep_slo, which):
    frame, table = sweep_slo
    by = ["profile", "connections"]
    fig = (scaling.throughput_figure(frame, by, table) if which == "throughput" else
           scaling.latency_figure(frame, by, 99.0, 5.0, table))
    assert_publishable(fig)
    ax = fig.axes[0]
    legend = {t.get_text(): h for t, h in zip(ax.get_legend().get_texts(),
                                               ax.get_legend().legend_handles, strict=True)}
    assert "saturated runs (2)" in legend and "short run (1)" in legend
    data = scaling.with_status(frame, table)
    y = "achieved_ratio" if which == "throughput" else "latency_p99_ms"
    for label, status in (("saturated runs (2)", "saturated"), ("short run (1)", "short")):
        (line,) = [ln for ln in ax.lines if ln.get_label() == label]
        want = data[data["status"] == status]
        assert sorted(line.get_ydata()) == sorted(want[y])
        assert line.get_markerfacecolor() == "none"  # a ring over the run's own point
        assert line.get_markeredgecolor() not in style.PALETTE_COLORS


def test_heat_map_cells_with_saturated_or_short_runs_are_hatched(sweep_slo):
    _, table = sweep_slo
    marks = scaling.heat_marks(table)
    assert marks["default"].loc[16, 45000] == "saturated"
    assert marks["default"].loc[64, 45000] == "saturated"
    assert marks["tuned"].loc[64, 5000] == "short"
    assert (marks["tuned"].drop(index=64, columns=5000, errors="ignore") != "saturated").all(
        axis=None)
    fig = scaling.heatmap_figure(scaling.heat_tables(table), 99.0, marks)
    assert_publishable(fig)
    hatches = [p.get_hatch() for ax in fig.axes for p in ax.patches if p.get_hatch()]
    assert sorted(hatches) == ["..", "//", "//"]
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels == ["cell with a saturated run", "cell with a short run"]
    assert "hatched" in scaling.heatmap_caption(table)
    assert "hatched: 2 cells with saturated runs" in plots.describe(fig)
