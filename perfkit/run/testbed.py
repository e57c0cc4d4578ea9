"""The local nginx testbed: Debian's nginx on 127.0.0.1, configured from a profile.

>>> tb = Testbed()                                   # doctest: +SKIP
>>> info = tb.up("keepalive+cache-ram", port=8080)   # doctest: +SKIP
>>> info.base_url                                    # doctest: +SKIP
'http://127.0.0.1:8080/'
>>> tb.down()                                        # doctest: +SKIP

Everything lives in ``state_dir`` (default ``$PERFKIT_TESTBED_DIR`` or
``/tmp/perfkit-testbed-<uid>``): ``conf/nginx.conf``, ``html/index.html`` (1024 bytes),
``logs/`` (error.log kept, access.log emptied at each ``up``), ``tmp/``, ``cache/`` and
``state.json``, the record of what ``up`` started. nginx runs as
``nginx -p STATE_DIR/ -c conf/nginx.conf -e logs/error.log`` (daemonised; the master pid is
recorded). Run as root, nginx's workers run as ``nobody``, so directories are 0755, files 0644
and every parent directory of ``state_dir`` must be searchable by others (not under /root).

``down`` stops only the processes recorded in ``state.json`` whose command line and start time
still match, removes the namespace and the tmpfs cache it made, and is safe to repeat. Profiles
and their variables are described in :mod:`perfkit.run.profiles`.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path

from perfkit.errors import PerfkitError
from perfkit.run import testbed_procs as procs
from perfkit.run import upstream_ceiling
from perfkit.run.profiles import (
    NGINX_DEFAULT_BACKLOG,
    PROFILES,
    default_state_dir,
    parse_profile,
    render_config,
    resolve_variables,
)

__all__ = ["PROFILES", "ReloadDisturbance", "Testbed", "TestbedInfo", "parse_profile",
           "render_config"]

STATE_FILE = "state.json"
START_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class TestbedInfo:
    """What a running testbed is: profile, URL, variables, rendered config, processes.

    ``backlog`` is the listen backlog nginx asks for (511 when the profile leaves it unset);
    ``somaxconn`` is ``net.core.somaxconn`` of the host, or of the namespace when ``netns`` is
    set; the kernel caps the accept queue at the smaller (``effective_backlog``);
    ``accept_queue_max`` is that cap as ``ss -ltn`` shows it (None without ``ss``).
    ``pids`` maps ``"nginx"`` (the master; its workers are its children and change on every
    reload) and ``"upstream"`` (proxy and cache profiles: its master; its workers are its
    children) to process ids; ``nginx_workers`` counts nginx's workers at the start.

    With an upstream: ``upstream_backlog`` is the listen backlog it asks for,
    ``upstream_accept_queue_max`` its accept-queue limit as ``ss -ltn`` shows it,
    ``upstream_processes`` its worker processes and ``upstream_ceiling`` its own ceiling
    measured at the start (:mod:`perfkit.run.upstream_ceiling`; None when not measured).
    """

    __test__ = False  # not a pytest class

    profile: str
    port: int
    base_url: str
    variables: dict[str, object]
    config_text: str
    config_path: str
    state_dir: str
    nginx_version: str
    pids: dict[str, int]
    backlog: int
    somaxconn: int | None
    netns: str | None
    started_utc: str
    accept_queue_max: int | None = None
    nginx_workers: int | None = None
    upstream_backlog: int | None = None
    upstream_accept_queue_max: int | None = None
    upstream_processes: int | None = None
    upstream_ceiling: dict | None = None
    create_times: dict[str, float] = field(default_factory=dict, repr=False)

    @property
    def effective_backlog(self) -> int:
        """min(backlog, somaxconn): the accept queue length the kernel grants."""
        return self.backlog if self.somaxconn is None else min(self.backlog, self.somaxconn)

    @property
    def reload_interval_s(self) -> float | None:
        """The reload disturbance interval (s) when the profile asks for one, else None."""
        return self.variables.get("reload_interval_s")  # type: ignore[return-value]

    def url_for(self, path: str = "/") -> str:
        """The absolute URL of ``path`` on the testbed."""
        return self.base_url + path.lstrip("/")

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dict (what the run manifest stores as the server)."""
        out = asdict(self)
        out["effective_backlog"] = self.effective_backlog
        return out

    @classmethod
    def from_dict(cls, data: dict) -> TestbedInfo:
        names = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in names})


@dataclass
class ReloadDisturbance:
    """Live record of a reload disturbance: ``count`` SIGHUPs sent at ``sent_at_s`` seconds
    after the block started; ``errors`` holds why a reload could not be sent."""

    interval_s: float
    count: int = 0
    sent_at_s: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


