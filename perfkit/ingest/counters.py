"""What the server, its upstream and the kernel counted during a run: pure readers of the raw
snapshots.

``perfkit run`` (:mod:`perfkit.run.counters`) snapshots the counters just before the load
generator starts and just after it exits, keeps the raw text in the run directory
(``counters/before/``, ``counters/after/``) and records the deltas in the manifest
(``counters``). This module turns that raw text into numbers, and the two snapshots into the
record columns (:data:`COLUMNS`); it does no I/O but for :func:`deltas_from_dir`.

Sources:

- nginx's ``stub_status`` page (``accepts handled requests``): ``server_connections_accepted``,
  ``server_connections_handled``, ``server_requests``. The page counts its own request: the
  snapshot taken after the run adds one connection and one request, which
  :func:`stub_status_deltas` subtracts (:data:`STUB_STATUS_SELF`);
- ``/proc/net/netstat`` (``TcpExt``: ``ListenOverflows``, ``ListenDrops``, ``TCPSynRetrans``,
  which counts SYN and SYN-ACK retransmissions) and ``/proc/net/snmp`` (``Tcp:
  RetransSegs``, ``ActiveOpens``, ``PassiveOpens``): ``tcp_listen_overflows``,
  ``tcp_listen_drops``, ``tcp_syn_retransmits``, ``tcp_retransmits``, ``tcp_active_opens``
  (connections opened: the generator's and nginx's to its upstream) and ``tcp_passive_opens``
  (connections accepted: nginx's and the upstream's). They are per network namespace: the
  manifest says which one was read (its ``scope``);
- the error-log lines written during the run (``server_error_log_lines``, the lines kept as
  ``server-error.log``) and the access log's ``$upstream_cache_status`` field
  (``server_cache_hits``, ``server_cache_misses``, ``server_cache_expired``: :func:`cache_counts`);
- the testbed upstream's own status page (:func:`parse_upstream_status`):
  ``upstream_connections_accepted``, ``upstream_requests``;
- ``ss -Hltnm`` of the listening sockets, sampled during the run (:func:`parse_ss_listeners`):
  each socket's backlog, its longest accept queue sampled and its own drops
  (``server_listen_*``, ``server_accept_queue_peak``, ``upstream_*``).

A counter that was not recorded is missing (None), never 0.
"""

from __future__ import annotations

import os
import typing
from collections.abc import Mapping
from pathlib import Path

from perfkit.consistency import counter_value
from perfkit.counters import FIELDS
from perfkit.errors import ParseError

#: the recorded columns, in record order (a contract: :data:`perfkit.counters.SERVER_COLUMNS`
#: without the derived ones)
COLUMNS = FIELDS
STUB_STATUS_COLUMNS = ("server_connections_accepted", "server_connections_handled",
                       "server_requests")
KERNEL_COLUMNS = ("tcp_listen_overflows", "tcp_listen_drops", "tcp_syn_retransmits",
                  "tcp_retransmits", "tcp_active_opens", "tcp_passive_opens")
LOG_COLUMNS = ("server_error_log_lines",)
CACHE_COLUMNS = ("server_cache_hits", "server_cache_misses", "server_cache_expired")
UPSTREAM_COLUMNS = ("upstream_connections_accepted", "upstream_requests",
                    "upstream_keepalive_pool")
#: the columns of each listening socket: (nginx's, the upstream's) per quantity
SOCKET_COLUMNS = ("server_listen_backlog", "server_accept_queue_peak", "server_listen_drops",
                  "upstream_listen_backlog", "upstream_accept_queue_peak",
                  "upstream_listen_drops")
#: the listening sockets' names: their columns' prefix (``server``: nginx's)
LISTENERS = ("server", "upstream")

