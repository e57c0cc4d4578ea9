"""Process, file and network-namespace helpers of :mod:`perfkit.run.testbed`.

Nothing here kills a process that :func:`is_ours` has not matched by command line and start
time, and nothing listens anywhere but 127.0.0.1.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psutil

from perfkit._fsutil import FILE_MODE, flock, write_bytes_atomic, write_json_atomic
from perfkit.errors import PerfkitError
from perfkit.run.procs import process_tree

DIR_MODE = 0o755
STOP_TIMEOUT_S = 5.0
_PROBE = ("import http.client,sys\n"
          "c=http.client.HTTPConnection('127.0.0.1',int(sys.argv[1]),timeout=2)\n"
          "c.request('GET',sys.argv[2]);print(c.getresponse().status)")


# -- files ------------------------------------------------------------------------------------
def find_nginx() -> str:
    """``/usr/sbin/nginx`` (Debian), else ``nginx`` on PATH."""
    if os.access("/usr/sbin/nginx", os.X_OK):
        return "/usr/sbin/nginx"
    found = shutil.which("nginx")
    if not found:
        raise PerfkitError("nginx not found: install Debian's package (apt-get install nginx) "
                           "or set PERFKIT_NGINX")
    return found


def prepare_state_dir(state_dir: str) -> None:
    """Create ``state_dir`` and its subdirectories, 0755; as root, check nginx's workers
    (``nobody``) can reach it through every parent directory."""
    base = Path(state_dir)
    for sub in ("", "conf", "html", "logs", "tmp"):
        (base / sub).mkdir(parents=True, exist_ok=True)
        if (base / sub).stat().st_uid == os.geteuid():
            os.chmod(base / sub, DIR_MODE)
    if os.geteuid() != 0:
        return
    for parent in [base, *base.parents]:
        if not parent.stat().st_mode & 0o001:
            raise PerfkitError(
                f"testbed state directory {state_dir}: {parent} is not searchable by others "
                f"(mode {parent.stat().st_mode & 0o777:o}); nginx's workers run as nobody and "
                "could not read it. Use a directory under /tmp or set PERFKIT_TESTBED_DIR.")


@contextmanager
def locked(state_dir: str) -> Iterator[None]:
    """Hold an exclusive lock on ``STATE_DIR/.lock`` (one up/down at a time per state dir)."""
    os.makedirs(state_dir, exist_ok=True)
    with flock(os.path.join(state_dir, ".lock"), mode=FILE_MODE):
        yield


def write_file(path: str, data: bytes) -> None:
    """Write atomically with mode 0644."""
    write_bytes_atomic(path, data, mode=FILE_MODE)


def write_json(path: str, data: dict) -> None:
    write_json_atomic(path, data, sort_keys=True, mode=FILE_MODE)


def read_json(path: str) -> dict | None:
    try:
        with open(path) as fh:
            return json.load(fh)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise PerfkitError(f"{path}: unreadable testbed state ({exc}); remove it by hand "
                           "after checking no testbed process runs") from None


def remove_path(path: str, only_under: str | None = None) -> None:
    """Remove a file or a directory tree if it exists (``only_under``: a required prefix)."""
    if only_under and not path.startswith(only_under):
        raise PerfkitError(f"refusing to remove {path}: not under {only_under}")
    p = Path(path)
    if p.is_dir() and not p.is_symlink():
        shutil.rmtree(p, ignore_errors=True)
    elif p.exists() or p.is_symlink():
        p.unlink(missing_ok=True)


def tail(path: str, lines: int = 5) -> str:
    try:
        return "".join(Path(path).read_text(errors="replace").splitlines(True)[-lines:]).strip()
    except OSError:
        return ""


# -- network namespace -------------------------------------------------------------------------
def netns_name(state_dir: str) -> str:
    """One namespace name per state directory."""
    return "perfkit-" + hashlib.sha1(os.path.abspath(state_dir).encode()).hexdigest()[:10]


def netns_prefix(name: str | None) -> list[str]:
    return [] if name is None else ["ip", "netns", "exec", name]


def _run(argv: list[str], what: str, timeout_s: float = 15.0) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise PerfkitError(f"{what}: {exc}") from None
    if done.returncode != 0:
        raise PerfkitError(f"{what}: `{' '.join(argv)}` exited {done.returncode}: "
                           f"{(done.stderr or done.stdout).strip()}")
    return done.stdout


def netns_create(name: str, somaxconn: int | None) -> None:
    """A namespace with its loopback up and, optionally, its own ``net.core.somaxconn``."""
    if os.geteuid() != 0 or shutil.which("ip") is None:
        raise PerfkitError("the netns testbed variable needs root and `ip` (iproute2); "
                           "without them use the backlog profile alone")
    netns_delete(name)  # a leftover of this same state directory
    _run(["ip", "netns", "add", name], "creating the network namespace")
    _run(netns_prefix(name) + ["ip", "link", "set", "lo", "up"], "bringing up its loopback")
    if somaxconn is not None:
        _run(netns_prefix(name) + ["sysctl", "-q", "-w", f"net.core.somaxconn={somaxconn}"],
             "setting net.core.somaxconn in the namespace")


def netns_delete(name: str) -> None:
    if Path("/run/netns", name).exists():
        _run(["ip", "netns", "delete", name], "removing the network namespace")


def read_somaxconn(ns: str | None) -> int | None:
    """``net.core.somaxconn`` of the host, or of namespace ``ns``."""
    try:
        if ns is None:
            return int(Path("/proc/sys/net/core/somaxconn").read_text())
        return int(_run(netns_prefix(ns) + ["cat", "/proc/sys/net/core/somaxconn"], "somaxconn"))
    except (OSError, ValueError):
        return None


def check_port_free(port: int) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", port))
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise PerfkitError(f"port {port} on 127.0.0.1 is in use by another process; "
                               "choose another with --port") from None
        raise
    finally:
        sock.close()


def ss_listeners(ports: list[int], ns: str | None, timeout_s: float = 5.0) -> str | None:
    """``ss -Hltnm`` of the listening TCP sockets on ``ports`` (in namespace ``ns``): one line
    per socket (state, Recv-Q: its accept queue now, Send-Q: the queue's limit, address) and
    its ``skmem`` line (``d``: its drops); None without ``ss`` or when it fails."""
    if shutil.which("ss") is None or not ports:
        return None
    where = " or ".join(f"sport = :{p}" for p in ports)
    argv = ["ss", *(["-N", ns] if ns else []), "-Hltnm", f"( {where} )"]
    try:
        return _run(argv, "ss", timeout_s)
    except PerfkitError:
        return None


def accept_queue_max(port: int, ns: str | None) -> int | None:
    """The listener's accept-queue limit as ``ss -ltn`` reports it (Send-Q), or None."""
    out = ss_listeners([port], ns)
    for line in (out or "").splitlines():
        fields = line.split()
        if len(fields) >= 4 and fields[3] == f"127.0.0.1:{port}":
            return int(fields[2])
    return None


# -- processes -----------------------------------------------------------------------------
def nginx_version(nginx: str) -> str:
    """``1.22.1`` from ``nginx -v``."""
    try:
        done = subprocess.run([nginx, "-v"], capture_output=True, text=True, timeout=10)
    except OSError as exc:
        raise PerfkitError(f"cannot run {nginx}: {exc}") from None
    m = re.search(r"nginx/(\S+)", done.stderr + done.stdout)
    return m.group(1) if m else (done.stderr + done.stdout).strip()


def nginx_test(nginx: str, prefix: str) -> str:
    """``nginx -t`` on ``PREFIX/conf/nginx.conf``; its report, or PerfkitError with it."""
    argv = [nginx, "-t", "-p", prefix.rstrip("/") + "/", "-c", "conf/nginx.conf",
            "-e", "logs/error.log"]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30, umask=0o022)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise PerfkitError(f"nginx -t: {exc}") from None
    report = (done.stderr + done.stdout).strip()
    if done.returncode != 0:
        raise PerfkitError(f"nginx rejects the config: {report}")
    return report


