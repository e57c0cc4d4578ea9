"""nginx testbed profiles: named sets of template variables, and the config they render.

A profile is a set of template variables. Profiles compose with ``+`` (``keepalive+cache-ram``),
so each tuning factor of a factorial design is one variable and any combination can be asked
for; two profiles that set the same variable to different values are an error.

Profiles
--------
default       like ``fixtures/nginx/default.conf``: static 1024-byte page at ``/``,
              ``/status503`` -> 503, ``/status500`` -> 500, missing files -> 404.
keepalive     client ``keepalive_requests 100000`` and ``keepalive_timeout 300s``; upstream
              ``keepalive 32`` (+ ``proxy_http_version 1.1`` and ``Connection ""``) for the
              proxied locations. Alone it changes only client keepalive, since ``/`` is static;
              combine it with ``proxy`` or ``cache-*`` to exercise the upstream side. It is
              two factors under one name, kept as it was (examples and recorded manifests
              name it): behind a proxy it mostly adds upstream keepalive, since nginx's default
              already keeps client connections alive. To tell them apart use
              ``client-keepalive-off`` and ``upstream-keepalive``.
backlog       ``listen ... backlog=8`` (nginx's default on Linux is 511). The kernel caps the
              accept queue at ``net.core.somaxconn``; both values are reported.
netns         nginx (and the upstream) in a network namespace of their own, with its own
              loopback and ``net.core.somaxconn = 128``; load generators must then run inside
              it (``Testbed.wrap_command``). Root only, needs ``ip``. The host's sysctls are
              never changed. Compose as ``backlog+netns``.
proxy         ``/`` is proxied to the slow upstream app (no cache).
cache-disk    ``/`` is proxied to the slow upstream through ``proxy_cache`` stored on disk
              under the state directory. A load test on the base URL measures the cache.
cache-ram     the same with the cache on tmpfs (``/dev/shm``).
buffered-log  ``access_log ... buffer=256k flush=10s``.
reload        no config change: a disturbance flag (``reload_interval_s = 2``); the runner sends
              ``SIGHUP`` (what ``nginx -s reload`` does) every 2 s during each run.
keepalive-client
              the client half of ``keepalive`` alone: ``keepalive_requests 100000``,
              ``keepalive_timeout 300s``.
keepalive-upstream
              the upstream half of ``keepalive`` alone: ``keepalive 32`` to the upstream.
client-keepalive-off
              client keepalive off: ``keepalive_timeout 0``, so nginx closes each client
              connection after its answer. nginx's default (``keepalive_timeout 65s``,
              ``keepalive_requests`` 1000) already keeps client connections alive: a factor
              "client keepalive" is this part (off) against its absence (on, the default).
upstream-keepalive
              upstream keepalive with a pool that covers every load point of the examples
              and the demo: ``keepalive 1024`` (idle connections kept per nginx worker; one
              client connection has at most one request in flight, so 1024 cover up to 1024
              connections even if one worker holds them all) + ``proxy_http_version 1.1`` and
              ``Connection ""``. Without it nginx opens an upstream connection per request.
              (``keepalive``'s ``keepalive 32`` does not cover 64 connections: nginx closes the
              connections beyond its pool after each answer; the record says so,
              ``upstream_pool_covers_load``.)
worker-connections
              ``worker_connections 10240`` (the default is 1024 per worker).
somaxconn-large
              ``netns`` with ``net.core.somaxconn = 32768`` and ``listen ... backlog=32768``
              in the namespace (as ingress-nginx does, whose listen backlog follows
              somaxconn). It conflicts with ``netns`` and ``backlog``.
isolated      ``netns`` with the kernel's default ``net.core.somaxconn`` (4096 since Linux
              5.4, as on the host): nginx and the load generator in a namespace of their
              own, so the kernel's TCP counters of a run (listen overflows, SYN
              retransmissions) count its traffic alone. Compose it with any profile
              (``keepalive+isolated``); it conflicts with ``somaxconn-large`` only through
              ``somaxconn``, which it leaves unset.
slow-upstream ``upstream_delay_ms = 20``: the upstream answers after 20 ms instead of 10.
              Compose it with ``proxy`` or ``cache-*``; alone it changes nothing served.

Every profile also serves nginx's ``stub_status`` at ``/nginx_status`` on a unix socket
(``STATE_DIR/logs/status.sock``; derived variable ``status_socket``, None when the path is too
long for a unix socket) that the load never reaches: ``perfkit run`` reads it before and after
each run (:mod:`perfkit.run.counters`). With ``cache-*`` and an access log, the log format is
``perfkit_cache``: the combined format followed by ``$upstream_cache_status``, from which the
run's cache hits, misses and expiries are counted.

With ``proxy`` or ``cache-*`` the slow upstream runs (``perfkit.run.upstream``) and nginx also
routes ``/slow`` (answers after ~3 s) and ``/proxy/...`` (``?delay_ms=N`` honoured) to it,
never cached. Cached responses carry ``X-Cache-Status`` (MISS, then HIT). The cache starts
empty at every ``up``.

Variables
---------
The table below is built from :data:`VARIABLES` (``perfkit testbed --help`` prints it too);
``none`` means the directive is left out and nginx's default applies.
"""

