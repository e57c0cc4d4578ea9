"""The testbed upstream's own ceiling: wrk against it alone, with its CPU, at each start.

A proxy measurement says something about nginx only where the upstream is not the
bottleneck. So each time the testbed starts its upstream it loads it directly (not through
nginx) for a second or so in two modes, with :data:`CONNECTIONS` connections (the most any
proxied load point of the examples and the demo opens):

- ``keepalive``: wrk's connections kept open (nginx with an upstream pool);
- ``new_connection``: ``Connection: close`` on every request, so every request opens a TCP
  connection (nginx without upstream keepalive).

Each mode records the requests served per second, the upstream's CPU (its processes' CPU time
over the wall time: cores), the CPU time per request and the two bounds of its rate: the
**delay bound** (``connections x 1000 / delay_ms``: no closed-loop client with that many
connections gets more, whatever the server) and the **CPU bound** (its processes, each given
a core, at the CPU time per request measured). ``bound`` says which one the measured rate
came near (within 10%), or ``host`` when neither: the box (shared by wrk and the upstream here,
and by nginx in a run) held it back. The 1-minute load average says how busy the box was.

Nothing here stops a testbed: a measurement that cannot be made says why (``missing``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from typing import Any

import psutil

from perfkit.errors import ParseError
from perfkit.ingest.wrk import parse as parse_wrk
from perfkit.run.procs import process_tree
from perfkit.run.spec import utc_now

#: connections of each measurement: the most a proxied example or demo load point opens
CONNECTIONS = 256
#: mode -> wrk's extra arguments
MODES = {"keepalive": [], "new_connection": ["-H", "Connection: close"]}
#: a measured rate within this share of a bound is held by that bound
NEAR_BOUND = 0.9


def _cpu_s(pids: list[int]) -> float:
    total = 0.0
    for proc in process_tree(pids):
        try:
            times = proc.cpu_times()
        except psutil.Error:
            continue
        total += times.user + times.system
    return total


def bound(rate_rps: float, delay_bound_rps: float, cpu_bound_rps: float | None) -> str:
    """Which bound held a measured rate: ``delay``, ``cpu`` or ``host`` (neither: the box)."""
    if rate_rps >= NEAR_BOUND * delay_bound_rps:
        return "delay"
    if cpu_bound_rps is not None and rate_rps >= NEAR_BOUND * cpu_bound_rps:
        return "cpu"
    return "host"


def mode_record(requests: int, wall_s: float, cpu_s: float, processes: int,
                connections: int, delay_ms: int) -> dict[str, Any]:
    """One mode's record from what was measured (see the module docstring)."""
    rate = requests / wall_s if wall_s > 0 else 0.0
    us = cpu_s / requests * 1e6 if requests else None
    cpu_bound = processes * 1e6 / us if us else None
    delay_bound = connections * 1000.0 / delay_ms if delay_ms > 0 else float("inf")
    return {"requests": requests, "throughput_rps": round(rate, 1),
            "cpu_cores": round(cpu_s / wall_s, 3) if wall_s > 0 else None,
            "cpu_us_per_request": None if us is None else round(us, 1),
            "cpu_bound_rps": None if cpu_bound is None else round(cpu_bound),
            "delay_bound_rps": round(delay_bound) if delay_bound != float("inf") else None,
            "bound": bound(rate, delay_bound, cpu_bound)}


def measure(port: int, prefix: list[str], pids: list[int], delay_ms: int, duration_s: float,
            processes: int, connections: int = CONNECTIONS) -> dict[str, Any]:
    """wrk against 127.0.0.1:port (``prefix``: e.g. ``ip netns exec NS``) in each mode of
    :data:`MODES` for ``duration_s``; the upstream's processes are ``pids`` and their
    children."""
    out: dict[str, Any] = {
        "what": "wrk against the upstream alone (not through nginx), in each mode",
        "tool": "wrk", "connections": connections, "threads": 2, "duration_s": duration_s,
        "delay_ms": delay_ms, "processes": processes, "measured_utc": utc_now(),
        "load_average_1m": round(os.getloadavg()[0], 2), "host_cpus": os.cpu_count(),
        "modes": {}}
    wrk = shutil.which("wrk")
    if wrk is None:
        return out | {"missing": "wrk not found on PATH"}
    url = f"http://127.0.0.1:{port}/"
    for mode, extra in MODES.items():
        argv = [*prefix, wrk, "-t2", f"-c{connections}", f"-d{duration_s:g}s", *extra, url]
        cpu0, t0 = _cpu_s(pids), time.monotonic()
        try:
            done = subprocess.run(argv, capture_output=True, text=True,
                                  timeout=duration_s + 15, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return out | {"missing": f"{mode}: {exc}"}
        wall, cpu = time.monotonic() - t0, _cpu_s(pids) - cpu0
        try:
            run = parse_wrk(done.stdout, f"upstream ceiling ({mode})")
        except ParseError as exc:
            return out | {"missing": f"{mode}: wrk exited {done.returncode}: {exc}"}
        if not run.requests or run.duration_s is None:
            return out | {"missing": f"{mode}: wrk served no request"}
        # the rate and the cores over wrk's own window: an idle upstream spends no CPU, so its
        # CPU time measured around wrk (``wall``, a little longer) is the window's
        record = mode_record(run.requests, run.duration_s, cpu, processes, connections,
                             delay_ms)
        record["wall_s"] = round(wall, 3)
        record["socket_errors"] = run.socket_errors
        out["modes"][mode] = record
    return out
