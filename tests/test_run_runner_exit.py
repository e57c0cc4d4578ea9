"""A run or sweep that does not complete: kept with its status and the tool's own reason, and
``perfkit`` exits 2 with one line; a sweep stays in its place (port, state folder) and never
touches a testbed it did not start. Live: real wrk, Locust and nginx on 127.0.0.1."""

from __future__ import annotations

import io
import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from _runner_helpers import REPO, free_port, port_is_free, testbed_dir_fixture  # noqa: F401

from perfkit.cli import main

LOCUSTFILE = REPO / "tests" / "locust" / "locustfile.py"


def closed_port() -> int:
    """A loopback port nothing listens on."""
    port = free_port()
    assert port_is_free(port)
    return port


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), out, err), out.getvalue(), err.getvalue()


def manifest_of(out: str) -> tuple[Path, dict]:
    run_dir = Path(out.splitlines()[-1])
    return run_dir, json.loads((run_dir / "manifest.json").read_text())


@pytest.mark.live
def test_wrk_on_a_dead_url_says_connection_refused_and_keeps_the_run(tmp_path, testbed_dir):
    url = f"http://127.0.0.1:{closed_port()}/"
    code, out, err = cli("run", "wrk", "--url", url, "-c", "1", "-t", "1", "-d", "1s",
                         "--out", str(tmp_path))
    run_dir, manifest = manifest_of(out)
    assert code == 2 and len(err.splitlines()) == 1
    assert err.startswith("perfkit: error: run failed: wrk exit code 1: unable to connect to "
                          "127.0.0.1:") and "Connection refused" in err
    assert str(run_dir) in err and (run_dir / "stderr.txt").exists()
    assert manifest["status"] == "failed" and manifest["exit_code"] == 1
    assert "Connection refused" in manifest["status_reason"]


@pytest.mark.live
def test_a_locust_run_that_exits_1_is_failed_and_perfkit_exits_2(tmp_path, testbed_dir):
    url = f"http://127.0.0.1:{closed_port()}"
    code, out, err = cli("run", "locust", "--url", url, "-f", str(LOCUSTFILE),
                         "--user-class", "PageUser", "-u", "2", "-d", "2s",
                         "--out", str(tmp_path))
    run_dir, manifest = manifest_of(out)
    assert code == 2 and len(err.splitlines()) == 1, err
    assert manifest["status"] == "failed" and manifest["exit_code"] == 1
    assert "ConnectionRefusedError" in manifest["status_reason"] and "Connection refused" in err
    assert (run_dir / "locust_failures.csv").exists()  # nothing stored is lost


SWEEP = """\
name: {name}
tool: wrk
target:
  {target}
load:
  connections: 2
  threads: 1
duration: 1s
repetitions: {reps}
seed: 1
"""


def design(tmp_path: Path, name: str, target: str, reps: int = 1) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(SWEEP.format(name=name, target=target, reps=reps))
    return path


@pytest.mark.live
def test_a_sweep_whose_runs_fail_keeps_them_and_exits_2(tmp_path, testbed_dir):
    path = design(tmp_path, "dead", f"url: http://127.0.0.1:{closed_port()}/", reps=2)
    code, out, err = cli("sweep", str(path), "--out", str(tmp_path / "exp"))
    *warnings, last = err.splitlines()  # each failed run is logged as it ends, then the error
    assert code == 2 and len(warnings) == 2 and err.count("error:") == 1
    assert all("run failed: wrk exit code 1: unable to connect" in w for w in warnings)
    assert last.startswith("perfkit: error: 2 of 2 runs did not complete (2 failed;")
    assert "--retry-failed" in last
    kept = [json.loads(m.read_text()) for m in (tmp_path / "exp" / "runs").glob("*/manifest.json")]
    assert [m["status"] for m in kept] == ["failed", "failed"]


@pytest.mark.live
def test_a_sweep_never_touches_a_testbed_it_did_not_start(tmp_path, testbed_dir):
    from perfkit.run.testbed import Testbed

    mine = Testbed(testbed_dir).up("default", port=free_port())
    path = design(tmp_path, "beside", "testbed: {port: 8080}")
    code, _, err = cli("sweep", str(path), "--out", str(tmp_path / "a"))
    assert code == 2 and len(err.splitlines()) == 1
    assert "a testbed this sweep did not start is running in" in err and "--state-dir" in err
    assert Testbed(testbed_dir).status().started_utc == mine.started_utc  # left alone
    other = tempfile.mkdtemp(prefix="perfkit-beside-", dir="/tmp")  # nginx's workers read it
    os.chmod(other, 0o755)
    port = free_port()
    try:
        code, out, err = cli("sweep", str(path), "--out", str(tmp_path / "b"), "--port",
                             str(port), "--upstream-port", str(free_port()), "--state-dir", other)
    finally:
        Testbed(other).down()
        shutil.rmtree(other, ignore_errors=True)
    assert code == 0, err
    [manifest] = [json.loads(m.read_text())
                  for m in (tmp_path / "b" / "runs").glob("*/manifest.json")]
    assert manifest["status"] == "complete" and manifest["url"].startswith(
        f"http://127.0.0.1:{port}/")
    assert "testbed-down" in (tmp_path / "b" / ".perfkit" / "events.log").read_text()
    assert Testbed(testbed_dir).status().started_utc == mine.started_utc  # the sweep stopped
    # its own testbed, and only it
