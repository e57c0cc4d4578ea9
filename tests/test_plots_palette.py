"""One look per configuration across the figures of a report: the Palette, and the label ->
colour mapping read back from drawn figures (issue 12 item 3, issue 14 item 7)."""

from pathlib import Path

import pytest
from matplotlib.colors import to_hex

from perfkit import plots
from perfkit.plots import checks, style
from perfkit.report.sections import common, latency, scaling

FIX = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture(scope="module")
def sweep():
    return common.load_experiment(str(FIX / "wrk2" / "sweep"))


@pytest.fixture(scope="module")
def runs_frame(sweep):
    return scaling.runs_with_config(sweep, ["profile", "connections"])[1]


# -- the palette itself ------------------------------------------------------------------------
def test_palette_is_deterministic_whatever_the_order_or_repeats_of_labels():
    a = plots.Palette.for_labels(["tuned, 64", "default, 16", "default, 256", "tuned, 16"])
    b = plots.Palette.for_labels(["default, 256", "tuned, 16", "tuned, 64", "default, 16",
                                  "tuned, 16"])
    assert a == b
    assert a.mapping() == b.mapping()


def test_palette_sorts_numbers_inside_labels_by_value():
    pal = plots.Palette.for_labels(["default, 256", "default, 64", "default, 16", "demo-10",
                                    "demo-2"])
    assert pal.labels == ("default, 16", "default, 64", "default, 256", "demo-2", "demo-10")


def test_palette_keeps_black_grey_and_yellow_out_of_series():
    pal = plots.Palette.for_labels([f"config {i}" for i in range(48)])
    colours = {pal.color(lbl).upper() for lbl in pal.labels}
    okabe_ito = {c.upper() for c in style.OKABE_ITO.values()}
    assert colours <= okabe_ito
    assert not colours & {"#000000", "#F0E442", style.GREY.upper()}
    assert pal.reference == style.GREY and pal.threshold == "#000000"


def test_no_two_labels_of_a_palette_look_the_same():
    pal = plots.Palette.for_labels([f"config {i}" for i in range(48)])
    looks = {(s["color"], s["marker"], str(s["linestyle"]))
             for s in (pal.style(lbl) for lbl in pal.labels)}
    assert len(looks) == 48
    first_six = [pal.color(lbl) for lbl in pal.labels[:6]]
    assert len(set(first_six)) == 6  # the first six labels each get their own colour


def test_a_label_outside_the_palette_is_an_error_not_a_silent_colour():
    pal = plots.Palette.for_labels(["default", "tuned"])
    with pytest.raises(KeyError, match="'buffered-log' is not in the palette"):
        pal.style("buffered-log")
    with pytest.raises(ValueError, match="unique"):
        plots.Palette(("a", "a"))


def test_numbers_as_labels_match_their_text():
    pal = plots.Palette.for_labels([16, 64, 256])
    assert pal.color(64) == pal.color("64")
    assert 256 in pal and "32" not in pal


# -- figures drawn with one palette agree --------------------------------------------------------
def _figures(sweep, runs_frame, palette):
    """Four figures of one report showing different subsets of the configurations."""
    figs = []
    fig, ax = plots.figure()
    plots.load_curve(runs_frame, ax, "target_rate_rps", "latency_p99_ms",
                     "offered rate (req/s)", "p99 latency (ms)", by="config", palette=palette)
    figs.append(fig)
    fig, ax = plots.figure()
    plots.load_curve(runs_frame[runs_frame["connections"] == 64], ax, "target_rate_rps",
                     "throughput_rps", "offered rate (req/s)", "throughput (req/s)",
                     by="config", palette=palette)
    figs.append(fig)
    groups = latency.grouped_runs(sweep, ["profile", "connections"],
                                  {"target_rate_rps": 30000, "profile": "tuned"})
    fig, ax = plots.figure()
    plots.spectrum(latency.spectrum_frame(groups, n_resamples=100), ax, palette=palette)
    figs.append(fig)
    within = latency.within_run_table(groups)
    fig, ax = plots.figure()
    plots.run_intervals(within, latency.percentile_table(groups, (99.0,), n_resamples=100), ax,
                        palette=palette)
    figs.append(fig)
    return figs


def test_one_palette_gives_each_configuration_one_colour_in_every_figure(sweep, runs_frame):
    palette = plots.Palette.for_labels(runs_frame["config"])
    mappings = [checks.series_colours(fig) for fig in _figures(sweep, runs_frame, palette)]
    assert checks.colour_conflicts(mappings) == {}
    for mapping in mappings:
        for label, colour in mapping.items():
            if label in palette:
                assert colour == to_hex(palette.color(label))
    shown = [set(m) & set(palette.labels) for m in mappings]
    assert shown[0] == set(palette.labels) and shown[2] == {"tuned, 16", "tuned, 64"}


def test_without_a_palette_the_same_configuration_changes_colour(sweep, runs_frame):
    """The defect the palette fixes: series take colours by position, so a configuration
    drawn first in one figure and second in another changes colour."""
    mappings = [checks.series_colours(fig) for fig in _figures(sweep, runs_frame, None)]
    assert "tuned, 64" in checks.colour_conflicts(mappings)


def test_every_series_function_takes_the_palette(sweep, runs_frame):
    palette = plots.Palette.for_labels(list(runs_frame["config"]) + ["default", "tuned"])
    fig, axes = plots.figure(nrows=3, height_in=5)
    plots.points(runs_frame, axes[0], "target_rate_rps", "throughput_rps",
                 "offered rate (req/s)", "throughput (req/s)", by="config", palette=palette)
    plots.timeseries(runs_frame, axes[1], "target_rate_rps", "latency_p50_ms",
                     "offered rate (req/s)", "p50 (ms)", by="profile", palette=palette)
    drift = runs_frame.assign(residual=0.0).rename(columns={"profile": "experiment"})
    plots.drift(drift, axes[2], by="experiment", palette=palette)
    mapping = checks.series_colours(fig)
    for label in ("default, 16", "tuned, 64", "default", "tuned"):
        assert mapping[label] == to_hex(palette.color(label)), label
