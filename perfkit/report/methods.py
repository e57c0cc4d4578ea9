"""The Methods section, written from the manifests and the analyses (never typed by hand).

One paragraph per experiment, in plain sentences a reader can paste into a paper: the design,
the tools with exact versions and their command line, the host, the statistics of every
analysis shown (each result's ``describe()``), the coordinated-omission status of each tool,
and the runs excluded or in doubt with their reasons. :mod:`perfkit.report.methods_page`
collects the paragraphs of a report into ``methods.md`` and the Methods page, :data:`PAGE`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from perfkit.analysis.context import HOST_BUSY_PERCENT, RECORDED, Provenance, backlog_text
from perfkit.analysis.core import GENERATOR_BUSY
from perfkit.formatting import consecutive_runs, level_text
from perfkit.vocabulary import RunStatus
from perfkit.wording import WRK_LATENCY

#: the report's Methods page (every page links to it; :mod:`perfkit.report.methods_page`)
PAGE = "methods.html"


def anchor(name: str) -> str:
    """The id of an experiment's section on the Methods page."""
    return re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-") or "methods"


#: how each tool's latencies relate to coordinated omission
CO_STATUS = {
    "wrk2": "wrk2 runs at a constant offered rate and measures latency from each request's "
            "intended send time (corrected for coordinated omission)",
    "wrk": WRK_LATENCY,
    "locust": "Locust is closed-loop (its latencies understate the tail) and rounds response "
              "times before taking percentiles",
}


def _levels(values: Sequence) -> str:
    return ", ".join(level_text(v) for v in values)


def _range(values: Sequence[float], unit: str) -> str:
    if not values:
        return "not recorded"
    lo, hi = f"{min(values):.3g}", f"{max(values):.3g}"
    return f"{lo} {unit}" if lo == hi else f"{lo}-{hi} {unit}"


def _span(lo: float, hi: float, unit: str) -> str:
    """``"4.2-5.2 s"``, or one value when both print alike (``"9.9 s"``, never 9.9-9.9)."""
    a, b = f"{lo:.1f}", f"{hi:.1f}"
    return f"{a} {unit}" if a == b else f"{a}-{b} {unit}"


def _spans(labels: Sequence[str], order: Sequence[str]) -> str:
    """``labels`` as runs of consecutive ones in ``order``: ``"v01-v07, v10"``."""
    runs = consecutive_runs(order.index(x) for x in labels)
    return ", ".join(order[a] if a == b else f"{order[a]}-{order[b]}" for a, b in runs)


def history_design(p: Provenance) -> str:
    """What a history's runs were, from its data: its labels and the server profile each
    label's runs recorded (a history has no designed factor, but its labels may change the
    server): ``"over 16 labels (v01 to v16) with no designed factor; the server profile changed
    with the labels: proxy (v01-v07), ..."``."""
    order = [label for label, _ in p.label_profiles]
    by: dict[str, list[str]] = {}
    for label, profiles in p.label_profiles:
        for prof in profiles:
            by.setdefault(prof, []).append(label)
    head = (f"over {len(order)} label{'s' if len(order) != 1 else ''} ({order[0]} to "
            f"{order[-1]}) with no designed factor" if len(order) > 1
            else f"of one label ({order[0]})")
    if len(by) > 1:
        return (head + "; the server profile changed with the labels: "
                + ", ".join(f"{prof} ({_spans(labels, order)})" for prof, labels in by.items()))
    return head + (f", all of server profile {next(iter(by))}" if by else "")


def design_sentence(p: Provenance) -> str:
    factors = ("over factors " + "; ".join(f"{f} ({_levels(v)})" for f, v in p.factors.items())
               if p.factors else history_design(p) if p.label_profiles else
               f"of {len(p.profiles)} server profiles ({', '.join(p.profiles)}) with no designed "
               "factor" if len(p.profiles) > 1 else "of one configuration")
    load = "; ".join(f"{c} {_levels(v)}" for c, v in p.load.items()) or "one load level"
    reps = (f"{p.repetitions} repetition{'s' if p.repetitions != 1 else ''}" if p.repetitions
            else "repetitions not recorded")
    order = p.randomization + (f" (seed {p.seed})" if p.seed is not None else "")
    extra = []
    if p.warmup:
        extra.append(f"a warm-up of {p.warmup} before each run")
    if p.pause_s is not None:
        extra.append(f"a pause of {p.pause_s:g} s between runs")
    tail = f", with {' and '.join(extra)}" if extra else ""
    runs = f"{p.n_runs} run{'s' if p.n_runs != 1 else ''}"
    return (f"Experiment {p.name}: {runs} {factors} at {load}, "
            f"{reps}, in this run order: {order}{tail}; runs lasted {_range(p.durations_s, 's')} "
            f"({p.first_utc or '?'} to {p.last_utc or '?'}).")


