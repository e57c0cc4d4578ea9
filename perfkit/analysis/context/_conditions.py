"""The conditions the runs ran under, read from their manifests (never typed by hand): the
host's CPU load, the listen backlog in effect, testbed restarts, the window wrk2 measured, and
Locust's think time. What the Methods state (:mod:`perfkit.report.methods`) and the threats to
validity weigh (:func:`threat_texts`, used by :func:`perfkit.analysis.context._validity.threats`).

- **Host CPU**: the testbed samples the whole host's CPU during each run
  (``cpu.host_cpu_mean_percent``); at >= :data:`HOST_BUSY_PERCENT` the cores were saturated by
  client and server together, whatever the generator's own share.
- **Backlog**: the accept queue a listening socket gets is the smaller of nginx's ``listen
  ... backlog=`` (:data:`NGINX_DEFAULT_BACKLOG` when not set) and ``net.core.somaxconn``. The
  testbed records it (``server.effective_backlog``); for runs that recorded only their
  nginx.conf it is derived from the first ``listen`` line and the host's somaxconn, and said
  so. A connection attempt that finds the queue full is dropped and retried after Linux's
  initial SYN retransmission timeout (1 s): latencies on 1000 ms are such retries.
- **Restarts**: a distinct ``server.started_utc`` is one start of the testbed; the testbed
  deletes its proxy cache (disk and RAM) and access log at every start
  (:mod:`perfkit.run.testbed`), so the first run after a start meets a cold server.
- **wrk2's measured window**: wrk2 resets its histogram after its calibration (~10 s), so the
  percentiles cover ``histogram_count / requests`` of the run: that share of its duration.
- **Counters**: the runs that recorded what the server and the kernel counted
  (:mod:`perfkit.ingest.counters`) say where their kernel counters were read: in a network
  namespace of the run's own (its traffic alone) or system-wide (other traffic on the host
  included: a threat); the backlog threat cites the listen overflows they counted.
- **Think time**: Locust's ``wait_time``, from the manifests when recorded, else from the
  locustfile's ``wait_time = constant(...)`` of the user class the runs named, read now (not
  recorded with the runs, and said so).
"""

from __future__ import annotations

import ast
import dataclasses
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd

from perfkit.analysis.core import Experiment, cap_hits, kernel_scope
from perfkit.counters import NGINX_DEFAULT_BACKLOG

#: host CPU (all processes, % of all cores, mean over a run) from which the box was saturated
HOST_BUSY_PERCENT = 90.0
#: wrk2's calibration: it resets its histogram about this long into a run
WRK2_CALIBRATION_S = 10.0
#: the retry delay of a connection attempt dropped from a full accept queue (ms)
SYN_RETRY_MS = 1000.0


@dataclasses.dataclass(frozen=True)
class Backlog:
    """The accept queue the runs of one server profile had, and where the number comes from."""

    profile: str
    accept_queue: int | None
    listen_backlog: int | None
    somaxconn: str
    source: str
    runs: int


def backlog_text(items: Sequence[Backlog]) -> str:
    """The accept queues in words, profiles with the same queue and source together:
    ``511 for default, tuned (48 runs; server.effective_backlog as ...)``."""
    groups: dict[tuple, list[Backlog]] = {}
    for b in items:
        groups.setdefault((b.accept_queue, b.source), []).append(b)
    def runs(bs: Sequence[Backlog]) -> str:
        n = sum(b.runs for b in bs)
        return f"{n} run{'s' if n != 1 else ''}"

    def named(bs: Sequence[Backlog]) -> str:
        # every profile alike: their count, not their names again (a 2^3 design's eight
        # long names were listed four times in one paragraph of the Methods)
        if len(bs) == len(items) >= 3:
            return f"all {len(bs)} profiles"
        return ", ".join(b.profile for b in bs)

    return "; ".join(
        (f"{queue} for {named(bs)} ({runs(bs)}; {source})"
         if queue is not None else f"{named(bs)}: not recorded")
        for (queue, source), bs in groups.items())