#: kernel column -> (file, section, field) it is read from
KERNEL_FIELDS = {
    "tcp_listen_overflows": ("netstat", "TcpExt", "ListenOverflows"),
    "tcp_listen_drops": ("netstat", "TcpExt", "ListenDrops"),
    "tcp_syn_retransmits": ("netstat", "TcpExt", "TCPSynRetrans"),
    "tcp_retransmits": ("snmp", "Tcp", "RetransSegs"),
    "tcp_active_opens": ("snmp", "Tcp", "ActiveOpens"),
    "tcp_passive_opens": ("snmp", "Tcp", "PassiveOpens"),
}
#: (section, field) of /proc/net/snmp that the kernel prints signed (MaxConn: -1, no limit)
SIGNED_FIELDS = frozenset({("Tcp", "MaxConn")})
#: stub_status field -> column
STUB_STATUS_FIELDS = {"accepts": "server_connections_accepted",
                      "handled": "server_connections_handled",
                      "requests": "server_requests"}
#: what the after-snapshot's own fetch of stub_status adds to each of its counters
STUB_STATUS_SELF = 1
#: $upstream_cache_status value -> column (the other values, BYPASS, STALE, UPDATING,
#: REVALIDATED, are counted in the manifest but have no column)
CACHE_FIELDS = {"HIT": "server_cache_hits", "MISS": "server_cache_misses",
                "EXPIRED": "server_cache_expired"}
CACHE_STATUSES = ("HIT", "MISS", "EXPIRED", "BYPASS", "STALE", "UPDATING", "REVALIDATED")
#: the raw snapshot files of a run directory
COUNTERS_DIR = "counters"
ERROR_LOG_NAME = "server-error.log"
RAW_FILES = {"netstat": "netstat.txt", "snmp": "snmp.txt", "stub_status": "stub_status.txt",
             "upstream_status": "upstream_status.txt", "listeners": "ss_listeners.txt"}


def parse_proc_table(text: str, path: str = "<string>") -> dict[str, dict[str, int]]:
    """``/proc/net/netstat`` or ``/proc/net/snmp``: section -> field -> value.

    Each section is two lines, ``Name: field field ...`` then ``Name: value value ...``;
    a pair whose counts differ, or a value that is not an integer, is a ParseError at its line.
    """
    lines = text.splitlines()
    out: dict[str, dict[str, int]] = {}
    i = 0
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        head, _, names = lines[i].partition(":")
        if i + 1 >= len(lines) or not lines[i + 1].startswith(head + ":"):
            raise ParseError(path, i + 2, f"a line of values for '{head}:'",
                             lines[i + 1] if i + 1 < len(lines) else "end of file")
        values = lines[i + 1].partition(":")[2].split()
        fields = names.split()
        if len(values) != len(fields):
            raise ParseError(path, i + 2, f"{len(fields)} values for '{head}:'",
                             f"{len(values)} values")
        numbers = {f: counter_value(v, signed=(head, f) in SIGNED_FIELDS)
                   for f, v in zip(fields, values, strict=True)}
        wrong = next((f for f, n in numbers.items() if n is None), None)
        if wrong is not None:  # a Unicode digit int() would read, a negative count
            raise ParseError(path, i + 2, f"a count in ASCII digits (>= 0) for '{head}: {wrong}'",
                             lines[i + 1])
        out[head] = typing.cast(dict[str, int], numbers)
        i += 2
    return out


def parse_stub_status(text: str, path: str = "<string>") -> dict[str, int]:
    """nginx's stub_status page: ``active``, ``accepts``, ``handled``, ``requests``,
    ``reading``, ``writing``, ``waiting``."""
    lines = text.splitlines()
    out: dict[str, int] = {}

    def counts(line: int, names: tuple[str, ...], texts: list[str]) -> None:
        for name, value in zip(names, texts, strict=True):
            number = counter_value(value)
            if number is None:  # a Unicode digit int() would read, a negative count
                raise ParseError(path, line, f"a count in ASCII digits (>= 0) for {name}",
                                 lines[line - 1])
            out[name] = number

    try:
        if not lines[0].startswith("Active connections:"):
            raise ParseError(path, 1, "'Active connections: N'", lines[0])
        counts(1, ("active",), [lines[0].split(":", 1)[1].strip(" ")])
        if lines[1].split() != ["server", "accepts", "handled", "requests"]:
            raise ParseError(path, 2, "'server accepts handled requests'", lines[1])
        numbers = lines[2].split()
        if len(numbers) != 3:
            raise ParseError(path, 3, "three numbers (accepts handled requests)", lines[2])
        counts(3, ("accepts", "handled", "requests"), numbers)
        words = lines[3].split()
        if words[0::2] != ["Reading:", "Writing:", "Waiting:"] or len(words) != 6:
            raise ParseError(path, 4, "'Reading: N Writing: N Waiting: N'", lines[3])
        counts(4, ("reading", "writing", "waiting"), words[1::2])
    except IndexError:
        raise ParseError(path, len(lines) + 1, "the four lines of nginx's stub_status",
                         "end of file") from None
    return out