def tools_sentence(p: Provenance) -> str:
    tools = "; ".join(f"{tool} ({version})" for tool, version in p.tools)
    server = (f" against nginx {', '.join(p.nginx_versions)}" if p.nginx_versions else "")
    profiles = f" (profiles {', '.join(p.profiles)})" if p.profiles else ""
    varying = "; ".join(
        f"{{{name}}} is " + " or ".join(v + (f" (profile {', '.join(labs)})" if labs else "")
                                     for v, labs in values.items())
        for name, values in p.argv_values.items())
    return relative(f"Load was generated by {tools}{server}{profiles}, as `{p.argv}`"
                    + (f", where {varying}" if varying else "") + ".")


#: folders of a perfkit checkout a recorded path is shown from (``tests/locust/x.py``)
REPO_FOLDERS = ("tests", "data", "examples", "notebooks", "params", "scripts", "benchmarks")
_ABSOLUTE = re.compile(r"(?<![\w.:/])/(?:[^\s/`'\"()]+/)*[^\s/`'\"()]+")


def relative(text: str) -> str:
    """``text`` with every absolute path of the recording machine made relative: a program
    by its name (``.../bin/locust`` -> ``locust``), a package by its ``site-packages`` path,
    a file of a perfkit checkout from its folder (``tests/locust/locustfile.py``), anything
    else by its name. A report carries no path of the machine that made it."""
    def short(m: re.Match) -> str:
        parts = m.group(0).strip("/").split("/")
        if "site-packages" in parts:
            return "/".join(parts[parts.index("site-packages"):])
        if len(parts) > 1 and parts[-2] == "bin":
            return parts[-1]
        for folder in REPO_FOLDERS:
            if folder in parts[:-1]:
                return "/".join(parts[parts.index(folder):])
        return parts[-1]

    return _ABSOLUTE.sub(short, text)


def host_sentence(p: Provenance) -> str:
    h = p.host
    cpu = f"{h.get('cpus', '?')} CPUs" + (f" ({h['cpu_model']})" if h.get("cpu_model") else "")
    mem = f", {h['memory_bytes'] / 2**30:.0f} GiB" if isinstance(h.get("memory_bytes"), int) \
        else ""
    os_ = ", ".join(str(h[k]) for k in ("os", "kernel") if h.get(k))
    where = ("client and server on the same host over loopback" if p.same_host
             else "client and server on different hosts")
    sysctls = "; ".join(f"{k} = {' | '.join(v)}" for k, v in p.sysctls.items())
    busy = (f", at or above {GENERATOR_BUSY:.0%} of its cores in {p.generator_busy}"
            if p.generator_busy else "")
    cpu_use = (f"generator CPU recorded for {p.generator_cpu_known} of {p.n_runs} runs{busy}"
               if p.generator_cpu_known else "generator CPU not recorded")
    c = p.conditions
    if c is not None and c.host_cpu_known:
        cpu_use += (f"; the host's CPU (client and server together) averaged >= "
                    f"{HOST_BUSY_PERCENT:g}% in {c.host_busy} of {c.host_cpu_known} runs")
    return (f"Host: {cpu}{mem}, {os_}; {where}; {cpu_use}."
            + (f" Kernel settings recorded on the host: {sysctls}." if sysctls else "")
            + namespace_sentence(p) + conditions_sentence(p))