@dataclasses.dataclass(frozen=True)
class Conditions:
    """What the manifests of one experiment record about the conditions of its runs (see the
    module docstring); counts are of runs, ``None`` where nothing was recorded."""

    name: str
    n_runs: int
    host_cpu_known: int
    host_busy: int
    host_cpu_range: tuple[float, float] | None
    backlogs: tuple[Backlog, ...]
    namespaced: bool
    server_starts: int | None
    restart: str
    warmup: str | None
    wrk2_runs: int
    wrk2_durations_s: tuple[float, ...]
    measured_s: tuple[int, float, float, float] | None  # runs, min, median, max
    think_time: str | None
    syn_retries: tuple[str, ...] = ()  # loads at which latencies sit on the 1 s retry
    #: runs per scope of their kernel counters ("netns", "system-wide", "not recorded"), of
    #: the runs that recorded counters (:mod:`perfkit.ingest.counters`)
    counter_scopes: tuple[tuple[str, int], ...] = ()
    #: loads at which the kernel counted listen overflows (runs with counters only)
    overflows: tuple[str, ...] = ()
    #: runs whose server's listening socket dropped attempts (``ss``'s ``skmem d``: a full
    #: queue among its causes), and their loads
    socket_drop_runs: int = 0
    socket_drops: tuple[str, ...] = ()


def conditions(exp: Experiment) -> Conditions:
    runs = exp.rows().runs
    manifests = [r.manifest or {} for r in runs]
    host = [_number((m.get("cpu") or {}).get("host_cpu_mean_percent")) for m in manifests]
    known = [h for h in host if not math.isnan(h)]
    starts = {s for m in manifests if (s := (m.get("server") or {}).get("started_utc"))}
    wrk2 = [i for i, r in enumerate(runs) if r.tool == "wrk2"]
    design = exp.design or {}
    dropped = [i for i, r in enumerate(runs) if r.counters.server_listen_drops]
    return Conditions(
        name=exp.name, n_runs=len(runs), host_cpu_known=len(known),
        host_busy=sum(h >= HOST_BUSY_PERCENT for h in known),
        host_cpu_range=(min(known), max(known)) if known else None,
        backlogs=tuple(backlogs(manifests)),
        namespaced=bool(manifests) and all(_own_somaxconn(m) for m in manifests),
        server_starts=len(starts) if starts else None,
        restart=str(design.get("restart") or "on-change"),
        warmup=_warmup(manifests),
        wrk2_runs=len(wrk2),
        wrk2_durations_s=tuple(sorted({float(d) for i in wrk2
                                       if (d := runs[i].duration_s)})),
        measured_s=_measured(exp, wrk2), think_time=think_time(exp),
        syn_retries=_syn_retries(exp), counter_scopes=_counter_scopes(runs),
        overflows=_loads(exp, [i for i, r in enumerate(runs) if r.counters.tcp_listen_overflows]),
        socket_drop_runs=len(dropped), socket_drops=_loads(exp, dropped))


def _own_somaxconn(manifest: Mapping) -> bool:
    """Whether the run's server ran in a network namespace that set its own somaxconn (the
    accept queue is then the design's, not the host's: profiles netns, somaxconn-large; the
    isolated profile keeps the kernel's default)."""
    server = manifest.get("server") or {}
    return bool(server.get("netns")) and (server.get("variables") or {}).get(
        "somaxconn", server.get("somaxconn")) is not None


def _counter_scopes(runs: Sequence) -> tuple[tuple[str, int], ...]:
    """How many runs read their kernel counters in a namespace of their own, system-wide, or
    not at all (of the runs that recorded counters)."""
    found: dict[str, int] = {}
    for run in runs:
        if not run.counters_recorded:
            continue
        scope = kernel_scope(run) or "not recorded"
        kind = scope.split(" ", 1)[0] if scope.startswith("netns") else scope.split(" (")[0]
        found[kind] = found.get(kind, 0) + 1
    return tuple(found.items())


