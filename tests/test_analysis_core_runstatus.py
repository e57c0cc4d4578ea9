"""perfkit.analysis.core._runstatus on the seeds' backlog experiment: a run whose peers all fell
short is kept in doubt and never called "like its peers'"; a run with kept-up peers is still
judged by their latency. On the demo's backlog experiment: a run that fewer connections got
into than wrk opened is ``partial``, and every answer it enters says so."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from perfkit.analysis import compare_runs, load_experiment, metric, run_statuses
from perfkit.analysis.core import PARTIAL, SHORT, UNDECIDED, kept_up, survivorship
from perfkit.analysis.effects import factorial_effects
from perfkit.vocabulary import RunStatus
from perfkit.warning import Code

DATA = Path(__file__).resolve().parents[1] / "data"
COUNTERS = Path(__file__).resolve().parent / "fixtures" / "counters"


def test_a_run_whose_peers_all_fell_short_is_not_called_like_its_peers():
    # seeds-backlog at 1000 connections: every run of both arms fell short of its rate
    exp = load_experiment(DATA / "seeds-backlog")
    for queue, span in ((128, "0.916-0.939"), (32768, "0.915-0.927")):
        rows = exp.rows({"accept_queue": queue, "connections": 1000})
        assert not kept_up(rows).any()
        statuses = run_statuses(rows, metric("latency_p99_ms"))
        assert [s.status for s in statuses] == [SHORT] * len(rows)  # kept in doubt
        for s in statuses:
            assert "like its peers'" not in s.reason
            assert f"every run of its configuration and load fell short ({span} x" \
                in s.reason
            assert f"not sustained by this setup, {UNDECIDED}" in s.reason


def test_a_run_with_kept_up_peers_is_still_judged_by_their_latency():
    exp = load_experiment(DATA / "seeds-backlog")
    rows = exp.rows({"accept_queue": 32768, "connections": 100})  # three runs kept 0.993 x
    assert kept_up(rows).sum() == 3
    shorts = [s for s in run_statuses(rows, metric("latency_p99_ms")) if s.status == SHORT]
    assert len(shorts) == 2  # 0.963 and 0.964 x
    for short in shorts:
        assert "its latency is like its peers'" in short.reason and UNDECIDED not in short.reason


def test_a_run_fewer_connections_got_into_is_partial():
    """At backlog 8 and 1024 connections nginx accepted 843 of wrk's 1024 + 1 connections in
    run 0005 (wrk opens one to test the address first): its latencies describe the 842 that
    got in."""
    exp = load_experiment(DATA / "demo-backlog")
    rows = exp.rows({"backlog": 8, "connections": 1024})
    statuses = run_statuses(rows, metric("latency_p99_ms"))
    assert [s.status for s in statuses] == [PARTIAL] * 3
    run, first = next((r, s) for r, s in zip(rows.runs, statuses, strict=True)
                      if r.run_id.startswith("0005-"))
    accepted = run.counters.server_connections_accepted
    assert accepted == 843  # counters/after - counters/before - 1 (stub_status)
    assert first.reason.startswith(
        f"{accepted - 1} of 1024 connections got in (the server accepted {accepted}")
    assert first.reason.endswith("latencies describe those")
    full = exp.rows({"backlog": 511, "connections": 256})
    assert [s.status for s in run_statuses(full, metric("latency_p99_ms"))] == [RunStatus.OK] * 3


def test_connect_errors_or_a_short_accept_count_flag_it_and_more_accepts_do_not():
    exp = load_experiment(DATA / "demo-backlog")
    run = exp.rows({"backlog": 511, "connections": 256}).runs[0]
    assert survivorship(run) == ""
    assert survivorship(run.replace(errors_connect=12)).startswith(
        "wrk counted 12 connect error(s) with 256 connections")
    counters = dataclasses.replace(run.counters, server_connections_accepted=257)
    assert survivorship(run.replace(counters=counters)) == ""  # 256 + the test connection
    counters = dataclasses.replace(run.counters, server_connections_accepted=256)
    assert survivorship(run.replace(counters=counters)).startswith("255 of 256 connections")
    # wrk splits -c over -t: -c 5 -t 2 opens 4
    counters = dataclasses.replace(run.counters, server_connections_accepted=5)
    assert survivorship(run.replace(counters=counters, connections=5, threads=2)) == ""


def test_the_servers_socket_drops_flag_a_run_whose_reconnects_hide_the_count():
    """keepalive_requests 100 at backlog 8 (a real run: tests/test_ingest_counters.py says how
    it was made): nginx accepted 545 connections for wrk's 256 + 1, since it closes each one
    after its 100th request and wrk opens it again, so the count says nothing; its socket
    dropped 1,304 connection attempts, each a connection kept out for a SYN retry."""
    exp = load_experiment(COUNTERS / "backlog8-kr100-isolated-c256")
    (run,) = exp.rows().runs
    assert run.counters.server_connections_accepted == 545
    assert run.counters.server_listen_drops == 1304
    (status,) = run_statuses(exp.rows(), metric("latency_p99_ms"))
    assert status.status == PARTIAL
    assert status.reason == (
        "the server's listening socket dropped 1,304 connection attempts (each kept out for a "
        "SYN retry, 1 s or more): for part of the run fewer than 256 connections were in; "
        "latencies describe those that were")
    # a proxy whose sockets dropped nothing, every connection in: ok
    (proxy,) = load_experiment(COUNTERS / "proxy-isolated-c256").rows().runs
    assert proxy.counters.server_listen_drops == 0 and survivorship(proxy) == ""
    # where only the accepted count is known (no ss), the count alone decides, as before
    counters = dataclasses.replace(run.counters, server_listen_drops=None)
    assert survivorship(run.replace(counters=counters)) == ""


def test_the_partial_runs_are_named_in_the_comparison_and_the_factorial():
    exp = load_experiment(DATA / "demo-backlog")
    rows = exp.rows({"connections": 256})
    table = compare_runs(rows.where({"backlog": 511}), rows.where({"backlog": 8}),
                         metric("latency_p99_ms"), exclude=["backlog"])
    notes = [w for row in table.rows for w in row.warnings]
    (partial,) = [w for w in notes if w.code is Code.RUNS_PARTIAL]
    assert partial["side"] == "new" and len(partial["reasons"]) == 3
    assert str(partial).startswith("new: 3 run(s) partial")
    assert "the server's listening socket dropped 993 connection attempts" in str(partial)
    result = factorial_effects(exp.rows(), ["backlog"], metric("latency_p99_ms"),
                               by="connections")
    # the 9 runs at backlog 8, and the run at 511 and 1024 connections whose socket dropped 2
    (kept,) = [w for w in result.warnings if w.code is Code.FACTORIAL_KEEPS_PARTIAL]
    assert len(kept["reasons"]) == 10 and str(kept).startswith("10 run(s) partial")
    kinds = [kind for notes in result.level_run_notes.values() for _, kind, _ in notes]
    assert kinds.count(PARTIAL) == 10
