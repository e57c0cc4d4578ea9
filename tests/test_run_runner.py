"""``perfkit run``: argv building, safety checks, manifests, statuses, and a live wrk run."""

from __future__ import annotations

import io
import json
import math
import os
import stat
import time
from pathlib import Path

import _cli_helpers as _cli
import psutil
import pytest
from _runner_helpers import FIXTURES, free_port, testbed_dir_fixture, wait_gone  # noqa: F401

import perfkit
from perfkit.cli import main
from perfkit.run.procs import Child, StateFile, kill_stale
from perfkit.run.runner import execute, sha256_file
from perfkit.run.server import ServerContext
from perfkit.run.spec import RunError, RunSpec, build_argv, check_url, find_tool, parse_taskset
from perfkit.warning import Code, Warn, texts

WRK2_RUN = FIXTURES / "wrk2" / "single" / "normal_tuned_R10000_c50"


def fake_tool(tmp_path: Path, body: str, name: str = "fake-wrk2") -> str:
    """An executable standing in for a load tool (a mock executor, as hyperfine's tests do)."""
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def replay_wrk2(tmp_path: Path) -> str:
    """A wrk2 that prints a recorded real wrk2 run verbatim (no wrk2 binary on this host)."""
    return fake_tool(tmp_path, (
        'if [ "$1" = "-v" ]; then echo "wrk 4.0.0 [epoll] Copyright (C) 2012 Will Glozer";'
        ' exit 0; fi\n'
        f'cat "{WRK2_RUN / "run.stdout"}"\n'))


# -- safety and argv ----------------------------------------------------------------------
@pytest.mark.parametrize("url", ["http://127.0.0.1:8080/", "http://localhost/", "http://[::1]:80/",
                                 "http://127.0.0.2:9/x"])
def test_loopback_urls_are_accepted(url):
    check_url(url)


@pytest.mark.parametrize("url", ["http://10.0.0.1/", "http://example.com/", "http://8.8.8.8:80/"])
def test_remote_urls_need_allow_remote(url):
    with pytest.raises(RunError, match="--allow-remote"):
        check_url(url)
    check_url(url, allow_remote=True)


def test_a_url_without_scheme_is_refused():
    with pytest.raises(RunError, match="expected an http"):
        check_url("127.0.0.1:8080")


def test_wrk_argv_is_a_list_with_the_url_last():
    spec = RunSpec("wrk", "http://127.0.0.1:8080/", 5, connections=64, threads=2,
                   headers=("Connection: Close", "X-A: b c"), request_timeout_s=2)
    argv = build_argv(spec, ["/usr/bin/wrk"])
    assert argv == ["/usr/bin/wrk", "-t2", "-c64", "-d5s", "--latency", "--timeout", "2s",
                    "-H", "Connection: Close", "-H", "X-A: b c", "http://127.0.0.1:8080/"]


def test_more_threads_than_connections_is_refused():
    with pytest.raises(RunError, match="must not exceed"):
        build_argv(RunSpec("wrk", "http://127.0.0.1/", 5, connections=2, threads=4), ["wrk"])


def test_a_fractional_duration_is_refused_rather_than_rounded():
    with pytest.raises(RunError, match="whole number of seconds"):
        build_argv(RunSpec("wrk", "http://127.0.0.1/", 2.5, connections=2, threads=1), ["wrk"])


def test_wrk2_needs_a_rate():
    with pytest.raises(RunError, match="-R"):
        build_argv(RunSpec("wrk2", "http://127.0.0.1/", 5, connections=2, threads=1), ["wrk2"])