@dataclasses.dataclass(frozen=True)
class HostCpu:
    """The host CPU of some runs, from their manifests: how many recorded it, how many
    averaged >= :data:`HOST_BUSY_PERCENT` (client and server together saturated the box), and
    the cores the host had (``None`` when not recorded)."""

    n_runs: int
    known: int
    busy: int
    cpus: int | None

    @property
    def box_bound(self) -> bool:
        """Most runs that recorded it saturated the host: what they measure is the box's
        limit, client and server sharing its cores, not the server's."""
        return self.known > 0 and self.busy > self.known / 2


def host_cpu(runs: Sequence[Any]) -> HostCpu:
    """:class:`HostCpu` of ``runs`` (each with a ``manifest``)."""
    manifests = [getattr(r, "manifest", None) or {} for r in runs]
    host = [_number(_section(m, "cpu").get("host_cpu_mean_percent")) for m in manifests]
    known = [h for h in host if not math.isnan(h)]
    cpus = {c for m in manifests if isinstance(c := _section(m, "host").get("cpus"), int)}
    return HostCpu(len(runs), len(known), sum(h >= HOST_BUSY_PERCENT for h in known),
                   cpus.pop() if len(cpus) == 1 else None)


def _section(manifest: Mapping, key: str) -> Mapping:
    """A manifest's mapping under ``key`` (empty when absent or not a mapping: a foreign
    ``meta.json`` may name its host by a string)."""
    value = manifest.get(key)
    return value if isinstance(value, Mapping) else {}


def _number(value: Any) -> float:
    try:
        return float(value) if value is not None else math.nan
    except (TypeError, ValueError):
        return math.nan


def backlogs(manifests: Sequence[Mapping]) -> list[Backlog]:
    """Per server profile: the accept queue its runs had, recorded or derived (see the module
    docstring)."""
    by: dict[str, list[Mapping]] = {}
    for m in manifests:
        server = m.get("server") or {}
        if server.get("profile") or server.get("config_text"):
            by.setdefault(str(server.get("profile") or "?"), []).append(m)
    return [_backlog(profile, ms) for profile, ms in by.items()]


def _backlog(profile: str, manifests: list[Mapping]) -> Backlog:
    server = manifests[0].get("server") or {}
    somax = str(server.get("somaxconn") or (manifests[0].get("sysctls") or {}).get(
        "net.core.somaxconn") or "")
    recorded = sorted({int(v) for m in manifests
                       if (v := (m.get("server") or {}).get("effective_backlog")) is not None})
    if recorded:
        listen = sorted({int(v) for m in manifests
                         if (v := (m.get("server") or {}).get("backlog")) is not None})
        return Backlog(profile, recorded[0], listen[0] if listen else None, somax,
                       "server.effective_backlog as the testbed recorded it: nginx's listen "
                       f"backlog {' | '.join(map(str, listen)) or '?'} capped by "
                       f"net.core.somaxconn {somax or '?'}"
                       + ("" if len(recorded) == 1 else f"; values {recorded}"), len(manifests))
    line, listen_bl = listen_line(str(server.get("config_text") or ""))
    if line is None:
        return Backlog(profile, None, None, somax, "not recorded", len(manifests))
    queue = min(listen_bl, int(somax)) if somax.isdigit() else listen_bl
    why = "nginx's default" if "backlog=" not in line else "set there"
    return Backlog(profile, queue, listen_bl, somax,
                   f"derived, not recorded: `{line}` in the recorded nginx.conf ({listen_bl}, "
                   f"{why}) capped by the host's net.core.somaxconn {somax or 'not recorded'}",
                   len(manifests))


