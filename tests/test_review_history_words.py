"""The history page: one rule for a median of runs (compare's), Methods written from what the
labels ran, captions that describe their figure, and counts in words (review 3, item 4)."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest

from perfkit.analysis import load_experiment
from perfkit.analysis.provenance import provenance
from perfkit.report.methods import design_sentence, methods_paragraph
from perfkit.report.sections import common
from perfkit.report.sections import history as hs
from perfkit.stats import compare
from perfkit.stats.orderstats import median_ci

DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.fixture(scope="module")
def history():
    return hs.load("demo-history")


@pytest.fixture(scope="module")
def analyses(history):
    return hs.analyse(history, ["latency_p99_ms"], permutations=99)


def test_a_labels_median_has_the_interval_compare_gives_the_same_runs(analyses):
    point = analyses[0].series[0].points[0]  # v01: 5 runs
    assert point.n_runs == 5
    c = compare(list(point.values), list(point.values))
    assert math.isnan(point.ci_low) and math.isnan(point.ci_high)  # no interval claimed
    assert point.median == c.median_base == median_ci(point.values).estimate
    assert (c.median_base_ci_low, c.median_base_ci_high) == (-math.inf, math.inf)  # nor there
    assert point.warnings == median_ci(point.values).warnings
    assert "need >= 6 runs for a 95% median CI" in point.warnings[0]
    described = analyses[0].describe()
    assert "none below 6 runs" in described and "93.75" not in described


def test_the_history_methods_name_the_profiles_the_labels_ran(history):
    sentence = design_sentence(provenance(history))
    assert "of one configuration" not in sentence
    assert ("the server profile changed with the labels: proxy (v01-v07), "
            "proxy+slow-upstream (v08-v12), keepalive-upstream+proxy+slow-upstream (v13-v16)"
            in sentence)


def _dotted(fig) -> int:
    return sum(line.get_linestyle() == ":" for ax in fig.axes for line in ax.get_lines())


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


def test_one_runs_window_is_one_value_and_one_run_is_singular():
    exp = load_experiment(DATA / "demo-wrk2-uncorrected")
    text = " ".join([methods_paragraph(provenance(exp)), *common.threats([exp])])
    assert "9.9-9.9" not in text and "(1 runs" not in text and "1 run(s)" not in text
    assert "cover 9.9 s at the end of the run (1 run)" in text
    assert "in its one wrk2 run of 20 s the percentiles cover only 9.9 s" in text


def _median_legend(fig) -> tuple[str, object]:
    handles, labels = fig.axes[0].get_legend_handles_labels()
    (i,) = [i for i, label in enumerate(labels) if label.startswith("median")]
    return labels[i], handles[i]


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
