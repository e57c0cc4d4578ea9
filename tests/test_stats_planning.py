"""Runs per arm for a change a pilot shows, planned from bounds (issue 34, item 6)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from perfkit.stats.planning import PLANNING_CONFIDENCE, decides_from_se, plan_observed
from perfkit.stats.power import runs_needed
from perfkit.warning import Code
from perfkit.wording import text


def _pilot(seed: int, n: int, ratio: float, sd: float) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return (np.exp(sd * rng.standard_normal(n)),
            ratio * np.exp(sd * rng.standard_normal(n)))


def test_a_clear_change_is_planned_for_its_bound_nearest_one_at_a_larger_spread():
    base, new = _pilot(3, 5, 1.3, 0.05)
    plan = plan_observed(base, new, n_sim=500)
    assert 1 < plan.planned < plan.observed  # shrunk toward no change, not beyond it
    assert plan.log_sd_planned > plan.log_sd
    assert plan.confidence == PLANNING_CONFIDENCE
    seen = runs_needed(plan.observed, base, new, n_sim=500).runs_per_arm
    assert plan.runs_per_arm is not None and plan.runs_per_arm >= seen
    assert plan.warnings == ()


def test_the_bound_is_the_one_sided_t_interval_of_the_log_ratio():
    base, new = np.array([10.0, 11.0, 12.0]), np.array([15.0, 16.0, 18.0])
    plan = plan_observed(base, new, n_sim=500)
    lb, ln = np.log(base), np.log(new)
    s = math.sqrt((lb.var(ddof=1) * 2 + ln.var(ddof=1) * 2) / 4)
    half = 0.9409645772351816 * s * math.sqrt(2 / 3)  # t(0.8, 4 df)
    assert math.isclose(math.log(plan.planned), ln.mean() - lb.mean() - half, rel_tol=1e-9)
    assert math.isclose(plan.log_sd_planned, s * math.sqrt(4 / 0.7107230213973239),
                        rel_tol=1e-9)  # chi2(0.05, 4 df)


def test_a_change_compatible_with_none_gets_a_code_and_no_count():
    base, new = np.array([10.0, 13.0, 11.0]), np.array([12.0, 10.5, 13.5])  # +5% in 20% noise
    plan = plan_observed(base, new, n_sim=500)
    assert plan.planned is None and plan.runs_per_arm is None and plan.needed is None
    (note,) = plan.warnings
    assert note.code is Code.CHANGE_COMPATIBLE_WITH_NONE
    assert note["low"] < 1 < note["high"] and note["reference"] == 1.0
    assert math.isclose(note["level"], 2 * PLANNING_CONFIDENCE - 1)
    assert "compatible with no change" in text(note)
    assert plan.decides_from is None  # nothing promised, nothing to hold


def test_each_plan_states_the_true_change_its_count_holds_from():
    """Pilot data cannot tell a fluke of a small change from a typical pilot of a larger one:
    the count is measured to decide >= 75% of the time only from a size of true change, in
    standard errors of the pilot's log change (benchmarks/calibration_runs_needed.py --sweep),
    on the side of the change seen."""
    base, new = np.array([10.0, 11.0, 12.0]), np.array([15.0, 16.0, 18.0])
    lb, ln = np.log(base), np.log(new)
    se = math.sqrt((lb.var(ddof=1) * 2 + ln.var(ddof=1) * 2) / 4) * math.sqrt(2 / 3)
    up = plan_observed(base, new, n_sim=500)
    assert math.isclose(up.decides_from, math.exp(0.9 * se), rel_tol=1e-12)
    assert 1 < up.decides_from < up.planned  # the count is planned beyond where it holds from
    down = plan_observed(new, base, n_sim=500)
    assert math.isclose(down.decides_from, math.exp(-0.9 * se), rel_tol=1e-12)
    gate = plan_observed(base, new, reference=1.05, n_sim=500)
    assert math.isclose(gate.decides_from, 1.05 * math.exp(0.9 * se), rel_tol=1e-12)
    assert up.to_dict()["decides_from"] == up.decides_from


@pytest.mark.parametrize(("df", "se"), [(1, 0.9), (4, 0.9), (5, 1.0), (8, 1.0), (9, 1.25),
                                        (18, 1.25), (38, 1.5), (500, 1.5)])
def test_the_size_it_holds_from_grows_with_the_pilot_as_measured(df, se):
    assert decides_from_se(df) == se


def test_against_a_threshold_the_distance_to_it_is_planned():
    base, new = _pilot(4, 5, 1.4, 0.05)
    plan = plan_observed(base, new, reference=1.05, n_sim=500)
    assert 1.05 < plan.planned < plan.observed
    assert plan.needed is not None
    assert math.isclose(plan.needed.ratio, plan.planned / 1.05, rel_tol=1e-12)
    inside = plan_observed(base, new, reference=plan.observed, n_sim=500)
    assert inside.planned is None and "threshold" in text(inside.warnings[0])


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="confidence"):
        plan_observed([1.0, 2.0], [3.0, 4.0], confidence=0.4)
    with pytest.raises(ValueError, match=">= 1 run a side"):
        plan_observed([1.0], [3.0])
    with pytest.raises(ValueError, match="> 0"):
        plan_observed([1.0, -2.0], [3.0, 4.0])