def listen_line(config_text: str) -> tuple[str | None, int]:
    """The first ``listen`` directive of an nginx configuration and its backlog
    (:data:`NGINX_DEFAULT_BACKLOG` when it sets none)."""
    for raw in config_text.splitlines():
        line = " ".join(raw.split("#", 1)[0].split())
        if line.startswith("listen "):
            m = re.search(r"\bbacklog=(\d+)", line)
            return line, int(m.group(1)) if m else NGINX_DEFAULT_BACKLOG
    return None, NGINX_DEFAULT_BACKLOG


def _warmup(manifests: Sequence[Mapping]) -> str | None:
    found = set()
    for m in manifests:
        w = m.get("warmup") or {}
        if w.get("kind") == "time" and w.get("seconds") is not None:
            found.add(f"{float(w['seconds']):g} s")
        elif w.get("kind") not in (None, "none"):
            found.add(str(w.get("kind")))
    return " | ".join(sorted(found)) or None


def _measured(exp: Experiment, wrk2: list[int]) -> tuple[int, float, float, float] | None:
    """The wrk2 runs whose histogram covers part of the run only, and the seconds it covers
    (min, median, max)."""
    f = exp.rows().frame
    if not wrk2 or not {"histogram_count", "requests", "duration_s"} <= set(f.columns):
        return None
    sub = f.iloc[wrk2]
    share = sub["histogram_count"].astype(float) / sub["requests"].astype(float)
    window = (share * sub["duration_s"].astype(float)).to_numpy(dtype=float)
    window = window[np.isfinite(window) & (share.to_numpy(dtype=float) < 0.95)]
    if not len(window):
        return None
    return len(window), float(window.min()), float(np.median(window)), float(window.max())


def _syn_retries(exp: Experiment) -> tuple[str, ...]:
    """The load levels of the runs with latencies on the 1 s retry, under the one cap rule
    (:func:`perfkit.analysis.core._caps.cap_hits`: standing out from the run, the run neither
    failed nor saturated)."""
    rows = exp.rows()
    retried = {h.run_id for h in cap_hits(rows) if h.cap_ms == SYN_RETRY_MS}
    if not retried:
        return ()
    f = rows.frame
    ids = f["run_id"].astype(str) if "run_id" in f else pd.Series(map(str, range(len(f))))
    return _loads(exp, list(np.flatnonzero(ids.isin(retried).to_numpy())))


def _loads(exp: Experiment, which: Sequence[int]) -> tuple[str, ...]:
    """The load levels of the analysis rows ``which``, in words, each once, from the lowest
    (before: in run order, "at 256 connections; 1024 connections; 64 connections")."""
    f = exp.rows().frame
    load = [c for c in ("connections", "users", "target_rate_rps") if c in f]
    words = {"connections": "connections", "users": "users", "target_rate_rps": "req/s"}
    out = []
    rows = f.iloc[list(which)]
    for _, row in (rows.sort_values(load, kind="stable") if load else rows).iterrows():
        out.append(", ".join(f"{row[c]:g} {words[c]}" for c in load
                             if isinstance(row[c], int | float) and not math.isnan(row[c])))
    return tuple(dict.fromkeys(out))


def _listed(loads: Sequence[str]) -> str:
    """``64, 256 and 1024 connections`` for loads of one unit (``"64 connections"``), else
    the loads joined by semicolons."""
    parts = [load.split(" ", 1) for load in loads]
    units = {p[1] for p in parts if len(p) == 2}
    if len(loads) < 2 or len(units) != 1 or any(len(p) != 2 or "," in p[1] for p in parts):
        return "; ".join(loads)
    values = [p[0] for p in parts]
    return f"{', '.join(values[:-1])} and {values[-1]} {units.pop()}"


