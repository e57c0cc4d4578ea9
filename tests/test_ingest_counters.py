"""What the server and the kernel counted: the readers of the raw snapshots, the record columns
and the mechanism beside an effect, on two real runs against the testbed
(``tests/fixtures/counters/``: ``perfkit run wrk`` for 2 s, raw snapshots kept):

- ``backlog8-isolated-c256``: profile ``backlog+isolated`` (listen backlog 8, nginx and wrk in a
  network namespace of their own), 256 keep-alive connections: listen overflows;
- ``cache-ram-c16``: profile ``keepalive+cache-ram`` in the host's namespace, 16 connections:
  cache hits, kernel counters system-wide;
- recorded 2026-11-28 with the upstream's counters and the listening sockets (``perfkit
  testbed up --profile P --port 28600``, then ``perfkit run wrk --url
  http://127.0.0.1:28600/ -c 256 -t 2 -d 2s --run-id NAME``, on a busy 2-core box, load
  average 9): ``proxy-isolated-c256`` (profile ``proxy+isolated``: the upstream app behind
  nginx, no upstream keepalive) and ``backlog8-isolated-c256-sockets`` (profile
  ``backlog+isolated``: nginx's socket dropped 797 connection attempts, 142 of wrk's 256
  connections got in);
- recorded 2026-11-28 the same way for 3 s (``-d 3s``), load average 2.3:
  ``backlog8-kr100-isolated-c256`` (profile ``backlog+isolated`` with ``--set
  keepalive_requests=100``: nginx closes each connection after its 100th request, wrk opens it
  again; nginx's socket dropped 1,304 connection attempts, and it accepted 545 connections for
  wrk's 256 + 1).
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest

from perfkit.analysis import load_experiment, metric
from perfkit.analysis.core import cap_check, cap_hits, mechanism, mechanism_columns, stall_evidence
from perfkit.errors import ParseError
from perfkit.frames import runs_frame
from perfkit.ingest import counters as parse
from perfkit.ingest import load
from perfkit.model import RECORD_COLUMNS, SERVER_COLUMNS
from perfkit.run.counters import SCOPE_SYSTEM
from perfkit.store.runtable import runs_to_table, table_to_runs
from perfkit.warning import Code, Warn

FIXTURES = Path(__file__).parent / "fixtures"
#: the demo factorial as first recorded, with the upstream's queue of 100: its 1 s stalls
#: (tests/fixtures/stalls/README.md)
STALLS = Path(__file__).resolve().parent / "fixtures" / "stalls"
DATA = Path(__file__).resolve().parents[1] / "data"
BACKLOG = FIXTURES / "counters" / "backlog8-isolated-c256"
CACHE = FIXTURES / "counters" / "cache-ram-c16"
PROXY = FIXTURES / "counters" / "proxy-isolated-c256"
SOCKETS = FIXTURES / "counters" / "backlog8-isolated-c256-sockets"
PLAIN = FIXTURES / "wrk" / "single" / "latency_default_c50"  # recorded without counters


def _raw(run_dir: Path, when: str, name: str) -> str:
    return (run_dir / "counters" / when / parse.RAW_FILES[name]).read_text()


def test_proc_tables_read_every_section_and_field():
    netstat = parse.parse_proc_table(_raw(BACKLOG, "after", "netstat"))
    snmp = parse.parse_proc_table(_raw(BACKLOG, "after", "snmp"))
    assert {"TcpExt", "IpExt"} <= set(netstat)
    assert {"Ip", "Tcp", "Udp"} <= set(snmp)
    assert snmp["Tcp"]["MaxConn"] == -1  # signed, as the kernel prints it
    for file, section, field in parse.KERNEL_FIELDS.values():
        assert field in (netstat if file == "netstat" else snmp)[section]


def test_a_proc_table_cut_short_is_an_error_at_its_line():
    text = "\n".join(_raw(BACKLOG, "after", "snmp").splitlines()[:3])  # "Icmp:" names only
    with pytest.raises(ParseError, match=r"snmp:4: expected a line of values for 'Icmp:'"):
        parse.parse_proc_table(text, "snmp")


def test_stub_status_reads_its_four_lines_and_an_incomplete_page_is_an_error():
    page = parse.parse_stub_status(_raw(BACKLOG, "before", "stub_status"))
    assert page["accepts"] == page["handled"] == page["requests"] >= 1  # its own fetch counts
    assert page["active"] == page["writing"] == 1
    cut = "\n".join(_raw(BACKLOG, "before", "stub_status").splitlines()[:2])
    with pytest.raises(ParseError, match="stub_status:3: expected the four lines"):
        parse.parse_stub_status(cut, "stub_status")


@pytest.mark.parametrize("run_dir", [BACKLOG, CACHE], ids=lambda p: p.name)
def test_the_manifest_records_what_the_raw_snapshots_give(run_dir):
    (run,) = load(run_dir)
    recomputed = parse.deltas_from_dir(run_dir)
    assert set(recomputed) == {*parse.STUB_STATUS_COLUMNS, *parse.KERNEL_COLUMNS}
    values = run.manifest["counters"]["values"]
    assert {k: values[k] for k in recomputed} == recomputed
    # minus the after snapshot's own connection and request
    before, after = (parse.parse_stub_status(_raw(run_dir, w, "stub_status"))
                     for w in ("before", "after"))
    assert run.counters.server_requests == after["requests"] - before["requests"] - 1


def test_the_run_carries_the_counters_as_record_columns():
    (run,) = load(BACKLOG)
    assert run.counters.tcp_listen_overflows > 0 and run.counters.tcp_syn_retransmits > 0
    assert run.counters.server_connections_per_request == pytest.approx(
        run.counters.server_connections_accepted / run.counters.server_requests)
    rec = run.to_record()
    assert list(rec)[: len(RECORD_COLUMNS)] == list(RECORD_COLUMNS)
    assert [c for c in rec if c in SERVER_COLUMNS] == list(SERVER_COLUMNS)
    # the profile has no cache: missing, never 0, with the reason in the manifest
    assert rec["server_cache_hits"] is None
    assert run.manifest["counters"]["missing"]["server_cache_hits"] == "the profile has no cache"


def test_a_run_without_counters_has_no_counter_columns():
    (run,) = load(PLAIN)
    assert not run.counters_recorded
    assert not set(run.to_record()) & set(SERVER_COLUMNS)


def test_the_frame_keeps_counts_as_nullable_integers():
    frame = runs_frame([*load(BACKLOG), *load(CACHE)])
    assert str(frame["tcp_listen_overflows"].dtype) == "Int64"
    assert frame["server_cache_hits"].isna().tolist() == [True, False]
    assert frame["server_cache_misses"].tolist()[1] >= 1  # the cold cache's first request


def test_the_run_store_round_trips_the_counters():
    runs = [*load(BACKLOG), *load(CACHE)]
    back = table_to_runs(runs_to_table(runs))
    assert all(a.same_as(b) for a, b in zip(runs, back, strict=True))
    assert back[0].counters.tcp_listen_overflows == runs[0].counters.tcp_listen_overflows


def test_scope_says_whether_the_kernel_counters_are_the_runs_alone():
    (isolated,), (shared,) = load(BACKLOG), load(CACHE)
    scope = isolated.manifest["counters"]["sources"]["kernel"]["scope"]
    assert scope == f"netns {isolated.manifest['server']['netns']}"
    assert shared.manifest["counters"]["sources"]["kernel"]["scope"] == SCOPE_SYSTEM


def test_mechanism_gives_each_sides_medians_and_says_the_scope():
    (isolated,), (shared,) = load(BACKLOG), load(CACHE)
    mech = mechanism([shared], [isolated])
    # per client connection (wrk's -c): 17 of 16 (its test connection), 162 of 256 (the
    # backlog of 8 kept the rest out); per request, kept as columns, is no mechanism
    assert mech.text().startswith("accepted connections per client connection 1.06 -> 0.633")
    assert "per request" not in mech.text().split(";")[0]
    assert "listen overflows 0 -> 807" in mech.text()
    assert "cache hit ratio 1 on the base side only" in mech.text()
    assert Warn(Code.COUNTERS_SYSTEM_WIDE, runs=1, of=2) in mech.warnings
    cols = mechanism_columns(mech, "low", "high")
    assert cols["tcp_listen_overflows_low"] == 0 and cols["tcp_listen_overflows_high"] == 807
    assert math.isnan(cols["server_cache_hit_ratio_high"])
    assert cols["server_cache_hit_ratio_runs_high"] == 0
    assert not mechanism(load(PLAIN), load(PLAIN))


def test_the_cap_rule_cites_the_kernel_counters_of_the_runs_on_the_1_s_cap():
    """demo-wrk-factorial (isolated namespaces): the runs whose latencies sit on 1000 ms are
    cited with the listen overflows and SYN retransmissions their namespace counted."""
    rows = load_experiment(STALLS / "factorial-upstream-backlog100").rows()
    by_id = {r.run_id: r for r in rows.runs}
    hits = {h.run_id for h in cap_hits(rows) if h.cap_ms == 1000.0}
    assert hits  # the 256-connection runs without keepalive wait for the SYN retry
    (warning,) = cap_check(rows, metric("latency_p99_ms")).warnings
    counted = {rid: (over, syn) for rid, over, syn, _ in warning["evidence"]}
    assert "the kernel counters, the evidence of connection attempts dropped" in str(warning)
    for rid in hits:
        run = by_id[rid]
        assert run.counters.tcp_listen_overflows > 0 and run.counters.tcp_syn_retransmits > 0
        assert counted[rid] == (run.counters.tcp_listen_overflows,
                                run.counters.tcp_syn_retransmits)
        assert f"{rid}: {stall_evidence(run)}" in str(warning)
    assert all(over is not None for _, over, _, _ in warning["evidence"])  # all counted


def test_the_kernel_counters_decide_whether_a_run_waited_for_the_syn_retry():
    """With counters from the run's own namespace, the SYN-retry caps read them, not the
    latency: retries counted put a p99 of 1070 ms (1 s plus a median of 57 ms) on the 1 s cap;
    none counted take a value off it, however it stands out."""
    rows = load_experiment(STALLS / "factorial-upstream-backlog100").rows()
    frame = rows.frame
    (i,) = np.flatnonzero(frame["run_id"].str.startswith("0011-").to_numpy())
    run = rows.runs[i]
    assert run.percentile_ms(99) == 1070.0 and run.percentile_ms(50) < 70
    assert run.counters.tcp_syn_retransmits > 0
    one = rows.subset(np.arange(len(rows)) == i)
    assert {h.column for h in cap_hits(one)} == {"latency_p99_ms", "latency_max_ms"}
    # the same run had the kernel counted no retry: its 1 s would be service, not a retry
    quiet = dataclasses.replace(one, runs=(run.replace(counters=dataclasses.replace(
        run.counters, tcp_syn_retransmits=0, tcp_listen_overflows=0)),))
    assert cap_hits(quiet) == []
    # ... and without counters its p99, 7% above the cap with a median of 57 ms, does not
    # stand out as a separate mode: the latency alone does not put it there
    bare = dataclasses.replace(one, runs=(run.replace(manifest={}),))
    assert "latency_p99_ms" not in {h.column for h in cap_hits(bare)}


def test_without_counters_the_cap_rule_reads_as_before():
    """An experiment recorded without counters: the warning is the latency rule's alone."""
    rows = load_experiment(DATA / "demo-wrk-connections").rows()
    for warning in cap_check(rows, metric("latency_p99_ms")).warnings:
        assert warning["evidence"] == () and "kernel counters" not in str(warning)


