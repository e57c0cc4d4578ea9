"""What the server, its upstream, their listening sockets and the kernel counted over a run:
the :class:`ServerCounters` sub-record of a :class:`perfkit.model.Run` (``run.counters``).

``perfkit run`` (:mod:`perfkit.run.counters`) takes the snapshots and writes their deltas into
the manifest's ``counters`` section; :mod:`perfkit.ingest.counters` reads them back into this
record. In a run's record (frames, CSV, JSON) the counters are flat columns,
:data:`SERVER_COLUMNS` (a contract), present only when the run recorded counters. A counter
that was not recorded is missing (None), never 0.

Groups of fields:

- nginx's ``stub_status``: ``server_connections_accepted``, ``server_connections_handled``,
  ``server_requests``;
- the kernel, per network namespace (the manifest names its scope): ``tcp_listen_overflows``,
  ``tcp_listen_drops``, ``tcp_syn_retransmits``, ``tcp_retransmits``, ``tcp_active_opens``,
  ``tcp_passive_opens``;
- the testbed's logs: ``server_error_log_lines``, ``server_cache_hits``,
  ``server_cache_misses``, ``server_cache_expired``;
- the testbed's upstream app, from its own status page: ``upstream_connections_accepted``,
  ``upstream_requests``; and ``upstream_keepalive_pool``, the idle upstream connections nginx
  may keep (``keepalive N`` x its workers; 0 without upstream keepalive);
- each listening socket, nginx's (``server_*``) and the upstream's (``upstream_*``), from
  ``ss -ltnm`` sampled during the run: ``*_listen_backlog`` (the accept queue's limit, Send-Q),
  ``*_accept_queue_peak`` (the longest accept queue sampled, Recv-Q: a lower bound of the true
  peak between samples) and ``*_listen_drops`` (the socket's own drop count, ``skmem`` ``d``:
  the connection attempts it dropped, a full accept queue among them). These tie an overflow
  to the socket whose queue was full, where the kernel's ``tcp_listen_overflows`` counts every
  socket of the namespace.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any


@dataclasses.dataclass(frozen=True, slots=True)
class ServerCounters:
    """The counters of one run (see the module docstring); None: not recorded."""

    server_connections_accepted: int | None = None
    server_connections_handled: int | None = None
    server_requests: int | None = None
    tcp_listen_overflows: int | None = None
    tcp_listen_drops: int | None = None
    tcp_syn_retransmits: int | None = None
    tcp_retransmits: int | None = None
    tcp_active_opens: int | None = None
    tcp_passive_opens: int | None = None
    server_error_log_lines: int | None = None
    server_cache_hits: int | None = None
    server_cache_misses: int | None = None
    server_cache_expired: int | None = None
    upstream_connections_accepted: int | None = None
    upstream_requests: int | None = None
    upstream_keepalive_pool: int | None = None
    server_listen_backlog: int | None = None
    server_accept_queue_peak: int | None = None
    server_listen_drops: int | None = None
    upstream_listen_backlog: int | None = None
    upstream_accept_queue_peak: int | None = None
    upstream_listen_drops: int | None = None

    @property
    def server_connections_per_request(self) -> float | None:
        """Connections nginx accepted per request it counted (None when either was not
        recorded or no request was counted): 1 without client keepalive, near 0 with it."""
        return _ratio(self.server_connections_accepted, self.server_requests)

    @property
    def upstream_connections_per_request(self) -> float | None:
        """Connections the upstream accepted per request it read (its own status page): 1
        without upstream keepalive, near 0 when nginx's pool keeps them."""
        return _ratio(self.upstream_connections_accepted, self.upstream_requests)

    def pool_covers_load(self, connections: int | None) -> bool | None:
        """Whether nginx's idle upstream pool (``upstream_keepalive_pool``) can keep a
        connection for each of ``connections`` concurrent client requests (a closed-loop
        client has at most one in flight per connection): False when it cannot (then nginx
        closes the upstream connections beyond it after each answer), None when either is
        unknown or there is no pool."""
        pool = self.upstream_keepalive_pool
        if pool is None or not pool or connections is None:
            return None
        return pool >= connections

    def values(self) -> dict[str, int | None]:
        """The recorded fields, by name (no derived ones)."""
        return {name: getattr(self, name) for name in FIELDS}