class Testbed:
    """Start, inspect and stop the testbed kept in ``state_dir``.

    Parameters
    ----------
    state_dir : str, optional
        Where configs, logs, cache and ``state.json`` go; default ``$PERFKIT_TESTBED_DIR`` or
        ``/tmp/perfkit-testbed-<uid>``.
    nginx : str, optional
        The nginx binary; default ``$PERFKIT_NGINX`` or ``/usr/sbin/nginx``.
    """

    __test__ = False  # not a pytest class

    def __init__(self, state_dir: str | None = None, nginx: str | None = None):
        self.state_dir = os.path.abspath(state_dir or default_state_dir())
        self.nginx = nginx or os.environ.get("PERFKIT_NGINX") or procs.find_nginx()
        #: reloads performed by the last :meth:`reload_disturbance` block (None before one)
        self.reload_count: int | None = None

    @property
    def state_path(self) -> Path:
        return Path(self.state_dir) / STATE_FILE

    # -- up -------------------------------------------------------------------------------
    def up(self, profile: str = "default", port: int = 8080,
           variables: dict | None = None) -> TestbedInfo:
        """Start nginx (and the upstream when the profile proxies) with ``profile``.

        A testbed already running from this ``state_dir`` is stopped first, so every ``up``
        starts from fresh processes and an empty cache. Returns once nginx answers (and the
        upstream answers through it); on any failure everything started is stopped again.
        """
        v = resolve_variables(profile, variables, port, self.state_dir)
        with procs.locked(self.state_dir):
            return self._up(profile, int(port), v)

    def _up(self, profile: str, port: int, v: dict) -> TestbedInfo:
        self._down()
        procs.prepare_state_dir(self.state_dir)
        config_text = render_config(v, port, self.state_dir, profile_name=profile)
        config_path = os.path.join(self.state_dir, "conf", "nginx.conf")
        self._write_files(config_text, v)
        state: dict = {"profile": profile, "port": port, "variables": v,
                       "config_path": config_path, "netns": None, "pids": {},
                       "create_times": {}, "ram_cache": None, "state_dir": self.state_dir,
                       "nginx": self.nginx}
        if v["proxy_cache"] == "ram":
            state["ram_cache"] = v["cache_path"]
        try:
            self._start(state, v)
        except BaseException:
            self._down()
            raise
        return TestbedInfo.from_dict(state | {"config_text": config_text})

    def _write_files(self, config_text: str, v: dict) -> None:
        d = self.state_dir
        template = resources.files("perfkit.run").joinpath("templates/index.html")
        procs.write_file(os.path.join(d, "html", "index.html"), template.read_bytes())
        procs.write_file(os.path.join(d, "conf", "nginx.conf"), config_text.encode())
        procs.remove_path(os.path.join(d, "logs", "access.log"))
        if v.get("status_socket"):  # left by an nginx that was killed: bind would fail
            procs.remove_path(v["status_socket"])
        procs.remove_path(os.path.join(d, "cache"))
        if v["proxy_cache"] == "ram":
            procs.remove_path(str(v["cache_path"]), only_under="/dev/shm/perfkit-cache-")

    def _start(self, state: dict, v: dict) -> None:
        port = state["port"]
        if v["netns"]:
            state["netns"] = procs.netns_name(self.state_dir)
            self._save(state)  # recorded before it exists, so down() can always remove it
            procs.netns_create(state["netns"], v["somaxconn"])
        else:
            for p in [port] + ([v["upstream_port"]] if v["upstream_enabled"] else []):
                procs.check_port_free(p)
        ns = state["netns"]
        state["somaxconn"] = procs.read_somaxconn(ns)
        state["backlog"] = v["backlog"] or NGINX_DEFAULT_BACKLOG
        state["nginx_version"] = procs.nginx_version(self.nginx)
        state["base_url"] = f"http://127.0.0.1:{port}/"
        state["started_utc"] = datetime.now(UTC).isoformat(timespec="milliseconds")
        if v["upstream_enabled"]:
            pid = procs.start_upstream(self.state_dir, v, ns)
            self._record(state, "upstream", pid)
        pid = procs.start_nginx(self.nginx, self.state_dir, ns)
        self._record(state, "nginx", pid)
        procs.wait_until_answers(port, ns, v["upstream_enabled"], START_TIMEOUT_S,
                                 self.state_dir)
        state["accept_queue_max"] = procs.accept_queue_max(port, ns)
        state["nginx_workers"] = procs.child_count(state["pids"]["nginx"], "nginx: worker")
        if v["upstream_enabled"]:
            self._describe_upstream(state, v, ns)
        self._save(state)

    def _describe_upstream(self, state: dict, v: dict, ns: str | None) -> None:
        """The upstream's backlog, accept-queue limit, processes and measured ceiling."""
        master = state["pids"]["upstream"]
        state["upstream_backlog"] = v["upstream_backlog"]
        state["upstream_accept_queue_max"] = procs.accept_queue_max(v["upstream_port"], ns)
        state["upstream_processes"] = procs.child_count(master)
        if v["upstream_ceiling_s"]:
            state["upstream_ceiling"] = upstream_ceiling.measure(
                v["upstream_port"], procs.netns_prefix(ns), [master], v["upstream_delay_ms"],
                v["upstream_ceiling_s"], state["upstream_processes"])

    def _record(self, state: dict, name: str, pid: int) -> None:
        state["pids"][name] = pid
        state["create_times"][name] = procs.create_time(pid)
        self._save(state)

    def _save(self, state: dict) -> None:
        procs.write_json(str(self.state_path), state)

    def check_config(self, profile: str = "default", port: int = 8080,
                     variables: dict | None = None) -> str:
        """Render ``profile`` into ``STATE_DIR/check/`` and run ``nginx -t`` on it.

        Nothing is started and a running testbed is left alone. Returns nginx's report; raises
        PerfkitError with it when nginx rejects the config.
        """
        check_dir = os.path.join(self.state_dir, "check")
        v = resolve_variables(profile, variables, port, check_dir)
        procs.prepare_state_dir(check_dir)
        text = render_config(v, port, check_dir, profile_name=profile)
        procs.write_file(os.path.join(check_dir, "conf", "nginx.conf"), text.encode())
        try:
            return procs.nginx_test(self.nginx, check_dir)
        finally:
            procs.remove_path(check_dir)
            if v["proxy_cache"] == "ram":
                procs.remove_path(str(v["cache_path"]), only_under="/dev/shm/perfkit-cache-")

    # -- status / down --------------------------------------------------------------------
    def _read_state(self) -> dict | None:
        return procs.read_json(str(self.state_path))

    def status(self) -> TestbedInfo | None:
        """The running testbed, or None when nothing runs (or the state file is stale)."""
        state = self._read_state()
        if not state or "nginx" not in state.get("pids", {}):
            return None
        for name, pid in state["pids"].items():
            if not procs.is_ours(pid, state["create_times"].get(name), self._markers(name)):
                return None
        try:
            config_text = Path(state["config_path"]).read_text()
        except OSError:
            return None
        return TestbedInfo.from_dict(state | {"config_text": config_text})

    def _markers(self, name: str) -> list[str]:
        if name == "nginx":
            return ["nginx", self.state_dir]
        return [os.path.join("perfkit", "run", "upstream.py"), self.state_dir]

    def down(self) -> list[int]:
        """Stop what ``up`` started (only that); return the pids stopped. Idempotent."""
        if not self.state_path.exists():
            return []
        with procs.locked(self.state_dir):
            return self._down()

    def _down(self) -> list[int]:
        state = self._read_state()
        if state is None:
            return []
        stopped = []
        for name in ("nginx", "upstream"):
            pid = state.get("pids", {}).get(name)
            if pid and procs.is_ours(pid, state["create_times"].get(name), self._markers(name)):
                procs.stop_process_tree(pid, nginx=name == "nginx")
                stopped.append(pid)
        if state.get("netns"):
            procs.netns_delete(state["netns"])
        if state.get("ram_cache"):
            procs.remove_path(state["ram_cache"], only_under="/dev/shm/perfkit-cache-")
        procs.remove_path(str(self.state_path))
        return stopped

    # -- during runs ----------------------------------------------------------------------
    def wrap_command(self, argv: Sequence[str]) -> list[str]:
        """The load generator's argv: inside the namespace when the testbed runs in one."""
        info = self.status()
        if info is not None and info.netns:
            return procs.netns_prefix(info.netns) + list(argv)
        return list(argv)

    def server_pids(self) -> list[int]:
        """The nginx master, its current workers and helpers, and the upstream (for CPU
        sampling); empty when nothing runs."""
        info = self.status()
        return [] if info is None else procs.tree_pids(list(info.pids.values()))

    @contextmanager
    def reload_disturbance(self, interval_s: float = 2.0) -> Iterator[ReloadDisturbance]:
        """Reload nginx (SIGHUP to the master, as ``nginx -s reload`` does) every
        ``interval_s`` seconds during the block, the first one ``interval_s`` after entry.

        Yields a :class:`ReloadDisturbance`; afterwards ``self.reload_count`` holds its count.
        """
        if interval_s <= 0:
            raise PerfkitError(f"reload interval: expected > 0 s, found {interval_s}")
        info = self.status()
        if info is None:
            raise PerfkitError("reload disturbance: the testbed is not running "
                               f"(no live state in {self.state_dir})")
        record = ReloadDisturbance(interval_s=interval_s)
        stop = threading.Event()
        master = info.pids["nginx"]
        created = info.create_times.get("nginx")

        def loop() -> None:
            start = time.monotonic()
            k = 1
            while not stop.wait(max(0.0, start + k * interval_s - time.monotonic())):
                k += 1
                if not procs.is_ours(master, created, self._markers("nginx")):
                    record.errors.append(f"nginx master {master} is gone")
                    return
                try:
                    os.kill(master, signal.SIGHUP)
                except OSError as exc:
                    record.errors.append(str(exc))
                    return
                record.count += 1
                record.sent_at_s.append(round(time.monotonic() - start, 3))

        thread = threading.Thread(target=loop, name="perfkit-reload", daemon=True)
        thread.start()
        try:
            yield record
        finally:
            stop.set()
            thread.join()
            self.reload_count = record.count

