"""What the server, its upstream, their sockets and the kernel counted over a run: snapshots
before and after, kept raw.

:class:`Counters` snapshots, just before the load generator starts and just after it exits
(the **measured window**; wrk2's calibration, about its first 10 s, is inside it although its
latency histogram leaves it out, and so is Locust's ramp-up):

- nginx's ``stub_status`` (the testbed serves it on a unix socket the load never reaches; for
  another server, the URL given with ``--stub-status`` or ``target.stub_status``);
- ``/proc/net/netstat`` and ``/proc/net/snmp`` of the network namespace the server listens in
  (the testbed's: ``/proc/<nginx master>/net/``); their **scope** is recorded: ``netns NAME``
  when the testbed runs in a namespace of its own (profiles ``netns``, ``isolated``: the
  generator runs in it too, so the counters are the run's traffic alone), else
  :data:`SCOPE_SYSTEM`;
- the sizes of the testbed's error log and access log, so that the lines added during the
  window are read afterwards: the error-log lines are kept as ``server-error.log``, the
  access-log lines of a cache profile are counted by ``$upstream_cache_status`` (not kept:
  they can be tens of MB). A buffered access log is not counted
  (:func:`perfkit.run.profiles.cache_log_counted` says why);
- the testbed upstream's status page (its accepted connections and requests, on a unix
  socket of its own: fetching it counts nothing);
- the listening sockets, nginx's (``server``) and the upstream's, with ``ss -ltnm`` before,
  every 0.2 s during and after the run (:mod:`perfkit.run.listeners`): each one's backlog,
  peak accept queue and own drops, so that the section's ``overflows`` ties the kernel's
  listen overflows to the socket that dropped them, or says they are system-wide and names
  the sockets that could have filled.

The raw texts land in ``counters/before/`` and ``counters/after/`` (``netstat.txt``,
``snmp.txt``, ``stub_status.txt``, ``upstream_status.txt``, ``ss_listeners.txt``, byte for
byte; the queue samples in ``counters/accept_queues.csv``); :meth:`Counters.after` returns the
manifest's ``counters`` section: the window, each source with its scope or why it is missing,
and the values of :data:`perfkit.ingest.counters.COLUMNS` (None where not recorded, with the
reason in ``missing``). Nothing here stops a run: a counter that cannot be read is missing.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from perfkit.errors import ParseError
from perfkit.ingest import counters as parse
from perfkit.run.counter_sources import (
    SCOPE_SYSTEM,
    Sources,
    fetch_stub_status,
    scope_netns,
    sources_of,
)
from perfkit.run.listeners import ListenerSampler, attribution
from perfkit.run.profiles import STUB_STATUS_PATH
from perfkit.run.spec import utc_now

__all__ = ["SCOPE_SYSTEM", "WINDOW", "Counters", "fetch_stub_status", "scope_netns"]

#: the window, in words (the manifest's ``counters.window``)
WINDOW = "from just before the load generator started to just after it exited"
WINDOW_NOTES = {
    "wrk2": "includes wrk2's calibration (about its first 10 s), which its latency histogram "
            "leaves out",
    "locust": "includes Locust's ramp-up, which --reset-stats leaves out of its statistics",
}
#: bytes of a log read at a time
_CHUNK = 1 << 24


def _size(path: str | None) -> int | None:
    if path is None:
        return None
    try:
        return os.stat(path).st_size
    except OSError:
        return None


def _why(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


class Counters:
    """The counters of one run: :meth:`before` just before the generator starts, :meth:`after`
    just after it exits (see the module docstring).

    Parameters
    ----------
    server : ServerContext
        The server under load (the testbed, or a bare URL).
    url : str
        The run's target.
    tool : str
        ``wrk``, ``wrk2`` or ``locust`` (for the window's note).
    stub_status_url : str, optional
        Where another server's stub_status is (a testbed's own is found by itself).
    disabled : str, optional
        Why nothing is recorded (concurrent clients share the server): every counter missing.
    """

    def __init__(self, server: Any, url: str, tool: str, stub_status_url: str | None = None,
                 disabled: str | None = None):
        self.tool = tool
        self.disabled = disabled
        self.src = Sources() if disabled else sources_of(server, url, stub_status_url)
        self._before: dict[str, Any] = {}
        self._missing: dict[str, str] = {}
        self.sampler = (ListenerSampler(self.src.listeners, self.src.netns)
                        if self.src.listeners else None)

    # -- snapshots ------------------------------------------------------------------------
    def _snapshot(self, run_dir: Path, when: str) -> dict[str, Any]:
        """Raw texts into ``counters/WHEN/``; returns what was read (texts, sizes, times)."""
        out: dict[str, Any] = {"utc": utc_now(), "monotonic_s": time.monotonic()}
        if self.disabled:
            return out
        target = Path(run_dir) / parse.COUNTERS_DIR / when
        target.mkdir(parents=True, exist_ok=True)
        src = self.src
        if src.stub_status:
            try:
                out["stub_status"] = fetch_stub_status(src.stub_status)
            except (OSError, UnicodeDecodeError) as exc:
                self._missing.setdefault("stub_status", f"{when}: {_why(exc)}")
        if src.upstream_status:
            try:
                out["upstream_status"] = fetch_stub_status(src.upstream_status)
            except (OSError, UnicodeDecodeError) as exc:
                self._missing.setdefault("upstream", f"{when}: {_why(exc)}")
        if src.proc_dir and not src.kernel_missing:
            for name in ("netstat", "snmp"):
                try:
                    out[name] = Path(src.proc_dir, name).read_text(encoding="ascii")
                except (OSError, UnicodeDecodeError) as exc:
                    self._missing.setdefault("kernel", f"{when}: {_why(exc)}")
        for name in ("stub_status", "upstream_status", "netstat", "snmp"):
            if name in out:
                (target / parse.RAW_FILES[name]).write_text(out[name], encoding="utf-8")
        out["error_log_bytes"] = _size(src.error_log)
        out["access_log_bytes"] = _size(src.access_log)
        return out

    def before(self, run_dir: str | os.PathLike) -> None:
        """Snapshot just before the load generator starts; the sockets' sampling starts."""
        self._before = self._snapshot(Path(run_dir), "before")
        if self.sampler is not None and not self.disabled:
            self.sampler.start()

    def after(self, run_dir: str | os.PathLike) -> dict[str, Any]:
        """Snapshot just after the generator exits; the manifest's ``counters`` section."""
        run_dir = Path(run_dir)
        if self.sampler is not None and not self.disabled:
            self.sampler.stop()
        b, a = self._before, self._snapshot(run_dir, "after")
        values: dict[str, Any] = dict.fromkeys(parse.COLUMNS)
        sources: dict[str, Any] = {}
        if self.disabled:
            self._missing = dict.fromkeys(_GROUPS, self.disabled)
        else:
            sources["stub_status"] = self._stub(b, a, values)
            sources["kernel"] = self._kernel(b, a, values)
            sources["error_log"] = self._error_log(b, a, run_dir, values)
            sources["cache"] = self._cache(b, a, values)
            sources["upstream"] = self._upstream(b, a, values)
            sources["listeners"] = self._listeners(run_dir, values)
        missing = {}
        no_upstream = "upstream" not in self.src.listeners
        for group, cols in _GROUPS.items():
            for col in cols:
                if values[col] is None:
                    # an upstream socket's columns are missing for the upstream's reason
                    key = "upstream" if no_upstream and col.startswith("upstream_") else group
                    missing[col] = self._missing.get(key, "not recorded")
        window_s = a["monotonic_s"] - b["monotonic_s"] if b else None
        section = {"window": WINDOW, "window_note": WINDOW_NOTES.get(self.tool),
                   "before_utc": b.get("utc"), "after_utc": a["utc"],
                   "window_s": None if window_s is None else round(window_s, 3),
                   "sources": sources, "values": values, "missing": missing}
        if not self.disabled:
            section["overflows"] = attribution(values, self.src.scope, {
                n: f"127.0.0.1:{p}" for n, p in self.src.listeners.items()},
                self.src.scope == SCOPE_SYSTEM)
        return section

    # -- each source ----------------------------------------------------------------------
    def _upstream(self, b: dict, a: dict, values: dict) -> dict[str, Any]:
        src = self.src
        values["upstream_keepalive_pool"] = src.upstream_pool
        if not src.upstream_status:
            self._missing["upstream"] = src.upstream_missing or "no upstream status"
            return {"missing": self._missing["upstream"]}
        out = {"address": src.upstream_status,
               "files": [f"{parse.COUNTERS_DIR}/{w}/{parse.RAW_FILES['upstream_status']}"
                         for w in ("before", "after")],
               "note": "after - before: the page is served on a socket of its own and counts "
                       "nothing; upstream_keepalive_pool is nginx's keepalive N per worker "
                       "(0: none)"}
        if "upstream_status" in b and "upstream_status" in a:
            try:
                values.update(parse.upstream_deltas(
                    parse.parse_upstream_status(b["upstream_status"], "before/upstream"),
                    parse.parse_upstream_status(a["upstream_status"], "after/upstream")))
            except ParseError as exc:
                self._missing["upstream"] = str(exc)
        else:
            self._missing.setdefault("upstream", "a snapshot could not be read")
        return out

    def _listeners(self, run_dir: Path, values: dict) -> dict[str, Any]:
        if self.sampler is None:
            self._missing["listeners"] = "no listening socket on this host is known"
            return {"missing": self._missing["listeners"]}
        self.sampler.write(run_dir / parse.COUNTERS_DIR)
        found = self.sampler.values()
        if not found:
            self._missing["listeners"] = "ss is missing or failed"
        values.update(found)
        return self.sampler.section(values)

    def _stub(self, b: dict, a: dict, values: dict) -> dict[str, Any]:
        src = self.src
        if not src.stub_status:
            self._missing["stub_status"] = src.stub_missing or "no stub_status"
            return {"missing": self._missing["stub_status"]}
        out = {"address": src.stub_status, "path": STUB_STATUS_PATH,
               "files": [f"{parse.COUNTERS_DIR}/{w}/{parse.RAW_FILES['stub_status']}"
                         for w in ("before", "after")],
               "note": "after - before - 1 each: the after snapshot's own connection and "
                       "request (the before snapshot's is in both)"}
        if "stub_status" in b and "stub_status" in a:
            try:
                values.update(parse.stub_status_deltas(
                    parse.parse_stub_status(b["stub_status"], "before/stub_status.txt"),
                    parse.parse_stub_status(a["stub_status"], "after/stub_status.txt")))
            except ParseError as exc:
                self._missing["stub_status"] = str(exc)
        else:
            self._missing.setdefault("stub_status", "a snapshot could not be read")
        return out

    def _kernel(self, b: dict, a: dict, values: dict) -> dict[str, Any]:
        src = self.src
        if src.kernel_missing or not src.proc_dir:
            self._missing["kernel"] = src.kernel_missing or "not known"
            return {"missing": self._missing["kernel"]}
        out = {"scope": src.scope, "read_from": [f"{src.proc_dir}/netstat",
                                                 f"{src.proc_dir}/snmp"],
               "fields": {c: f"{f}: {sec} {name}"
                          for c, (f, sec, name) in parse.KERNEL_FIELDS.items()}}
        try:
            parsed = {w: {f: parse.parse_proc_table(s[f], f"{w}/{f}") for f in ("netstat", "snmp")}
                      for w, s in (("before", b), ("after", a))}
        except KeyError:
            self._missing.setdefault("kernel", "a snapshot could not be read")
            return out
        except ParseError as exc:
            self._missing["kernel"] = str(exc)
            return out
        values.update(parse.kernel_deltas(parsed["before"], parsed["after"]))
        return out

    def _error_log(self, b: dict, a: dict, run_dir: Path, values: dict) -> dict[str, Any]:
        src = self.src
        if src.error_log is None:
            self._missing["error_log"] = src.error_missing or "not known"
            return {"missing": self._missing["error_log"]}
        out = {"path": src.error_log, "file": parse.ERROR_LOG_NAME}
        start, end = b.get("error_log_bytes"), a.get("error_log_bytes")
        if start is None or end is None or end < start:
            self._missing["error_log"] = ("the error log could not be read, or it shrank "
                                          "during the run (rotated)")
            return out
        try:
            with open(src.error_log, "rb") as fh:
                fh.seek(start)
                added = fh.read(end - start)
        except OSError as exc:
            self._missing["error_log"] = _why(exc)
            return out
        (run_dir / parse.ERROR_LOG_NAME).write_bytes(added)
        values["server_error_log_lines"] = added.count(b"\n")
        return out

    def _cache(self, b: dict, a: dict, values: dict) -> dict[str, Any]:
        src = self.src
        if src.access_log is None:
            self._missing["cache"] = src.cache_missing or "not known"
            return {"missing": self._missing["cache"]}
        out: dict[str, Any] = {"path": src.access_log,
                               "counted": "access-log lines written during the window, by "
                                          "their last field ($upstream_cache_status)"}
        start, end = b.get("access_log_bytes"), a.get("access_log_bytes")
        if start is None or end is None or end < start:
            self._missing["cache"] = "the access log could not be read, or it shrank"
            return out
        try:
            counts = _count_statuses(src.access_log, start, end)
        except OSError as exc:
            self._missing["cache"] = _why(exc)
            return out
        out["statuses"] = counts
        values.update(parse.cache_columns(counts))
        return out


#: each source -> its columns (a missing column's reason is its source's)
_GROUPS = {"stub_status": parse.STUB_STATUS_COLUMNS, "kernel": parse.KERNEL_COLUMNS,
           "error_log": parse.LOG_COLUMNS, "cache": parse.CACHE_COLUMNS,
           "upstream": parse.UPSTREAM_COLUMNS, "listeners": parse.SOCKET_COLUMNS}


def _count_statuses(path: str, start: int, end: int) -> dict[str, int]:
    """:func:`perfkit.ingest.counters.cache_counts` over ``path``'s bytes [start, end), read
    in chunks cut at line ends."""
    totals = dict.fromkeys(parse.CACHE_STATUSES, 0)
    with open(path, "rb") as fh:
        fh.seek(start)
        left, carry = end - start, b""
        while left > 0:
            chunk = fh.read(min(_CHUNK, left))
            if not chunk:
                break
            left -= len(chunk)
            data = carry + chunk
            cut = data.rfind(b"\n") + 1
            data, carry = data[:cut], data[cut:]
            for status, n in parse.cache_counts(data).items():
                totals[status] += n
    return totals
