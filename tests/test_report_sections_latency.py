"""The latency page (perfkit.report.sections.latency) on the demo sweep: every caption, figure,
file and alt text names its load point, each says what its estimate is (the geometric mean
of 2-4 runs' percentiles, the median from 5), and the coordinated-omission audit table's
columns."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

from perfkit.analysis import load_experiment
from perfkit.present import frame as present_frame
from perfkit.report.answers import NOT_TESTABLE
from perfkit.report.sections import latency
from perfkit.warning import Code, texts

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
AT = {"target_rate_rps": 30000, "connections": 64}
POINT = "30000 req/s offered, 64 connections"


@pytest.fixture(scope="module")
def groups(demo_sweep):
    from perfkit.report.sections import latency

    return latency.grouped_runs(demo_sweep, ["profile"], AT)


def _notebook_cells(name: str) -> list:
    import json

    path = Path(__file__).resolve().parents[1] / "notebooks" / f"{name}.ipynb"
    return json.loads(path.read_text())["cells"]


def _cell(sweep, by):
    groups = latency.grouped_runs(sweep, by, AT)
    return groups, latency.percentiles(groups, (99.0,), seed=1, n_resamples=100)


@pytest.fixture(scope="module")
def cell():
    sweep = load_experiment(ROOT / "data" / "demo-wrk2-sweep")
    groups = latency.grouped_runs(sweep, ["profile"], AT)
    return groups, latency.percentiles(groups, (99.0,), seed=1, n_resamples=50)


def _texts(fig) -> str:
    return " ".join(t.get_text() for ax in fig.axes for t in (ax.title, ax._left_title))


def test_every_latency_caption_and_figure_names_its_load_point(demo_sweep, groups):
    import matplotlib.pyplot as plt

    from perfkit.plots import describe
    from perfkit.report.sections import latency

    intro = "".join(_notebook_cells("latency")[0]["source"])
    assert "of every figure and table is the selection named below" not in intro
    assert "Each caption" in intro
    co = load_experiment(DATA / "demo-wrk2-uncorrected")
    (run,) = co.runs
    assert (run.target_rate_rps, run.connections) == (20000, 50)
    assert "20000 req/s offered, 50 connections" in latency.co_audit_caption(co)
    assert "20000 req/s offered, 50 connections" in latency.co_caption(co)
    table = latency.percentiles(groups, (50.0, 99.0, 99.9), seed=1)
    spectrum = latency.spectrum(groups, seed=1)
    within = latency.within_run_table(groups, 99.0)
    for fig in (latency.spectrum_figure(spectrum, ["profile"], where=AT),
                latency.intervals_figure(within, table, 99.0, ["profile"], where=AT)):
        assert "at 30000 req/s offered, 64 connections" in describe(fig)
        plt.close(fig)
    for caption in (latency.spectrum_caption(spectrum, AT, 0.95),
                    latency.intervals_caption(within, 99.0, AT, 0.95)):
        assert "30000 req/s offered, 64 connections" in caption


def test_the_spectrum_and_within_vs_across_images_name_their_load_point(cell):
    groups, table = cell
    spectrum = latency.spectrum(groups, n_resamples=50)
    fig = latency.spectrum_figure(spectrum, ["profile"], None, AT)
    assert POINT in _texts(fig)
    within = latency.within_run_table(groups, 99.0)
    fig = latency.intervals_figure(within, table, 99.0, ["profile"], None, 0.95, AT)
    assert POINT in _texts(fig)


def test_the_co_audit_table_has_percentile_headers_and_no_duplicate_or_empty_columns():
    from perfkit.report.sections import latency

    for name, header in (("latency_p99_9_ms", "latency p99.9 [ms]"),
                         ("uncorrected_p99_9_ms", "uncorrected p99.9 [ms]"),
                         ("ratio_p99_9", "ratio p99.9"), ("latency_p99_99_ms",
                                                          "latency p99.99 [ms]"),
                         ("p50_ms", "p50 [ms]"), ("median_base_ms", "median base [ms]")):
        assert present_frame.column(name, True).header == header
    co = load_experiment(DATA / "demo-wrk2-uncorrected")
    audit, _ = latency.corrected_vs_uncorrected(co.runs)
    assert audit["co_ratio_p99"].equals(audit["ratio_p99"])  # the same numbers twice
    assert audit["endpoint"].isna().all()
    headers = [c.header for c in present_frame.frame(audit, hide=latency.CO_HIDDEN).columns]
    assert "ratio p99.9" in headers and "p99.9 [ms]" in headers
    assert not any(re.search(r"p99 9|co ratio|endpoint", h) for h in headers), headers


def test_alt_text_says_what_the_lines_are_on_one_line(groups):
    import matplotlib.pyplot as plt

    from perfkit.plots import describe
    from perfkit.report.sections import latency

    co = load_experiment(DATA / "demo-wrk2-uncorrected")
    _, co_spectrum = latency.corrected_vs_uncorrected(co.runs)
    fig = latency.co_figure(co_spectrum, co.runs)
    alt = describe(fig)
    plt.close(fig)
    assert "configurations" not in alt and "measurements of one run" in alt
    assert "20000 req/s offered, 50 connections" in alt
    table = latency.percentiles(groups, (99.0,), seed=1)
    fig = latency.intervals_figure(latency.within_run_table(groups, 99.0), table, 99.0,
                                   ["profile"], where=AT)
    alt = describe(fig)
    plt.close(fig)
    assert "\n" not in alt and "\\n" not in alt
    assert "(bar; at true size: narrower than the marker here)" in alt


def test_three_runs_are_said_to_be_a_geometric_mean_not_a_median(demo_sweep):
    groups, table = _cell(demo_sweep, ["profile"])
    default = groups.config("default").values_ms(99.0)
    (e,) = [e for e in table.estimates if e.config == "default"]
    assert e.ci.estimate_ms == pytest.approx(math.exp(np.log(default).mean()))
    said = " ".join([table.describe(), *texts(latency.caveats(table))])
    assert "geometric mean of the 3 runs' percentiles" in said
    for wrong in ("as the median of per-run percentiles", "never by averaging",
                  "the estimate is the median run's percentile"):
        assert wrong not in said


def test_five_runs_or_more_are_said_to_be_the_median(demo_sweep):
    groups, table = _cell(demo_sweep, [])  # both profiles together: 6 runs
    assert table.estimates[0].ci.method == "order_stats"
    values = groups.config("all runs").values_ms(99.0)
    assert table.estimates[0].ci.estimate_ms == pytest.approx(np.median(values))
    said = table.describe()
    assert "each value shown is the median of the 6 runs' percentiles" in said
    assert "order-statistic intervals" in said
    assert Code.ESTIMATES_FEW_RUNS not in {c.code for c in latency.caveats(table)}


def test_the_spectrum_caption_names_its_estimate_once(demo_sweep):
    groups = latency.grouped_runs(demo_sweep, ["profile"], AT)
    text = latency.spectrum_caption(latency.spectrum(groups, n_resamples=50), AT, 0.95)
    assert text.count("geometric mean") == 1 and "30000 req/s offered, 64 connections" in text


def test_an_untestable_comparison_carries_no_caveat_about_the_ratio_it_does_not_show():
    # the review of issue 29: "tuned / default not testable (3 vs 3 runs ...)" prints no ratio
    # since review29, yet kept the caveat "no 95% ratio CI from 3 vs 3 runs"
    exp = load_experiment(DATA / "demo-wrk2-sweep", name="demo-wrk2-sweep")
    select = {"target_rate_rps": 30000, "connections": 64}
    groups = latency.grouped_runs(exp, ["profile"], select)
    table = latency.percentiles(groups, (50.0, 99.0), 0.95, 0, 50)
    compared = latency.versus(groups, 99.0, 0.95)
    (row,) = [a for a in latency.answers(table, 99.0, select, exp, compared) if "/" in a.question]
    assert row.answer == "" and row.kind == NOT_TESTABLE
    codes = {getattr(w, "code", None) for w in row.warnings}
    assert Code.TOO_FEW_RUNS in codes and Code.NO_RATIO_CI not in codes
