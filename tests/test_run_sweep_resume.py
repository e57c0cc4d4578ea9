"""kill -9 of ``perfkit sweep`` at several moments, then resume: one complete copy per run.

The sweep runs as a real subprocess. ``start_sweep(..., pause_at="EVENT:SEQ")`` makes it stop
at a checkpoint (it logs the event, then sleeps: ``_paused_sweep.py``) so that the kill lands
exactly there; the kill during a run needs no pause: it waits for the ``spawned`` event of that
run.
"""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest
from _runner_helpers import (  # noqa: F401
    events,
    free_port,
    live_processes,
    start_sweep,
    testbed_dir_fixture,
    wait_for_event,
    wait_gone,
)

import perfkit

DESIGN = """\
name: resume
tool: wrk
target:
  testbed: {{port: {port}}}
factors:
  profile: [default, keepalive]
load:
  connections: 8
  threads: 1
duration: 2s
repetitions: 2
seed: 3
"""


def kill_at(yaml_path: Path, out: Path, event: str, seq: int, pause: bool) -> int:
    """Start the sweep, SIGKILL it at ``event:seq``; returns its pid."""
    proc = start_sweep(yaml_path, out, pause_at=f"{event}:{seq}" if pause else None)
    try:
        wait_for_event(out, event, seq, proc.pid)
        if not pause:
            time.sleep(0.7)  # well inside the 2 s run
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.pid


def recorded_groups(out: Path) -> list[dict]:
    path = out / ".perfkit" / "procs.json"
    return json.loads(path.read_text())["groups"] if path.exists() else []


@pytest.mark.live
def test_kill_9_anywhere_then_resume_leaves_exactly_one_complete_copy(tmp_path, testbed_dir):
    yaml_path = tmp_path / "experiment.yaml"
    yaml_path.write_text(DESIGN.format(port=free_port()))
    out = tmp_path / "exp"
    runs = out / "runs"

    # 1. before run 2 starts (testbed up for its profile, nothing spawned yet)
    kill_at(yaml_path, out, "before-run", 2, pause=True)
    assert sorted(p.name for p in runs.iterdir()) == [_id(out, 1)]

    # 2. during run 2: the sweep dies, its wrk must die with it (PR_SET_PDEATHSIG + watchdog)
    kill_at(yaml_path, out, "spawned", 2, pause=False)
    [group] = recorded_groups(out)
    assert wait_gone([group["pid"]]) == [], "wrk outlived the killed sweep"
    assert (runs / f".tmp-{_id(out, 2)}").is_dir()

    # 3. just after run 2 completed, before run 3: the resumed sweep moved the half run aside
    kill_at(yaml_path, out, "after-run", 2, pause=True)
    assert (runs / _id(out, 2) / "manifest.json").is_file()
    assert [ev["moved"] for ev in events(out) if ev["event"] == "recovered"][-1] == [
        _aborted_name(out, 2)]

    # 4. run 3's manifest written in .tmp-, not yet renamed: still not a complete run
    kill_at(yaml_path, out, "written", 3, pause=True)
    assert not (runs / _id(out, 3)).exists() and (runs / f".tmp-{_id(out, 3)}").is_dir()

    # 5. resume to the end
    proc = start_sweep(yaml_path, out)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr.decode()

    plan = json.loads((out / "plan.json").read_text())
    planned = [r["run_id"] for r in plan["runs"]]
    visible = sorted(p.name for p in runs.iterdir() if not p.name.startswith("."))
    assert visible == sorted(planned)
    for run_id in planned:
        manifest = json.loads((runs / run_id / "manifest.json").read_text())
        assert manifest["status"] == "complete"
    aborted = sorted(p.name.split("@")[0] for p in (runs / ".aborted").iterdir())
    assert aborted == sorted([_id(out, 2), _id(out, 3)])
    loaded = perfkit.load(out)
    assert sorted(r.run_id for r in loaded) == sorted(planned)  # .aborted is never counted
    assert Counter_of(loaded) == {(r["cell"], r["repetition"]): 1 for r in plan["runs"]}
    assert not [p for p in live_processes("wrk") if str(p.cwd()).startswith(str(out))]


def Counter_of(runs) -> dict:  # noqa: N802 - reads as the Counter it returns
    out: dict = {}
    for r in runs:
        key = (r.manifest["cell"], r.repetition)
        out[key] = out.get(key, 0) + 1
    return out


def _id(out: Path, seq: int) -> str:
    plan = json.loads((out / "plan.json").read_text())
    return plan["runs"][seq - 1]["run_id"]


def _aborted_name(out: Path, seq: int) -> str:
    [name] = [p.name for p in (out / "runs" / ".aborted").iterdir()
              if p.name.startswith(_id(out, seq) + "@")]
    return name