from __future__ import annotations

import grp
import hashlib
import os
import re
from dataclasses import dataclass
from importlib import resources
from string import Template
from typing import Any

from perfkit.counters import NGINX_DEFAULT_BACKLOG as NGINX_DEFAULT_BACKLOG
from perfkit.errors import PerfkitError
from perfkit.units import ascii_number

#: the upstream port is ``port + UPSTREAM_PORT_OFFSET`` unless set
UPSTREAM_PORT_OFFSET = 1000
#: the idle upstream connections per nginx worker of profile ``upstream-keepalive``: as many
#: as the most connections any example or demo load point opens
UPSTREAM_POOL = 1024
#: the upstream app's listen backlog unless set (perfkit.run.upstream.BACKLOG)
UPSTREAM_BACKLOG = 4096
#: where the testbed serves stub_status, on the unix socket of :func:`status_socket_path`
STUB_STATUS_PATH = "/nginx_status"
#: the longest path a unix socket address holds (sun_path: 108 bytes with its NUL)
UNIX_PATH_MAX = 107
#: the access-log format of cache profiles: combined, then the cache status (last field)
CACHE_LOG_FORMAT = ("log_format perfkit_cache '$remote_addr - $remote_user [$time_local] "
                    "\"$request\" $status $body_bytes_sent \"$http_referer\" "
                    "\"$http_user_agent\" $upstream_cache_status';")


@dataclass(frozen=True)
class Variable:
    """One template variable: its default, type and meaning."""

    name: str
    default: object
    kind: type
    doc: str
    choices: tuple[str, ...] | None = None
    optional: bool = False


