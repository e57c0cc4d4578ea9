"""Where each counter of a run is read, or why it is not: the sources of
:class:`perfkit.run.counters.Counters` (nginx's stub_status, the upstream's status page, the
kernel's tables of the server's namespace, the testbed's logs, the listening sockets)."""

from __future__ import annotations

import dataclasses
import ipaddress
import socket
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from perfkit.run.profiles import STUB_STATUS_PATH, cache_log_counted

#: the kernel counters' scope when the server shares the host's network namespace
SCOPE_SYSTEM = ("system-wide (the host's network namespace: includes other traffic on this "
                "host)")
#: seconds a stub_status fetch may take
FETCH_TIMEOUT_S = 2.0

def scope_netns(name: str) -> str:
    return f"netns {name}"


@dataclasses.dataclass
class Sources:
    """Where each counter of one run is read, or why it is not (``*_missing``)."""

    stub_status: str | None = None
    stub_missing: str | None = None
    proc_dir: str | None = None
    scope: str | None = None
    kernel_missing: str | None = None
    error_log: str | None = None
    error_missing: str | None = None
    access_log: str | None = None
    cache_missing: str | None = None
    upstream_status: str | None = None
    upstream_missing: str | None = None
    upstream_pool: int | None = None
    #: listening sockets (name -> port on 127.0.0.1) and their namespace
    listeners: dict[str, int] = dataclasses.field(default_factory=dict)
    netns: str | None = None


def _loopback(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def sources_of(server: Any, url: str, stub_status_url: str | None) -> Sources:
    info = getattr(server, "info", None)
    s = Sources()
    if info is None:
        s.stub_status = stub_status_url
        s.stub_missing = None if stub_status_url else (
            "not the testbed, and no stub_status URL was given (--stub-status URL)")
        if _loopback(url):
            s.proc_dir, s.scope = "/proc/self/net", SCOPE_SYSTEM
        else:
            s.kernel_missing = ("the server is on another host: this host's kernel counters "
                                "are not its")
        s.error_missing = "not the testbed: its error log is not known"
        s.cache_missing = "not the testbed: no log of cache statuses is known"
        s.upstream_missing = "not the testbed: no upstream is known"
        port = urlsplit(url).port
        if _loopback(url) and port:
            s.listeners = {"server": port}
        return s
    variables = dict(getattr(info, "variables", {}) or {})
    socket_path = variables.get("status_socket")
    s.stub_status = stub_status_url or (f"unix:{socket_path}" if socket_path else None)
    if s.stub_status is None:
        s.stub_missing = ("the testbed serves no stub_status (its state directory's path is too "
                          "long for a unix socket, or it was started by an older perfkit)")
    master = (getattr(info, "pids", None) or {}).get("nginx")
    s.proc_dir = f"/proc/{master}/net" if master else None
    netns = getattr(info, "netns", None)
    s.scope = scope_netns(netns) if netns else SCOPE_SYSTEM
    if master is None:
        s.kernel_missing, s.scope = "the nginx master's pid is not known", None
    logs = Path(getattr(info, "state_dir", "")) / "logs"
    s.error_log = str(logs / "error.log")
    why = cache_log_counted(variables) if "proxy_cache" in variables else "no profile known"
    s.access_log, s.cache_missing = (None, why) if why else (str(logs / "access.log"), None)
    s.netns, s.listeners = netns, {"server": int(getattr(info, "port", 0) or 0)}
    if variables.get("upstream_enabled"):
        s.listeners["upstream"] = int(variables["upstream_port"])
        s.upstream_pool = int(variables.get("upstream_keepalive") or 0)
        path = variables.get("upstream_status_socket")
        s.upstream_status = f"unix:{path}" if path else None
        s.upstream_missing = None if path else ("the upstream serves no status page (the state "
                                                "directory's path is too long, or an older "
                                                "perfkit started it)")
    else:
        s.upstream_missing = "the profile runs no upstream"
    return s


def fetch_stub_status(address: str, timeout_s: float = FETCH_TIMEOUT_S) -> str:
    """The stub_status page at ``unix:/path/to.sock`` (path :data:`STUB_STATUS_PATH`) or at an
    http URL: one connection, one request (which the page counts)."""
    if address.startswith("unix:"):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout_s)
            sock.connect(address.removeprefix("unix:"))
            sock.sendall(f"GET {STUB_STATUS_PATH} HTTP/1.0\r\nHost: localhost\r\n\r\n"
                         .encode())
            chunks = []
            while chunk := sock.recv(65536):
                chunks.append(chunk)
        head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
        status = head.split(b"\r\n", 1)[0]
        if b" 200 " not in status + b" ":
            raise OSError(f"stub_status answered {status.decode(errors='replace')!r}")
        return body.decode("utf-8")
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(address, timeout=timeout_s) as response:
        return response.read().decode("utf-8")