def test_missing_wrk2_says_how_to_build_it(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(RunError) as info:
        find_tool(RunSpec("wrk2", "http://127.0.0.1/", 15, connections=2, threads=1, rate_rps=10))
    text = str(info.value)
    assert "github.com/giltene/wrk2" in text and "make" in text and "--wrk2" in text


def test_locust_runs_ramp_plus_duration_and_resets_stats_after_spawning():
    spec = RunSpec("locust", "http://127.0.0.1:8080/", 10, users=25, spawn_rate=10,
                   locustfile="tests/locust/locustfile.py", processes=2,
                   user_classes=("PageUser",))
    argv = build_argv(spec, ["locust"])
    assert spec.ramp_s == math.ceil(25 / 10)
    assert argv[argv.index("-t") + 1] == f"{10 + 3}s"
    assert "--reset-stats" in argv and "--json" in argv and "--csv-full-history" in argv
    assert argv[argv.index("--processes") + 1] == "2"
    assert argv[argv.index("--host") + 1] == "http://127.0.0.1:8080"
    assert argv[-1] == "PageUser"


@pytest.mark.parametrize("text,expected", [("0", ("0", None)), ("0:1", ("0", "1")),
                                           ("0-1:2,3", ("0-1", "2,3")), (None, (None, None))])
def test_taskset_splits_generator_and_server_cpus(text, expected):
    assert parse_taskset(text) == expected


def test_taskset_rejects_garbage():
    with pytest.raises(RunError, match="GEN_CPUS"):
        parse_taskset("all")


# -- execute with a stand-in tool ---------------------------------------------------------
def _bare(url="http://127.0.0.1:9/"):
    return ServerContext(url)


def test_a_replayed_wrk2_run_lands_whole_with_checksums_and_parses_back(tmp_path):
    spec = RunSpec("wrk2", "http://127.0.0.1:9/", 20, connections=50, threads=2,
                   rate_rps=10000, wrk2_path=replay_wrk2(tmp_path), factors={"profile": "tuned"})
    outcome = execute(spec, tmp_path / "runs", server=_bare())
    run_dir = tmp_path / "runs" / outcome.run_id
    assert outcome.path == run_dir and outcome.status == "complete"
    assert not list((tmp_path / "runs").glob(".tmp-*"))
    assert (run_dir / "stdout.txt").read_bytes() == (WRK2_RUN / "run.stdout").read_bytes()
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["schema_version"] == 2 and manifest["perfkit_version"] == perfkit.__version__
    assert manifest["tool"] == "wrk2" and manifest["tool_version"] == "wrk 4.0.0 [epoll]"
    assert manifest["argv"][1:] == ["-t2", "-c50", "-d20s", "-R10000", "--latency",
                                    "http://127.0.0.1:9/"]
    for name, entry in manifest["files"].items():
        assert sha256_file(run_dir / name) == entry["sha256"]
    assert set(manifest["sysctls"]) >= {"net.core.somaxconn", "net.ipv4.ip_local_port_range",
                                        "fs.file-max", "ulimit -n"}
    assert manifest["host"]["cpus"] == os.cpu_count()
    [run] = perfkit.load(run_dir)
    assert run.tool == "wrk2" and run.target_rate_rps == 10000
    assert run.histogram is not None and run.factors["profile"] == "tuned"


def test_a_failing_tool_is_kept_with_its_status_and_exit_code(tmp_path):
    tool = fake_tool(tmp_path, 'echo "unable to connect" >&2\nexit 3\n')
    spec = RunSpec("wrk2", "http://127.0.0.1:9/", 1, connections=1, threads=1, rate_rps=1,
                   wrk2_path=tool)
    outcome = execute(spec, tmp_path / "runs", server=_bare())
    manifest = json.loads((outcome.path / "manifest.json").read_text())
    assert (outcome.status, outcome.exit_code) == ("failed", 3)
    assert manifest["status"] == "failed" and manifest["exit_code"] == 3
    assert (outcome.path / "stderr.txt").read_bytes() == b"unable to connect\n"
    runs = perfkit.load(tmp_path / "runs", strict=False)
    (run,) = runs
    assert Warn(Code.RUN_STATUS, status="failed", exit_code=3) in run.warnings
    (ended,) = [w for w in run.warnings if w.code is Code.RUN_ENDED]
    assert "unable to connect" in ended["reason"]
    # the runner's own record of the run's end: coded, worded as before
    assert manifest["warnings"][0]["code"] == "run-ended"
    assert manifest["warnings"][0]["text"] == f"run failed: {manifest['status_reason']}"


def test_a_run_past_its_hard_timeout_is_killed_with_its_whole_group(tmp_path):
    marker = tmp_path / "child.pid"
    tool = fake_tool(tmp_path,
                     f'[ "$1" = -v ] && exit 0\nsleep 300 &\necho $! > "{marker}"\nwait\n')
    spec = RunSpec("wrk2", "http://127.0.0.1:9/", 1, connections=1, threads=1, rate_rps=1,
                   wrk2_path=tool, grace_s=1)
    t0 = time.monotonic()
    outcome = execute(spec, tmp_path / "runs", server=_bare())
    assert outcome.status == "killed"
    assert time.monotonic() - t0 < 30
    assert "hard timeout" in outcome.manifest["status_reason"]
    assert wait_gone([int(marker.read_text())]) == []  # the grandchild died with the group


def test_stale_groups_are_killed_only_when_they_are_really_ours(tmp_path):
    state = StateFile(tmp_path / "procs.json")
    out = open(os.devnull, "wb")
    ours = Child(["sleep", "300"], out, out, state=state, watchdog=False)
    stranger = Child(["sleep", "301"], out, out, watchdog=False)
    forged = dict(ours.record.to_json(), pid=stranger.pid, pgid=stranger.pgid)
    records = json.loads(state.path.read_text())["groups"] + [forged]
    state.path.write_text(json.dumps({"groups": records}))  # a recycled pid, other cmdline
    killed = kill_stale(state)
    assert [r.pid for r in killed] == [ours.pid]
    assert wait_gone([ours.pid]) == [] and stranger.poll() is None
    assert psutil.Process(stranger.pid).cmdline() == ["sleep", "301"]
    stranger.close()
    ours.close()
    assert state.read() == []


# -- live ---------------------------------------------------------------------------------
@pytest.mark.live
def test_perfkit_run_wrk_on_the_testbed_writes_the_contract_layout(tmp_path, testbed_dir):
    from perfkit.run.testbed import Testbed

    info = Testbed(testbed_dir).up("keepalive", port=free_port())
    out, err = io.StringIO(), io.StringIO()
    code = main(["run", "wrk", "--url", info.base_url, "--connections", "8", "--threads", "2",
                 "--duration", "2s", "--out", str(tmp_path / "runs"), "--factor", "arm=A"],
                out, err)
    assert code == 0, err.getvalue()
    run_dir = Path(out.getvalue().splitlines()[-1])
    assert run_dir.parent == tmp_path / "runs"
    assert {"stdout.txt", "stderr.txt", "manifest.json"} <= {p.name for p in run_dir.iterdir()}
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["exit_code"] == 0
    assert manifest["tool_version"].startswith("wrk ")
    assert manifest["server"]["profile"] == "keepalive"
    assert "keepalive_requests 100000;" in manifest["server"]["config_text"]
    assert manifest["server"]["somaxconn"] == info.somaxconn
    assert manifest["cpu"]["samples"] >= 2 and manifest["cpu"]["server_cpu_mean_percent"] > 0
    parsed = io.StringIO()
    assert main(["parse", str(tmp_path / "runs"), "--format", "json"], parsed, err) == 0
    [record] = [json.loads(line) for line in parsed.getvalue().splitlines()]
    assert record["tool"] == "wrk" and record["connections"] == 8 and record["requests"] > 0
    assert record["arm"] == "A" and record["run_id"] == run_dir.name


def test_warnings_recorded_during_a_run_reach_the_loaded_run(tmp_path):
    spec = RunSpec("wrk2", "http://127.0.0.1:9/", 20, connections=50, threads=2,
                   rate_rps=10000, wrk2_path=replay_wrk2(tmp_path))
    outcome = execute(spec, tmp_path / "runs", server=_bare())
    manifest_path = outcome.path / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    coded = Warn(Code.GENERATOR_BOTTLENECK, share=0.97, cores=2)
    manifest["warnings"] = [coded.to_dict()]  # as the runner writes it (version 2)
    manifest_path.write_text(json.dumps(manifest))
    [run] = perfkit.load(outcome.path, cache=False)
    assert coded in run.warnings
    # a manifest of an earlier perfkit (version 1) holds the sentence: kept as recorded
    sentence = "load generator at 97% of its 2 core(s): the generator may be the bottleneck"
    manifest.update(schema_version=1, warnings=["run failed: as said from the status", sentence])
    manifest_path.write_text(json.dumps(manifest))
    [run] = perfkit.load(outcome.path, cache=False)
    assert Warn(Code.RECORDED, text=sentence) in run.warnings and sentence in texts(run.warnings)
    assert Code.GENERATOR_BOTTLENECK not in {w.code for w in run.warnings}
    assert not any("as said from the status" in t for t in texts(run.warnings))


@pytest.mark.live
def test_sigterm_stops_the_run_and_keeps_it_as_killed(tmp_path, testbed_dir):
    import subprocess

    from _runner_helpers import REPO, perfkit_cmd

    from perfkit.run.testbed import Testbed

    info = Testbed(testbed_dir).up("default", port=free_port())
    proc = subprocess.Popen(perfkit_cmd("run", "wrk", "--url", info.base_url, "-c", "4", "-t", "1",
                                        "-d", "30s", "--out", str(tmp_path)), cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while not list(tmp_path.glob(".tmp-*/stdout.txt")) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1.0)
    proc.terminate()
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130, stderr.decode()
    [run_dir] = list(tmp_path.iterdir())
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert not run_dir.name.startswith(".tmp-")
    assert manifest["status"] == "killed" and "interrupted" in manifest["status_reason"]
    assert wait_gone([p.pid for p in psutil.process_iter(["name"])
                      if p.info["name"] == "wrk" and str(info.port) in " ".join(p.cmdline())]) == []


def test_a_tool_that_cannot_start_is_kept_as_failed_with_the_reason(tmp_path):
    tool = tmp_path / "not-executable"
    tool.write_text("")
    tool.chmod(0o755)  # executable bit but no valid format: exec fails
    spec = RunSpec("wrk2", "http://127.0.0.1:9/", 1, connections=1, threads=1, rate_rps=1,
                   wrk2_path=str(tool), run_id="r1")
    with pytest.raises(RunError, match="could not start"):
        execute(spec, tmp_path / "runs", server=_bare())
    manifest = json.loads((tmp_path / "runs" / "r1" / "manifest.json").read_text())
    assert manifest["status"] == "failed" and "could not start" in manifest["status_reason"]


def test_the_locust_example_uses_a_user_class_that_fetches_the_page():
    code, out, _ = _cli.run_cli("run", "--help")
    assert code == 0 and "--user-class PageUser" in out
    assert "MixedUser, which requests a 404" in out
