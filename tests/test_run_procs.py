"""Child processes: waiting without polling, finding a process tree, the watchdog's lifetime."""

from __future__ import annotations

import subprocess
import sys
import time

import psutil

from perfkit.run.procs import Child, CpuSampler, _tree_pids


def test_tree_pids_finds_the_same_descendants_as_psutil(tmp_path):
    script = "sleep 30 & (sleep 30 & sleep 30 & wait) & wait"
    proc = subprocess.Popen(["sh", "-c", script], start_new_session=True)
    try:
        deadline = time.monotonic() + 5
        while len(psutil.Process(proc.pid).children(recursive=True)) < 4:
            assert time.monotonic() < deadline, "the shell did not start its children"
            time.sleep(0.02)
        expected = {proc.pid, *(p.pid for p in psutil.Process(proc.pid).children(recursive=True))}
        found = _tree_pids(proc.pid)
        assert found is None or set(found) == expected  # None: the kernel lacks the files
        assert len(expected) == 5
    finally:
        subprocess.run(["pkill", "-KILL", "-g", str(proc.pid)], check=False)
        proc.wait()


def test_a_vanished_root_has_an_empty_tree():
    proc = subprocess.Popen(["true"])
    proc.wait()
    assert _tree_pids(proc.pid) in ([], None)


def test_wait_returns_none_while_running_and_the_status_once_exited(tmp_path):
    out = open(tmp_path / "out", "wb")
    with Child([sys.executable, "-c", "import time; time.sleep(0.6); raise SystemExit(3)"],
               out, out) as child:
        assert child.wait(0.05) is None
        rc = None
        deadline = time.monotonic() + 10
        while rc is None and time.monotonic() < deadline:
            rc = child.wait(1.0)
        assert rc == 3
    out.close()


def test_the_watchdog_is_gone_after_close(tmp_path):
    out = open(tmp_path / "out", "wb")
    child = Child(["sleep", "0.2"], out, out)
    watchdog = child._watchdog
    assert child.wait(10) == 0
    child.close()
    assert watchdog.poll() is not None
    out.close()


def test_the_sampler_counts_a_forked_worker(tmp_path):
    busy = "import os, time\nos.fork()\nt = time.time()\nwhile time.time() - t < 1.5: pass\n"
    proc = subprocess.Popen([sys.executable, "-c", busy])
    try:
        sampler = CpuSampler([proc.pid])
        for _ in range(4):
            time.sleep(0.25)
            sampler.sample()
        assert sampler.max_processes["generator"] == 2
    finally:
        proc.kill()
        proc.wait()
