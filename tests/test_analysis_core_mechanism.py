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
