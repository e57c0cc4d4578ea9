"""What one run is: :class:`RunSpec`, its command line, and the checks made before it starts.

The command is always an argv list, never a shell string. Only loopback targets are loaded
unless the user says ``--allow-remote``.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import math
import os
import secrets
import shutil
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from perfkit.errors import PerfkitError
from perfkit.run import hostinfo

TOOLS = ("wrk", "wrk2", "locust")
WRK2_HELP = (
    "wrk2 is not installed: it is not on PATH and no --wrk2 PATH was given. Build it from "
    "https://github.com/giltene/wrk2 (git clone, then `make`; it needs a C compiler, make, "
    "libssl-dev and zlib1g-dev), and put the binary on PATH as `wrk2` "
    "(e.g. `install -m 755 wrk /usr/local/bin/wrk2`) or pass --wrk2 /path/to/wrk"
)


class RunError(PerfkitError):
    """A run could not be started (bad options, missing tool, remote URL)."""


@dataclasses.dataclass(frozen=True)
class RunSpec:
    """Everything that defines one run. Times in seconds; ``rate_rps`` only for wrk2.

    ``url`` is the target (for Locust the ``--host``); ``factors`` and the bookkeeping fields
    (``repetition``, ``block``, ``order``) go to the manifest unchanged.
    """

    tool: str
    url: str
    duration_s: float
    connections: int | None = None
    threads: int | None = None
    rate_rps: float | None = None
    latency: bool = True
    uncorrected: bool = False
    request_timeout_s: float | None = None
    headers: tuple[str, ...] = ()
    script: str | None = None
    users: int | None = None
    spawn_rate: float | None = None
    processes: int | None = None
    locustfile: str | None = None
    user_classes: tuple[str, ...] = ()
    reset_stats: bool = True
    extra_args: tuple[str, ...] = ()
    wrk2_path: str | None = None
    taskset: str | None = None
    allow_remote: bool = False
    grace_s: float = 20.0
    run_id: str | None = None
    #: nginx's stub_status of a server that is not the testbed (the testbed's is found)
    stub_status_url: str | None = None
    factors: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    bookkeeping: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def ramp_s(self) -> float:
        """Locust: seconds to spawn every user; 0 for wrk/wrk2 (connections open at once)."""
        if self.tool != "locust" or not self.users:
            return 0.0
        return float(math.ceil(self.users / self.effective_spawn_rate))

    @property
    def effective_spawn_rate(self) -> float:
        return float(self.spawn_rate or self.users or 1)


def new_run_id(tool: str) -> str:
    """``20261121T193119Z-wrk-3fa9c1``: sortable by start time, unique."""
    return f"{datetime.now(UTC):%Y%m%dT%H%M%SZ}-{tool}-{secrets.token_hex(3)}"


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def check_url(url: str, allow_remote: bool = False) -> None:
    """Refuse anything but http(s) to loopback unless ``allow_remote`` (protects users and CI)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise RunError(f"--url: expected an http:// or https:// URL, found {url!r}")
    if allow_remote:
        return
    host = parts.hostname
    if host == "localhost":
        return
    try:
        if ipaddress.ip_address(host).is_loopback:
            return
    except ValueError:
        pass
    raise RunError(f"--url: expected a loopback target (127.0.0.1, localhost or ::1), found "
                   f"{host!r}; load a remote machine only on purpose, with --allow-remote")


def _seconds_arg(value: float, what: str) -> str:
    if value <= 0 or abs(value - round(value)) > 1e-9:
        raise RunError(f"{what}: expected a whole number of seconds > 0, found {value:g}")
    return f"{int(round(value))}s"


def find_tool(spec: RunSpec) -> list[str]:
    """The argv prefix of the tool; a clear error when it is missing."""
    if spec.tool == "wrk":
        path = shutil.which("wrk")
        if not path:
            raise RunError("wrk is not installed: install it (Debian/Ubuntu: apt-get install wrk)")
        return [path]
    if spec.tool == "wrk2":
        path = spec.wrk2_path or shutil.which("wrk2")
        if not path:
            raise RunError(WRK2_HELP)
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            raise RunError(f"--wrk2: {path} is not an executable file. {WRK2_HELP}")
        return [os.path.abspath(path)]
    if spec.tool == "locust":
        found = hostinfo.find_locust()
        if not found:
            raise RunError("locust is not installed: pip install locust")
        return found
    raise RunError(f"tool: expected one of {', '.join(TOOLS)}, found {spec.tool!r}")


def build_argv(spec: RunSpec, prefix: Sequence[str]) -> list[str]:
    """The tool's command line, as a list (never a shell string)."""
    if spec.tool in ("wrk", "wrk2"):
        if not spec.connections or not spec.threads:
            raise RunError(f"{spec.tool}: --connections and --threads are required")
        if spec.threads > spec.connections:
            raise RunError(f"{spec.tool}: --threads ({spec.threads}) must not exceed "
                           f"--connections ({spec.connections})")
        argv = [*prefix, f"-t{spec.threads}", f"-c{spec.connections}",
                f"-d{_seconds_arg(spec.duration_s, '--duration')}"]
        if spec.tool == "wrk2":
            if not spec.rate_rps:
                raise RunError("wrk2: --rate (requests/s, wrk2's -R) is required")
            argv.append(f"-R{spec.rate_rps:g}")
            if spec.uncorrected:
                argv.append("-U")
        if spec.latency:
            argv.append("--latency")
        if spec.request_timeout_s:
            argv += ["--timeout", _seconds_arg(spec.request_timeout_s, "--timeout")]
        for header in spec.headers:
            argv += ["-H", header]
        if spec.script:
            argv += ["-s", os.path.abspath(spec.script)]
        return argv + list(spec.extra_args) + [spec.url]
    if not spec.locustfile:
        raise RunError("locust: --locustfile is required")
    if not spec.users:
        raise RunError("locust: --users is required")
    run_time = _seconds_arg(spec.duration_s + spec.ramp_s, "--duration")
    argv = [*prefix, "-f", os.path.abspath(spec.locustfile), "--headless",
            "-u", str(spec.users), "-r", f"{spec.effective_spawn_rate:g}", "-t", run_time,
            "--host", spec.url.rstrip("/"), "--csv", "locust", "--csv-full-history", "--json"]
    if spec.reset_stats:
        argv.append("--reset-stats")
    if spec.processes:
        argv += ["--processes", str(spec.processes)]
    return argv + list(spec.extra_args) + list(spec.user_classes)


def parse_taskset(text: str | None) -> tuple[str | None, str | None]:
    """``'0'`` -> ('0', None); ``'0:1'`` -> ('0', '1'); CPU lists as taskset's ``-c``."""
    if not text:
        return None, None
    gen, _, server = text.partition(":")
    for part in (gen, server):
        if part and not all(c in "0123456789,-" for c in part):  # ASCII digits only
            raise RunError(f"--taskset: expected GEN_CPUS[:SERVER_CPUS] such as 0 or 0:1, "
                           f"found {text!r}")
    return gen or None, server or None


def cpu_list(text: str) -> list[int]:
    out: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out += list(range(int(lo), int(hi or lo) + 1))
    return out


def generator_cores(spec: RunSpec, gen_cpus: str | None) -> float:
    """How many cores the generator can keep busy: its threads/processes, capped by its CPUs."""
    usable = len(cpu_list(gen_cpus)) if gen_cpus else len(os.sched_getaffinity(0))
    if spec.tool == "locust":  # one gevent loop per process; the master only coordinates
        workers = spec.processes or 1
    else:
        workers = spec.threads or 1
    return float(min(workers, usable))
