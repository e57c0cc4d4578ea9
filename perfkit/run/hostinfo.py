"""What the machine was when a run ran: CPUs, kernel, the sysctls that limit load tests, tools.

Everything here reads; nothing changes a setting. A value that cannot be read is ``None``.
"""

from __future__ import annotations

import contextlib
import os
import platform
import re
import resource
import shutil
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: the kernel settings a load test on one host runs into (accept queue, ephemeral ports, fds)
SYSCTLS = ("net.core.somaxconn", "net.ipv4.ip_local_port_range", "fs.file-max",
           "net.ipv4.tcp_max_syn_backlog")

_VERSION_TIMEOUT_S = 10.0


def read_sysctl(name: str, proc_root: Path = Path("/proc/sys")) -> str | None:
    """``net.core.somaxconn`` -> ``'4096'`` (whitespace collapsed), or None when unreadable."""
    try:
        text = (proc_root / name.replace(".", "/")).read_text(encoding="ascii")
    except OSError:
        return None
    return " ".join(text.split())


def sysctls(names: Sequence[str] = SYSCTLS) -> dict[str, str | None]:
    """The values of ``names`` in this network namespace, plus ``ulimit -n`` (soft:hard)."""
    out: dict[str, Any] = {name: read_sysctl(name) for name in names}
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    out["ulimit -n"] = f"{_rlim(soft)}:{_rlim(hard)}"
    return out


def _rlim(value: int) -> str:
    return "unlimited" if value == resource.RLIM_INFINITY else str(value)


def host() -> dict[str, Any]:
    """CPUs (online and usable by this process), kernel, OS, Python."""
    usable: int | None
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        usable = os.cpu_count()
    return {
        "cpus": os.cpu_count(),
        "cpus_usable": usable,
        "cpu_model": _cpu_model(),
        "kernel": platform.release(),
        "system": platform.system(),
        "os": _os_release(),
        "python": platform.python_version(),
        "memory_bytes": _memory_bytes(),
    }


def _cpu_model() -> str | None:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def _os_release() -> str | None:
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return None


def _memory_bytes() -> int | None:
    try:
        import psutil

        return int(psutil.virtual_memory().total)
    except Exception:  # pragma: no cover - psutil is a dependency
        return None


def _first_line(argv: Sequence[str]) -> str | None:
    """First line a command prints (stdout, then stderr); None when it hangs or fails to start.

    The command runs in its own process group, killed whole on timeout, so a grandchild that
    holds the pipes open cannot make the probe wait.
    """
    try:
        proc = subprocess.Popen(list(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    except OSError:
        return None
    try:
        stdout, stderr = proc.communicate(timeout=_VERSION_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return None
    text = (stdout + stderr).decode("utf-8", "replace").strip()
    return text.splitlines()[0].strip() if text else None


def wrk_version(executable: str) -> str | None:
    """The first line of ``wrk -v`` minus the copyright: ``'wrk debian/4.1.0-3+b2 [epoll]'``.

    wrk2 keeps wrk's old version string (``wrk 4.0.0 [epoll]``); the caller records which
    binary ran beside it.
    """
    line = _first_line([executable, "-v"])
    if line is None:
        return None
    return re.sub(r"\s+Copyright.*$", "", line)


def locust_version(argv_prefix: Sequence[str]) -> str | None:
    """``locust --version`` -> ``'locust 2.47.0 from ... (Python 3.11.7)'``."""
    return _first_line([*argv_prefix, "--version"])


def find_locust() -> list[str] | None:
    """The argv prefix that starts Locust: ``locust`` on PATH, else the one beside Python."""
    found = shutil.which("locust")
    if found:
        return [found]
    beside = Path(sys.executable).parent / "locust"
    if beside.is_file() and os.access(beside, os.X_OK):
        return [str(beside)]
    return None


def nginx_version(executable: str = "nginx") -> str | None:
    """``nginx -v`` prints ``nginx version: nginx/1.22.1`` on stderr."""
    path = shutil.which(executable) or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists()
                                        else None)
    return None if path is None else _first_line([path, "-v"])
