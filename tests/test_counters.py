"""The counters sub-record of a Run (perfkit.counters): the record's columns stay a contract,
runs without counters share one empty record, and the derived columns are computed, not
stored."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest

from perfkit.counters import (
    FIELDS,
    NO_COUNTERS,
    SERVER_COLUMNS,
    ServerCounters,
    columns,
    counters_of,
)
from perfkit.ingest import load
from perfkit.model import Run

DATA = Path(__file__).resolve().parents[1] / "data"
#: the 14 columns of issue 25, in their order: a contract of CSV, JSON and frames
ISSUE_25 = (
    "server_connections_accepted", "server_connections_handled", "server_requests",
    "server_connections_per_request", "tcp_listen_overflows", "tcp_listen_drops",
    "tcp_syn_retransmits", "tcp_retransmits", "tcp_active_opens", "tcp_passive_opens",
    "server_error_log_lines", "server_cache_hits", "server_cache_misses",
    "server_cache_expired")


def test_the_record_columns_keep_their_names_and_order():
    assert SERVER_COLUMNS[:len(ISSUE_25)] == ISSUE_25
    assert set(FIELDS) < set(SERVER_COLUMNS)


def test_a_run_holds_its_counters_as_one_frozen_record():
    fields = {f.name for f in dataclasses.fields(Run)}
    assert "counters" in fields and not fields & set(FIELDS)
    run = Run(tool="wrk", source="x", latency_source="summary_only",
              counters={"server_requests": 10, "server_connections_accepted": 2, "other": 1})
    assert isinstance(run.counters, ServerCounters)
    assert run.counters.server_connections_per_request == 0.2
    with pytest.raises(dataclasses.FrozenInstanceError):
        run.counters.server_requests = 3  # type: ignore[misc]
    assert Run(tool="wrk", source="x", latency_source="summary_only").counters is NO_COUNTERS
    assert counters_of({}) is NO_COUNTERS and counters_of({"x": 1}) is NO_COUNTERS


def test_the_upstream_pool_covers_a_load_only_when_it_can_keep_a_connection_per_client():
    pooled = ServerCounters(upstream_keepalive_pool=32)
    assert pooled.pool_covers_load(16) is True
    assert pooled.pool_covers_load(64) is False  # keepalive 32 against 64 connections
    assert ServerCounters(upstream_keepalive_pool=0).pool_covers_load(16) is None
    assert NO_COUNTERS.pool_covers_load(16) is None


def test_columns_are_counts_ratios_and_a_judgement():
    counters = ServerCounters(upstream_connections_accepted=40807, upstream_requests=40807,
                              upstream_keepalive_pool=0, server_listen_backlog=511)
    out = columns(counters, 256)
    assert list(out) == list(SERVER_COLUMNS)
    assert out["upstream_connections_per_request"] == 1.0
    assert math.isnan(out["server_connections_per_request"])  # not recorded: NaN, not 0
    assert out["server_listen_backlog"] == 511 and out["server_requests"] is None
    assert out["upstream_pool_covers_load"] is None


def test_a_recorded_run_carries_every_column_in_its_record():
    (run,) = [r for r in load(DATA / "demo-backlog") if r.run_id.startswith("0002-")]
    rec = run.to_record()
    assert [c for c in rec if c in SERVER_COLUMNS] == list(SERVER_COLUMNS)
    # stub_status accepts 516 after, 219 before, less the after snapshot's own connection
    assert rec["server_connections_accepted"] == run.counters.server_connections_accepted == 296
    assert rec["upstream_requests"] is None  # recorded before the upstream counted: missing