def conditions_sentence(p: Provenance) -> str:
    """The accept queue in effect (with its source), the testbed's restarts, wrk2's measured
    window and Locust's think time (:mod:`perfkit.analysis.context._conditions`)."""
    c = p.conditions
    if c is None:
        return ""
    parts = []
    queues = [b for b in c.backlogs if b.accept_queue is not None]
    if queues and not c.namespaced:
        parts.append("Accept queue in effect (the listen backlog capped by somaxconn): "
                     + backlog_text(queues) + ".")
    if c.server_starts:
        parts.append(f"The testbed started the server {c.server_starts} time(s) for "
                     f"{c.n_runs} runs (restart {c.restart}), deleting its proxy cache and "
                     "access log at each start.")
    if c.measured_s:
        n, lo, _, hi = c.measured_s
        parts.append(f"wrk2 reset its histogram after its calibration, so its percentiles "
                     f"cover {_span(lo, hi, 's')} at the end of "
                     + ("the run (1 run)." if n == 1 else f"each run ({n} runs)."))
    if c.counter_scopes:
        total = sum(n for _, n in c.counter_scopes)
        scopes = ", ".join(("in the server's own network namespace" if k == "netns" else k)
                           + ("" if n == total else f" in {n} of {total} runs")
                           for k, n in c.counter_scopes)
        parts.append("What the server and the kernel counted over each run (nginx's "
                     "stub_status, the kernel's TCP counters, the error log, cache statuses) was "
                     "recorded from just before the load generator started to just after it "
                     f"exited ({total} runs); the kernel's counters were read {scopes}.")
    if c.think_time is not None:
        # the Methods state what the manifests recorded: a think time read from the
        # repository now may not be the one the runs had
        parts.append(f"Locust's think time: {c.think_time}." if c.think_time.endswith(
            RECORDED) else "Locust's think time is not recorded in the run manifests.")
    return "".join(f" {x}" for x in parts)


def namespace_sentence(p: Provenance) -> str:
    """The settings the runs in a network namespace actually ran with (the namespace's
    ``net.core.somaxconn`` replaces the host's)."""
    if not p.namespaces:
        return ""
    every = "All" if p.n_namespaced == p.n_runs else f"{p.n_namespaced} of"
    keys = list(dict.fromkeys(k for v in p.namespaces.values() for k in v))
    parts = []
    for key in keys:
        by_value: dict[str, list[str]] = {}
        for prof, values in p.namespaces.items():
            if key in values:
                by_value.setdefault(values[key], []).append(prof)
        # every profile alike: their count, not their names again
        parts.append(f"{key} " + ", ".join(
            f"{v} (all {len(profs)} profiles)" if len(profs) == len(p.namespaces) >= 3
            else f"{v} ({', '.join(profs)})" for v, profs in by_value.items()))
    host = [f"{k} = {' | '.join(v)}" for k, v in p.sysctls.items() if k.startswith("net.")]
    note = (f": the host's network settings ({'; '.join(host)}) do not apply to them"
            if host else "")
    return (f" {every} {p.n_runs} runs ran server and load generator in a network namespace "
            f"of their own, which has its own network settings{note}; the testbed recorded, "
            f"in each namespace: {'; '.join(parts)}.")


def exclusions_sentence(p: Provenance) -> str:
    parts = []
    if p.unreadable:
        named = "; ".join(p.unreadable_files[:5]) + (
            f"; and {len(p.unreadable_files) - 5} more" if len(p.unreadable_files) > 5 else "")
        parts.append(f"{p.unreadable} file(s) could not be read and were left out"
                     + (f" ({named})" if named else ""))
    names: dict[str, str] = {
        RunStatus.FAILED: str(RunStatus.FAILED),
        RunStatus.SATURATED: "did not sustain their offered rate",
        RunStatus.SHORT: "fell slightly short of their offered rate and were kept, in doubt",
        RunStatus.PARTIAL: "had fewer connections get in than asked and were kept, in doubt "
                           "(their latencies describe the connections that got in)"}
    for status, reasons in p.statuses.items():
        parts.append(f"{len(reasons)} run(s) {names.get(status, status)} "
                     f"({'; '.join(reasons)})")
    if not parts:
        return "No run failed or was excluded."
    return "Exclusions and doubts: " + "; ".join(parts) + "."


#: how the Methods' backend sentence opens (the pages show it beside their answers)
BACKEND = "Backend: "


def backend_sentence(backend: str) -> str:
    """The backend as the Methods state it (:func:`perfkit.analysis.context._levels.backend`)."""
    return f"{BACKEND}{backend}." if backend else ""