def test_stall_evidence_cites_the_kernel_counters():
    (isolated,), (shared,) = load(BACKLOG), load(CACHE)
    assert stall_evidence(isolated) == (
        f"807 listen overflows and 170 SYN retransmissions (netns "
        f"{isolated.manifest['server']['netns']})")
    assert stall_evidence(shared).startswith("no listen overflow and no SYN retransmission")
    (plain,) = load(PLAIN)
    assert stall_evidence(plain) is None


def test_ss_gives_each_listening_sockets_queue_backlog_and_drops():
    before = parse.parse_ss_listeners(_raw(PROXY, "before", "listeners"))
    assert before == {"127.0.0.1:28600": {"queue": 0, "backlog": 511, "drops": 0},
                      "127.0.0.1:29600": {"queue": 0, "backlog": 4096, "drops": 0}}
    after = parse.parse_ss_listeners(_raw(SOCKETS, "after", "listeners"))
    assert after["127.0.0.1:28600"] == {"queue": 0, "backlog": 8, "drops": 797}
    with pytest.raises(ParseError, match="ss:1: expected State Recv-Q Send-Q"):
        parse.parse_ss_listeners("LISTEN x 8 127.0.0.1:1 0.0.0.0:*", "ss")


def test_an_overflow_is_attributed_to_the_socket_that_dropped_it():
    (run,) = load(SOCKETS)
    c = run.counters
    assert c.server_listen_backlog == 8 and c.server_listen_drops == 797
    assert c.tcp_listen_overflows == 797  # the namespace's total: nginx's socket alone
    assert c.upstream_listen_drops is None  # no upstream: missing, not 0
    overflows = run.manifest["counters"]["overflows"]
    assert overflows["by_socket"] == {"server": 797}
    assert overflows["attributed"].startswith("by socket")
    assert c.server_connections_accepted == 143  # 142 of wrk's 256, and its test connection


