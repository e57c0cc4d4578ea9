"""perfkit.analysis.context._levels: each factor level is the configuration difference its runs
recorded, and the backend is read from the manifests, on data/demo-wrk-factorial."""

from __future__ import annotations

from pathlib import Path

from perfkit.analysis.context import _levels as levels
from perfkit.analysis.core import load_experiment

#: the demo factorial as first recorded, with the upstream's queue of 100: its 1 s stalls
#: (tests/fixtures/stalls/README.md)
STALLS = Path(__file__).resolve().parent / "fixtures" / "stalls"
DATA = Path(__file__).resolve().parents[1] / "data"


def test_each_factor_level_is_its_recorded_configuration_difference():
    exp = load_experiment(STALLS / "factorial-upstream-backlog100")
    frame = levels.level_changes(exp)
    keep = frame[frame["factor"] == "keepalive"].set_index("setting")
    assert (keep.loc["keepalive_timeout", "low_value"], keep.loc["keepalive_timeout",
                                                                 "high_value"]) == ("65", "300")
    assert keep.loc["keepalive_requests", "low_value"] == "not set (nginx's default 1000)"
    assert keep.loc["keepalive_requests", "high_value"] == "100000"
    assert keep.loc["keepalive", "high_value"] == "32"                 # upstream keepalive
    assert keep.loc["proxy_http_version", "high_value"] == "1.1"
    assert (keep["where"] == "every level of cache").all()
    cache = frame[frame["factor"] == "cache"].set_index("setting")
    assert cache.loc["proxy_cache", "high_value"] == "perfkit_cache"
    assert cache.loc["proxy_cache", "low_value"] == "not set"
    back = levels.backend(exp)
    assert back.upstream_delay_ms == (10.0,) and back.proxied_runs == 60
    assert 1100 < back.bytes_per_response < 1300
    assert "answers every request after 10 ms" in back.text()