VARIABLES: tuple[Variable, ...] = (
    Variable("worker_processes", "auto", str, "worker_processes ('auto' = one per core, or N)"),
    Variable("worker_connections", 1024, int, "worker_connections per worker"),
    Variable("keepalive_timeout_s", 65, int, "client keepalive_timeout, seconds"),
    Variable("keepalive_requests", None, int,
             "client keepalive_requests; none = nginx 1.22 default (1000)", optional=True),
    Variable("upstream_keepalive", 0, int,
             "idle upstream connections kept per worker; 0 = new connection per request"),
    Variable("backlog", None, int,
             f"listen backlog=N; none = nginx default ({NGINX_DEFAULT_BACKLOG})", optional=True),
    Variable("netns", False, bool, "run in a network namespace of its own (root, `ip`)"),
    Variable("somaxconn", None, int,
             "net.core.somaxconn inside the namespace (netns only); none = kernel default",
             optional=True),
    Variable("root_target", "static", str, "what / serves: static (the 1024-byte page) or proxy "
             "(the slow upstream)", choices=("static", "proxy")),
    Variable("proxy_cache", "off", str, "proxy_cache for /: off, disk (state_dir/cache) or "
             "ram (/dev/shm)", choices=("off", "disk", "ram")),
    Variable("access_log", "on", str, "access_log (combined format)", choices=("on", "off")),
    Variable("access_log_buffer", None, str, "access_log buffer= size (e.g. 256k); none = "
             "unbuffered", optional=True),
    Variable("access_log_flush_s", None, int, "access_log flush= seconds (with a buffer)",
             optional=True),
    Variable("upstream_delay_ms", 10, int, "upstream answer delay for / and /proxy/, ms"),
    Variable("upstream_port", None, int,
             f"upstream app port; none = port + {UPSTREAM_PORT_OFFSET}", optional=True),
    Variable("upstream_backlog", UPSTREAM_BACKLOG, int,
             "the upstream app's listen backlog (capped at net.core.somaxconn)"),
    Variable("upstream_processes", None, int, "upstream app processes sharing its socket; "
             "none = one per usable core", optional=True),
    Variable("upstream_ceiling_s", 1.0, float, "seconds of wrk against the upstream alone, "
             "per mode (keepalive, a connection per request), at each start: its ceiling, in "
             "the manifest; 0 = not measured"),
    Variable("reload_interval_s", None, float,
             "disturbance: SIGHUP (reload) every N s during runs; none = off", optional=True),
)
VARIABLE_BY_NAME = {v.name: v for v in VARIABLES}


def variables_table() -> str:
    """One line per variable: name, default and meaning."""
    rows = []
    for v in VARIABLES:
        default = "none" if v.default is None else str(v.default)
        rows.append(f"{v.name:<19} {default:<7} {v.doc}")
    return "\n".join(rows)


__doc__ = f"{__doc__}\n{variables_table()}\n"

PROFILES: dict[str, dict[str, object]] = {
    "default": {},
    "keepalive": {"keepalive_requests": 100000, "keepalive_timeout_s": 300,
                  "upstream_keepalive": 32},
    "backlog": {"backlog": 8},
    "netns": {"netns": True, "somaxconn": 128},
    "proxy": {"root_target": "proxy"},
    "cache-disk": {"root_target": "proxy", "proxy_cache": "disk"},
    "cache-ram": {"root_target": "proxy", "proxy_cache": "ram"},
    "buffered-log": {"access_log_buffer": "256k", "access_log_flush_s": 10},
    "reload": {"reload_interval_s": 2.0},
    "keepalive-client": {"keepalive_requests": 100000, "keepalive_timeout_s": 300},
    "keepalive-upstream": {"upstream_keepalive": 32},
    "client-keepalive-off": {"keepalive_timeout_s": 0},
    "upstream-keepalive": {"upstream_keepalive": UPSTREAM_POOL},
    "worker-connections": {"worker_connections": 10240},
    "somaxconn-large": {"netns": True, "somaxconn": 32768, "backlog": 32768},
    "slow-upstream": {"upstream_delay_ms": 20},
    "isolated": {"netns": True},
}

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def default_state_dir() -> str:
    """``$PERFKIT_TESTBED_DIR`` or ``/tmp/perfkit-testbed-<uid>``."""
    return os.environ.get("PERFKIT_TESTBED_DIR") or f"/tmp/perfkit-testbed-{os.geteuid()}"


def ram_cache_path(state_dir: str) -> str:
    """The tmpfs cache directory of the testbed in ``state_dir`` (one per state directory)."""
    digest = hashlib.sha1(os.path.abspath(state_dir).encode()).hexdigest()[:8]
    return f"/dev/shm/perfkit-cache-{os.geteuid()}-{digest}"


def status_socket_path(state_dir: str, name: str = "status.sock") -> str | None:
    """The unix socket of the testbed's stub_status (``name``: of the upstream's status page,
    ``upstream.sock``); None when the path is too long for a unix socket."""
    path = os.path.join(os.path.abspath(state_dir), "logs", name)
    return path if len(path.encode()) <= UNIX_PATH_MAX else None


