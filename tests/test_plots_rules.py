"""The figure rules a reviewer asked for (issue 14 item 7, issue 12 item 3), each checked on real
data: log scales, per-run points and CIs, forest blocks and printed values, one heat-map scale,
visible within-run bars, a robust drift plot, log-x scaling curves, variation bars summing to
100%, and alt text; every figure also passes every check."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.colors import LogNorm
from matplotlib.container import ErrorbarContainer
from matplotlib.patches import Rectangle

from perfkit import plots
from perfkit.formatting import fmt_ci
from perfkit.plots import checks
from perfkit.report.sections import common, effects, latency, overview, scaling

#: the demo factorial as first recorded, with the upstream's queue of 100: its 1 s stalls
#: (tests/fixtures/stalls/README.md)
STALLS = Path(__file__).resolve().parent / "fixtures" / "stalls"
FIX = Path(__file__).resolve().parent / "fixtures"
DEMO = ["demo-wrk-factorial", "demo-wrk-connections", "demo-locust", "demo-aa",
        "demo-wrk2-sweep", "demo-wrk2-uncorrected"]


def assert_publishable(fig):
    assert {k: v for k, v in checks.check(fig).items() if v} == {}


@pytest.fixture(scope="module")
def sweep():
    return common.load_experiment(str(FIX / "wrk2" / "sweep"))


@pytest.fixture(scope="module")
def sweep_rows(sweep):
    return scaling.runs_with_config(sweep, ["profile", "connections"])


@pytest.fixture(scope="module")
def factorial():
    rows = common.load_experiment("factorial-upstream-backlog100", str(STALLS)).rows()
    return effects.factorials(rows, ["keepalive", "cache"], ["latency_p99_ms"], "connections",
                              0.95, 0.05)[0]


@pytest.fixture(scope="module")
def models():
    closed = common.load_experiment("demo-wrk-connections").rows()
    return scaling.fits(closed, ["profile"], 0.95, 0.05, 50, 1)


@pytest.fixture(scope="module")
def drift_frame():
    return overview.drift_frame([common.load_experiment(n) for n in DEMO], "latency_p50_ms")


def _per_run_spectra(groups) -> pd.DataFrame:
    rows = []
    for config, runs in groups.items():
        for run in runs:
            for q in latency.spectrum_grid(runs):
                rows.append({"config": config, "run_id": run.run_id, "percentile": q,
                             "latency_ms": run.histogram.percentile_ms(q)})
    return pd.DataFrame(rows)


def _data_lines(ax):
    return [ln for ln in ax.lines if ln.get_transform() == ax.transData]


# -- 2. log scale on latency axes spanning a decade ------------------------------------------
def test_load_curve_puts_latency_spanning_decades_on_a_log_axis_by_itself(sweep_rows):
    _, frame = sweep_rows
    assert frame["latency_p99_ms"].max() / frame["latency_p99_ms"].min() > 10
    fig, ax = plots.figure()
    plots.load_curve(frame, ax, "target_rate_rps", "latency_p99_ms", "offered rate (req/s)",
                     "p99 latency (ms)", by="config")
    assert ax.get_yscale() == "log"
    fig.canvas.draw()
    labels = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
    assert labels and not any("^" in t or "$" in t for t in labels)  # plain numbers
    assert_publishable(fig)
    fig, ax = plots.figure()
    plots.load_curve(frame, ax, "target_rate_rps", "throughput_rps", "offered rate (req/s)",
                     "throughput (req/s)", by="config")
    assert ax.get_yscale() == "linear"  # not a latency column
    fig, ax = plots.figure()
    plots.load_curve(frame, ax, "target_rate_rps", "latency_p99_ms", "offered rate (req/s)",
                     "p99 latency (ms)", by="config", logy=False)
    assert checks.linear_wide_axes(fig)  # an explicit choice still shows in the check


def test_points_take_a_log_axis_when_asked(sweep_rows):
    _, frame = sweep_rows
    fig, ax = plots.figure()
    plots.points(frame, ax, "order", "latency_p99_ms", "run order (index)", "p99 (ms)",
                 logy=None)
    assert ax.get_yscale() == "log"
    fig, ax = plots.figure()
    plots.points(frame, ax, "order", "latency_p99_ms", "run order (index)", "p99 (ms)")
    assert ax.get_yscale() == "linear"  # the default is unchanged


# -- 3. per-run points behind summaries, CIs on estimates ----------------------------------
def test_spectrum_draws_each_runs_own_spectrum_behind_the_bands(sweep):
    groups = latency.grouped_runs(sweep, ["profile"],
                                  {"target_rate_rps": 30000, "connections": 64})
    fig, ax = plots.figure()
    plots.spectrum(latency.spectrum_frame(groups, n_resamples=100), ax,
                   runs=_per_run_spectra(groups))
    n_runs = sum(len(r) for r in groups.values())
    thin = [ln for ln in _data_lines(ax) if ln.get_linewidth() < 1]
    assert len(thin) == n_runs
    assert len(ax.collections) == len(groups)  # one CI band per configuration
    assert_publishable(fig)


def test_load_curve_draws_the_analysis_estimate_and_its_band_and_marks_cut_bounds(sweep_rows):
    rows, frame = sweep_rows
    verdicts = scaling.slo(rows, ["profile", "connections"], 5.0, n_resamples=200
                           ).verdicts_frame()
    verdicts["config"] = common.config_labels(verdicts, ["profile", "connections"]).to_numpy()
    verdicts = verdicts.rename(columns={"rate_rps": "target_rate_rps"})
    fig, ax = plots.figure()
    plots.load_curve(frame, ax, "target_rate_rps", "latency_p99_ms", "offered rate (req/s)",
                     "p99 latency (ms)", by="config", slo=5.0, slo_label="SLO 5 ms",
                     summary=verdicts, estimate="estimate_ms", low="ci_low_ms",
                     high="ci_high_ms")
    assert len(ax.collections) == frame["config"].nunique()
    low, high = ax.get_ylim()
    beyond = int((verdicts["ci_high_ms"] > high).sum() + (verdicts["ci_low_ms"] < low).sum())
    arrows = [ln for ln in ax.lines if ln.get_marker() in (r"$\uparrow$", r"$\downarrow$")]
    # the 45k req/s intervals that reached far beyond every run ([4.39, 32800] ms on a
    # saturated run) are not estimable (issue 21): missing, so nothing is drawn or cut there
    hidden = verdicts["not_estimable"] != ""
    assert hidden.sum() == 2 and verdicts.loc[hidden, "ci_high_ms"].isna().all()
    assert sum(len(ln.get_xdata()) for ln in arrows) == beyond
    assert_publishable(fig)


def test_model_curves_draw_runs_curves_and_a_band_when_given(models):
    points, curves, peaks = scaling.model_frames(models)
    curves = curves.assign(low=curves["fit"] * 0.9, high=curves["fit"] * 1.1)
    fig, ax = plots.figure(height_in=2.9)
    plots.model_curves(points, curves, ax, "n", "x", "connections (count)",
                       "throughput (req/s)", peaks=peaks)
    marker_points = sum(len(ln.get_xdata()) for ln in _data_lines(ax)
                        if ln.get_linestyle() in ("None", "none"))
    assert marker_points == len(points)
    assert len([c for c in ax.collections if c.get_alpha() == 0.15]) == curves["config"].nunique()
    assert_publishable(fig)


# -- 4. forest plots --------------------------------------------------------------------------
def test_forest_labels_row_blocks_and_prints_each_value_and_interval(factorial):
    rows = effects.forest_rows(factorial)  # simple effects' labels: drawn as the page does
    fig, ax = plots.figure(height_in=plots.forest_height_in(len(rows), rows["level"].nunique()),
                           width_in=plots.style.WIDTH_IN * effects.FOREST_WIDTH)
    plots.forest(rows, ax, "effect on p99 latency (ratio)", label="label", by="level",
                 legend_title="connections", significant="significant", threshold=0.05)
    assert_publishable(fig)
    ticks = ax.get_yticklabels()
    heads = [t for t in ticks if t.get_fontweight() == "bold"]
    assert [t.get_text() for t in heads] == ["connections: 16", "connections: 64",
                                              "connections: 256"]
    separators = [ln for ln in ax.lines if ln.get_transform() != ax.transData
                  and list(ln.get_xdata()) == [0, 1]]
    assert len(separators) == 2
    printed = [t.get_text() for t in ax.child_axes[0].get_yticklabels()]
    expected = [fmt_ci(r["ratio"], r["ratio_ci_low"], r["ratio_ci_high"])
                for _, r in rows.iterrows()]
    assert sorted(printed) == sorted(expected) and len(printed) == len(rows)
    band = [p for p in ax.patches if isinstance(p, Rectangle) and p.get_alpha() == 0.15]
    assert len(band) == 1 and band[0].get_x() == pytest.approx(0.95)
    assert band[0].get_width() == pytest.approx(0.10)
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend == ["filled: significant", "open: not significant", "within ±5%"]


def test_forest_fill_follows_the_significant_column_not_the_interval():
    rows = pd.DataFrame({"term": ["a", "b"], "ratio": [0.5, 0.6], "ratio_ci_low": [0.4, 0.5],
                         "ratio_ci_high": [0.6, 0.7], "significant": [True, False]})
    fig, ax = plots.figure()
    plots.forest(rows, ax, "effect (ratio)", significant="significant")
    faces = [ln.get_markerfacecolor() for ln in ax.lines if ln.get_marker() == "o"]
    assert faces[0] != "white" and faces[1] == "white"  # b's CI excludes 1, yet not significant
    fig, ax = plots.figure()
    plots.forest(rows, ax, "effect (ratio)")
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend == ["filled: CI excludes 1", "open: CI includes 1"]


def test_forest_never_clips_an_interval_silently():
    rows = pd.DataFrame({"term": ["wide", "far", "fine"], "ratio": [1.2, 0.05, 0.9],
                         "ratio_ci_low": [0.9, 0.03, 0.85], "ratio_ci_high": [400.0, 0.08, 0.95]})
    fig, ax = plots.figure()
    plots.forest(rows, ax, "effect (ratio)", xlim=(0.5, 2.0))
    assert_publishable(fig)
    arrows = [(ln.get_marker(), ln.get_xdata()[0]) for ln in ax.lines
              if ln.get_marker() in ("<", ">")]
    assert sorted(arrows) == [("<", 0.5), (">", 2.0)]  # "wide" right, "far" left
    printed = [t.get_text() for t in ax.child_axes[0].get_yticklabels()]
    assert "1.2 [0.9, 400]" in printed and "0.05 [0.03, 0.08]" in printed
    fig, ax = plots.figure()
    plots.forest(rows, ax, "effect (ratio)")  # automatic limits: the 400 bound is cut too
    assert ax.get_xlim()[1] < 400
    assert [ln.get_marker() for ln in ax.lines if ln.get_marker() in ("<", ">")] == [">"]


# -- 5. heat maps -------------------------------------------------------------------------------
def test_heatmaps_share_one_log_scale_and_one_colour_bar(sweep_rows):
    rows, _ = sweep_rows
    grids = scaling.heat_tables(scaling.slo(rows, ["profile", "connections"], 5.0,
                                            n_resamples=200))
    fig, axes = plots.figure(nrows=len(grids), height_in=1.2 + 1.5 * len(grids))
    plots.heatmaps(grids, axes, "offered rate (req/s)", "connections (count)", "p99 (ms)")
    assert_publishable(fig)
    norms = {(type(im.norm), im.norm.vmin, im.norm.vmax) for ax in axes for im in ax.images}
    assert len(norms) == 1 and next(iter(norms))[0] is LogNorm
    values = np.concatenate([g.to_numpy(dtype=float).ravel() for g in grids.values()])
    assert next(iter(norms))[1:] == (np.nanmin(values), np.nanmax(values))
    assert sum(ax.get_label() == "<colorbar>" for ax in fig.axes) == 1
    for ax, grid in zip(axes, grids.values(), strict=True):
        assert len(ax.texts) == int(np.isfinite(grid.to_numpy(dtype=float)).sum())


# -- 6. within-vs-across ---------------------------------------------------------------------
def _bar_spans(ax) -> list[float]:
    bars = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    return sorted(float(np.ptp(seg[:, 1])) for c in bars for seg in
                  c.lines[2][0].get_segments())


def test_run_intervals_draw_every_bar_at_its_true_size_and_say_when_hidden(sweep):
    """Review (issue 21): the within-run bars of median width 0.038% were drawn at a minimum
    size, about 700x their true width, showing a spread the runs do not have. Every bar is
    drawn at its true size; one narrower than the marker hides under it, and the legend and
    the alt text say so."""
    groups = latency.grouped_runs(sweep, ["profile"],
                                  {"target_rate_rps": 30000, "connections": 64})
    within = latency.within_run_table(groups)
    fig, ax = plots.figure()
    plots.run_intervals(within, latency.percentile_table(groups, (99.0,), n_resamples=100), ax,
                        confidence=0.95)
    assert_publishable(fig)
    assert ax.get_xlabel() == "configuration (level)"
    assert ax.get_yscale() == "linear"  # 2-7 ms: less than a decade
    runs = [ln for ln in ax.lines if ln.get_markerfacecolor() == "white"]
    assert sum(len(ln.get_xdata()) for ln in runs) == len(within)
    true = sorted((within["ci_high_ms"] - within["ci_low_ms"]).to_numpy(dtype=float))
    assert _bar_spans(ax) == pytest.approx(true)  # each bar exactly its interval
    legend = " ".join(t.get_text() for t in fig.legends[0].get_texts())
    assert "narrower than the marker" in legend and "true size" in legend
    assert "narrower than their marker, drawn at their true size" in plots.describe(fig)


def test_run_intervals_draw_wide_bars_at_their_true_size():
    within = pd.DataFrame({"config": ["a", "a", "b"], "latency_ms": [2.0, 3.0, 2.5],
                           "ci_low_ms": [1.0, 2.99, 1.5], "ci_high_ms": [3.0, 3.01, 4.0]})
    across = pd.DataFrame({"config": ["a", "b"], "latency_ms": [2.5, 2.5],
                           "ci_low_ms": [2.0, 2.0], "ci_high_ms": [3.0, 3.0]})
    fig, ax = plots.figure()
    plots.run_intervals(within, across, ax)
    assert_publishable(fig)
    assert _bar_spans(ax) == pytest.approx([0.02, 2.0, 2.5])  # the narrow one too, at 0.02


def test_run_intervals_go_log_when_runs_span_a_decade(sweep):
    groups = latency.grouped_runs(sweep, ["profile"],
                                  {"target_rate_rps": 45000, "connections": 16})
    within = latency.within_run_table(groups)
    assert within["latency_ms"].max() / within["latency_ms"].min() > 10
    fig, ax = plots.figure()
    plots.run_intervals(within, latency.percentile_table(groups, (99.0,), n_resamples=100), ax)
    assert ax.get_yscale() == "log"
    assert_publishable(fig)


# -- 7. drift -------------------------------------------------------------------------------------
def test_drift_limits_resist_outliers_and_count_what_lies_beyond(drift_frame):
    # the drift frame leaves out the runs the run-status rule calls saturated (the two 45k
    # runs of demo-wrk2-sweep, log residuals +3.9 and +4.3 in their cells); wild values that
    # remain (put back here) still do not set the scale
    assert drift_frame.attrs["left_out"]["demo-wrk2-sweep"] == 2
    drift_frame = drift_frame.copy()
    drift_frame.loc[drift_frame.index[[5, 150]], "residual"] = [4.3, -3.9]
    fig, ax = plots.figure(height_in=3.2)
    plots.drift(drift_frame, ax, by="experiment", ylabel="residual (log ratio)")
    assert_publishable(fig)
    low, high = ax.get_ylim()
    r = drift_frame["residual"]
    assert r.max() > high and r.min() < low  # the wild runs do not set the scale
    assert (high - low) < 0.25 * (r.max() - r.min())
    beyond = int(((r > high) | (r < low)).sum())
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert f"beyond the axis ({beyond})" in labels
    arrows = sum(len(ln.get_xdata()) for ln in ax.lines
                 if ln.get_marker() in (r"$\uparrow$", r"$\downarrow$"))
    assert arrows == beyond
    per = drift_frame.assign(out=(r > high) | (r < low)).groupby("experiment")["out"].sum()
    text = plots.describe(fig)
    for name, n in per[per > 0].items():
        assert f"{name} {n}" in text


def test_drift_draws_one_running_median_per_experiment(drift_frame):
    fig, ax = plots.figure(height_in=3.2)
    plots.drift(drift_frame, ax, by="experiment", window=5)
    curves = [ln for ln in _data_lines(ax) if ln.get_linestyle() not in ("None", "none")]
    sizes = drift_frame.groupby("experiment").size()
    assert len(curves) == int((sizes >= 5).sum()) >= 3
    colours = {ln.get_color() for ln in curves}
    assert len(colours) == len(curves)  # each in its experiment's colour


# -- 8. scaling curves on log x -----------------------------------------------------------------
def test_scaling_curves_use_a_log_x_axis_labelled_in_plain_counts(models):
    points, curves, peaks = scaling.model_frames(models)
    fig, ax = plots.figure(height_in=2.9)
    plots.model_curves(points, curves, ax, "n", "x", "connections (count)",
                       "throughput (req/s)", peaks=peaks)
    assert_publishable(fig)
    assert ax.get_xscale() == "log"
    labels = [t.get_text() for t in ax.get_xticklabels()
              if t.get_text() and ax.get_xlim()[0] <= t.get_position()[0] <= ax.get_xlim()[1]]
    assert labels == ["1", "2", "4", "8", "16", "32", "64", "128", "256"]


# -- 9. variation bars --------------------------------------------------------------------------
def test_variation_bars_sum_to_100_percent_with_the_block_term(factorial):
    frame = factorial.to_frame().assign(level=lambda f: f["connections"])
    assert "block" in set(frame["term"])
    fig, ax = plots.figure(height_in=2.4)
    plots.variation(frame, ax, by="level", ylabel="connections (count)")
    assert_publishable(fig)
    widths: dict[float, float] = {}
    for patch in ax.patches:
        widths[round(patch.get_y(), 6)] = widths.get(round(patch.get_y(), 6), 0) + patch.get_width()
    assert len(widths) == frame["level"].nunique()
    for total in widths.values():
        assert total == pytest.approx(100.0, abs=1e-6)
    assert "block" in [t.get_text() for t in fig.legends[0].get_texts()]


# -- 10. alt text -------------------------------------------------------------------------------
def test_describe_says_what_is_drawn(sweep_rows, factorial):
    _, frame = sweep_rows
    fig, ax = plots.figure()
    plots.load_curve(frame, ax, "target_rate_rps", "latency_p99_ms", "offered rate (req/s)",
                     "p99 latency (ms)", by="config", slo=5.0, slo_label="SLO 5 ms")
    text = plots.describe(fig)
    assert "p99 latency (ms), log scale against offered rate (req/s)" in text
    assert f"{frame['config'].nunique()} labelled series" in text
    assert f"{len(frame)} points" in text and "reference lines: SLO 5 ms" in text
    rows = effects.forest_rows(factorial)
    fig, ax = plots.figure(height_in=plots.forest_height_in(len(rows), 3))
    plots.forest(rows, ax, "effect on p99 latency (ratio)", label="label", by="level",
                 legend_title="connections", significant="significant")
    text = plots.describe(fig)
    n_sig = int(rows["significant"].sum())
    assert text.startswith(f"Forest plot of {len(rows)} effects in 3 blocks by connections, "
                           f"{n_sig} significant (filled)")
    assert "filled: significant" in text


# -- every function on real data passes every check and has alt text ---------------------------
@pytest.mark.slow
def test_every_plot_function_is_publishable_and_described(sweep, sweep_rows, factorial, models,
                                                          drift_frame):
    _, frame = sweep_rows
    groups = latency.grouped_runs(sweep, ["profile"],
                                  {"target_rate_rps": 30000, "connections": 64})
    printed = latency.spectrum_frame(latency.grouped_runs(
        common.load_experiment(str(FIX / "wrk" / "sweep")), ["profile"], {"connections": 50}))
    quality = overview.quality([common.load_experiment(n) for n in DEMO[:3]]).to_frame()
    aa_quality = overview.quality([common.load_experiment("demo-aa")]).to_frame()
    series = overview.locust_series(common.load_experiment("demo-locust"))
    points, curves, peaks = scaling.model_frames(models)
    draws = {
        "spectrum": lambda ax: plots.spectrum(latency.spectrum_frame(groups, n_resamples=100),
                                              ax, runs=_per_run_spectra(groups)),
        "percentile_points": lambda ax: plots.percentile_points(printed, ax),
        "load_curve": lambda ax: plots.load_curve(
            frame, ax, "target_rate_rps", "latency_p99_ms", "offered rate (req/s)",
            "p99 latency (ms)", by="config"),
        "model_curves": lambda ax: plots.model_curves(
            points, curves, ax, "n", "x", "connections (count)", "throughput (req/s)",
            peaks=peaks),
        "forest": lambda ax: plots.forest(effects.forest_rows(factorial), ax,
                                          "effect (ratio)", label="label", by="level"),
        "points": lambda ax: plots.points(overview.quality_points(quality), ax, "order",
                                          "generator_cpu_share_percent", "run order (index)",
                                          "generator CPU (%)", by="experiment"),
        "bars": lambda ax: plots.bars(aa_quality.head(8), ax, "run_id", "generator_cpu_share",
                                      "generator CPU (share of its cores)", threshold=0.9),
        "timeseries": lambda ax: plots.timeseries(series, ax, "elapsed_s", "latency_p95_ms",
                                                  "time (s)", "p95 (ms)", by="config",
                                                  legend="figure"),
        "drift": lambda ax: plots.drift(drift_frame, ax, by="experiment"),
    }
    wide = {"forest": effects.FOREST_WIDTH}  # the page's width for the simple effects' labels
    for name, draw in draws.items():
        fig, ax = plots.figure(height_in=3.4, width_in=plots.style.WIDTH_IN * wide.get(name, 1))
        draw(ax)
        assert {k: v for k, v in checks.check(fig).items() if v} == {}, name
        text = plots.describe(fig)
        assert ax.get_xlabel().split(" (")[0] in text, name
        assert 20 < len(text) < 700, (name, text)


def test_drift_panels_give_each_experiment_its_own_panel_in_black():
    """Review (issue 21): the drift plot drew five experiments over the same run orders in
    five similar greys. One panel per experiment, titled by it, every point black."""
    rng = np.random.default_rng(1)
    frame = pd.concat([pd.DataFrame({"experiment": name, "order": np.arange(1.0, n + 1),
                                     "residual": rng.normal(0, 0.05, n)})
                       for name, n in (("a", 20), ("b", 30), ("c", 12))], ignore_index=True)
    fig = plots.drift_panels(frame, {"a": "a: drift", "b": "b", "c": "c: inconclusive"})
    assert_publishable(fig)
    axes = checks.data_axes(fig)
    assert [ax.get_title(loc="left") for ax in axes] == ["a: drift", "b", "c: inconclusive"]
    for ax, n in zip(axes, (20, 30, 12), strict=True):
        points = [ln for ln in ax.lines if ln.get_linestyle() == "None"]
        assert sum(len(ln.get_xdata()) for ln in points) == n
        assert {ln.get_color() for ln in points} == {"#000000"}
