"""One look per configuration across the figures of a report: the Palette, and the label ->
colour mapping read back from drawn figures (issue 12 item 3, issue 14 item 7)."""

from pathlib import Path

import pandas as pd
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
    assert colours == {c.upper() for c in style.PALETTE_COLORS}  # Okabe-Ito, then Tol's muted
    assert not colours & {"#000000", "#F0E442", style.GREY.upper(), *style.NEUTRAL_COLORS}
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


# -- the rule: colour = configuration, marker = load level, black and grey = anything else -------
BY = ["profile", "connections"]


def test_colour_follows_the_configuration_and_the_marker_the_load_level():
    pal = plots.Palette.for_labels(["tuned, 64", "default, 16", "default, 64", "tuned, 16"], BY)
    assert pal.labels == ("default", "tuned")
    assert pal.color("default, 16") == pal.color("default, 64") != pal.color("tuned, 16")
    assert pal.color("tuned, 16") == pal.color("tuned, 64")
    marker = {lbl: pal.style(lbl)["marker"] for lbl in ("default, 16", "default, 64",
                                                        "tuned, 16", "tuned, 64")}
    assert marker["default, 16"] == marker["tuned, 16"] != marker["default, 64"]
    # line style follows the configuration, so a grey-scale print tells them apart
    assert pal.style("default, 16")["linestyle"] == pal.style("default, 64")["linestyle"]
    assert pal.style("default, 16")["linestyle"] != pal.style("tuned, 16")["linestyle"]


def test_a_configuration_keeps_its_colour_whatever_load_split_a_page_shows():
    """The defect: "default" (the latency page, one load point) and "default, 64" (the
    scaling page) took different colours, and "tuned, 16" took default's colour."""
    latency_page = plots.Palette(()).extend(["default", "tuned"], ["profile"])
    report = latency_page.extend(["default, 16", "default, 64", "tuned, 16", "tuned, 64"], BY)
    report = report.extend(["buffered-log", "default"], ["profile"])  # the closed-loop page
    assert report.color("default") == report.color("default, 64") == report.color("default, 16")
    assert report.color("tuned") == report.color("tuned, 16") == latency_page.color("tuned")
    assert len({report.color(c) for c in ("default", "tuned", "buffered-log")}) == 3
    assert report.color("tuned, 16") != report.color("default")
    assert plots.Palette.from_dict(report.to_dict()) == report


def test_a_label_of_load_levels_only_is_black_not_a_configuration_colour():
    pal = plots.Palette.for_labels(["16", "64", "256"], ["connections"])
    assert pal.labels == () and "64" in pal and "32" not in pal
    assert {pal.color(v) for v in ("16", "64", "256")} == {"#000000"}
    assert len({pal.style(v)["marker"] for v in ("16", "64", "256")}) == 3


def test_neutral_looks_never_take_a_configuration_colour():
    neutral = style.Neutral.for_labels([f"experiment {i}" for i in range(12)])
    colours = {neutral.color(lbl).upper() for lbl in neutral.labels}
    assert colours <= {c.upper() for c in style.NEUTRAL_COLORS}
    assert not colours & {c.upper() for c in style.PALETTE_COLORS}
    looks = {(s["color"], s["marker"], str(s["linestyle"]))
             for s in (neutral.style(lbl) for lbl in neutral.labels)}
    assert len(looks) == 12


def test_the_plots_load_columns_are_the_analysis_ones():
    from perfkit.analysis import LOAD_COLUMNS

    assert style.LOAD_COLUMNS == LOAD_COLUMNS


def test_forest_blocks_and_variation_terms_are_neutral(runs_frame):
    """Load-level blocks and effect names are not configurations: black and greys, even when
    the report's palette is passed (it holds a colour for every label it was asked about)."""
    rows = pd.DataFrame({"label": ["keepalive", "cache"] * 2, "level": ["16", "16", "64", "64"],
                         "ratio": [0.8, 0.3, 0.9, 0.2], "ratio_ci_low": [0.7, 0.2, 0.8, 0.1],
                         "ratio_ci_high": [0.9, 0.4, 1.1, 0.3]})
    configs = set(style.PALETTE_COLORS)
    for blocks in (True, False):
        fig, ax = plots.figure(height_in=2.4)
        plots.forest(rows, ax, "effect (ratio)", label="label", by="level",
                     legend_title="connections", blocks=blocks,
                     palette=plots.Palette.for_labels(["16", "64"]))
        used = {c.upper() for c in checks.series_colours(fig).values()}
        used |= {to_hex(t.get_color()).upper() for t in ax.get_yticklabels()}
        assert not used & configs, used
    frame = pd.DataFrame({"term": ["keepalive", "cache", "keepalive:cache", "block", "error"],
                          "by": ["16"] * 5, "variation_pct": [10.0, 60.0, 5.0, 5.0, 20.0]})
    fig, ax = plots.figure()
    plots.variation(frame, ax)
    faces = {to_hex(p.get_facecolor()).upper() for p in ax.patches}
    assert not faces & configs
    assert len({(to_hex(p.get_facecolor()), p.get_hatch()) for p in ax.patches}) == 5


def test_time_series_tell_load_levels_apart_by_marker():
    """The Locust series of one profile at 5, 20 and 60 users share the profile's colour and
    line style, so their markers must differ (the legend entries looked the same)."""
    labels = [f"{p}, {u}" for p in ("buffered-log", "default") for u in (5, 20, 60)]
    frame = pd.DataFrame({"config": [lbl for lbl in labels for _ in range(10)],
                          "t_s": list(range(10)) * len(labels),
                          "x_rps": [float(i) for i in range(10 * len(labels))]})
    palette = plots.Palette.for_labels(labels, ["profile", "users"])
    fig, ax = plots.figure()
    plots.timeseries(frame, ax, "t_s", "x_rps", "time (s)", "throughput (req/s)", by="config",
                     palette=palette)
    looks = {(ln.get_color(), ln.get_marker(), str(ln.get_linestyle()))
             for ln in ax.get_legend().legend_handles}
    assert len(looks) == len(labels)
    assert len({ln.get_color() for ln in ax.get_legend().legend_handles}) == 2


def test_the_baseline_takes_the_first_colour_in_every_report():
    # review (issue 21): "default" was light blue in the seeds report and orange in the demo,
    # each report giving colours in the order it first showed its configurations
    from perfkit.plots.palette import BASELINE, PALETTE_COLORS, Palette

    demo = Palette.for_labels(["buffered-log", "default", "tuned"])
    seeds = Palette(()).extend(["backlog-511", "backlog-4096"]).extend(["a", "b", "default"])
    assert demo.color(BASELINE) == seeds.color(BASELINE) == PALETTE_COLORS[0]
    assert demo.color("buffered-log") == PALETTE_COLORS[1] == seeds.color("backlog-511")
    others = [seeds.color(c) for c in seeds.labels if c != BASELINE]
    assert PALETTE_COLORS[0] not in others and len(set(others)) == len(others)
