"""What an experiment's design file and run manifests record: the facts a Methods section and a
threats-to-validity list are written from (never typed by hand).

:func:`provenance` reads them from an :class:`~perfkit.analysis.core._experiment.Experiment`:
the design (factors and levels, load levels, repetitions, randomization and blocking, seed,
warm-up, pause, duration), the tools with their exact versions and an argv template (the
parts that vary between runs shown as ``{connections}``...), the host (CPUs, kernel, the
sysctls recorded), the network namespaces a server ran in (whose ``net.core.somaxconn``
replaces the host's, and the accept queue the kernel granted), the server (nginx version,
profiles), the generator's CPU, the runs' statuses (failed, saturated, in doubt) under
the one rule of :mod:`perfkit.analysis.core._runstatus`, and the conditions of
:mod:`perfkit.analysis.context._conditions` (host CPU, listen backlog, restarts, wrk2's measured
window, Locust's think time).
"""

from __future__ import annotations

import dataclasses
import math
import re
import weakref
from collections.abc import Mapping
from typing import Any, cast

from perfkit.analysis.context._conditions import Conditions, conditions
from perfkit.analysis.core import Experiment, experiment_statuses, generator_busy, generator_share
from perfkit.formatting import level_text, plain
from perfkit.units import parse_duration_arg
from perfkit.vocabulary import RunStatus

_ARGV_LOAD = {"-c": "connections", "--connections": "connections", "-t": "threads",
              "--threads": "threads", "-R": "rate", "--rate": "rate", "-u": "users",
              "--users": "users", "-d": "duration", "--duration": "duration"}


@dataclasses.dataclass(frozen=True)
class Provenance:
    """The recorded facts of one experiment (see the module docstring)."""

    name: str
    n_runs: int
    tools: tuple[tuple[str, str], ...]
    argv: str
    argv_values: Mapping[str, Mapping[str, tuple[str, ...]]]  # {port}: {"8080": ("default",)}
    factors: Mapping[str, tuple[Any, ...]]
    load: Mapping[str, tuple[Any, ...]]
    repetitions: int | None
    randomization: str
    blocked: bool
    seed: int | None
    warmup: str | None
    pause_s: float | None
    durations_s: tuple[float, ...]
    host: Mapping[str, Any]
    sysctls: Mapping[str, tuple[str, ...]]
    namespaces: Mapping[str, Mapping[str, str]]  # profile -> settings inside its netns
    n_namespaced: int  # runs whose server ran in a network namespace of its own
    nginx_versions: tuple[str, ...]
    profiles: tuple[str, ...]
    urls: tuple[str, ...]
    same_host: bool
    generator_cpu_known: int
    generator_busy: int
    first_utc: str | None  # the first run's start
    last_utc: str | None  # the last run's end (its start when no end was recorded)
    unreadable: int
    statuses: Mapping[str, tuple[str, ...]]
    #: host CPU, backlog, restarts, wrk2's window, think time (:mod:`.conditions`)
    conditions: Conditions | None = None
    #: a history's labels in series order, each with the server profile(s) its runs recorded
    #: (a history has no designed factor: its labels may change the server)
    label_profiles: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: the files that could not be read (``path:line: reason`` each), left out
    unreadable_files: tuple[str, ...] = ()


def provenance(exp: Experiment) -> Provenance:
    """What ``exp``'s runs were, and how they were run (the Methods record's facts and the
    threats' inputs): worked out once per experiment object, which is frozen (a report page
    asked 7 times for its experiment's, 0.4 s each time on the tuning-effects page)."""
    key = id(exp)
    kept = _KEPT.get(key)
    if kept is not None and kept[0]() is exp:
        return kept[1]
    made = _provenance(exp)

    def forget(ref: weakref.ref) -> None:  # the experiment is gone (not one reusing its id)
        if _KEPT.get(key, (None,))[0] is ref:
            del _KEPT[key]

    _KEPT[key] = (weakref.ref(exp, forget), made)
    return made


#: each live experiment's provenance, by the experiment's id (an Experiment is frozen, but its
#: frame makes it unhashable); an entry goes with its experiment
_KEPT: dict[int, tuple[weakref.ref, Provenance]] = {}