def _start_daemon(argv: list[str], log: str, pid_file: str, what: str) -> int:
    """Run a command that daemonises itself and writes ``pid_file``; return that pid."""
    remove_path(pid_file)
    with open(log, "ab") as out:
        os.chmod(log, FILE_MODE)
        try:
            done = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                  timeout=30, umask=0o022, start_new_session=True)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise PerfkitError(f"starting {what}: {exc}") from None
    if done.returncode != 0:
        raise PerfkitError(f"starting {what} failed (exit {done.returncode}): {tail(log)}")
    deadline = time.monotonic() + 10.0
    while time.monotonic() < deadline:
        text = Path(pid_file).read_text().strip() if Path(pid_file).exists() else ""
        if text.isdigit() and psutil.pid_exists(int(text)):
            return int(text)
        time.sleep(0.02)
    raise PerfkitError(f"starting {what}: no pid in {pid_file} after 10 s: {tail(log)}")


def start_nginx(nginx: str, state_dir: str, ns: str | None) -> int:
    argv = netns_prefix(ns) + [nginx, "-p", state_dir.rstrip("/") + "/", "-c", "conf/nginx.conf",
                               "-e", "logs/error.log"]
    return _start_daemon(argv, os.path.join(state_dir, "logs", "start.log"),
                         os.path.join(state_dir, "logs", "nginx.pid"), "nginx")


