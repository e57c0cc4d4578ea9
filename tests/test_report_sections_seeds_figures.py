"""The seeds page's figures (perfkit.report.sections.seeds_figures): one server configuration,
one colour in every figure, and every run of a repeated claim drawn, the failed ones at the
edge."""

from __future__ import annotations

import numpy as np
import pytest
from _legend import assert_publishable
from matplotlib.colors import to_hex

from perfkit import plots
from perfkit.plots import checks


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