def record(p: Provenance, analyses: Iterable[str] = (), backend: str = ""
           ) -> dict[str, list[str]]:
    """The parts of an experiment's Methods paragraph, kept apart so that the index can merge
    the analyses several notebooks ran on one experiment (see :func:`merge`); ``backend``:
    what the server did with each request (:func:`perfkit.analysis.context._levels.backend`)."""
    co = "; ".join(CO_STATUS[t] for t in sorted({t for t, _ in p.tools}) if t in CO_STATUS)
    return {"setup": [design_sentence(p), tools_sentence(p), backend_sentence(backend),
                      host_sentence(p)],
            "analyses": list(dict.fromkeys(analyses)),
            "closing": [f"{co}." if co else "", exclusions_sentence(p)]}


#: the ``scope`` of a record that is no experiment's (:func:`shared`)
SHARED = "shared"


def shared(sentences: Iterable[str]) -> dict[str, list[str]]:
    """A Methods record that is no experiment's: what holds for every experiment of a page (a
    rule, a check), stated once instead of in each experiment's paragraph. Keyed by what it
    covers (``"every experiment: drift check"``) beside the experiments' records."""
    return {"setup": [], "analyses": list(dict.fromkeys(sentences)), "closing": [],
            "scope": [SHARED]}


def merge(records: Iterable[Mapping[str, list[str]]]) -> dict[str, list[str]]:
    """One record from several of the same experiment: their analyses joined, in order."""
    records = list(records)
    out = {k: list(v) for k, v in records[0].items()}
    for r in records[1:]:
        out["analyses"] = list(dict.fromkeys([*out["analyses"], *r["analyses"]]))
    return out


def paragraph(rec: Mapping[str, list[str]]) -> str:
    """The Methods paragraph of one experiment, from its :func:`record` (the sentences of one
    analysis run on several metrics merged, :func:`merge_alike`)."""
    if SHARED in rec.get("scope", ()):
        return " ".join(merge_alike(rec["analyses"]))
    stats = ("The run is the experimental unit: every statistic is computed over per-run "
             "values, never over pooled requests.")
    parts = [*rec["setup"], stats, *merge_alike(rec["analyses"]), *rec["closing"]]
    return " ".join(p for p in parts if p)


#: sentences merge when what they share is at least this share of each
ALIKE_SHARE = 0.7


def merge_alike(sentences: Iterable[str]) -> list[str]:
    """Sentences that differ in one span only (an analysis described once per metric) as one
    sentence naming every value of that span: ``"P99 latency was compared ..."`` and
    ``"Throughput was compared ..."`` -> ``"P99 latency and throughput were compared ..."``."""
    groups: list[list[str]] = []
    for s in dict.fromkeys(sentences):
        group = next((g for g in groups if _shared(*g, s) is not None), None)
        if group is None:
            groups.append([s])
        else:
            group.append(s)
    out = []
    for g in groups:
        if len(g) == 1:
            out.append(g[0])
            continue
        n, k = _shared(*g)  # type: ignore[misc]
        out.append(_joined(g[0][:n], g[0][len(g[0]) - k:], [x[n:len(x) - k] for x in g]))
    return out


def _shared(*sentences: str) -> tuple[int, int] | None:
    """Lengths of the prefix and suffix (of whole words) all ``sentences`` share, when they
    differ in one span and share at least :data:`ALIKE_SHARE` of each; else None."""
    short = min(len(x) for x in sentences)
    n = 0
    while n < short and len({x[n] for x in sentences}) == 1:
        n += 1
    n = sentences[0].rfind(" ", 0, n) + 1 if n < short else n
    k = 0
    while k < short - n and len({x[-1 - k] for x in sentences}) == 1:
        k += 1
    first = sentences[0]
    while k and (first[len(first) - k].isalnum() or first[len(first) - k] == "_"):
        k -= 1
    if any(len(x) - n - k <= 0 or n + k < ALIKE_SHARE * len(x) for x in sentences):
        return None
    return n, k


def _joined(prefix: str, suffix: str, middles: list[str]) -> str:
    if not prefix:  # the span opens the sentence: later items are not capitalised there
        middles = [middles[0], *(m[:1].lower() + m[1:] for m in middles[1:])]
        suffix = suffix.replace(" was ", " were ", 1) if suffix.startswith(" was ") else suffix
    items = middles[0] if len(middles) == 1 else \
        ", ".join(middles[:-1]) + " and " + middles[-1]
    return prefix + items + suffix


def methods_paragraph(p: Provenance, analyses: Iterable[str] = ()) -> str:
    """The Methods paragraph of one experiment; ``analyses`` are the results' ``describe()``."""
    return paragraph(record(p, analyses))