def _ratio(part: int | None, whole: int | None) -> float | None:
    if part is None or whole is None or whole <= 0:
        return None
    return part / whole


#: nginx's listen backlog on Linux when ``listen`` sets none (NGX_LISTEN_BACKLOG; nginx docs,
#: ``listen``): the testbed records it in the runs' manifests, the analysis reads it from the
#: recorded nginx.conf
NGINX_DEFAULT_BACKLOG = 511

#: the recorded fields, in order
FIELDS = tuple(f.name for f in dataclasses.fields(ServerCounters))
#: nothing recorded: every run without counters shares it
NO_COUNTERS = ServerCounters()
#: the derived columns of a record (properties, or judged against the run's load)
DERIVED_COLUMNS = ("server_connections_per_request", "upstream_connections_per_request",
                   "upstream_pool_covers_load")
#: the record's counter columns, in order (a contract: the first 14 are issue 25's)
SERVER_COLUMNS = (
    "server_connections_accepted", "server_connections_handled", "server_requests",
    "server_connections_per_request",
    "tcp_listen_overflows", "tcp_listen_drops", "tcp_syn_retransmits", "tcp_retransmits",
    "tcp_active_opens", "tcp_passive_opens", "server_error_log_lines",
    "server_cache_hits", "server_cache_misses", "server_cache_expired",
    "upstream_connections_accepted", "upstream_requests", "upstream_connections_per_request",
    "upstream_keepalive_pool", "upstream_pool_covers_load",
    "server_listen_backlog", "server_accept_queue_peak", "server_listen_drops",
    "upstream_listen_backlog", "upstream_accept_queue_peak", "upstream_listen_drops",
)
#: the integer columns of a record (the derived ones are a float and a bool)
INT_COLUMNS = tuple(c for c in SERVER_COLUMNS if c not in DERIVED_COLUMNS)
assert set(INT_COLUMNS) == set(FIELDS)


def counters_of(values: Mapping[str, Any]) -> ServerCounters:
    """The record of ``values`` (field name -> count; other keys ignored): :data:`NO_COUNTERS`
    when none is recorded."""
    given = {k: v for k, v in values.items() if k in _FIELD_SET and v is not None}
    return ServerCounters(**given) if given else NO_COUNTERS


_FIELD_SET = frozenset(FIELDS)


def columns(counters: ServerCounters, connections: int | None) -> dict[str, Any]:
    """The record's counter columns (:data:`SERVER_COLUMNS`): counts as ints (None: missing),
    the per-request ratios as floats (NaN: missing), whether the pool covers the load as a
    bool (None: unknown or no pool)."""
    out: dict[str, Any] = {}
    for name in SERVER_COLUMNS:
        if name == "upstream_pool_covers_load":
            out[name] = counters.pool_covers_load(connections)
        elif name in DERIVED_COLUMNS:
            value = getattr(counters, name)
            out[name] = float("nan") if value is None else value
        else:
            out[name] = getattr(counters, name)
    return out


def manifest_values(manifest: Mapping[str, Any]) -> dict[str, int | None]:
    """The counter columns a manifest recorded (``counters.values``); {} when it recorded none
    (an older run, or another writer's)."""
    section = manifest.get("counters") if manifest else None
    values = section.get("values") if isinstance(section, Mapping) else None
    if not isinstance(values, Mapping):
        return {}
    return {c: _count(values.get(c)) for c in FIELDS}


def manifest_counters(manifest: Mapping[str, Any]) -> ServerCounters:
    """The :class:`~perfkit.counters.ServerCounters` a manifest recorded
    (:data:`~perfkit.counters.NO_COUNTERS` when none)."""
    values = manifest_values(manifest)
    return counters_of(values) if values else NO_COUNTERS


def _count(value: Any) -> int | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None

