"""perfkit.plots.latency: the within-run vs across-run figure's legend shows each glyph as the
figure draws it, on the wrk2 fixture sweep."""

from __future__ import annotations

from pathlib import Path

import pytest
from _legend import assert_publishable, legend_entries, marks
from matplotlib.colors import to_hex
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle

from perfkit import plots
from perfkit.report.sections import common, latency

FIX = Path(__file__).resolve().parent / "fixtures"


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


def test_wrk_runs_without_within_run_intervals_draw_with_no_warning():
    """wrk prints four percentiles and no histogram, so no run has a within-run interval: the
    figure says so and no RuntimeWarning (an all-NaN median) reaches the page."""
    import warnings

    exp = common.load_experiment(str(Path(__file__).resolve().parents[1] / "data" / "demo-aa"))
    groups = latency.grouped_runs(exp, ["arm"], {})
    within = latency.within_run_table(groups)
    assert within["ci_low_ms"].isna().all() and len(within) == 20
    fig, ax = plots.figure()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plots.run_intervals(within, latency.percentile_table(groups, (99.0,), n_resamples=100),
                            ax, confidence=0.95)
    from perfkit.plots.alt import notes

    assert notes(ax) == ["20 runs of 2 configurations over the across-run band"]
