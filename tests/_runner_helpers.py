"""Shared helpers of the runner, sweep, resume and distributed tests (live ones on loopback)."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).parent / "fixtures"
_ports = itertools.count(29100, 11)


def port_is_free(port: int) -> bool:
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port() -> int:
    """A port (and the testbed upstream's, port + 1000) free on loopback, from 29100 up."""
    for port in _ports:
        if port > 29990:
            break
        if port_is_free(port) and port_is_free(port + 1000):
            return port
    raise RuntimeError("no free port pair in 29100..29990")


@pytest.fixture(name="testbed_dir")
def testbed_dir_fixture(monkeypatch):
    """A fresh testbed state directory (nginx's workers must traverse it), used via the env."""
    d = tempfile.mkdtemp(prefix="perfkit-runner-test-", dir="/tmp")
    os.chmod(d, 0o755)
    monkeypatch.setenv("PERFKIT_TESTBED_DIR", d)
    monkeypatch.setenv("PERFKIT_NO_PROGRESS", "1")
    yield d
    from perfkit.run.testbed import Testbed

    Testbed(d).down()
    shutil.rmtree(d, ignore_errors=True)


def perfkit_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "perfkit", *args]


def events(experiment: Path) -> list[dict]:
    path = experiment / ".perfkit" / "events.log"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def wait_for_event(experiment: Path, name: str, seq: int, pid: int,
                   timeout_s: float = 60.0) -> dict:
    """Block until the sweep with ``pid`` logged ``name`` for ``seq``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for ev in events(experiment):
            if ev["event"] == name and ev["seq"] == seq and ev["pid"] == pid:
                return ev
        time.sleep(0.05)
    raise AssertionError(f"no {name}:{seq} event from pid {pid} within {timeout_s} s")


def start_sweep(yaml_path: Path, out: Path, pause_at: str | None = None) -> subprocess.Popen:
    """``perfkit sweep`` as a subprocess; ``pause_at="EVENT:SEQ"`` makes it stop (asleep) at
    that checkpoint of its event log (see ``_paused_sweep.py``)."""
    args = ["sweep", str(yaml_path), "--out", str(out)]
    argv = ([sys.executable, str(Path(__file__).with_name("_paused_sweep.py")), pause_at, *args]
            if pause_at else perfkit_cmd(*args))
    return subprocess.Popen(argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def live_processes(name: str) -> list[psutil.Process]:
    """Running (non-zombie) processes whose executable name is ``name``."""
    out = []
    for p in psutil.process_iter(["name", "status"]):
        if p.info["name"] == name and p.info["status"] != psutil.STATUS_ZOMBIE:
            out.append(p)
    return out


def wait_gone(pids: list[int], timeout_s: float = 5.0) -> list[int]:
    """The pids still alive (not zombies) after waiting up to ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    alive = list(pids)
    while alive and time.monotonic() < deadline:
        alive = [p for p in alive if _alive(p)]
        if alive:
            time.sleep(0.05)
    return alive


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False
