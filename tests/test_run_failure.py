"""perfkit.run.failure: why a run failed, in the tool's own words, read from real outputs of
refused connections (tests/fixtures/wild)."""

from __future__ import annotations

from pathlib import Path

from perfkit.run import failure

WILD = Path(__file__).resolve().parent / "fixtures" / "wild"


def test_a_refused_connection_is_named_in_the_tools_words():
    wrk = failure.reason("wrk", 1, WILD / "wrk" / "connection_refused")
    assert wrk == "wrk exit code 1: unable to connect to 127.0.0.1:27330 Connection refused"
    locust = failure.reason("locust", 1, WILD / "locust" / "connection_refused")
    assert locust.startswith("locust exit code 1: ") and "request(s) failed, most often GET "
    assert "ConnectionRefusedError(111, 'Connection refused')" in locust
