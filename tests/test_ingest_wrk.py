"""wrk 4.x output: every fixture parses to its golden values, and the loader merges meta.json."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest

import perfkit
from perfkit.ingest import wrk
from perfkit.model import RECORD_COLUMNS
from perfkit.warning import Code, Warn

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "wrk"
RUNS = sorted(p.parent for p in FIXTURES.glob("*/*/run.stdout"))


def parse_fixture(name: str):
    path = FIXTURES / name / "run.stdout"
    return wrk.parse(path.read_text(), str(path))


def test_every_wrk_fixture_is_found():
    assert len([r for r in RUNS if r.parent.name == "single"]) == 8
    assert len([r for r in RUNS if r.parent.name == "sweep"]) == 24


@pytest.mark.parametrize("run_dir", RUNS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_wrk_output_matches_golden_values(run_dir, wrk_check_golden):
    run = parse_fixture(f"{run_dir.parent.name}/{run_dir.name}")
    wrk_check_golden(run, f"wrk/{run_dir.parent.name}/{run_dir.name}")
    assert run.tool == "wrk"
    assert run.latency_source == "summary_only"
    assert run.histogram is None  # never invented from four percentiles
    assert run.tool_version is None and run.target_rate_rps is None


def test_printed_numbers_are_converted_exactly_by_hand():
    run = parse_fixture("single/plain_default_c50")
    # "    Req/Sec    19.63k     2.33k   25.62k    67.50%"
    assert run.extra["thread_stats"]["req_per_thread_avg_rps"] == 19630.0
    assert run.extra["thread_stats"]["req_per_thread_max_rps"] == 25620.0
    # "  391257 requests in 10.02s, 471.26MB read" (wrk's MB is 1024**2 bytes)
    assert run.requests == 391257
    assert run.duration_s == 10.02
    assert run.bytes_read == 471.26 * 1024**2
    # "Requests/sec:  39056.10" is kept as printed, not requests / duration
    assert run.throughput_rps == 39056.10
    assert run.throughput_rps != run.requests / run.duration_s
    assert run.transfer_bytes_per_s == 47.04 * 1024**2
    assert run.latency_mean_ms == 1.34 and run.latency_max_ms == 12.29
    assert run.percentiles_ms == {}  # no --latency


def test_microsecond_percentiles_and_latency():
    run = parse_fixture("single/non2xx_404")
    assert run.latency_mean_ms == 0.53537  # 535.37us
    assert run.latency_stdev_ms == 0.82974  # 829.74us
    assert run.percentiles_ms[50.0] == 0.256  # 256.00us
    assert run.percentiles_ms[99.0] == 4.18
    assert run.non_2xx_3xx == 290698
    assert Warn(Code.FAILED_EVERY_RESPONSE) in run.warnings


def test_absent_error_lines_are_a_real_zero():
    run = parse_fixture("single/latency_default_c50")
    assert (run.errors_connect, run.errors_read, run.errors_write, run.errors_timeout) == (
        0, 0, 0, 0)
    assert run.non_2xx_3xx == 0
    assert run.error_ratio == 0.0


def test_socket_errors_are_read_by_kind():
    run = parse_fixture("single/connect_errors_fd_limit")
    assert (run.errors_connect, run.errors_read, run.errors_write, run.errors_timeout) == (
        149, 0, 0, 0)
    stopped = parse_fixture("single/server_stopped_midrun")
    assert stopped.errors_write == 105015
    assert Code.ERRORS_HIGH in {w.code for w in stopped.warnings}


def test_all_timeouts_give_missing_latency_not_zero():
    run = parse_fixture("single/timeouts_slow_upstream")
    assert run.latency_mean_ms is None
    assert run.latency_stdev_ms is None
    assert run.latency_max_ms is None
    assert run.percentiles_ms == {}
    assert run.errors_timeout == 40 and run.requests == 40
    assert any(n.code is Code.NO_LATENCY_SAMPLES and "0.00us" in n["row"] for n in run.notes)
    record = run.to_record()
    assert math.isnan(record["latency_p50_ms"]) and math.isnan(record["latency_mean_ms"])
    assert run.extra["thread_stats"]["latency_within_stdev_pct"] is None  # "-nan%"
    assert run.extra["thread_stats"]["req_per_thread_avg_rps"] == 31.0


def test_lua_done_lines_are_kept_and_do_not_break_parsing():
    run = parse_fixture("single/lua_done_summary")
    lines = run.extra["script_output"]
    assert lines[0] == "------------------------------"
    assert lines[-1] == "latency_us,stdev,571.02"
    assert len(lines) == 19
    assert run.throughput_rps == 60404.74
    # the script's exact counters agree with what wrk printed, rounded
    exact = dict(line.split(",", 2)[1:] for line in lines[1:4])
    assert int(exact["requests"]) == run.requests
    assert abs(int(exact["bytes"]) - run.bytes_read) <= 0.005 * 1024**2
    assert run.percentiles_ms[50.0] == 0.782  # 782.00us, the script's p50 is 782 us


def test_records_have_the_contract_columns():
    record = parse_fixture("single/latency_default_c50").to_record()
    assert list(record)[: len(RECORD_COLUMNS)] == list(RECORD_COLUMNS)
    assert record["latency_p90_ms"] == 2.60
    assert math.isnan(record["latency_p99_9_ms"])  # wrk does not print p99.9
    assert record["histogram_count"] is None
    assert any("closed-loop" in w for w in record["warnings"])


def test_wrk_sweep_loads_with_its_manifests():
    runs = perfkit.load(FIXTURES / "sweep")
    assert len(runs) == 24
    with open(FIXTURES / "sweep" / "sweep_order.csv", newline="") as fh:
        order = {row["run_dir"]: row for row in csv.DictReader(fh)}
    assert len(order) == 24
    for run in runs:
        row = order[Path(run.source).parent.name]
        assert run.tool == "wrk"
        assert run.order == int(row["order"])
        assert run.repetition == int(row["rep"])
        assert run.factors["profile"] == row["profile"]
        assert run.connections == int(row["connections"])
        assert run.url == row["url"]
        assert run.tool_version == "wrk debian/4.1.0-3+b2 [epoll]"
        assert run.target_rate_rps is None  # closed loop


def test_wrk_singles_load_through_perfkit_load():
    runs = {Path(r.source).parent.name: r for r in perfkit.load(FIXTURES / "single")}
    assert len(runs) == 8
    assert runs["lua_done_summary"].factors["profile"] == "tuned"
    assert runs["lua_done_summary"].argv[-1] == "http://127.0.0.1:8081/"
    assert all(r.exit_code == 0 for r in runs.values())
    direct = parse_fixture("single/latency_default_c50")
    loaded = runs["latency_default_c50"]
    assert loaded.percentiles_ms == direct.percentiles_ms
    assert loaded.throughput_rps == direct.throughput_rps