def cache_log_counted(v: dict[str, object]) -> str | None:
    """Why the run's cache statuses cannot be counted from the access log, or None when they
    can (a cache profile with an unbuffered access log: every line of a run is written by
    its end; a buffered log holds some back and writes earlier runs' lines late)."""
    if v["proxy_cache"] == "off":
        return "the profile has no cache"
    if v["access_log"] != "on":
        return "the access log is off"
    if v["access_log_buffer"] is not None:
        return ("the access log is buffered: the lines of a run are not all written when it "
                "ends, and lines of the run before it can be written during it")
    return None


def coerce(name: str, value: object) -> object:
    """Convert ``value`` (a Python value or a string from the command line) for variable
    ``name``; raise PerfkitError when it does not fit."""
    var = VARIABLE_BY_NAME.get(name)
    if var is None:
        raise PerfkitError(f"unknown testbed variable {name!r}; known: "
                           + ", ".join(VARIABLE_BY_NAME))
    if value is None or (isinstance(value, str) and value.lower() in ("none", "")):
        if var.optional:
            return None
        raise PerfkitError(f"testbed variable {name} needs a value")
    try:
        out = _convert(var, value)
    except (TypeError, ValueError):
        raise PerfkitError(f"testbed variable {name}: expected {var.kind.__name__}, "
                           f"found {value!r}") from None
    if var.choices and out not in var.choices:
        raise PerfkitError(f"testbed variable {name}: expected one of {', '.join(var.choices)}, "
                           f"found {out!r}")
    if isinstance(out, int | float) and not isinstance(out, bool) and out < 0:
        raise PerfkitError(f"testbed variable {name}: expected >= 0, found {out!r}")
    return out


def _convert(var: Variable, value: Any) -> object:
    if var.kind is bool:
        if isinstance(value, bool):
            return value
        text = str(value).lower()
        if text in _TRUE or text in _FALSE:
            return text in _TRUE
        raise ValueError(value)
    if var.kind is int:
        if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
            raise ValueError(value)
        return int(ascii_number(value, int) if isinstance(value, str) else value)
    if var.kind is float:
        return float(ascii_number(value) if isinstance(value, str) else value)
    return str(value)


def parse_profile(profile: str) -> dict[str, object]:
    """The template variables of a profile name such as ``"keepalive+cache-ram"``.

    Returns only the variables the named profiles set (defaults are filled in by
    :func:`resolve_variables`). Unknown names raise PerfkitError listing the known ones.
    """
    names = [p.strip() for p in str(profile).split("+")]
    unknown = [n for n in names if n not in PROFILES]
    if not names or unknown:
        raise PerfkitError(f"unknown testbed profile {', '.join(unknown) or repr(profile)}; "
                           f"known profiles: {', '.join(PROFILES)} (compose with '+')")
    merged: dict[str, object] = {}
    origin: dict[str, str] = {}
    for name in names:
        for key, value in PROFILES[name].items():
            if key in merged and merged[key] != value:
                raise PerfkitError(f"testbed profiles {origin[key]} and {name} conflict on "
                                   f"{key} ({merged[key]!r} vs {value!r})")
            merged[key] = value
            origin[key] = name
    return merged