def _counted(c: Conditions) -> str:
    """What the kernel counted about the queue, where the runs recorded it."""
    with_counters = sum(n for scope, n in c.counter_scopes if scope != "not recorded")
    if not with_counters:
        return ""
    if c.overflows:
        return f"; the kernel counted listen overflows at {_listed(c.overflows)}"
    # a partial run flagged by its socket's own drops, where the namespace's counters saw no
    # overflow: both said, so the two sentences do not seem to disagree
    drops = (f", while the server's listening socket dropped connection attempts in "
             f"{c.socket_drop_runs} run{'s' if c.socket_drop_runs != 1 else ''} (at "
             f"{_listed(c.socket_drops)}: a full queue is one cause of a socket's drops, not "
             "the only one)" if c.socket_drop_runs else "")
    return (f"; the kernel counted no listen overflow in its {with_counters} runs with "
            f"counters{drops}")


# -- Locust's think time -------------------------------------------------------------------------
#: how :func:`think_time` ends a value the run manifests recorded (any other was read now)
RECORDED = "(recorded in the manifests)"
_WAITS = {"constant": "constant({}) s: {} ms between a user's requests",
          "between": "between({}) s: a uniform pause between a user's requests",
          "constant_pacing": "constant_pacing({}) s: one request per user every {} ms",
          "constant_throughput": "constant_throughput({}) requests per second per user"}


def think_time(exp: Experiment) -> str | None:
    """Locust's think time in words with its source, or "not recorded"; None for no Locust
    run."""
    runs = [r for r in exp.rows().runs if r.tool == "locust"]
    if not runs:
        return None
    recorded = {str(w) for r in runs
                if (w := ((r.manifest or {}).get("locust") or {}).get("wait_time"))}
    if recorded:
        return f"{' | '.join(sorted(recorded))} {RECORDED}"
    options = (exp.design or {}).get("options") or {}
    argv = list((runs[0].manifest or {}).get("argv") or [])
    path = _locustfile(exp, options, argv)
    classes = list(options.get("user_classes") or [a for a in argv[-1:] if a[:1].isupper()])
    if path is None or not classes:
        return "not recorded (the manifests name no locustfile and user class to read it from)"
    waits = [(c, _wait(path, c)) for c in classes]
    found = [f"{c}: {w}" for c, w in waits if w]
    if not found:
        return f"not recorded (no wait_time of {', '.join(classes)} found in {path.name})"
    return (f"{'; '.join(found)} (wait_time in {_shown(path)}, read now: the manifests do not "
            "record it)")


def _locustfile(exp: Experiment, options: Mapping, argv: list[str]) -> Path | None:
    given = options.get("locustfile")
    candidates = [Path(exp.path) / str(given)] if given and exp.path else []
    if "-f" in argv[:-1]:
        candidates.append(Path(argv[argv.index("-f") + 1]))
    return next((p.resolve() for p in candidates if p.is_file()), None)


def _shown(path: Path) -> str:
    parts = path.parts
    return "/".join(parts[parts.index("tests"):]) if "tests" in parts else path.name


