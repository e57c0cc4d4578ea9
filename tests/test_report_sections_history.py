"""The history page (perfkit.report.sections.history) on data/demo-history: one rule for a
label's median (compare's), captions and legends that describe their figure, the load point
said from the data, and a change point the labels do not explain called weak, with why."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest

from perfkit.report.sections import history as hs
from perfkit.stats import compare
from perfkit.stats.orderstats import median_ci
from perfkit.vocabulary import HistoryVerdict
from perfkit.warning import Code, Warn

DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.fixture(scope="module")
def history():
    return hs.load("demo-history")


@pytest.fixture(scope="module")
def analyses(history):
    return hs.analyse(history, ["latency_p99_ms"], permutations=99)


def _dotted(fig) -> int:
    return sum(line.get_linestyle() == ":" for ax in fig.axes for line in ax.get_lines())


def _median_legend(fig) -> tuple[str, object]:
    handles, labels = fig.axes[0].get_legend_handles_labels()
    (i,) = [i for i, label in enumerate(labels) if label.startswith("median")]
    return labels[i], handles[i]


def present_gate_series(analysis):
    from perfkit.present import history as present_history

    return [t for t in present_history.series(analysis) if "labels of" in t.title]


def test_a_labels_median_has_the_interval_compare_gives_the_same_runs(analyses):
    point = analyses[0].series[0].points[0]  # v01: 5 runs
    assert point.n_runs == 5
    c = compare(list(point.values), list(point.values))
    assert math.isnan(point.ci_low) and math.isnan(point.ci_high)  # no interval claimed
    assert point.median == c.median_base == median_ci(point.values).estimate
    assert (c.median_base_ci_low, c.median_base_ci_high) == (-math.inf, math.inf)  # nor there
    assert point.warnings == median_ci(point.values).warnings
    assert point.warnings[0] == Warn(Code.MEDIAN_CI_NEEDS_RUNS, need=6, confidence=0.95)
    described = analyses[0].describe()
    assert "none below 6 runs" in described and "93.75" not in described


def test_the_series_caption_describes_the_lines_its_figure_draws(analyses):
    a = analyses[0]
    caption = hs.series_caption(a)
    assert _dotted(hs.series_figure(a)) == 0 and "dotted" not in caption
    assert "dashed lines the change points" in caption
    assert "no interval: every label has fewer than the 6 runs" in caption
    s = a.series[0]
    weak = dataclasses.replace(s.change, change_points=tuple(
        dataclasses.replace(c, support="weak") for c in s.change.change_points))
    b = dataclasses.replace(a, series=(dataclasses.replace(s, change=weak),))
    caption = hs.series_caption(b)
    assert _dotted(hs.series_figure(b)) == 2 and "dashed" not in caption
    assert "dotted lines the change points" in caption and "weakly supported" in caption


def test_the_legend_shows_a_bar_only_when_some_label_has_an_interval(analyses):
    from matplotlib.container import ErrorbarContainer

    a = analyses[0]  # every label has fewer than 6 runs: no interval, no bar in the legend
    assert not hs.has_interval(a)
    assert "no interval: every label has fewer than the 6 runs" in hs.series_caption(a)
    label, handle = _median_legend(hs.series_figure(a))
    assert label == "median" and not isinstance(handle, ErrorbarContainer)
    s = a.series[0]
    first = s.points[0]  # give one label an interval: the bar is back, and named
    ranged = dataclasses.replace(first, ci_low=first.median * 0.9, ci_high=first.median * 1.1,
                                 coverage=0.97)
    b = dataclasses.replace(a, series=(dataclasses.replace(
        s, points=(ranged, *s.points[1:])),))
    assert hs.has_interval(b) and "order-statistic interval" in hs.series_caption(b)
    label, handle = _median_legend(hs.series_figure(b))
    assert label == "median, interval" and isinstance(handle, ErrorbarContainer)


def test_the_history_says_its_load_point_from_the_data():
    from perfkit.analysis import history as hist
    from perfkit.analysis import metric
    from perfkit.report.sections import history as hs

    h = hs.load("demo-history", str(DATA))
    frame = h.rows().frame
    assert frame["connections"].unique().tolist() == [16]
    (a,) = hs.analyse(h, ["latency_p99_ms"], permutations=19)
    assert dict(a.load)["connections"] == 16
    for text in (hs.series_caption(a), hs.series_alt(a), hs.series_table_caption(a),
                 hs.gates_caption(a, 0.05), hs.labels_caption(h, [a]),
                 *(t.title for t in present_gate_series(a))):
        assert "16 connections" in text, text
    _, table, items = hs.gates(h, a, 0.05, n_sim=200)
    assert "16 connections" in table.title
    assert all("16 connections" in x.question + x.group
               for x in hs.answers([a], {a.metric.name: items}))
    assert hist.analyse(h, metric("latency_p99_ms"), permutations=19).load == a.load


def test_a_change_point_the_labels_do_not_explain_is_weak_and_says_why():
    import csv

    from perfkit.report.sections import history as hs

    demo = DATA / "demo-history"
    truth = {r["label"]: r["description"] for r in csv.DictReader((demo / "labels.csv").open())}
    history = hs.load("demo-history", str(DATA))
    metrics = ["latency_p99_ms", "throughput_rps"]
    seen_weak = []
    for seed in (0, 1, 2):  # the report's seed is 1; v03 shows up at some seeds only
        analyses = hs.analyse(history, metrics, seed=seed)
        for a in analyses:
            (s,) = a.series
            for c in s.change.change_points:
                if truth[c.label].startswith("CHANGE"):
                    assert c.supported, (seed, a.metric.name, c.label)
                    continue
                # no server change here: never a supported change point ...
                assert not c.supported, (seed, a.metric.name, c.label, c.ratio_ci_low)
                seen_weak.append(c)
                # ... and the reason is the one the data give: too few labels for an interval
                before, after = c.n_labels_before, c.n_labels_after
                assert 2 / math.comb(before + after, before) > 0.05
                assert math.isnan(c.ratio_ci_low) and math.isnan(c.ratio_ci_high)
                assert c.warnings[0].code is Code.WEAK_NO_INTERVAL
                assert (c.warnings[0]["n_before"], c.warnings[0]["n_after"]) == (before, after)
        answers = hs.answers(analyses, {})
        for a in analyses:  # one row per change point (issue 21), "no change point" else
            points = a.series[0].change.change_points
            rows = [x for x in answers if x.question.startswith(a.metric.label)
                    and "newest labels" not in x.question]
            assert len(rows) == max(1, len(points))
            # and one for the newest labels against the segment before them (issue 34)
            assert len([x for x in answers if x.question.startswith(
                f"{a.metric.label}, newest labels")]) == 1
            for c, row in zip(points, rows, strict=False):
                assert row.question == f"{a.metric.label} at {c.label}"
                assert row.verdict == (HistoryVerdict.CHANGE if c.supported
                                       else HistoryVerdict.WEAK_CHANGE)
                if not c.supported:  # the reason travels with the row; no interval printed
                    assert c.warnings[0] in row.warnings and "(no interval)" in row.answer
            if not points:
                assert rows[0].verdict == HistoryVerdict.NO_CHANGE
    assert seen_weak, "v03 never appeared: the test proves nothing"
