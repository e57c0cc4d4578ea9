"""The one rule about known timeout caps (:mod:`perfkit.analysis.caps`), on runs built here:
which values sit on a cap, which runs waited for a timeout, what that does to each metric,
and that the threat (:func:`perfkit.analysis.validity.value_caps`) reads the same rule."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from perfkit.analysis import metric
from perfkit.analysis.caps import cap_check, cap_hits, waited
from perfkit.analysis.experiment import RunSet
from perfkit.analysis.validity import value_caps

#: wrk's printed percentiles, ms: a fast run, one whose max is the 1 s SYN retransmission
#: (the demo's run 0048), one whose p99 is on it too, and a wrk2 run whose latency grew
#: through the run (an open-loop queue: a median of the order of its max)
RUNS = {
    "fast": (14.0, 17.0, 20.0, 35.0, 47.0, 17.0, 15000.0),
    "max-on-cap": (14.3, 16.0, 20.0, 649.3, 1040.0, 28.2, 16568.0),
    "p99-on-cap": (32.5, 60.0, 581.6, 1030.0, 1090.0, 140.7, 5638.0),
    "queue-ramp": (497.7, 750.0, 965.6, 1250.0, 1340.0, 560.0, 39991.0),
    "max-beyond": (14.0, 17.0, 20.0, 35.0, 1150.0, 17.0, 15000.0),
}
COLUMNS = ("latency_p50_ms", "latency_p75_ms", "latency_p90_ms", "latency_p99_ms",
           "latency_max_ms", "latency_mean_ms", "throughput_rps")


def _rows(*names: str) -> RunSet:
    frame = pd.DataFrame([dict(zip(COLUMNS, RUNS[n], strict=True), run_id=n) for n in names])
    return RunSet(frame, tuple(None for _ in names))


def test_values_on_a_cap_percentiles_within_5_percent_the_max_up_to_10_percent_above():
    hits = {(h.run_id, h.column) for h in cap_hits(_rows(*RUNS))}
    assert hits == {("max-on-cap", "latency_max_ms"), ("p99-on-cap", "latency_p99_ms"),
                    ("p99-on-cap", "latency_max_ms"), ("queue-ramp", "latency_p90_ms")}
    assert not math.isclose(RUNS["max-beyond"][4], 1000.0, rel_tol=0.10)  # 1150: beyond


def test_a_run_waited_for_the_timeout_when_its_median_is_far_below_the_cap():
    assert {h.run_id for h in waited(_rows(*RUNS))} == {"max-on-cap", "p99-on-cap"}


@pytest.mark.parametrize("name, artefact, kept", [
    # the max alone on the cap: p99 (the highest percentile below it) up, the mean: artefacts
    ("max-on-cap", ["latency_p99_ms", "latency_max_ms", "latency_mean_ms"],
     ["latency_p50_ms", "latency_p75_ms", "latency_p90_ms"]),
    # p99 on it too: p90 up (p90 is the highest percentile below the cap)
    ("p99-on-cap", ["latency_p90_ms", "latency_p99_ms", "latency_mean_ms"],
     ["latency_p50_ms", "latency_p75_ms"]),
    # a queue that grew through the run: only a value on the cap itself (p90 at 965.6 ms)
    ("queue-ramp", ["latency_p90_ms"],
     ["latency_p50_ms", "latency_p99_ms", "latency_max_ms", "latency_mean_ms"]),
    ("fast", [], ["latency_p99_ms", "latency_max_ms", "latency_mean_ms"]),
    ("max-beyond", [], ["latency_p99_ms", "latency_max_ms", "latency_mean_ms"]),
])
def test_what_a_cap_does_to_each_latency(name, artefact, kept):
    rows = _rows(name, "fast")
    for col in artefact:
        check = cap_check(rows, metric(col))
        assert check.caps_ms == (1000.0,) and not check.affected_ms, col
        assert name in check.warnings[0] and "artefacts of it" in check.warnings[0]
    for col in kept:
        assert not cap_check(rows, metric(col)), col


@pytest.mark.parametrize("name, affected", [("max-on-cap", True), ("p99-on-cap", True),
                                            ("queue-ramp", False), ("fast", False)])
def test_throughput_of_a_run_that_waited_is_affected_not_an_artefact(name, affected):
    check = cap_check(_rows(name), metric("throughput_rps"))
    assert not check.caps_ms
    assert check.affected_ms == ((1000.0,) if affected else ())
    assert bool(check.warnings) == affected
    if affected:
        assert "throttled" in check.warnings[0] and "affected by the cap" in check.warnings[0]


def test_the_threat_reads_the_same_rule():
    text = " ".join(value_caps(_rows(*RUNS)))
    assert "2 latency value(s) sit on 1000 ms" in text  # p99-on-cap's p99, queue-ramp's p90
    assert "2 run(s) have a max latency on 1000 ms" in text  # the two that waited
    assert "max-on-cap 1040 ms" in text and "max-beyond" not in text
