"""Review of the demo report's figures (round 5): each legend glyph looks like what the figure
draws (the within-vs-across figure, the scaling models' runs and peak N*), and a seeds
configuration takes one colour in every figure of the seeds report."""

from pathlib import Path

import numpy as np
import pytest
from matplotlib.colors import to_hex
from matplotlib.lines import Line2D
from matplotlib.offsetbox import DrawingArea, HPacker, TextArea
from matplotlib.patches import Rectangle

from perfkit import plots
from perfkit.plots import checks
from perfkit.report.sections import common, latency, scaling

FIX = Path(__file__).resolve().parent / "fixtures"


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


# -- 1. within-run vs across-run -----------------------------------------------------------------
@pytest.fixture(scope="module")
def sweep():
    return common.load_experiment(str(FIX / "wrk2" / "sweep"))


@pytest.mark.parametrize("by, where", [
    (["profile"], {"target_rate_rps": 30000, "connections": 64}),
    (["profile", "connections"], {"target_rate_rps": 30000, "profile": "tuned"}),
])
def test_within_vs_across_legend_glyphs_are_the_marks_drawn(sweep, by, where):
    """The defect: the legend explained the runs with a grey circle and the across-run
    estimate with a grey patch, while the plot draws each configuration's own marker and
    colour and a line over a band. Each configuration now has an entry with its run marker
    and colour; the across-run entry is a line over a band; no legend marker is one the plot
    does not draw (or a neutral one not drawn as a run)."""
    groups = latency.grouped_runs(sweep, by, where)
    within = latency.within_run_table(groups)
    palette = plots.Palette.for_labels(within["config"], by)
    fig, ax = plots.figure()
    plots.run_intervals(within, latency.percentile_table(groups, (99.0,), n_resamples=100), ax,
                        palette=palette, confidence=0.95)
    assert_publishable(fig)
    entries = legend_entries(fig.legends[0])
    runs = {ln.get_label(): ln for ln in ax.lines if ln.get_markerfacecolor() == "white"}
    assert set(runs) == set(within["config"]) and len(runs) >= 2
    drawn = {(ln.get_marker(), to_hex(ln.get_color())) for ln in runs.values()}
    assert len(drawn) == len(runs)  # the configurations (or load levels) look different
    for config, line in runs.items():
        assert marks(entries[config]) == [(line.get_marker(), to_hex(line.get_color()))], config
        assert to_hex(line.get_color()) == to_hex(palette.color(config))
    run_markers = {m for m, _ in drawn}
    for label, artists in entries.items():
        for marker, colour in marks(artists):
            if marker in run_markers:  # a run's glyph: only as drawn
                assert (marker, colour) in drawn, (label, marker, colour)
    explained = [t for t in entries if t.startswith("one run")]
    assert len(explained) == 1 and "within-run 95% CI" in explained[0]
    (across,) = [a for t, a in entries.items()
                 if t == "across runs: estimate (line), 95% CI (band)"]
    assert any(isinstance(a, Rectangle) for a in across)
    lines = [a for a in across if isinstance(a, Line2D)]
    assert lines and all(ln.get_linestyle() not in ("None", "none") for ln in lines)
    assert {to_hex(a.get_facecolor() if isinstance(a, Rectangle) else a.get_color())
            for a in across} == {to_hex(plots.style.GREY)}  # neutral: not a configuration's colour


# -- 2. scaling models: the runs' markers and the peak N* ------------------------------------------
@pytest.fixture(scope="module")
def models():
    closed = common.load_experiment("demo-wrk-connections").rows()
    return scaling.fits(closed, ["profile"], 0.95, 0.05, 50, 1)


def _peak_entries(entries):
    return {t: a for t, a in entries.items() if t.startswith("N* (peak concurrency)")}


def test_scaling_models_legend_shows_the_runs_markers_and_the_peak(models):
    """The defect: the legend held only the fitted curves' lines; the runs' markers and the
    dotted N* line over its shaded interval were not explained. Each configuration's entry is
    now its marker over its curve's line, and one neutral entry shows N* as drawn: a dotted
    vertical line over a band."""
    points, curves, peaks = scaling.model_frames(models)
    assert len(peaks) >= 1  # demo-wrk-connections' default has a claimed peak
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
    ((label, artists),) = _peak_entries(entries).items()
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
    assert _peak_entries(entries) == {}
    assert set(entries) == set(points["config"])
    assert not [ln for ln in ax.lines if ln.get_linestyle() == ":"]


