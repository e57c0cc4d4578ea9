"""Every listening socket's queue over a run: ``ss -ltnm`` before, during and after.

For each listening socket of the run (nginx's, ``server``; the testbed upstream's,
``upstream``) :class:`ListenerSampler` runs ``ss -Hltnm`` (in the testbed's network namespace,
``ss -N``, when it has one) just before the load generator starts, every
:data:`SAMPLE_INTERVAL_S` while it runs (on a thread of its own) and just after it exits. On a
listening socket ``ss`` prints:

- Send-Q: the accept queue's limit (the listen backlog, capped at ``net.core.somaxconn``);
- Recv-Q: the connections in the accept queue now (waiting for the server's ``accept``); the
  queue is full above its limit (``sk_acceptq_is_full``: more than Send-Q), and then the
  kernel drops a new connection's handshake;
- ``skmem``'s ``d``: what the socket dropped (``tcp_listendrop``: a full accept queue among
  its causes), counted per socket.

So an overflow is tied to the socket whose queue was full: its drops over the run and how
often its queue was sampled full; the kernel's ``ListenOverflows`` counts the whole namespace
(:mod:`perfkit.run.counters` says which sockets could have filled). The peak queue is the
longest sampled: a lower bound of the true peak between samples. The raw ``ss`` texts are
kept (``counters/before/ss_listeners.txt``, ``counters/after/``) with every sample in
``counters/accept_queues.csv``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from perfkit.errors import ParseError
from perfkit.ingest import counters as parse
from perfkit.run.testbed_procs import ss_listeners

#: seconds between two samples during the run
SAMPLE_INTERVAL_S = 0.2
#: the samples' file in the run directory
SAMPLES_FILE = "accept_queues.csv"
#: a listener's name -> what it is, in words
WHAT = {"server": "nginx", "upstream": "the upstream app"}


class ListenerSampler:
    """``ss`` of ``ports`` (name -> TCP port on 127.0.0.1) in namespace ``ns``: :meth:`start`
    just before the generator, :meth:`stop` just after; :meth:`section` the manifest's."""

    def __init__(self, ports: Mapping[str, int], ns: str | None,
                 interval_s: float = SAMPLE_INTERVAL_S):
        self.ports = dict(ports)
        self.ns = ns
        self.interval_s = interval_s
        self.addresses = {name: f"127.0.0.1:{port}" for name, port in self.ports.items()}
        self.raw: dict[str, str | None] = {}
        self.samples: list[tuple[float, str, int]] = []
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._t0 = 0.0

    def _read(self, t_s: float) -> str | None:
        text = ss_listeners(list(self.ports.values()), self.ns)
        if text is None:
            return None
        try:
            found = parse.parse_ss_listeners(text, "ss")
        except ParseError as exc:
            self.errors.append(str(exc))
            return text
        for name, address in self.addresses.items():
            if address in found:
                self.samples.append((round(t_s, 3), name, found[address]["queue"]))
        return text

    def start(self) -> str | None:
        """The before snapshot (its raw text, None without ``ss``); sampling starts."""
        self._t0 = time.monotonic()
        self.raw["before"] = self._read(0.0)
        if self.raw["before"] is not None:
            self._thread = threading.Thread(target=self._loop, name="perfkit-ss", daemon=True)
            self._thread.start()
        return self.raw["before"]

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._read(time.monotonic() - self._t0)

    def stop(self) -> str | None:
        """Sampling stops; the after snapshot (its raw text)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.raw["after"] = self._read(time.monotonic() - self._t0)
        return self.raw["after"]

    def csv_text(self) -> str:
        rows = [f"{t:g},{name},{queue}" for t, name, queue in self.samples]
        return "\n".join(["t_s,listener,accept_queue", *rows]) + "\n"

    def write(self, counters_dir: Path) -> None:
        """The raw snapshots and the samples into the run's ``counters/``."""
        for when, text in self.raw.items():
            if text is not None:
                (counters_dir / when).mkdir(parents=True, exist_ok=True)
                (counters_dir / when / parse.RAW_FILES["listeners"]).write_text(
                    text, encoding="utf-8")
        (counters_dir / SAMPLES_FILE).write_text(self.csv_text(), encoding="utf-8")

    def values(self) -> dict[str, int | None]:
        """The socket columns (:data:`perfkit.ingest.counters.SOCKET_COLUMNS`) of the
        listeners sampled; {} without both snapshots."""
        before, after = self._parsed("before"), self._parsed("after")
        if before is None or after is None:
            return {}
        peaks: dict[str, int | None] = {}
        for _, name, queue in self.samples:
            peaks[name] = max(peaks.get(name) or 0, queue)
        return parse.listener_values(self.addresses, before, after, peaks)

    def _parsed(self, when: str) -> dict[str, dict[str, int]] | None:
        text = self.raw.get(when)
        if text is None:
            return None
        try:
            return parse.parse_ss_listeners(text, f"{when}/{parse.RAW_FILES['listeners']}")
        except ParseError:
            return None

    def section(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """The manifest's ``counters.sources.listeners``: how it was sampled and, per socket,
        its address, backlog, peak queue, drops and the samples that found it full."""
        sockets = {}
        for name, address in self.addresses.items():
            backlog = values.get(f"{name}_listen_backlog")
            queues = [q for _, n, q in self.samples if n == name]
            sockets[name] = {
                "what": WHAT.get(name, name), "address": address, "backlog": backlog,
                "accept_queue_peak": values.get(f"{name}_accept_queue_peak"),
                "listen_drops": values.get(f"{name}_listen_drops"),
                "samples": len(queues),
                "samples_full": (None if backlog is None
                                 else sum(1 for q in queues if q > backlog))}
        ns = f"-N {self.ns} " if self.ns else ""
        return {"command": f"ss {ns}-Hltnm", "interval_s": self.interval_s,
                "files": [f"{parse.COUNTERS_DIR}/{w}/{parse.RAW_FILES['listeners']}"
                          for w in ("before", "after")] + [
                              f"{parse.COUNTERS_DIR}/{SAMPLES_FILE}"],
                "note": "Send-Q: the accept queue's limit (backlog); Recv-Q: the queue then "
                        "(peak: the longest sampled, a lower bound); skmem d: the socket's "
                        "own drops (a full accept queue among their causes)",
                "errors": list(dict.fromkeys(self.errors)), "sockets": sockets}


def attribution(values: Mapping[str, Any], scope: str | None,
                addresses: Mapping[str, str], system: bool) -> dict[str, Any]:
    """Where the run's listen overflows happened: the kernel's total (``tcp_listen_overflows``,
    of the namespace: ``scope``) and each socket's own drops, or, where those are unknown,
    the sockets that could have filled (``system``: the host's namespace, where any other
    socket could have too)."""
    total = values.get("tcp_listen_overflows")
    by_socket = {name: values.get(f"{name}_listen_drops") for name in addresses}
    named = [f"{WHAT.get(n, n)} {a}" for n, a in addresses.items()]
    known = bool(by_socket) and all(v is not None for v in by_socket.values())
    if known:
        how = "by socket: each listening socket's own drops (ss skmem d)"
    elif system:
        how = ("system-wide: the kernel's count covers every socket of the host; it could "
               "have been " + " or ".join(named or ["any listening socket"])
               + " (or any other socket on this host)")
    else:
        how = ("the namespace's total: it could have been " + " or ".join(named or ["?"]))
    return {"tcp_listen_overflows": total, "scope": scope, "by_socket": by_socket,
            "attributed": how}