def stub_status_deltas(before: Mapping[str, int], after: Mapping[str, int]
                       ) -> dict[str, int]:
    """The stub_status columns over the window: after - before - :data:`STUB_STATUS_SELF`
    (the after snapshot's own connection and request; the before snapshot's are in both)."""
    return {col: after[f] - before[f] - STUB_STATUS_SELF for f, col in STUB_STATUS_FIELDS.items()}


def kernel_deltas(before: Mapping[str, Mapping[str, Mapping[str, int]]],
                  after: Mapping[str, Mapping[str, Mapping[str, int]]]) -> dict[str, int | None]:
    """The kernel columns: after - before of each field (``{"netstat": parsed, "snmp":
    parsed}``); None for a field either snapshot lacks."""
    out: dict[str, int | None] = {}
    for col, (file, section, field) in KERNEL_FIELDS.items():
        try:
            out[col] = after[file][section][field] - before[file][section][field]
        except KeyError:
            out[col] = None
    return out


def cache_counts(log: bytes) -> dict[str, int]:
    """Requests per ``$upstream_cache_status`` in access-log lines that end with it (the
    testbed's ``perfkit_cache`` log format: the combined format, then the status); lines
    without a status (``-``: not a cached location) are not counted."""
    return {s: log.count(b" " + s.encode() + b"\n") for s in CACHE_STATUSES}


def cache_columns(counts: Mapping[str, int]) -> dict[str, int]:
    return {col: int(counts.get(status, 0)) for status, col in CACHE_FIELDS.items()}


#: the first line of the upstream's status page (perfkit.run.upstream.STATUS_HEAD)
UPSTREAM_STATUS_HEAD = "perfkit upstream status"
#: upstream status field -> column
UPSTREAM_FIELDS = {"accepted": "upstream_connections_accepted",
                   "requests": "upstream_requests"}


def parse_upstream_status(text: str, path: str = "<string>") -> dict[str, int]:
    """The testbed upstream's status page (:func:`perfkit.run.upstream.status_text`):
    :data:`UPSTREAM_STATUS_HEAD`, then ``name: integer`` lines; it must hold ``accepted``
    and ``requests``."""
    lines = text.splitlines()
    if not lines or lines[0] != UPSTREAM_STATUS_HEAD:
        raise ParseError(path, 1, repr(UPSTREAM_STATUS_HEAD), lines[0] if lines else "nothing")
    out: dict[str, int] = {}
    for number, line in enumerate(lines[1:], start=2):
        name, sep, value = line.partition(":")
        count = counter_value(value.strip(" ")) if sep else None
        if count is None:  # ASCII digits: "\u0663".isdigit() is True and int() reads it
            raise ParseError(path, number, "'name: integer'", line)
        out[name.strip()] = count
    for name in UPSTREAM_FIELDS:
        if name not in out:
            raise ParseError(path, len(lines) + 1, f"a line '{name}: N'", "end of file")
    return out


def upstream_deltas(before: Mapping[str, int], after: Mapping[str, int]) -> dict[str, int]:
    """The upstream's columns over the window: after - before (fetching the page counts
    nothing: it is served on a socket of its own)."""
    return {col: after[f] - before[f] for f, col in UPSTREAM_FIELDS.items()}