def _provenance(exp: Experiment) -> Provenance:
    rows = exp.rows()
    runs = rows.runs
    manifests = [r.manifest or {} for r in runs]
    design = dict(exp.design or {})
    factors = {f: tuple(sorted({plain(v) for v in rows.frame[f].dropna()},
                               key=lambda v: _natural(str(v))))
               for f in exp.factors}
    load = {c: tuple(sorted({plain(v) for v in rows.frame[c].dropna()}))
            for c in ("connections", "users", "target_rate_rps", "threads")
            if c in rows.frame and rows.frame[c].notna().any()}
    starts = sorted(r.start_utc for r in runs if r.start_utc)
    ends = sorted(r.end_utc for r in runs if r.end_utc)
    shares = [generator_share(r) for r in runs]
    known = [s for s in shares if not math.isnan(s)]
    argvs = [m.get("argv") or list(r.argv or ()) for m, r in zip(manifests, runs, strict=True)]
    return Provenance(
        name=exp.name, n_runs=len(runs),
        tools=tuple(sorted({(r.tool, r.tool_version or "version not recorded") for r in runs})),
        argv=argv_template(argvs),
        argv_values=argv_values(argvs, [str((m.get("server") or {}).get("profile") or "")
                                        for m in manifests]),
        factors=factors, load=load,
        repetitions=_int(design.get("repetitions")) or _max(rows.frame, "repetition"),
        randomization=_randomization(design, rows.frame),
        blocked="history" not in design and _blocked(rows.frame),
        seed=_int(design.get("seed")), warmup=_text(design.get("warmup")),
        pause_s=_seconds(design.get("pause")),
        durations_s=tuple(sorted({float(d) for d in rows.frame["duration_s"].dropna()})),
        host=_host(manifests), sysctls=_sysctls(manifests),
        namespaces=_namespaces(manifests),
        n_namespaced=sum(1 for m in manifests if (m.get("server") or {}).get("netns")),
        nginx_versions=tuple(sorted({str(v) for m in manifests
                                     if (v := (m.get("server") or {}).get("nginx_version"))})),
        profiles=tuple(sorted({str(p) for m in manifests
                               if (p := (m.get("server") or {}).get("profile"))})),
        urls=tuple(sorted({r.url for r in runs if r.url})),
        same_host=all(_loopback(r.url) for r in runs if r.url),
        generator_cpu_known=len(known),
        generator_busy=sum(generator_busy(r) for r in runs),
        first_utc=starts[0] if starts else None,
        last_utc=ends[-1] if ends else (starts[-1] if starts else None),
        unreadable=len(exp.errors), statuses=_statuses(exp), conditions=conditions(exp),
        label_profiles=_label_profiles(rows.frame, manifests),
        unreadable_files=tuple(map(str, exp.errors)))