def test_the_upstream_counts_a_connection_per_request_without_keepalive():
    (run,) = load(PROXY)
    c = run.counters
    before, after = (parse.parse_upstream_status(_raw(PROXY, w, "upstream_status"))
                     for w in ("before", "after"))
    assert c.upstream_requests == after["requests"] - before["requests"] > 0
    assert c.upstream_connections_per_request == 1.0
    assert c.upstream_keepalive_pool == 0 and run.to_record()["upstream_pool_covers_load"] is None
    assert c.upstream_listen_backlog == 4096 and c.upstream_listen_drops == 0
    assert c.tcp_listen_overflows == 0 and c.server_connections_accepted == 257
    assert parse.deltas_from_dir(PROXY)["upstream_requests"] == c.upstream_requests
    with pytest.raises(ParseError, match="upstream:3: expected 'name: integer'"):
        parse.parse_upstream_status("perfkit upstream status\nprocesses: 2\naccepted: x\n",
                                    "upstream")


# -- issue 30: a counter is ASCII digits and never negative ------------------------------------
# Each damaged snapshot is the real one with one number edited as the test says.
@pytest.mark.parametrize(("old", "new"), [("1", "\u0661"), ("1", "-1"), ("1", "+1"),
                                          ("1", "1_0"), ("1", "\uff11")])