def parse_ss_listeners(text: str, path: str = "<string>") -> dict[str, dict[str, int]]:
    """``ss -Hltnm`` output: local address -> ``{"queue": Recv-Q, "backlog": Send-Q,
    "drops": skmem d}`` of each listening socket (``drops`` absent when ss printed no
    ``skmem``). On a listening socket Recv-Q is its accept queue now and Send-Q the queue's
    limit (the backlog, capped at ``net.core.somaxconn``); skmem's ``d`` counts what the
    socket dropped (a full accept queue among its causes)."""
    out: dict[str, dict[str, int]] = {}
    last: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        words = line.split()
        if not words:
            continue
        if words[0].startswith("skmem:"):
            if last is None:
                raise ParseError(path, number, "a socket line before its skmem", line)
            for item in words[0].removeprefix("skmem:(").rstrip(")").split(","):
                drops = counter_value(item[1:]) if item[:1] == "d" else None
                if drops is not None:
                    out[last]["drops"] = drops
            continue
        queue, backlog = ((counter_value(words[1]), counter_value(words[2])) if len(words) >= 4
                          else (None, None))
        if queue is None or backlog is None:  # ASCII digits only, as every counter
            raise ParseError(path, number, "State Recv-Q Send-Q Local-Address ...", line)
        last = words[3]
        out[last] = {"queue": queue, "backlog": backlog}
    return out


def read_raw(run_dir: str | os.PathLike, when: str) -> dict[str, str]:
    """The raw snapshot texts of ``when`` (``before`` or ``after``) kept in a run directory:
    name -> text, for the files present."""
    base = Path(run_dir) / COUNTERS_DIR / when
    out = {}
    for name, file in RAW_FILES.items():
        p = base / file
        if p.is_file():
            out[name] = p.read_text(encoding="utf-8")
    return out


def deltas_from_dir(run_dir: str | os.PathLike) -> dict[str, int | None]:
    """The stub_status and kernel columns recomputed from the raw snapshots of a run directory
    (what the manifest records; a check, and the way to re-derive them). Missing where a
    snapshot is missing."""
    raw = {w: read_raw(run_dir, w) for w in ("before", "after")}
    out: dict[str, int | None] = dict.fromkeys((*STUB_STATUS_COLUMNS, *KERNEL_COLUMNS))
    if all("stub_status" in raw[w] for w in raw):
        b, a = (parse_stub_status(raw[w]["stub_status"], w) for w in ("before", "after"))
        out.update(stub_status_deltas(b, a))
    parsed: dict[str, dict[str, dict[str, dict[str, int]]]] = {
        w: {f: parse_proc_table(raw[w][f], f"{w}/{RAW_FILES[f]}")
            for f in ("netstat", "snmp") if f in raw[w]} for w in raw}
    if all(parsed[w] for w in parsed):
        out.update(kernel_deltas(parsed["before"], parsed["after"]))
    if all("upstream_status" in raw[w] for w in raw):
        b, a = (parse_upstream_status(raw[w]["upstream_status"], f"{w}/upstream_status.txt")
                for w in ("before", "after"))
        out.update(upstream_deltas(b, a))
    return out


def listener_values(addresses: Mapping[str, str], before: Mapping[str, Mapping[str, int]],
                    after: Mapping[str, Mapping[str, int]], peaks: Mapping[str, int | None]
                    ) -> dict[str, int | None]:
    """The socket columns of each listener named in ``addresses`` (``server``: nginx's,
    ``upstream`` -> its local address as ss prints it) from :func:`parse_ss_listeners` of the
    snapshots before and after the run and the peak accept queue sampled in between
    (``peaks``, by name): the backlog (after's, else before's), the peak, and the drops
    (after - before).
    None where a socket was not seen."""
    out: dict[str, int | None] = {}
    for name, address in addresses.items():
        prefix = name
        b, a = before.get(address), after.get(address)
        seen = a or b
        out[f"{prefix}_listen_backlog"] = None if seen is None else seen["backlog"]
        out[f"{prefix}_accept_queue_peak"] = peaks.get(name)
        out[f"{prefix}_listen_drops"] = (a["drops"] - b["drops"] if a and b and "drops" in a
                                         and "drops" in b else None)
    return out
