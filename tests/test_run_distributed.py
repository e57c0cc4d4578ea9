"""Several generators on the testbed: concurrent wrk clients combined into one run, Locust
``--processes 2`` (master and workers). The arithmetic of combining is tests/test_combine.py."""

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

import perfkit
from perfkit.cli import main
from perfkit.combine import combine_groups

WRK2 = FIXTURES / "wrk2" / "sweep"
WRK = FIXTURES / "wrk" / "sweep"
LOCUSTFILE = REPO / "tests" / "locust" / "locustfile.py"


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