def test_a_stub_status_count_that_int_would_read_is_a_parse_error_at_its_line(old, new):
    lines = _raw(BACKLOG, "after", "stub_status").split("\n")
    lines[2] = lines[2].replace(old, new, 1)  # " accepts handled requests" numbers
    with pytest.raises(ParseError) as info:
        parse.parse_stub_status("\n".join(lines), "stub_status.txt")
    assert info.value.line == 3 and "a count in ASCII digits (>= 0) for accepts" in str(
        info.value)


@pytest.mark.parametrize("new", ["-3", "\u0663", "\u0969"])
def test_a_proc_net_counter_that_int_would_read_is_a_parse_error_at_its_line(new):
    text = _raw(BACKLOG, "after", "netstat")
    lines = text.split("\n")
    names = next(i for i, line in enumerate(lines) if line.startswith("TcpExt:"))
    values = lines[names + 1].split(" ")
    field = lines[names].split(" ").index("ListenOverflows")
    values[field] = new
    lines[names + 1] = " ".join(values)
    with pytest.raises(ParseError) as info:
        parse.parse_proc_table("\n".join(lines), "netstat.txt")
    assert info.value.line == names + 2
    assert "for 'TcpExt: ListenOverflows'" in str(info.value)


def test_maxconn_stays_signed_as_the_kernel_prints_it():
    snmp = parse.parse_proc_table(_raw(BACKLOG, "after", "snmp"))
    assert snmp["Tcp"]["MaxConn"] == -1
    damaged = _raw(BACKLOG, "after", "snmp").replace(" -1 ", " -\u0661 ", 1)
    with pytest.raises(ParseError, match="for 'Tcp: MaxConn'"):
        parse.parse_proc_table(damaged, "snmp.txt")