def resolve_variables(profile: str | dict | None = "default", overrides: dict | None = None,
                      port: int = 8080, state_dir: str | None = None) -> dict[str, object]:
    """Every template variable: defaults, then the profile's, then ``overrides``; validated.

    Derived entries are added: ``port``, ``upstream_port`` (resolved), ``upstream_enabled``
    (whether the slow upstream runs) and ``cache_path`` (absolute, or None).
    """
    chosen = parse_profile(profile) if isinstance(profile, str) else dict(profile or {})
    chosen.update(overrides or {})
    derived_keys = ("port", "upstream_enabled", "cache_path", "status_socket",
                    "upstream_status_socket")
    out = {v.name: v.default for v in VARIABLES}
    for key, value in chosen.items():
        if key in derived_keys:
            continue
        out[key] = coerce(key, value)
    _validate(out)
    state_dir = os.path.abspath(state_dir or default_state_dir())
    port = int(port)
    if not 1 <= port <= 65535:
        raise PerfkitError(f"testbed port: expected 1..65535, found {port}")
    out["port"] = port
    if out["upstream_port"] is None:
        up = port + UPSTREAM_PORT_OFFSET
        out["upstream_port"] = up if up <= 65535 else port - UPSTREAM_PORT_OFFSET
    out["upstream_enabled"] = out["root_target"] == "proxy" or out["proxy_cache"] != "off"
    out["status_socket"] = status_socket_path(state_dir)
    out["upstream_status_socket"] = (status_socket_path(state_dir, "upstream.sock")
                                     if out["upstream_enabled"] else None)
    cache = out["proxy_cache"]
    out["cache_path"] = (None if cache == "off" else ram_cache_path(state_dir) if cache == "ram"
                         else os.path.join(state_dir, "cache"))
    return out


def _validate(v: dict[str, object]) -> None:
    wp = str(v["worker_processes"])
    if wp != "auto" and not (wp.isascii() and wp.isdigit() and int(wp) > 0):
        raise PerfkitError(f"testbed variable worker_processes: expected 'auto' or N > 0, "
                           f"found {wp!r}")
    if v["somaxconn"] is not None and not v["netns"]:
        raise PerfkitError("testbed variable somaxconn needs netns (the host's "
                           "net.core.somaxconn is never changed); use profile 'netns'")
    buf = v["access_log_buffer"]
    if buf is not None and not re.fullmatch(r"[1-9][0-9]*[kKmM]?", str(buf)):
        raise PerfkitError(f"testbed variable access_log_buffer: expected a size such as 256k, "
                           f"found {buf!r}")
    if v["access_log_flush_s"] is not None and buf is None:
        raise PerfkitError("testbed variable access_log_flush_s needs access_log_buffer")
    if v["root_target"] == "static" and v["proxy_cache"] != "off":
        raise PerfkitError("testbed variable proxy_cache needs root_target=proxy")
    if 0 in (v["worker_connections"], v["backlog"], v["somaxconn"], v["upstream_backlog"],
             v["upstream_processes"]):
        raise PerfkitError("testbed variables worker_connections, backlog, somaxconn, "
                           "upstream_backlog and upstream_processes must be > 0")


def render_config(profile_or_variables: str | dict = "default", port: int = 8080,
                  state_dir: str | None = None, profile_name: str | None = None) -> str:
    """The nginx.conf text for a profile name or a dict of template variables.

    The template is ``perfkit/run/templates/nginx.conf.tmpl``; relative paths in it resolve
    under the prefix nginx is started with (``-p state_dir/``).
    """
    v = resolve_variables(profile_or_variables, None, port, state_dir)
    if profile_name is None:
        profile_name = (profile_or_variables if isinstance(profile_or_variables, str)
                        else "custom")
    text = resources.files("perfkit.run").joinpath("templates/nginx.conf.tmpl").read_text()
    return Template(text).substitute(_blocks(v, profile_name))


#: variables of the upstream app alone: named in the config's summary only when it runs
_UPSTREAM_APP = ("upstream_port", "upstream_backlog", "upstream_processes", "upstream_ceiling_s")


