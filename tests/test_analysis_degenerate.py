"""Degenerate inputs get defined answers from every analysis entry point (issue 22, item 3).

The inputs: every run with the same value (5 x 2.0 ms, as a rounded metric gives), a run
whose value is +inf or -inf (no tool measures one), one run per side, an empty side. Each
entry point gate, compare, plan and effects call must answer: a result, or a
:class:`~perfkit.errors.PerfkitError` that says what is missing (exit status 2 at the CLI),
never a ZeroDivisionError, KeyError or a number that means nothing.

The runs are real (the bundled A/A and factorial experiments); only the metric's value of
each run is set, as a simulation sets it.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from perfkit.analysis import compare_runs, load_experiment, metric
from perfkit.analysis.compare import PASS, gate_runs, plan_runs
from perfkit.analysis.context import _drift as drift
from perfkit.analysis.core import RunSet
from perfkit.analysis.effects import ab_comparisons, factorial_effects
from perfkit.analysis.latency import group_runs, percentiles
from perfkit.errors import PerfkitError
from perfkit.formatting import change_ci
from perfkit.frames import runs_frame
from perfkit.present.compare import change_text, detectable_text
from perfkit.stats import compare
from perfkit.stats import power as pw
from perfkit.stats.changepoint import change_points
from perfkit.stats.factorial_design import factorial
from perfkit.stats.mannwhitney import runs_to_reach_alpha
from perfkit.warning import Code, Warn

#: the demo factorial as first recorded, with the upstream's queue of 100: its 1 s stalls
#: (tests/fixtures/stalls/README.md)
STALLS = Path(__file__).resolve().parent / "fixtures" / "stalls"
REPO = Path(__file__).resolve().parents[1]
AA = load_experiment(REPO / "data" / "demo-aa")
FACTORIAL = load_experiment(STALLS / "factorial-upstream-backlog100")
INF = math.inf
SPREAD = [2.0, 2.1, 1.9, 2.05, 2.2]
#: (base values, new values) of each degenerate input
INPUTS = {
    "all equal": ([2.0] * 5, [2.0] * 5),
    "+inf": (SPREAD, [2.0, 2.1, INF, 1.9, 2.05]),
    "-inf": (SPREAD, [2.0, 2.1, -INF, 1.9, 2.05]),
    "n = 1": ([2.0], [2.1]),
    "empty side": (SPREAD[:3], []),
}
METRICS = ("latency_p99_ms", "throughput_rps")


def _with(run, name: str, value: float):
    if name == "latency_p99_ms":
        return run.replace(percentiles_ms={**run.percentiles_ms, 99.0: value})
    return run.replace(**{name: value})


def _side(runs, values, name: str, label: str) -> RunSet:
    runs = tuple(_with(r, name, v) for r, v in zip(runs, values, strict=False))
    frame = runs_frame(runs) if runs else AA.rows().frame.iloc[:0]
    return RunSet(frame, runs, label)


def _sides(case: str, name: str) -> tuple[RunSet, RunSet]:
    base, new = INPUTS[case]
    runs = AA.rows().runs
    return _side(runs[:10], base, name, "base"), _side(runs[10:], new, name, "new")


def _defined(call):
    """The answer of ``call``, or the PerfkitError it raised (a defined answer too)."""
    try:
        return call()
    except PerfkitError as exc:
        return exc


@pytest.mark.parametrize("name", METRICS)
@pytest.mark.parametrize("case", INPUTS)
@pytest.mark.parametrize("entry", ["compare", "gate", "plan"])
def test_every_entry_point_answers(entry, case, name):
    base, new = _sides(case, name)
    m = metric(name)
    calls = {
        "compare": lambda: compare_runs(base, new, m, by="none"),
        "gate": lambda: gate_runs(base, new, [m], 0.05, by="none", n_sim=200),
        "plan": lambda: plan_runs([base, new], m, 0.05, by="none", n_sim=200),
    }
    got = _defined(calls[entry])
    assert got is not None
    if entry == "gate" and not isinstance(got, PerfkitError):
        assert got.exit_status in (0, 2, 3)  # no degenerate input is a regression


@pytest.mark.parametrize("name", METRICS)
def test_equal_values_are_no_change_and_any_change_is_detectable(name):
    base, new = _sides("all equal", name)
    m = metric(name)
    (row,) = compare_runs(base, new, m, by="none").rows
    c = row.comparison
    assert (row.verdict, c.ratio, c.ratio_ci_low, c.ratio_ci_high) == ("~", 1.0, 1.0, 1.0)
    assert row.mde is not None and row.mde.any_change
    assert change_ci(c.ratio, c.ratio_ci_low, c.ratio_ci_high) == "no change"
    # the change cell keeps the estimate; what the design could detect has its own column
    # (issue 21)
    assert change_text(row.verdict, c.ratio, c.ratio_ci_low, c.ratio_ci_high,
                       row.mde) == "no change"
    assert "any change" in detectable_text(row.mde)
    gate = gate_runs(base, new, [m], 0.05, by="none", n_sim=200)
    assert [g.status for g in gate.rows] == [PASS] and gate.exit_status == 0
    (plan,) = plan_runs([base, new], m, 0.05, by="none", n_sim=200).rows
    # no spread: the fewest runs that can reach alpha detect any change
    assert plan.needed.runs_per_arm == runs_to_reach_alpha(0.05)
    assert plan.current.any_change and plan.power_now.power == 1.0


@pytest.mark.parametrize("value", [INF, -INF])
@pytest.mark.parametrize("lower_is_better", [True, False])
def test_an_infinite_value_is_a_failed_run_ranked_worst_whichever_its_sign(value,
                                                                           lower_is_better):
    c = compare(SPREAD, [2.0, 2.1, value, 1.9, 2.05], lower_is_better=lower_is_better)
    assert c.n_failed_new == 1
    assert Warn(Code.INFINITE_VALUES, side="new", values=1) in c.warnings
    # ranked worst: the ratio's interval reaches out in the bad direction
    assert (c.ratio_ci_high == INF) if lower_is_better else (c.ratio_ci_low == 0)


@pytest.mark.parametrize("case", ["all equal", "n = 1", "empty side"])
def test_the_power_engine_answers_or_says_what_it_needs(case):
    base, new = (np.array(v, dtype=float) for v in INPUTS[case])
    for call in (lambda: pw.min_detectable_ratio(base, new, n_sim=200),
                 lambda: pw.power_at_ratio(1.05, base, new, n_sim=200),
                 lambda: pw.runs_needed(1.05, base, new, n_sim=200)):
        try:
            got = call()
        except ValueError as exc:  # documented: the spread needs two runs, a side one
            assert case != "all equal" and "needs >= " in str(exc)
        else:  # runs_needed takes the spread of the side that has runs
            assert math.isfinite(got.log_sd)
            if case == "all equal":
                assert got.log_sd == 0.0
                assert Warn(Code.NO_SPREAD) in got.warnings


def test_equal_values_in_a_factorial_give_exact_zero_effects_not_rounding_noise():
    runs = tuple(_with(r, "latency_p99_ms", 2.0) for r in FACTORIAL.rows().runs)
    rows = RunSet(runs_frame(runs), runs, "equal", tuple(FACTORIAL.factors))
    result = factorial_effects(rows, ["keepalive", "cache"], metric("latency_p99_ms"))
    effects = result.effects[~result.effects["term"].isin(["error", "block"])]
    assert (effects["effect"] == 0).all() and (effects["p_value"] == 1).all()
    assert (effects["ratio_ci_low"] == 1).all() and (effects["ratio_ci_high"] == 1).all()
    frame = result.to_frame()
    unchanged = frame[frame["verdict"] == "~"]  # at 256 connections: artefacts of a cap
    assert len(unchanged) == 6 and (unchanged["mde_ratio_high"] == 1).all()
    assert any(w.code is Code.AT_LEVEL and w["warning"] == Warn(Code.NO_SPREAD_IN_CELLS)
               for w in result.warnings)  # at each level of connections
    # equal within cells, different between them: the effect is exact, its p 0
    table = factorial(rows.frame.assign(y=np.where(rows.frame["cache"].eq("ram"), 2.0, 4.0)),
                      ["keepalive", "cache"], "y", by="connections")
    cache = table[table["term"] == "cache"]
    assert np.allclose(cache["ratio"], 0.5) and (cache["p_value"] == 0).all()


@pytest.mark.parametrize("case", INPUTS)
def test_drift_latency_and_ab_tables_answer(case):
    base, new = _sides(case, "latency_p99_ms")
    both = RunSet(runs_frame((*base.runs, *new.runs)), (*base.runs, *new.runs), "both")
    both = RunSet(both.frame.assign(order=np.arange(len(both)) + 1), both.runs, "both")
    trend = drift.residual_trend(drift.drift_residuals(both, "latency_p99_ms", []))
    assert trend is None or isinstance(trend.verdict, str)
    table = percentiles(group_runs(both, []), (99.0,))
    assert len(table.estimates) == 1
    rows = FACTORIAL.rows()
    ab = ab_comparisons(rows, ["keepalive", "cache"], metric("latency_p99_ms"))
    assert ab.rows


@pytest.mark.parametrize("values", [[[2.0] * 3] * 12, [[2.0]], [], [[INF, 2.0, 2.1]] * 10])
def test_change_points_answer(values):
    got = change_points(values)
    assert not got.change_points
