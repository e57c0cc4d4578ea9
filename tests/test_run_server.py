"""The testbed found wherever it runs (issue 30): a testbed started with its own
``--state-dir`` was invisible to ``perfkit run``, whose counters then went missing without a
word ("not the testbed, and no stub_status URL was given"). It is found by the URL's port, or
given with ``perfkit run --state-dir``; a run against a testbed whose counters cannot be read
says so in its warnings. Live: nginx and wrk on 127.0.0.1, 1 s runs.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from _runner_helpers import port_is_free

from perfkit.cli import main
from perfkit.run.server import ServerContext, running_testbeds
from perfkit.run.testbed import Testbed

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(not os.access("/usr/sbin/nginx", os.X_OK) or not shutil.which("wrk"),
                       reason="needs Debian's nginx and wrk"),
]


def _free_port() -> int:
    for port in range(26411, 26990, 17):
        if port_is_free(port) and port_is_free(port + 1000):
            return port
    raise RuntimeError("no free port pair in 26411..26990")


@pytest.fixture
def own_bed(monkeypatch):
    """A testbed up in a state folder of its own, while the default folder (the one perfkit
    looks in first) holds none."""
    default = tempfile.mkdtemp(prefix="perfkit-default-", dir="/tmp")
    folder = tempfile.mkdtemp(prefix="perfkit-own-", dir="/tmp")
    os.chmod(folder, 0o755)
    monkeypatch.setenv("PERFKIT_TESTBED_DIR", default)
    monkeypatch.setenv("PERFKIT_NO_PROGRESS", "1")
    tb = Testbed(folder)
    info = tb.up("default", port=_free_port())
    try:
        yield tb, info
    finally:
        tb.down()
        shutil.rmtree(folder, ignore_errors=True)
        shutil.rmtree(default, ignore_errors=True)


def _run(out: Path, url: str, *extra: str) -> tuple[int, dict, str]:
    err = io.StringIO()
    code = main(["run", "wrk", "--url", url, "-c", "4", "-t", "1", "-d", "1s", "--out",
                 str(out), *extra], io.StringIO(), err)
    runs = sorted(p for p in out.iterdir() if p.is_dir()) if out.exists() else []
    manifest = json.loads((runs[-1] / "manifest.json").read_text()) if runs else {}
    return code, manifest, err.getvalue()


def test_a_testbed_with_its_own_state_dir_is_found_by_the_urls_port(own_bed, tmp_path):
    tb, info = own_bed
    assert tb.state_dir in running_testbeds()
    assert ServerContext.for_url(info.base_url).info is not None
    code, manifest, _ = _run(tmp_path / "runs", info.base_url)
    assert code == 0 and manifest["server"]["testbed"] is True
    assert manifest["server"]["state_dir"] == tb.state_dir
    values = manifest["counters"]["values"]
    assert values["server_requests"] is not None and values["server_requests"] > 0
    assert not [w for w in manifest["warnings"] if "counters" in w]


def test_run_state_dir_names_the_testbed_and_a_wrong_one_is_refused(own_bed, tmp_path):
    tb, info = own_bed
    code, manifest, _ = _run(tmp_path / "runs", info.base_url, "--state-dir", tb.state_dir)
    assert code == 0 and manifest["counters"]["values"]["server_requests"] > 0
    empty = tempfile.mkdtemp(prefix="perfkit-none-", dir="/tmp")
    try:
        code, _, err = _run(tmp_path / "other", info.base_url, "--state-dir", empty)
    finally:
        shutil.rmtree(empty)
    assert code == 2 and err.splitlines() == [
        f"perfkit: error: --state-dir {empty}: expected the testbed that serves "
        f"{info.base_url}, found no testbed runs there"]
    assert not (tmp_path / "other").exists()


def test_a_testbed_whose_counters_cannot_be_read_says_so_in_the_runs_warnings(own_bed,
                                                                                tmp_path):
    tb, info = own_bed
    socket = info.variables["status_socket"]
    os.unlink(socket)  # nginx keeps serving; its stub_status cannot be reached any more
    code, manifest, _ = _run(tmp_path / "runs", info.base_url)
    assert code == 0 and manifest["server"]["testbed"] is True
    assert manifest["counters"]["values"]["server_requests"] is None
    (warning,) = [w for w in manifest["warnings"] if w["code"] == "counters-unread"]
    assert warning["text"].startswith("the testbed's counters could not be read, so the run "
                                      "records none of them: stub_status: ")