def start_upstream(state_dir: str, v: dict, ns: str | None) -> int:
    """Start the upstream app of the variables ``v`` (port, delay, backlog, processes, status
    socket); return its master's pid."""
    logs = os.path.join(state_dir, "logs")
    # run the file itself, isolated (-I): stdlib only, without importing perfkit (and numpy)
    script = str(Path(__file__).with_name("upstream.py"))
    argv = netns_prefix(ns) + [sys.executable, "-I", script, "--port", str(v["upstream_port"]),
                               "--delay-ms", str(v["upstream_delay_ms"]),
                               "--backlog", str(v["upstream_backlog"]), "--daemon",
                               "--pid-file", os.path.join(logs, "upstream.pid"),
                               "--log-file", os.path.join(logs, "upstream.log")]
    if v.get("upstream_processes"):
        argv += ["--processes", str(v["upstream_processes"])]
    if v.get("upstream_status_socket"):
        argv += ["--status-socket", str(v["upstream_status_socket"])]
    return _start_daemon(argv, os.path.join(logs, "start.log"),
                         os.path.join(logs, "upstream.pid"), "the upstream app")


def probe(port: int, path: str, ns: str | None) -> int | None:
    """The HTTP status of GET ``path`` on 127.0.0.1:port (inside ``ns``), None on failure."""
    if ns is None:
        import http.client

        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        try:
            conn.request("GET", path)
            return conn.getresponse().status
        except OSError:
            return None
        finally:
            conn.close()
    argv = netns_prefix(ns) + [sys.executable, "-c", _PROBE, str(port), path]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=10)
    return int(done.stdout) if done.returncode == 0 and done.stdout.strip().isdigit() else None


def wait_until_answers(port: int, ns: str | None, upstream: bool, timeout_s: float,
                       state_dir: str) -> None:
    """Poll until nginx answers ``/status503`` with 503 (and, with an upstream, ``/proxy/``
    with 200). Neither path is cached, so the cache stays empty."""
    checks = [("/status503", 503)] + ([("/proxy/", 200)] if upstream else [])
    deadline = time.monotonic() + timeout_s
    for path, want in checks:
        got = None
        while time.monotonic() < deadline:
            got = probe(port, path, ns)
            if got == want:
                break
            time.sleep(0.05)
        if got != want:
            log = tail(os.path.join(state_dir, "logs", "error.log"))
            raise PerfkitError(f"the testbed did not answer GET {path} with {want} within "
                               f"{timeout_s:g} s (last: {got}); error.log: {log}")


def create_time(pid: int) -> float | None:
    try:
        return psutil.Process(pid).create_time()
    except psutil.Error:
        return None


def is_ours(pid: int, created: float | None, markers: list[str]) -> bool:
    """True when ``pid`` is alive, started at ``created`` and its command line holds every
    marker (so a reused pid or someone else's nginx never matches)."""
    try:
        proc = psutil.Process(pid)
        if proc.status() == psutil.STATUS_ZOMBIE:
            return False
        if created is not None and abs(proc.create_time() - created) > 1.0:
            return False
        cmdline = " ".join(proc.cmdline())
    except psutil.Error:
        return False
    return all(m in cmdline for m in markers)


def stop_process_tree(pid: int, nginx: bool) -> None:
    """SIGTERM (nginx: fast shutdown), wait, then SIGKILL the process and the children it had
    (nginx workers, cache manager) if they outlive it."""
    try:
        proc = psutil.Process(pid)
        children = [c for c in proc.children() if not nginx or c.name().startswith("nginx")]
        proc.send_signal(signal.SIGTERM)
    except psutil.Error:
        return
    alive = _wait_gone([proc, *children], STOP_TIMEOUT_S)
    for p in alive:
        try:
            p.kill()
        except psutil.Error:
            pass
    _wait_gone(alive, STOP_TIMEOUT_S)


def _gone(proc: psutil.Process) -> bool:
    try:
        return not proc.is_running() or proc.status() == psutil.STATUS_ZOMBIE
    except psutil.Error:
        return True


def _wait_gone(procs: list[psutil.Process], timeout_s: float) -> list[psutil.Process]:
    """Poll every 10 ms (psutil.wait_procs backs off to much longer steps for processes that
    are not our children); return those still alive after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    alive = list(procs)
    while alive and time.monotonic() < deadline:
        alive = [p for p in alive if not _gone(p)]
        if alive:
            time.sleep(0.01)
    return alive


def child_count(pid: int, title: str | None = None) -> int | None:
    """How many children ``pid`` has (those whose command line starts with ``title``, e.g.
    nginx's ``nginx: worker``); None when it is gone."""
    try:
        children = psutil.Process(pid).children()
        return sum(1 for c in children
                   if title is None or " ".join(c.cmdline()).startswith(title))
    except psutil.Error:
        return None


def tree_pids(pids: list[int]) -> list[int]:
    """Each of ``pids`` still running and all its descendants."""
    return [p.pid for p in process_tree(pids)]
