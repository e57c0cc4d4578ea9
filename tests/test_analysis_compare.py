"""perfkit.analysis.compare._compare: a row that no data could make significant after Holm is not
testable, and says how many runs would make it testable, on the demo factorial."""

from __future__ import annotations

import dataclasses
import math

import pytest

from perfkit.analysis import compare_runs, metric
from perfkit.analysis.compare import NOT_TESTABLE, runs_per_arm_needed, verdict
from perfkit.vocabulary import Verdict


def test_a_row_no_data_could_make_significant_after_holm_is_not_testable(demo_factorial):
    # 5 vs 5 runs: the smallest exact two-sided p is 2 / C(10, 5) = 0.0079 ...
    rows = demo_factorial.rows()
    base = rows.where({"keepalive": "none", "cache": "none", "connections": 16})
    new = rows.where({"keepalive": "keepalive", "cache": "none", "connections": 16})
    (row,) = compare_runs(base, new, metric("throughput_rps"), exclude=["keepalive"]).rows
    c = row.comparison
    assert c.p_value == pytest.approx(2 / math.comb(10, 5))
    # ... which Holm over 12 comparisons lifts to 0.095: no row can pass, however large
    assert min(1.0, 12 * c.p_value) > 0.05 and c.ratio > 1.1
    assert verdict(c, min(1.0, 12 * c.p_value), metric("throughput_rps"), 12) == NOT_TESTABLE
    assert verdict(c, 6 * c.p_value, metric("throughput_rps"), 6) == Verdict.BETTER
    # the page says how many runs would make it testable: 12 x 2/C(2n, n) < 0.05 from n = 6
    need = next(n for n in range(2, 20) if 12 * 2 / math.comb(2 * n, n) < 0.05)
    assert runs_per_arm_needed(0.05, 12) == need == 6


def test_a_ratio_interval_wholly_on_one_side_of_no_change_is_printed_whatever_its_spread(
        demo_factorial):
    # one rule for every effect ratio, as the factorial's effects have it (judge_interval's
    # side_of): the A/B row's ratio interval used to be dropped for ends over 100x apart even
    # when it excluded no change, so the A/B table and a simple effect of the same two cells
    # disagreed on whether an interval could be printed
    rows = demo_factorial.rows()
    base = rows.where({"keepalive": "none", "cache": "none", "connections": 16})
    new = rows.where({"keepalive": "none", "cache": "proxy_cache", "connections": 16})
    (row,) = compare_runs(base, new, metric("latency_p99_ms"), exclude=["cache"]).rows

    def judged(low: float, high: float) -> str:
        c = dataclasses.replace(row.comparison, ratio_ci_low=low, ratio_ci_high=high)
        return dataclasses.replace(row, comparison=c).not_estimable()["ratio"]

    assert judged(0.000937, 0.354) == ""  # 378x apart, a fall of at least 65%
    assert judged(2.0, 400.0) == ""
    assert "more than 100x" in judged(0.01, 5.0)  # holds no change: nothing to act on