def _wait(path: Path, cls: str) -> str | None:
    """``wait_time`` of class ``cls`` in ``path`` in words (a call of one of Locust's wait
    functions with literal arguments), else None."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        if not (isinstance(node, ast.ClassDef) and node.name == cls):
            continue
        for stmt in node.body:
            if (isinstance(stmt, ast.Assign) and any(getattr(t, "id", "") == "wait_time"
                                                     for t in stmt.targets)
                    and isinstance(stmt.value, ast.Call)
                    and getattr(stmt.value.func, "id", "") in _WAITS):
                try:
                    args = [float(ast.literal_eval(a)) for a in stmt.value.args]
                except ValueError:
                    return None
                text = ", ".join(f"{a:g}" for a in args)
                name = cast(ast.Name, stmt.value.func).id  # an id: checked above
                return _WAITS[name].format(text, f"{1000 * args[0]:g}")
    return None


# -- the threats ---------------------------------------------------------------------------------
def threat_texts(c: Conditions) -> list[tuple[str, str]]:
    """``(kind, sentence)`` of each threat the conditions of ``c`` pose (see the module
    docstring)."""
    out = []
    if c.host_busy:
        out.append(("host-busy", f"{c.name}: the host's CPU (client and server together, "
                    "cpu.host_cpu_mean_percent as the testbed sampled it) averaged >= "
                    f"{HOST_BUSY_PERCENT:g}% in {c.host_busy} of {c.host_cpu_known} runs: the "
                    "cores were saturated, so those runs measure what the box could do with "
                    "generator and server sharing it, not the server's capacity."))
    queues = [b for b in c.backlogs if b.accept_queue is not None]
    if queues and not c.namespaced:
        retry = (f"; latencies on {SYN_RETRY_MS:g} ms here (at "
                 f"{'; '.join(c.syn_retries)}) are such retries" if c.syn_retries else "")
        out.append(("backlog", f"{c.name}: the accept queue in effect (from the listen "
                    "backlog, not the host's net.core.somaxconn alone): "
                    + backlog_text(queues) + "."))
        # what a full queue does, a threat of its own: the same words for every experiment
        # without retries of its own are one threat on a page, said once
        out.append(("backlog", f"{c.name}: a connection attempt that finds the queue full is "
                    f"dropped and retried after {SYN_RETRY_MS / 1000:g} s (the SYN "
                    f"retransmission timeout){retry}{_counted(c)}."))
    if c.server_starts and c.server_starts > 1:
        warm = f"only the warm-up of {c.warmup}" if c.warmup else "no warm-up"
        out.append(("restarts", f"{c.name}: the testbed started the server {c.server_starts} "
                    f"times for {c.n_runs} runs (restart {c.restart}: a new start whenever the "
                    "next run's profile differs; distinct server.started_utc in the "
                    "manifests); every start deletes the proxy cache and the access log, so "
                    f"{c.server_starts} runs began on a freshly started server (a cache "
                    f"profile's cache empty) with {warm} before them."))
    if c.wrk2_runs and c.measured_s:
        n, lo, mid, hi = c.measured_s
        dur = "-".join(f"{d:g}" for d in sorted({round(x) for x in c.wrk2_durations_s}))
        one = f"{lo:.1f}" == f"{hi:.1f}"
        window = (f"{lo:.1f} s (the histogram's share of the requests times the duration)"
                  if one else f"{lo:.1f}-{hi:.1f} s (median {mid:.1f} s: the histogram's share "
                  "of the requests times the duration)")
        runs = (f"its one wrk2 run of {dur} s" if c.wrk2_runs == 1 else
                f"{n} of its {c.wrk2_runs} wrk2 runs of {dur} s")
        out.append(("wrk2-calibration", f"{c.name}: wrk2 resets its histogram after its "
                    f"calibration (~{WRK2_CALIBRATION_S:g} s into a run), so in {runs} the "
                    f"percentiles cover only {window}: a short measured window at the end of "
                    f"{'the run' if c.wrk2_runs == 1 else 'each run'}, while the request counts "
                    f"cover the whole run."))
    wide = dict(c.counter_scopes).get("system-wide", 0)
    if wide:
        out.append(("counters", f"{c.name}: the kernel counters (listen overflows, SYN "
                    f"retransmissions, retransmitted segments, connections opened) of {wide} of "
                    f"{sum(n for _, n in c.counter_scopes)} runs with counters were read in the "
                    "host's network namespace, system-wide: they include other traffic on this "
                    "host, so they bound the runs' own from above (the testbed's isolated "
                    "profile counts a run's traffic alone)."))
    if c.think_time is not None:
        out.append(("think-time", f"{c.name}: Locust's think time: {c.think_time}; each user "
                    "waits that long after every response, so Locust's load is closed-loop and "
                    "paced by it: its throughput is not the server's capacity."))
    return out
