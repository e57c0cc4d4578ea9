"""perfkit.analysis.core._intervals, the one interval rule: an interval wider than 100x, or one
resting on a saturated run, is not estimable."""

from __future__ import annotations

import math

from perfkit.analysis.core import _intervals as intervals


def test_an_interval_wider_than_100x_or_on_a_saturated_run_is_not_estimable():
    assert intervals.judge_interval(4.39, 32800) == "its ends differ 7.47e+03x (more than 100x)"
    assert intervals.judge_interval(0.547, 1.03) == ""
    assert intervals.judge_interval(1.0, 99.0) == "" and intervals.judge_interval(1.0, 101.0)
    # every run enters a geometric mean: one saturated run of 3 makes it rest on that run
    assert intervals.judge_interval(2.0, 3.0, n_saturated=1, n_runs=3) == \
        "it rests on 1 of 3 run(s) that saturated"
    # order statistics rest on a saturated run only when its value is at or beyond an end
    assert intervals.judge_interval(2.0, 3.0, n_saturated=1, every_run_counts=False,
                           doubtful_values=[2.5]) == ""
    assert intervals.judge_interval(2.0, 3.0, n_saturated=1, every_run_counts=False,
                           doubtful_values=[9.0])
    assert intervals.judge_interval(math.nan, math.nan) == ""  # no interval: nothing to replace


def test_an_effects_interval_wholly_on_one_side_of_no_change_is_printed_whatever_its_spread():
    # issue 29: the demo's listen backlog at 256 connections, x0.0182 over 3 vs 3 runs with
    # Bonferroni over 3 loads: [0.000937, 0.354], 378x apart, yet a fall of at least 65%
    assert intervals.judge_interval(0.000937, 0.354, side_of=1.0) == ""
    assert intervals.judge_interval(2.0, 400.0, side_of=1.0) == ""
    # one that holds no change says nothing a reader can act on
    assert "more than 100x" in intervals.judge_interval(0.01, 5.0, side_of=1.0)
    # a level's interval (no side): the spread rule as before
    assert "more than 100x" in intervals.judge_interval(0.000937, 0.354)
