"""Several generators: wrk2 histograms merged by summing counts, wrk sums only, Locust
``--processes 2``, and concurrent wrk clients on the testbed."""

from __future__ import annotations

import io
import json
import signal
import subprocess
import time
from pathlib import Path

import psutil
import pytest
from _runner_helpers import (  # noqa: F401
    FIXTURES,
    REPO,
    free_port,
    perfkit_cmd,
    testbed_dir_fixture,
    wait_gone,
)
from hdrh.histogram import HdrHistogram

import perfkit
from perfkit.cli import main
from perfkit.errors import PerfkitError
from perfkit.histogram import HIGHEST_US, LOWEST_US, SIGNIFICANT_FIGURES
from perfkit.run.distributed import combine_groups, combine_runs
from perfkit.warning import Code, Warn

WRK2 = FIXTURES / "wrk2" / "sweep"
WRK = FIXTURES / "wrk" / "sweep"
LOCUSTFILE = REPO / "tests" / "locust" / "locustfile.py"


def load_one(path: Path):
    [run] = perfkit.load(path)
    return run


@pytest.fixture
def wrk2_pair():
    """Two real wrk2 runs of one cell. They ran one after the other (there is no wrk2 binary
    here to run two at once); merging is the same arithmetic for concurrent clients."""
    return [load_one(WRK2 / "tuned_R15000_c64_rep1"), load_one(WRK2 / "tuned_R15000_c64_rep2")]


def test_wrk2_clients_sum_their_counts_and_rates(wrk2_pair):
    a, b = wrk2_pair
    both = combine_runs(wrk2_pair, run_id="g")
    assert both.requests == a.requests + b.requests
    assert both.throughput_rps == pytest.approx(a.throughput_rps + b.throughput_rps)
    assert both.target_rate_rps == 30000 and both.connections == 128
    assert both.histogram_count == a.histogram_count + b.histogram_count


def test_wrk2_percentiles_come_from_the_merged_histogram_as_hdrhistogram_adds_them(wrk2_pair):
    both = combine_runs(wrk2_pair)
    reference = HdrHistogram(LOWEST_US, HIGHEST_US, SIGNIFICANT_FIGURES)
    for run in wrk2_pair:
        reference.add(run.histogram.hdr)  # hdrh's own merge, an independent implementation
    assert set(both.percentiles_ms) == set(wrk2_pair[0].percentiles_ms)
    for q, value in both.percentiles_ms.items():
        assert value == reference.get_value_at_percentile(q) / 1000, q
    # a quantile of the union lies between the clients' quantiles (of their histograms)
    lo, hi = sorted(r.histogram.percentile_ms(99.0) for r in wrk2_pair)
    assert lo <= both.percentiles_ms[99.0] <= hi


def test_wrk_clients_sum_throughput_and_errors_and_invent_no_percentile():
    runs = [load_one(WRK / "default_c50_rep1"), load_one(WRK / "default_c50_rep2")]
    both = combine_runs(runs)
    assert both.throughput_rps == pytest.approx(sum(r.throughput_rps for r in runs))
    assert both.requests == sum(r.requests for r in runs)
    assert both.errors_timeout == sum(r.errors_timeout for r in runs)
    assert both.histogram is None and dict(both.percentiles_ms) == {}
    weighted = sum(r.requests * r.latency_mean_ms for r in runs) / sum(r.requests for r in runs)
    assert both.latency_mean_ms == pytest.approx(weighted)
    assert Warn(Code.COMBINED_WRK_PERCENTILES) in both.notes


def test_runs_of_different_tools_are_not_combined(wrk2_pair):
    with pytest.raises(PerfkitError, match="one tool"):
        combine_runs([wrk2_pair[0], load_one(WRK / "default_c50_rep1")])


