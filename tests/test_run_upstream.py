"""The testbed's upstream app (perfkit.run.upstream): the backlog asked for is the one the
kernel shows, several processes share its socket, and it counts what it served."""

from __future__ import annotations

import http.client
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import pytest
from _runner_helpers import port_is_free

from perfkit.ingest import counters as parse
from perfkit.run import upstream
from perfkit.run.counters import fetch_stub_status
from perfkit.run.testbed_procs import accept_queue_max

SCRIPT = Path(upstream.__file__)


def _free_port() -> int:
    for port in range(29411, 29990, 11):
        if port_is_free(port):
            return port
    raise RuntimeError("no free port in 29411..29990")


def test_the_status_page_sums_every_process_slot():
    tally = upstream.Tally(3)
    for slot, (accepted, requests) in enumerate(((2, 5), (1, 1), (0, 0))):
        tally.use_slot(slot)
        for _ in range(accepted):
            tally.add(0)
        for _ in range(requests):
            tally.add(1)
    tally.use_slot(0)
    tally.add(2)  # one connection closed
    page = parse.parse_upstream_status(upstream.status_text(tally, 777, 10))
    assert (page["accepted"], page["requests"], page["active"]) == (3, 6, 2)
    assert (page["processes"], page["backlog"], page["delay_ms"]) == (3, 777, 10)
    assert parse.upstream_deltas({"accepted": 3, "requests": 6},
                                 {"accepted": 10, "requests": 20}) == {
        "upstream_connections_accepted": 7, "upstream_requests": 14}


@pytest.fixture
def app():
    """``start(*args)``: the upstream on a free port with a status socket; (port, socket)."""
    tmp = tempfile.mkdtemp(prefix="perfkit-upstream-", dir="/tmp")
    procs: list[subprocess.Popen] = []

    def start(*args: str) -> tuple[int, str]:
        port = _free_port()
        status = os.path.join(tmp, "upstream.sock")
        procs.append(subprocess.Popen([sys.executable, "-I", str(SCRIPT), "--port", str(port),
                                       "--status-socket", status, *args]))
        for _ in range(500):
            if not port_is_free(port) and os.path.exists(status):
                break
            time.sleep(0.02)
        return port, status

    try:
        yield start, procs
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(timeout=10)
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.mark.live
@pytest.mark.skipif(shutil.which("ss") is None, reason="needs ss")
def test_ss_shows_the_backlog_asked_for_not_asyncios_100(app):
    start, _ = app
    port, _ = start("--backlog", "777", "--processes", "2")
    somaxconn = int(Path("/proc/sys/net/core/somaxconn").read_text())
    assert accept_queue_max(port, None) == min(777, somaxconn)


@pytest.mark.live
def test_it_counts_the_connections_it_accepted_and_the_requests_it_read(app):
    start, procs = app
    port, status = start("--processes", "2", "--delay-ms", "0")
    before = parse.parse_upstream_status(fetch_stub_status(f"unix:{status}"))
    assert before["processes"] == 2
    assert len(psutil.Process(procs[0].pid).children()) == 2
    for _ in range(3):  # three connections, two requests on each
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        for _ in range(2):
            conn.request("GET", "/")
            assert conn.getresponse().read() == upstream.BODY
        conn.close()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:  # HTTP/1.0: closed
        sock.sendall(b"GET /x?delay_ms=1 HTTP/1.0\r\n\r\n")
        assert b"Connection: close" in sock.recv(65536)
    for _ in range(250):  # the workers see the closes soon after (a busy box: later)
        after = parse.parse_upstream_status(fetch_stub_status(f"unix:{status}"))
        if after["active"] == 0:
            break
        time.sleep(0.02)
    assert after["accepted"] - before["accepted"] == 4  # the status page counts nothing
    assert after["requests"] - before["requests"] == 7
    assert after["active"] == 0


@pytest.mark.live
def test_sigterm_to_the_master_stops_its_workers(app):
    start, procs = app
    start("--processes", "2")
    master = psutil.Process(procs[0].pid)
    workers = master.children()
    assert len(workers) == 2
    master.send_signal(signal.SIGTERM)
    procs[0].wait(timeout=10)
    gone, alive = psutil.wait_procs(workers, timeout=10)
    assert not alive