def _label_profiles(frame, manifests: list[Mapping]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Per label of a history (``label_index`` order): the server profiles its runs recorded."""
    if "label" not in frame or "label_index" not in frame:
        return ()
    found: dict[tuple[int, str], set[str]] = {}
    for (label, index), m in zip(frame[["label", "label_index"]].itertuples(index=False),
                                 manifests, strict=True):
        profile = (m.get("server") or {}).get("profile")
        found.setdefault((int(index), str(label)), set()).update([str(profile)] if profile
                                                                  else [])
    return tuple((label, tuple(sorted(found[(i, label)]))) for i, label in sorted(found))


def _statuses(exp: Experiment) -> dict[str, tuple[str, ...]]:
    out: dict[str, list[str]] = {}
    for run, s in zip(exp.rows().runs, experiment_statuses(exp), strict=True):
        if s.status != RunStatus.OK:
            out.setdefault(s.status, []).append(f"{run.run_id or run.source}: {s.reason}")
    return {k: tuple(v) for k, v in out.items()}


def argv_template(argvs: list[list[str]]) -> str:
    """One command line for all runs: arguments that differ become ``{name}``.

    ``wrk -t2 -c{connections} -d5s --latency http://127.0.0.1:{port}/``; an option's value is
    named after the option when perfkit knows it, a URL keeps its common parts (only the
    differing scheme, host, port or path becomes a placeholder), else ``{value}``.
    """
    return " ".join(text for text, _ in _argv_parts(argvs))


def argv_values(argvs: list[list[str]], labels: list[str]) -> dict[str, dict[str, tuple]]:
    """The values of the placeholders of :func:`argv_template` that are not load levels (a
    URL's ``{port}``...): each value with the ``labels`` (server profiles) of its runs."""
    keep = [(list(a), lab) for a, lab in zip(argvs, labels, strict=True) if a]
    out: dict[str, dict[str, set]] = {}
    for _, per_run in _argv_parts([a for a, _ in keep]):
        for name, values in per_run.items():
            for value, (_, label) in zip(values, keep, strict=True):
                out.setdefault(name, {}).setdefault(value, set()).update([label] if label else [])
    return {n: {v: tuple(sorted(labs)) for v, labs in vals.items()} for n, vals in out.items()}


_URL_PARTS = ("scheme", "host", "port", "path")


def _argv_parts(argvs: list[list[str]]) -> list[tuple[str, dict[str, list[str]]]]:
    """Per argument position: its text in the template and, for a URL's placeholders, the
    value each argv has (load placeholders are named, their values are in the load)."""
    argvs = [list(a) for a in argvs if a]
    if not argvs:
        return []
    out: list[tuple[str, dict[str, list[str]]]] = []
    for i in range(max(len(a) for a in argvs)):
        column = [a[i] if i < len(a) else "" for a in argvs]
        first = column[0]
        if len(set(column)) == 1:
            out.append((first.rsplit("/", 1)[-1] if i == 0 else first, {}))
        elif all(re.match(r"^https?://", v) for v in column):
            out.append(_url_template(column))
        else:
            out.append((_placeholder(first, argvs[0][i - 1] if i else ""), {}))
    return out


def _url_template(urls: list[str]) -> tuple[str, dict[str, list[str]]]:
    """``http://127.0.0.1:{port}/`` and ``{"port": [...]}`` from URLs that differ."""
    # each URL starts with http(s):// (the caller's check), so the pattern always matches
    split = [cast(re.Match[str], re.match(r"^(https?)://(\[[^]]*\]|[^/:]*)(?::(\d+))?(.*)$", u))
             for u in urls]
    parts = {name: [m.group(k + 1) or "" for m in split] for k, name in enumerate(_URL_PARTS)}
    shown = {n: (v[0] if len(set(v)) == 1 else f"{{{n}}}") for n, v in parts.items()}
    text = (f"{shown['scheme']}://{shown['host']}" + (f":{shown['port']}" if shown["port"]
                                                         else "") + shown["path"])
    return text, {n: v for n, v in parts.items() if len(set(v)) > 1}


def _placeholder(arg: str, previous: str) -> str:
    if previous in _ARGV_LOAD:  # "-u 60": the value of the option before it
        return f"{{{_ARGV_LOAD[previous]}}}"
    m = re.match(r"^(-[a-zA-Z])(.+)$", arg)
    if m and m.group(1) in _ARGV_LOAD:
        return f"{m.group(1)}{{{_ARGV_LOAD[m.group(1)]}}}"
    return "{value}"


def _host(manifests: list[Mapping]) -> dict[str, Any]:
    out: dict[str, set] = {}
    for m in manifests:
        for k, v in (m.get("host") or {}).items():
            if v not in (None, "") and k != "note":
                out.setdefault(k, set()).add(v)
    return {k: next(iter(v)) if len(v) == 1 else tuple(sorted(map(str, v)))
            for k, v in out.items()}


def _sysctls(manifests: list[Mapping]) -> dict[str, tuple[str, ...]]:
    out: dict[str, set] = {}
    for m in manifests:
        for k, v in (m.get("sysctls") or {}).items():
            if v not in (None, ""):
                out.setdefault(k, set()).add(str(v))
    return {k: tuple(sorted(v)) for k, v in sorted(out.items())}


def _namespaces(manifests: list[Mapping]) -> dict[str, dict[str, str]]:
    """Per server profile run in a network namespace of its own (``server.netns``): the
    namespace's ``net.core.somaxconn`` as the testbed read it, the listen backlog nginx asked
    for and the accept queue the kernel granted (``ss``'s cap, else min of the two)."""
    found: dict[str, dict[str, set]] = {}
    for m in manifests:
        server = m.get("server") or {}
        if not server.get("netns"):
            continue
        values = {"net.core.somaxconn": server.get("somaxconn"),
                  "listen backlog": server.get("backlog"),
                  "accept queue": server.get("accept_queue_max",
                                             server.get("effective_backlog"))}
        into = found.setdefault(str(server.get("profile") or "?"), {})
        for k, v in values.items():
            if v not in (None, ""):
                into.setdefault(k, set()).add(str(v))
    return {prof: {k: " | ".join(sorted(v, key=_natural)) for k, v in vals.items()}
            for prof, vals in found.items()}


def _natural(text: str) -> tuple:
    return (0, float(text), "") if re.fullmatch(r"-?\d+(\.\d+)?", text) else (1, 0.0, text)


def _randomization(design: Mapping, frame) -> str:
    imported = design.get("imported") or {}
    if isinstance(imported, Mapping) and imported.get("randomization"):
        return " ".join(str(imported["randomization"]).split())
    history = design.get("history")
    if isinstance(history, Mapping):
        labels = list(history.get("labels") or [])
        span = f" ({labels[0]} first, {labels[-1]} last)" if labels else ""
        return (f"one CI job per label, in label (time) order{span}, each job's runs one after "
                "another (not randomized: a change of the testbed over time is confounded with "
                "the labels)")
    if _blocked(frame):
        return "randomized complete blocks"
    return "not recorded"


def _blocked(frame) -> bool:
    """Runs in two or more blocks, each holding more than one configuration (a block of one
    run, a history job's repetition, is no randomized block)."""
    if "block" not in frame or not frame["block"].notna().all() \
            or frame["block"].nunique() < 2:
        return False
    return bool(frame.groupby("block").size().min() > 1)


def _loopback(url: str) -> bool:
    return bool(re.match(r"^https?://(127\.\d+\.\d+\.\d+|localhost|\[::1\])(:|/|$)", url))


def _int(value: Any) -> int | None:
    try:
        return int(value) if value not in (None, "") else None
    except (TypeError, ValueError):
        return None


def _max(frame, col: str) -> int | None:
    return int(frame[col].max()) if col in frame and frame[col].notna().any() else None


def _text(value: Any) -> str | None:
    if value in (None, "", "none"):
        return None
    if isinstance(value, Mapping):
        return ", ".join(f"{k} {level_text(v)}" for k, v in value.items())
    return str(value)


def _seconds(value: Any) -> float | None:
    if value in (None, ""):
        return None
    try:
        return float(value) if isinstance(value, int | float) else parse_duration_arg(str(value))
    except Exception:  # noqa: BLE001 - a design written by hand may hold anything
        return None
