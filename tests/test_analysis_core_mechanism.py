"""perfkit.analysis.core._mechanism: the counters beside an effect summarise the runs the
effect rests on, averaged as it averages them (issue 29: a main effect of the 2^2 demo
averaged 10 vs 10 runs while its counters came from the 5 at the other factor's low level)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from perfkit.analysis import load_experiment, metric
from perfkit.analysis.core import averaged_mechanism, rows_at
from perfkit.analysis.effects import factorial_effects

DATA = Path(__file__).resolve().parents[1] / "data"
FACTORS = ["client_keepalive", "upstream_keepalive", "cache"]


def _quantity(mech, name):
    return next(r for r in mech.rows if r.quantity.name == name)


def test_a_main_effects_counters_name_every_run_of_its_load_level():
    rows = load_experiment(DATA / "demo-wrk-factorial").rows()
    result = factorial_effects(rows, FACTORS, metric("latency_p99_ms"), by=["connections"])
    for (factor, level), mech in result.mechanisms.items():
        q = _quantity(mech, "server_connections_per_client_connection")
        assert q.low.n == q.high.n == 12, (factor, level)  # 3 runs x 4 cells per side


def test_each_side_is_the_mean_of_its_cells_medians():
    rows = rows_at(load_experiment(DATA / "demo-wrk-factorial").rows(), ["connections"], 64)
    coding = {"low": "off", "high": "on"}
    mech = averaged_mechanism(rows, "upstream_keepalive", coding, ["client_keepalive", "cache"])
    frame = rows.frame
    per_run = frame["server_connections_accepted"] / frame["connections"]
    for side in ("low", "high"):
        at = frame["upstream_keepalive"] == coding[side]
        medians = per_run[at].groupby([frame["client_keepalive"], frame["cache"]]).median()
        q = _quantity(mech, "server_connections_per_client_connection")
        got = getattr(q, side)
        assert len(medians) == 4 and math.isclose(got.median, float(np.mean(medians)))
        assert got.low == per_run[at].min() and got.high == per_run[at].max()
    # per request is kept as columns, not said: it falls whenever throughput rises
    assert "per request" not in mech.text().split(";")[0]


def test_counters_of_a_namespace_say_they_are_its_totals_and_whose_sockets_share_them():
    # review29 (issue 29 item 2): the index's backlog rows read "listen overflows 1,448
    # (984-1,462) -> 0" with nothing saying the count is the run's network namespace's, over
    # every listening socket in it; where the counters moved, a coded caveat says so and
    # names the sockets (nginx's alone without an upstream; the upstream's too with one)
    from perfkit.warning import Code

    backlog = load_experiment(DATA / "demo-backlog").rows()
    result = factorial_effects(backlog, ["backlog"], metric("latency_p99_ms"),
                               by=["connections"])
    found = [w for mech in result.mechanisms.values() for w in mech.warnings
             if w.code is Code.COUNTERS_NAMESPACE_TOTAL]
    assert len(found) == len(result.mechanisms) == 3  # overflows at 64, 256 and 1024
    assert {dict(w.fields)["sockets"] for w in found} == {("nginx's",)}
    assert "over every listening socket in it (nginx's)" in str(found[0])
    # the first factorial (the stalls fixture): its upstream's queue of 100 overflowed beside
    # nginx's, in one namespace: both sockets named
    stalls = load_experiment(Path(__file__).resolve().parent / "fixtures" / "stalls"
                             / "factorial-upstream-backlog100")
    result = factorial_effects(stalls.rows(), list(stalls.factors), metric("latency_p99_ms"),
                               by=["connections"])
    found = [w for mech in result.mechanisms.values() for w in mech.warnings
             if w.code is Code.COUNTERS_NAMESPACE_TOTAL]
    assert found and {dict(w.fields)["sockets"] for w in found} == {("nginx's",
                                                                     "the upstream's")}
    # the factorial: an upstream listens beside nginx, and no overflow moved: no such caveat
    rows = load_experiment(DATA / "demo-wrk-factorial").rows()
    result = factorial_effects(rows, FACTORS, metric("latency_p99_ms"), by=["connections"])
    assert not [w for mech in result.mechanisms.values() for w in mech.warnings
                if w.code is Code.COUNTERS_NAMESPACE_TOTAL]