# -- live ---------------------------------------------------------------------------------
@pytest.mark.live
def test_two_concurrent_wrk_clients_on_the_testbed_combine_into_one_run(tmp_path, testbed_dir):
    from perfkit.run.testbed import Testbed

    info = Testbed(testbed_dir).up("default", port=free_port())
    out, err = io.StringIO(), io.StringIO()
    code = main(["run", "wrk", "--url", info.base_url, "-c", "8", "-t", "1", "-d", "2s",
                 "--clients", "2", "--out", str(tmp_path)], out, err)
    assert code == 0, err.getvalue()
    group_dir = Path(out.getvalue().splitlines()[-1])
    runs = perfkit.load(group_dir)
    assert len(runs) == 2
    starts = sorted(r.start_utc for r in runs)
    ends = sorted(r.end_utc for r in runs)
    assert starts[-1] < ends[0]  # they overlapped: concurrent, not one after the other
    [both] = combine_groups(runs)
    assert both.run_id == group_dir.name
    assert both.throughput_rps == pytest.approx(sum(r.throughput_rps for r in runs))
    assert both.connections == 16 and dict(both.percentiles_ms) == {}


@pytest.mark.live
def test_locust_with_two_processes_runs_master_and_workers(tmp_path, testbed_dir):
    from perfkit.run.testbed import Testbed

    info = Testbed(testbed_dir).up("default", port=free_port())
    out, err = io.StringIO(), io.StringIO()
    code = main(["run", "locust", "--url", info.base_url, "-f", str(LOCUSTFILE), "-u", "8",
                 "-r", "8", "-d", "3s", "--processes", "2", "--user-class", "MixedUser",
                 "--arg=--exit-code-on-error", "--arg", "0",  # its 404s are expected
                 "--out", str(tmp_path)], out, err)
    assert code == 0, err.getvalue()
    run_dir = Path(out.getvalue().splitlines()[-1])
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["load"]["processes"] == 2
    assert manifest["cpu"]["generator_processes_max"] >= 3  # master + 2 forked workers
    assert manifest["locust"]["reset_stats"] and manifest["locust"]["all_users_spawned_at"]
    decoder, text, docs, i = json.JSONDecoder(), (run_dir / "stdout.txt").read_text(), [], 0
    while i < len(text.rstrip()):
        doc, i = decoder.raw_decode(text, i)
        docs.append(doc)
        while i < len(text) and text[i].isspace():
            i += 1
    assert docs[:2] == [[], []] and len(docs) == 3 and docs[2]  # each worker, then the master
    runs = perfkit.load(run_dir)
    [total] = [r for r in runs if r.is_aggregate]
    assert total.requests > 0 and total.users == 8
    missing = [r for r in runs if r.endpoint == "missing"]
    assert missing and missing[0].failures == missing[0].requests  # the 404s are failures
    assert (run_dir / "locust_stats.csv").is_file() and (run_dir / "locust_stats_history.csv")


@pytest.mark.live
def test_kill_9_of_perfkit_takes_locusts_forked_workers_down_too(tmp_path, testbed_dir):
    from perfkit.run.testbed import Testbed

    info = Testbed(testbed_dir).up("default", port=free_port())
    proc = subprocess.Popen(perfkit_cmd(
        "run", "locust", "--url", info.base_url, "-f", str(LOCUSTFILE), "-u", "4", "-d", "60s",
        "--processes", "2", "--user-class", "PageUser", "--out", str(tmp_path)), cwd=REPO,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        group = _wait_for_locust_group(proc.pid, expected=3)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        assert wait_gone(group, timeout_s=10) == []
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert [p.name for p in tmp_path.iterdir()][0].startswith(".tmp-")  # never counted


def _wait_for_locust_group(parent: int, expected: int, timeout_s: float = 30) -> list[int]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            kids = psutil.Process(parent).children(recursive=True)
        except psutil.Error:
            kids = []
        locusts = [k.pid for k in kids if "locust" in " ".join(_cmdline(k))]
        if len(locusts) >= expected:
            return locusts
        time.sleep(0.1)
    raise AssertionError("Locust's master and workers did not start")


def _cmdline(p: psutil.Process) -> list[str]:
    try:
        return p.cmdline()
    except psutil.Error:
        return []
