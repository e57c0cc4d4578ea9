"""What perfkit knows about the server under load: the testbed's profile, config and processes.

When the URL is the local testbed's, the manifest gets the testbed's profile, template
variables, rendered config, nginx version, listen backlog and ``net.core.somaxconn``; the CPU
sampler gets nginx's processes; the command is wrapped with ``ip netns exec`` when the testbed
lives in a namespace; and the ``reload`` disturbance runs during the run. For any other URL the
server is found, when possible, as the process listening on the URL's port.

The testbed is found wherever it runs: the one of the default state folder
(``$PERFKIT_TESTBED_DIR`` or ``/tmp/perfkit-testbed-<uid>``), one given (``perfkit run
--state-dir``), or any other running on this host whose nginx serves the URL's port: each
nginx master started by ``perfkit testbed up`` names its state folder on its command line
(``nginx -p DIR/``), which holds ``state.json`` (:func:`running_testbeds`). One found but whose
state cannot be read (another user's) is named, so that the run says why its counters are
missing (:attr:`ServerContext.testbed_unread`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import psutil


def _host_port(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    host = parts.hostname or ""
    if host == "localhost":
        host = "127.0.0.1"
    return host, parts.port or (443 if parts.scheme == "https" else 80)


def listening_pids(port: int) -> list[int]:
    """Processes holding a listening TCP socket on ``port`` in this namespace (needs root for
    other users' processes); [] when unknown."""
    try:
        conns = psutil.net_connections(kind="tcp")
    except (psutil.Error, PermissionError):
        return []
    pids = {c.pid for c in conns
            if c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port == port and c.pid}
    # psutil names one holder per socket (maybe an nginx worker): climb to the master, whose
    # children the sampler adds itself
    roots = set()
    for pid in pids:
        try:
            proc = psutil.Process(pid)
            parent = proc.parent()
            while parent is not None and parent.name() == proc.name():
                proc, parent = parent, parent.parent()
            roots.add(proc.pid)
        except psutil.Error:
            continue
    return sorted(roots)


#: ``-p DIR`` on an nginx master's command line (nginx rewrites it as its title: ``nginx:
#: master process /usr/sbin/nginx -p DIR/ -c conf/nginx.conf ...``)
_PREFIX = re.compile(r"(?:^|\s)-p\s+(\S+)")
#: the testbed's record of what it started, in its state folder (perfkit.run.testbed)
STATE_FILE = "state.json"


def running_testbeds() -> dict[str, int]:
    """The perfkit testbeds running on this host: state folder -> nginx master pid, for every
    nginx master whose prefix (``-p DIR``) holds the testbed's ``state.json``."""
    found: dict[str, int] = {}
    for proc in psutil.process_iter(["name", "cmdline"]):
        with contextlib.suppress(psutil.Error):
            if "nginx" not in (proc.info["name"] or ""):
                continue
            m = _PREFIX.search(" ".join(proc.info["cmdline"] or ()))
            if m is None:
                continue
            folder = os.path.abspath(m.group(1))
            if os.path.exists(os.path.join(folder, STATE_FILE)):
                found.setdefault(folder, proc.pid)
    return found


def _serves(info: Any, url: str) -> bool:
    return info is not None and _host_port(info.base_url) == _host_port(url)


@dataclasses.dataclass
class ServerContext:
    """The server of one run: a testbed (``testbed`` + ``info``) or just a URL."""

    url: str
    testbed: Any | None = None
    info: Any | None = None
    #: run the profile's reload disturbance (off for all but one of concurrent clients)
    disturb: bool = True
    #: why the server's counters are not recorded per run (None: they are;
    #: :mod:`perfkit.run.counters`)
    no_counters: str | None = None
    #: a testbed that seems to serve the URL but whose state could not be read: why (its
    #: counters are then not recorded, and the run's warnings say so)
    testbed_unread: str | None = None

    @classmethod
    def for_url(cls, url: str, testbed: Any | None = None) -> ServerContext:
        """The testbed when it serves ``url`` (same host and port), else a bare URL context.

        ``testbed``: the one to use (``perfkit run --state-dir``); by default the default
        state folder's, else any running testbed that serves the URL (:func:`running_testbeds`)."""
        try:
            from perfkit.run.testbed import Testbed
        except ImportError:
            return cls(url)
        if testbed is not None:
            return cls._of(url, testbed) or cls(url)
        default = Testbed()
        found = cls._of(url, default)
        if found is not None:
            return found
        unread = []
        for folder, pid in running_testbeds().items():
            if folder == default.state_dir:
                continue
            found = cls._of(url, Testbed(folder))
            if found is not None:
                return found
            unread.append((folder, pid))
        port = _host_port(url)[1]
        listening = set(listening_pids(port)) if unread else set()
        why = next((f"a perfkit testbed serves port {port} (nginx {pid} -p {folder}) but its "
                    f"state cannot be read ({folder}/{STATE_FILE}): its counters were not "
                    "recorded" for folder, pid in unread if pid in listening), None)
        return cls(url, testbed_unread=why)

    @classmethod
    def _of(cls, url: str, testbed: Any) -> ServerContext | None:
        try:
            info = testbed.status()
        except Exception:  # a broken testbed state must not stop a run on another URL
            return None
        return cls(url, testbed, info) if _serves(info, url) else None

    def wrap(self, argv: Sequence[str]) -> list[str]:
        """``ip netns exec NS argv`` when the testbed lives in a namespace."""
        if self.testbed is not None and self.info is not None:
            return list(self.testbed.wrap_command(list(argv)))
        return list(argv)

    def pids(self) -> list[int]:
        """Root processes of the server (nginx master, upstream app); children are added by
        the sampler."""
        if self.info is not None:
            pids = getattr(self.info, "pids", None) or {}
            values = pids.values() if isinstance(pids, dict) else pids
            found = sorted({int(p) for p in values if p})
            if found or getattr(self.info, "netns", None):
                return found
        return listening_pids(_host_port(self.url)[1])

    def reload_interval_s(self) -> float | None:
        if self.info is None:
            return None
        value = (getattr(self.info, "variables", None) or {}).get("reload_interval_s")
        return None if value in (None, "", 0) else float(value)

    def disturbance(self):
        """The testbed's reload disturbance during the run, when its profile asks for it."""
        interval = self.reload_interval_s()
        if interval is None or self.testbed is None or not self.disturb:
            return contextlib.nullcontext()
        return self.testbed.reload_disturbance(interval)

    def describe(self) -> dict[str, Any]:
        """The ``server`` section of the manifest."""
        if self.info is None:
            pids = self.pids()
            names = []
            for pid in pids:
                with contextlib.suppress(psutil.Error):
                    names.append(psutil.Process(pid).name())
            return {"testbed": False, "url": self.url, "profile": None,
                    "listener_processes": names or None,
                    **({"testbed_unread": self.testbed_unread} if self.testbed_unread else {})}
        described = dict(self.info.to_dict()) if hasattr(self.info, "to_dict") else {}
        described.pop("create_times", None)
        described.update(testbed=True, reload_interval_s=self.reload_interval_s())
        return described