def _blocks(v: dict[str, object], profile: str) -> dict[str, object]:
    defaults = {x.name: x.default for x in VARIABLES}
    changed = [f"{k}={v[k]}" for k in defaults if v[k] != defaults[k]
               and (k not in _UPSTREAM_APP or v["upstream_enabled"])]
    log = "access_log off;"
    cached = v["proxy_cache"] != "off" and v["access_log"] == "on"
    if v["access_log"] == "on":
        log = f"access_log logs/access.log {'perfkit_cache' if cached else 'combined'}"
        if v["access_log_buffer"] is not None:
            log += f" buffer={v['access_log_buffer']}"
            if v["access_log_flush_s"] is not None:
                log += f" flush={v['access_log_flush_s']}s"
        log += ";"
    kr = v["keepalive_requests"]
    return {
        "profile": profile,
        "variables_summary": " ".join(changed) or "(all defaults)",
        "user_line": _user_line(),
        "worker_processes": v["worker_processes"],
        "worker_connections": v["worker_connections"],
        "log_format_line": f"    {CACHE_LOG_FORMAT}\n" if cached else "",
        "access_log_line": log,
        "keepalive_timeout_s": v["keepalive_timeout_s"],
        "keepalive_requests_line": ("# keepalive_requests left at the nginx 1.22 default (1000)"
                                    if kr is None else f"keepalive_requests {kr};"),
        "port": v["port"],
        "listen_params": "" if v["backlog"] is None else f" backlog={v['backlog']}",
        "upstream_block": _upstream_block(v),
        "root_location": _root_location(v),
        "proxy_locations": _proxy_locations(v),
        "status_server": _status_server(v),
    }


def _status_server(v: dict[str, object]) -> str:
    """stub_status on a unix socket: the load never reaches it, and it has no TCP traffic."""
    if not v.get("status_socket"):
        return "    # no stub_status: the state directory's path is too long for a unix socket\n"
    return ("\n    # perfkit's counters (perfkit.run.counters): read before and after each run\n"
            "    server {\n"
            f"        listen unix:{v['status_socket']};\n"
            "        access_log off;\n"
            f"        location = {STUB_STATUS_PATH} {{ stub_status; }}\n"
            "    }\n")


def _user_line() -> str:
    """Workers run as nobody when the master runs as root; the testbed's files are 0644/0755."""
    if os.geteuid() != 0:
        return "# not root: workers run as the current user"
    try:
        grp.getgrnam("nogroup")
        group = "nogroup"
    except KeyError:
        group = "nobody"
    return f"user nobody {group};"


def _upstream_block(v: dict[str, object]) -> str:
    if not v["upstream_enabled"]:
        return ""
    lines = []
    if v["cache_path"] is not None:
        lines.append(f"    proxy_cache_path {v['cache_path']} levels=1:2"
                     " keys_zone=perfkit_cache:10m max_size=100m inactive=10m use_temp_path=off;")
    lines += ["    upstream perfkit_upstream {", f"        server 127.0.0.1:{v['upstream_port']};"]
    if v["upstream_keepalive"]:
        lines.append(f"        keepalive {v['upstream_keepalive']};")
    lines.append("    }")
    return "\n".join(lines) + "\n"


def _proxy_lines(v: dict[str, object], target: str, cache: bool) -> list[str]:
    lines = [f"proxy_pass {target};"]
    if v["upstream_keepalive"]:
        lines += ["proxy_http_version 1.1;", 'proxy_set_header Connection "";']
    if cache:
        lines += ["proxy_cache perfkit_cache;", "proxy_cache_valid 200 10m;",
                  "proxy_cache_lock on;",
                  "add_header X-Cache-Status $upstream_cache_status always;"]
    return lines


def _location(match: str, lines: list[str]) -> str:
    body = "".join(f"            {line}\n" for line in lines)
    return f"        location {match} {{\n{body}        }}"


def _root_location(v: dict[str, object]) -> str:
    if v["root_target"] == "static":
        return ("        # / and any file: static; a file that does not exist -> 404\n"
                "        location / { }")
    cached = v["proxy_cache"] != "off"
    return _location("/", _proxy_lines(v, "http://perfkit_upstream", cached))


def _proxy_locations(v: dict[str, object]) -> str:
    if not v["upstream_enabled"]:
        return ""
    slow = _location("= /slow", _proxy_lines(v, "http://perfkit_upstream", False))
    proxy = _location("/proxy/", _proxy_lines(v, "http://perfkit_upstream/", False))
    return f"        # not cached: always reach the slow upstream\n{slow}\n{proxy}\n"
