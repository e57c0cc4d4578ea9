"""The one rule about known timeout caps (:mod:`perfkit.analysis.core._caps`), on runs built here
and on the bundled data: which values sit on a cap (in its window and standing out from their
own run, the run neither failed nor saturated), what that does to each metric, and that the
threat (:func:`perfkit.analysis.context._validity.value_caps`) and the backlog condition read the
same rule."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _syn_cap import on_syn_cap

from perfkit.analysis import load_experiment, metric
from perfkit.analysis.context import threats, value_caps
from perfkit.analysis.core import SATURATED, RunSet, cap_check, cap_hits, percentile_statuses
from perfkit.report.sections import effects
from perfkit.warning import Code

#: the demo factorial as first recorded, with the upstream's queue of 100: its 1 s stalls
#: (tests/fixtures/stalls/README.md)
STALLS = Path(__file__).resolve().parent / "fixtures" / "stalls"
DATA = Path(__file__).resolve().parents[1] / "data"

#: wrk's printed percentiles, ms: a fast run, one whose max is the 1 s SYN retransmission
#: (the demo's run 0048), one whose p99 is on it too, a wrk2 run whose latency grew through
#: the run (an open-loop queue: a median of the order of its max), the reviewer's run
#: default_R45000_c16_rep1 (a smooth ramp with a value in the window of every cap), and a run
#: with a slow median whose max jumps to wrk's 2 s timeout (seeds-worker-connections 0007)
RUNS = {
    "fast": (14.0, 17.0, 20.0, 35.0, 47.0, 17.0, 15000.0),
    "max-on-cap": (14.3, 16.0, 20.0, 649.3, 1040.0, 28.2, 16568.0),
    "p99-on-cap": (32.5, 60.0, 581.6, 1030.0, 1090.0, 140.7, 5638.0),
    "queue-ramp": (497.7, 750.0, 965.6, 1250.0, 1340.0, 560.0, 39991.0),
    "max-beyond": (14.0, 17.0, 20.0, 35.0, 1150.0, 17.0, 15000.0),
    "three-caps": (1050.0, 1570.0, 2100.0, 2870.0, 2890.0, 1300.0, 41216.0),
    "max-jumps": (205.0, 487.0, 511.0, 559.0, 1920.0, 260.0, 10265.0),
}
COLUMNS = ("latency_p50_ms", "latency_p75_ms", "latency_p90_ms", "latency_p99_ms",
           "latency_max_ms", "latency_mean_ms", "throughput_rps")


def _rows(*names: str) -> RunSet:
    frame = pd.DataFrame([dict(zip(COLUMNS, RUNS[n], strict=True), run_id=n) for n in names])
    return RunSet(frame, tuple(None for _ in names))


def test_values_on_a_cap_percentiles_within_5_percent_the_max_up_to_10_percent_above():
    hits = {(h.run_id, h.column) for h in cap_hits(_rows(*RUNS))}
    assert hits == {("max-on-cap", "latency_max_ms"), ("p99-on-cap", "latency_p99_ms"),
                    ("p99-on-cap", "latency_max_ms"), ("max-jumps", "latency_max_ms")}
    assert not math.isclose(RUNS["max-beyond"][4], 1000.0, rel_tol=0.10)  # 1150: beyond


def test_a_run_waited_for_the_timeout_when_the_cap_stands_out_from_it():
    # a median under a tenth of the cap, or a jump of x3 at it (max-jumps: 559 -> 1920 ms)
    assert {h.run_id for h in cap_hits(_rows(*RUNS))} == {"max-on-cap", "p99-on-cap",
                                                         "max-jumps"}


@pytest.mark.parametrize("name", ["queue-ramp", "three-caps"])
def test_a_smooth_ramp_through_a_cap_is_not_on_it(name):
    # values in the windows of 1, 2 and 3 s, but neither a fast median nor a jump: one run
    # cannot sit on three caps; its latencies are a queue's
    values = dict(zip(COLUMNS, RUNS[name], strict=True))
    windows = [c for c, v in values.items() if c.startswith("latency_p")
               and any(abs(v - cap) <= 0.05 * cap for cap in (1000, 2000, 3000))]
    assert windows  # the test proves something
    assert cap_hits(_rows(name, "fast")) == []
    assert not value_caps(_rows(name))


def test_a_saturated_run_is_never_on_a_cap():
    # demo-wrk2-sweep default at 45000 req/s, 64 connections: rep2 achieved 0.889 of its
    # rate, its p90 965.6 ms; give it a fast median: its p90 then stands out from it, but the
    # run-status rule calls the run saturated, so its latencies are queueing, not a timeout
    rows = load_experiment(DATA / "demo-wrk2-sweep").rows().where(
        {"profile": "default", "target_rate_rps": 45000, "connections": 64})
    frame = rows.frame.copy()
    i = int(np.flatnonzero(frame["run_id"].str.endswith("rep2"))[0])
    frame.loc[i, "latency_p50_ms"] = 1.7
    edited = RunSet(frame, rows.runs, rows.label, rows.factors)
    assert percentile_statuses(edited, 99.0, ["profile"])[i].status == SATURATED
    assert cap_hits(edited) == []
    kept = RunSet(frame, (None,) * len(frame))  # no run records: nothing to judge the status by
    assert [h.column for h in cap_hits(kept)] == ["latency_p90_ms"]


def test_on_the_bundled_data_only_the_demo_factorials_256_connections_are_on_a_cap():
    sweep = load_experiment(DATA / "demo-wrk2-sweep")
    assert cap_hits(sweep.rows()) == []  # default_R45000_c16_rep1, c64_rep2: saturated ramps
    assert not [t for t in threats(sweep) if t.kind == "value-cap"]
    assert not [t for t in threats(sweep) if "such retries" in t.text]
    keepalive = load_experiment(DATA / "seeds-keepalive")
    assert cap_hits(keepalive.rows()) == []  # run 0003: 2820-3080 ms, a queue like its peers'
    factorial = load_experiment(STALLS / "factorial-upstream-backlog100")
    hits = cap_hits(factorial.rows())
    frame = factorial.rows().frame.set_index("run_id")
    assert {frame.loc[h.run_id, "connections"] for h in hits} == {256}
    assert sorted({h.column for h in hits}) == ["latency_max_ms", "latency_p99_ms"]
    # p99 on the cap: 2 runs with keepalive (981, 993 ms) and 4 without, whose p99 of
    # 1070-1100 ms is the 1 s retry plus their median, which their kernel counters place there
    assert sum(h.column == "latency_p99_ms" for h in hits) == 6
    (cap,) = [t for t in threats(factorial) if t.kind == "value-cap"][:1]
    assert set(cap.runs) <= set(frame.index[frame["connections"] == 256])


@pytest.mark.parametrize("name, artefact, kept", [
    # the max alone on the cap: p99 (the highest percentile below it) up, the mean: artefacts
    ("max-on-cap", ["latency_p99_ms", "latency_max_ms", "latency_mean_ms"],
     ["latency_p50_ms", "latency_p75_ms", "latency_p90_ms"]),
    # p99 on it too: p90 up (p90 is the highest percentile below the cap)
    ("p99-on-cap", ["latency_p90_ms", "latency_p99_ms", "latency_mean_ms"],
     ["latency_p50_ms", "latency_p75_ms"]),
    # a queue that grew through the run: no value on a cap (p90 at 965.6 ms, p75 at 750)
    ("queue-ramp", [],
     ["latency_p50_ms", "latency_p90_ms", "latency_p99_ms", "latency_max_ms",
      "latency_mean_ms"]),
    # a slow median, its max jumping to wrk's 2 s timeout: the tail from p99 up
    ("max-jumps", ["latency_p99_ms", "latency_max_ms", "latency_mean_ms"],
     ["latency_p50_ms", "latency_p90_ms"]),
    ("fast", [], ["latency_p99_ms", "latency_max_ms", "latency_mean_ms"]),
    ("max-beyond", [], ["latency_p99_ms", "latency_max_ms", "latency_mean_ms"]),
])
def test_what_a_cap_does_to_each_latency(name, artefact, kept):
    rows = _rows(name, "fast")
    for col in artefact:
        check = cap_check(rows, metric(col))
        assert len(check.caps_ms) == 1 and not check.affected_ms, col
        w = check.warnings[0]
        assert w.code is Code.ON_CAP and name in dict(w["runs"]), col
        assert w["effect"] in ("artefact", "below-all", "below-some"), col
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
        assert check.warnings[0]["effect"] == "throttled"
        assert "affected by the cap" in str(check.warnings[0])


def test_the_threat_reads_the_same_rule():
    text = " ".join(value_caps(_rows(*RUNS)))
    assert "1 latency value(s) sit on 1000 ms" in text  # p99-on-cap's p99 (not queue-ramp's)
    assert "2 run(s) have a max latency on 1000 ms" in text  # the two that waited
    assert "1 run(s) have a max latency on 2000 ms" in text  # max-jumps
    assert "max-on-cap 1040 ms" in text and "max-beyond" not in text
    assert "queue-ramp" not in text and "three-caps" not in text


def test_a_cap_warning_names_every_run_it_counts():
    """A warning in a CSV cell is the whole statement: every run it counts is named (no
    "..."), in the cap check and in the threat alike."""
    factorial = load_experiment(STALLS / "factorial-upstream-backlog100")
    rows = factorial.rows()
    hits = cap_hits(rows)
    on_cap = sorted({h.run_id for h in hits})
    assert len(on_cap) > 4  # more runs than the old warning named
    (warning,) = cap_check(rows, metric("latency_p99_ms")).warnings
    assert sorted(dict(warning["runs"])) == on_cap
    assert "..." not in str(warning) and f"{len(on_cap)} run(s)" in str(warning)
    assert all(rid in str(warning) for rid in on_cap)
    for t in threats(factorial):
        if t.kind == "value-cap":
            assert "..." not in t.text and all(rid in t.text for rid in t.runs)


def test_a_warning_says_measures_the_timeout_only_of_a_value_on_the_cap():
    """p99 on the cap measures the timeout; a p99 below it, the run's highest percentile
    under a max on the cap, can hold requests that waited: the warning says which."""
    on = cap_check(_rows("p99-on-cap", "fast"), metric("latency_p99_ms")).warnings[0]
    assert on["effect"] == "artefact" and "measures the timeout" in str(on)
    below = cap_check(_rows("max-on-cap", "fast"), metric("latency_p99_ms")).warnings[0]
    assert below["effect"] == "below-all" and "lies below the cap" in str(below)


def _waited(max_ms: float):
    """Two runs whose max sits on ``max_ms`` with a fast median: they waited for a timeout."""
    import pandas as pd

    from perfkit.analysis.core import RunSet

    frame = pd.DataFrame([{"run_id": f"r{i}", "latency_p50_ms": 14.0, "latency_p90_ms": 20.0,
                           "latency_p99_ms": 60.0, "latency_max_ms": max_ms,
                           "throughput_rps": 9000.0, "error_ratio": 0.0005,
                           "errors_timeout": 20.0, "non_2xx_3xx": 3.0} for i in range(2)])
    return RunSet(frame, (None, None))


@pytest.mark.parametrize("cap_ms, name, says", [
    (2000.0, "throughput_rps", "throttled"),
    (1000.0, "throughput_rps", "throttled"),
    (2000.0, "error_ratio", "timeout-errors"),
    (2000.0, "errors_timeout", "timeout-errors"),
    (1000.0, "error_ratio", None),  # a SYN retry adds no error: nothing to say
    (1000.0, "errors_timeout", None),
    (2000.0, "non_2xx_3xx", "fewer-attempts"),
])
def test_the_cap_sentence_says_what_the_cap_does_to_each_metric(cap_ms, name, says):
    from perfkit.analysis.core import cap_check

    check = cap_check(_waited(cap_ms * 0.97), metric(name))
    assert not check.caps_ms  # not a latency: measured, never an artefact
    if says is None:
        assert not check and not check.warnings
        return
    (warning,) = check.warnings
    assert warning.code is Code.ON_CAP and warning["effect"] == says
    assert "affected by the cap" in str(warning)
    assert check.affected_ms == (cap_ms,)


def test_latencies_on_the_syn_retransmission_cap_are_flagged(demo_factorial):
    frame = demo_factorial.rows().frame
    on_cap = on_syn_cap(frame, "latency_p99_ms")
    assert on_cap.any(), "the demo data no longer has the 1 s cap: the test proves nothing"
    found = [t.text for t in threats(demo_factorial) if t.kind == "value-cap"]
    assert found and "SYN retransmission" in found[0]
    capped = [c for c in frame.columns if c.startswith("latency_p") and c.endswith("_ms")]
    hits = sum(int(on_syn_cap(frame, c).sum()) for c in capped)
    assert f"{hits} latency value(s) sit on 1000 ms" in found[0]
    (result,) = effects.factorials(demo_factorial.rows(), ["keepalive", "cache"],
                                   ["latency_p99_ms"], "connections", 0.95, 0.05)
    levels = set(frame.loc[on_cap, "connections"])
    for level, warns in result.level_warnings.items():
        assert any(w["cap_ms"] == 1000.0 for w in warns) == (level in levels), level