# -- 3. seeds: one colour per configuration in every figure ---------------------------------------
@pytest.fixture(scope="module")
def seeds_figures(seeds_analysis):
    """Every figure of the seeds page, drawn as its notebook draws them: one report, one
    palette (the report's) for all of them."""
    from perfkit.report import nb
    from perfkit.report.sections import seeds

    analysis = seeds_analysis  # seeds.analyse() with its defaults (conftest.py)
    report = nb.Report("seeds")
    runs = [(r, seeds.runs_figure(r, report.palette)) for r in seeds.repeated(analysis)]
    return report, seeds.ratio_figure(analysis), runs


def _profile(rows) -> str:
    (profile,) = {r.manifest["server"]["profile"] for r in rows.runs}
    return profile


def _arm_colours(ax, x: float) -> set[str]:
    """Colours of the run markers drawn around ``x`` (an arm's column of points)."""
    out = set()
    for ln in ax.lines:
        xs = np.asarray(ln.get_xdata(), dtype=float)
        if ln.get_linestyle() == "None" and ln.get_marker() not in ("*", "_") and len(xs) \
                and np.all(np.abs(xs - x) < 0.2):
            out.add(to_hex(ln.get_color()))
    return out


def test_a_seeds_configuration_has_one_colour_in_every_figure(seeds_figures):
    """The defect: the seeds page keyed each arm by its experiment's factor level, so the same
    server configuration took another colour in each experiment repeating it (``cache-ram``:
    004-3's new arm, 004-4's base). Each arm is now its configuration (the testbed profile its
    runs recorded), drawn and named in that configuration's one colour everywhere; two
    configurations never share a look; the ratio overview takes no configuration colour."""
    report, ratios, runs = seeds_figures
    palette = report._palette
    colours: dict[str, set[str]] = {}
    where: dict[str, set[str]] = {}
    for result, fig in runs:
        assert_publishable(fig)
        rep = result.replication
        (ax,) = checks.data_axes(fig)
        legend = ax.get_legend() or fig.legends[0]  # above the axes: clear of the runs
        labels = {t.get_text() for t in legend.get_texts()}
        for x, rows in enumerate((rep.base, rep.new)):
            profile = _profile(rows)
            drawn = _arm_colours(ax, x)
            assert len(drawn) == 1, (result.claim["claim_id"], drawn)
            colours.setdefault(profile, set()).update(drawn)
            where.setdefault(profile, set()).add(result.claim["claim_id"])
            # the legend names the configuration (an arm whose every run failed: as failed)
            assert any(t.startswith(f"{profile}: runs") for t in labels), labels
        for label, colour in checks.series_colours(fig).items():
            if ": runs" in label:
                assert colour == to_hex(palette.color(label.split(": runs")[0])), label
    assert {"004-3", "004-4"} <= where["cache-ram"]  # repeated by two experiments ...
    assert all(len(c) == 1 for c in colours.values()), colours  # ... in one colour
    for profile, (colour,) in colours.items():
        assert colour == to_hex(palette.color(profile))
    looks = {(palette.color(p), palette.style(p)["marker"]) for p in colours}
    assert len(looks) == len(colours)
    config_colours = {to_hex(c) for c in plots.style.PALETTE_COLORS}
    assert not set(checks.series_colours(ratios).values()) & config_colours


def test_every_run_of_a_repeated_claim_is_drawn_the_failed_ones_at_the_edge(seeds_figures):
    """Review (issue 21): seeds-runs-002-2 drew 2 of its 5 failed base runs: the other three
    had zero throughput, which a log axis cannot show. Such a run is drawn at the axis edge on
    its worse side, hollow, and the legend counts it."""
    from perfkit.report.sections.seeds_figures import _at

    _, _, runs = seeds_figures
    for result, fig in runs:
        (ax,) = checks.data_axes(fig)
        for x, side in enumerate(("base", "new")):
            values, _, _ = _at(result.replication, side)
            drawn = sum(int(np.sum(np.abs(np.asarray(ln.get_xdata(), float) - x) <= 0.15))
                        for ln in ax.lines if ln.get_linestyle() == "None")
            assert drawn == len(values), (result.claim["claim_id"], side, drawn, len(values))
    (fig,) = [f for r, f in runs if r.claim["claim_id"] == "002-2"]
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "default: 3 runs with no value here (failed; at the edge)" in labels
