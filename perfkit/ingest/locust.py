"""Locust: combine the files of one run (CSVs and ``--json`` stdout) into :class:`Run` records.

The loader calls :func:`parse_files` once per directory with every Locust file in it. Files are
grouped by prefix (``PREFIX_stats.csv``, ``PREFIX_stats_history.csv``, ``PREFIX_failures.csv``,
``PREFIX_exceptions.csv``; Locust 0.8-0.13.2's ``PREFIX_requests.csv`` and
``PREFIX_distribution.csv``, whose percentiles join the requests' rows by name); the ``--json``
output (``run.stdout``, ``stdout.txt`` or ``PREFIX.json``) joins the group of the same prefix,
or the only group when the directory holds one run.

Which numbers win: the ``--json`` totals. Locust rewrites its CSVs every second, so the last
``_stats.csv`` can miss the final second of the run (``clean_u20``: 11300 requests in the CSV,
11738 in the JSON and on the console). The difference is noted on the run. Without ``--json``
the numbers come from ``_stats.csv`` and there is no histogram.

The history, failures and exceptions tables ride along in ``Run.extra``: ``history`` (tuple of
per-second dicts, see :func:`perfkit.ingest.locust_csv.parse_history_csv`),
``history_cumulative_percentiles``, ``failures`` and ``exceptions``. ``users`` and ``url`` are
left None: the loader merges them from the manifest (``-u``, ``--host``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from perfkit.errors import ParseError
from perfkit.ingest.locust_csv import (
    Distribution,
    History,
    parse_distribution_csv,
    parse_exceptions_csv,
    parse_failures_csv,
    parse_history_csv,
    parse_stats_csv,
)
from perfkit.ingest.locust_json import LATENCY_SOURCE, TOOL, parse_json
from perfkit.model import FrozenMap, Run, replaced_run
from perfkit.warning import Code, Warn

__all__ = ["parse_distribution_csv", "parse_exceptions_csv", "parse_failures_csv", "parse_files",
           "parse_history_csv", "parse_json", "parse_stats_csv"]

#: what a file of each kind is named after its prefix (Locust 0.8-0.13.2: ``_requests.csv``)
SUFFIXES = {
    "locust_stats": ("_stats.csv", "_requests.csv"),
    "locust_distribution": ("_distribution.csv",),
    "locust_history": ("_stats_history.csv",),
    "locust_failures": ("_failures.csv",),
    "locust_exceptions": ("_exceptions.csv",),
}
#: the names of the aggregate row in a _distribution.csv (0.8-0.9: "None Total")
_DISTRIBUTION_TOTALS = ("Aggregated", "Total", "None Total", "None Aggregated")


def _prefix(kind: str, path: str) -> str:
    name = os.path.basename(path)
    for suffix in SUFFIXES.get(kind, (".json",)):
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def _groups(files: Sequence[tuple[str, str, str]]) -> list[dict[str, tuple[str, str]]]:
    """Files of one directory grouped per run: ``{kind: (path, text)}`` per group."""
    csv_groups: dict[str, dict[str, tuple[str, str]]] = {}
    jsons: list[tuple[str, str, str]] = []
    for kind, path, text in files:
        if kind == "locust_json":
            jsons.append((_prefix(kind, path), path, text))
        else:
            csv_groups.setdefault(_prefix(kind, path), {})[kind] = (path, text)
    loose = []
    for prefix, path, text in jsons:
        if prefix in csv_groups and "locust_json" not in csv_groups[prefix]:
            csv_groups[prefix]["locust_json"] = (path, text)
        else:
            loose.append({"locust_json": (path, text)})
    waiting = [g for g in csv_groups.values() if "locust_json" not in g]
    if len(loose) == 1 and len(waiting) == 1:
        waiting[0].update(loose.pop())
    return list(csv_groups.values()) + loose


def parse_files(files: Sequence[tuple[str, str, str]], unread: Sequence[str] = ()) -> list[Run]:
    """Runs from the Locust files of one directory: ``[(kind, path, text), ...]``.

    ``kind`` is the sniffed kind (``locust_json``, ``locust_stats``, ``locust_distribution``,
    ``locust_history``, ``locust_failures``, ``locust_exceptions``). Each group of files gives
    one run per request name plus the Aggregated run, from the ``--json`` output when present,
    else from ``_stats.csv`` (with a ``_distribution.csv``'s percentiles); a lone history or
    distribution CSV gives runs from its rows. Malformed input raises
    :class:`~perfkit.errors.ParseError`.

    ``unread``: the directory's other files. One named as a file of a group (``PREFIX_stats.csv``
    beside a ``PREFIX_stats_history.csv`` that is read) is a ParseError naming it: a run is
    never rebuilt from the other files of a group whose stats cannot be read.
    """
    groups = _groups(files)
    _refuse_unread(groups, unread)
    runs: list[Run] = []
    for group in groups:
        runs.extend(_parse_group(group))
    return runs


def _refuse_unread(groups: list[dict[str, tuple[str, str]]], unread: Sequence[str]) -> None:
    """A ParseError for the first of ``unread`` named as a Locust CSV of one of ``groups``."""
    prefixes: dict[str, str] = {}
    for group in groups:
        for kind, (path, _) in group.items():
            prefixes.setdefault(_prefix(kind, path), path)
    for path in sorted(unread):
        for kind, suffixes in SUFFIXES.items():
            prefix = _prefix(kind, path)
            if prefix != os.path.basename(path) and prefix in prefixes:
                from perfkit.ingest.refusal import why_not  # on first use: a rare path
                suffix = next(x for x in suffixes if path.endswith(x))
                raise ParseError(path, 1, f"a Locust {suffix} (the run's "
                                 f"{os.path.basename(prefixes[prefix])} is read beside it; "
                                 "its numbers are not rebuilt from the other files)",
                                 why_not(path))


def _parse_group(group: dict[str, tuple[str, str]]) -> list[Run]:
    sources = tuple(path for path, _ in group.values())

    def parsed(kind, parser):
        if kind not in group:
            return None
        path, text = group[kind]
        return parser(text, path)

    stats = parsed("locust_stats", parse_stats_csv)
    distribution = parsed("locust_distribution", parse_distribution_csv)
    json_runs = parsed("locust_json", parse_json)
    history = parsed("locust_history", parse_history_csv)
    failures = parsed("locust_failures", parse_failures_csv)
    exceptions = parsed("locust_exceptions", parse_exceptions_csv)

    if json_runs is not None:
        runs = json_runs if stats is None else _prefer_json(json_runs, stats)
    elif stats is not None:
        runs = stats if distribution is None else _with_distribution(
            stats, distribution, group["locust_distribution"][0])
    elif distribution is not None:
        runs = _runs_from_distribution(distribution, group["locust_distribution"][0])
    elif history is not None:
        runs = _runs_from_history(history, group["locust_history"][0])
    else:
        path = sources[0]
        runs = [Run(tool=TOOL, source=path, latency_source=LATENCY_SOURCE,
                    endpoint="Aggregated", is_aggregate=True,
                    notes=(Warn(Code.LOCUST_FAILURES_ONLY, path=path),))]
    by_key = None if history is None else _history_by_key(history)
    return [_attach(r, sources, history, by_key, failures, exceptions) for r in runs]


def _key(run: Run) -> tuple[str | None, str | None]:
    return ("", "Aggregated") if run.is_aggregate else (run.method, run.endpoint)


def _prefer_json(json_runs: list[Run], stats: list[Run]) -> list[Run]:
    """JSON numbers, with a note where the CSV disagrees; the CSV's printed rate when final.

    When the CSV's Aggregated totals equal the JSON's, the CSV is final and its ``Requests/s``
    is Locust's own ``total_rps`` (counted from the test start, which the JSON lacks), so the
    throughput, transfer rate and duration are taken from it.
    """
    by_key = {_key(r): r for r in stats}
    csv_agg = next(r for r in stats if r.is_aggregate)
    json_agg = next(r for r in json_runs if r.is_aggregate)
    final = (csv_agg.requests, csv_agg.failures) == (json_agg.requests, json_agg.failures)
    out = []
    for run in json_runs:
        csv_run = by_key.get(_key(run))
        notes = list(run.notes)
        extra = dict(run.extra)
        changes: dict[str, object] = {}
        if csv_run is None:
            notes.append(Warn(Code.LOCUST_JSON_ONLY_ENDPOINT, endpoint=run.endpoint))
        elif (csv_run.requests, csv_run.failures) != (run.requests, run.failures):
            notes.append(Warn(Code.LOCUST_CSV_LAGS_JSON, csv_requests=csv_run.requests,
                              json_requests=run.requests, csv_failures=csv_run.failures,
                              json_failures=run.failures))
        if final and csv_run is not None and csv_run.throughput_rps is not None:
            changes.update(throughput_rps=csv_run.throughput_rps,
                           transfer_bytes_per_s=csv_run.transfer_bytes_per_s,
                           duration_s=csv_run.duration_s)
            extra["failures_per_s"] = csv_run.extra.get("failures_per_s")
            extra["throughput_basis"] = "csv: Requests/s as printed (final totals)"
        extra["csv_requests"] = None if csv_run is None else csv_run.requests
        # every value is frozen already (the runs' own, numbers and text)
        out.append(replaced_run(run, {"notes": tuple(notes), "extra": FrozenMap.wrap(extra),
                                      **changes}))
    return out


def _distribution_row(run: Run, by_name: dict[str, dict]) -> dict | None:
    """The row of a _distribution.csv for ``run``: ``"GET /path"``, or the name alone (rows
    without requests, and a method-less name)."""
    names = [f"{run.method} {run.endpoint}", run.endpoint] if run.method else [run.endpoint]
    if run.is_aggregate:
        names += list(_DISTRIBUTION_TOTALS)
    return next((by_name[n] for n in names if n in by_name), None)


def _with_distribution(runs: list[Run], dist: Distribution, path: str) -> list[Run]:
    """The _requests.csv runs with the percentiles of their _distribution.csv rows."""
    by_name = {row["name"]: row for row in dist.rows}
    used: set[int] = set()
    out = []
    for run in runs:
        row = _distribution_row(run, by_name)
        notes = list(run.notes) + list(dist.notes)
        changes: dict[str, object] = {}
        if row is None:
            notes.append(Warn(Code.LOCUST_NO_DISTRIBUTION_ROW, path=path, endpoint=run.endpoint))
        else:
            used.add(row["line"])
            changes["percentiles_ms"] = FrozenMap.wrap(row["percentiles_ms"])
            if row["requests"] != run.requests:
                notes.append(Warn(Code.LOCUST_DISTRIBUTION_REQUESTS, path=path, line=row["line"],
                                  printed=row["requests"], requests=run.requests))
            if row["na_columns"]:
                notes.append(Warn(Code.LOCUST_NA, where=f"{path}:{row['line']}",
                                  columns=row["na_columns"]))
        out.append(replaced_run(run, {"notes": tuple(notes), **changes}))
    left = [f"{r['name']!r} (line {r['line']})" for r in dist.rows if r["line"] not in used]
    if left:
        at = next(i for i, r in enumerate(out) if r.is_aggregate) if any(
            r.is_aggregate for r in out) else len(out) - 1
        out[at] = replaced_run(out[at], {"notes": out[at].notes + (
            Warn(Code.LOCUST_DISTRIBUTION_ROWS_LEFT_OUT, path=path, rows=left),)})
    return out


def _runs_from_distribution(dist: Distribution, path: str) -> list[Run]:
    """Runs of a lone _distribution.csv: request counts and percentiles only."""
    runs = []
    for i, row in enumerate(dist.rows):
        name = row["name"]
        method, _, endpoint = name.partition(" ")
        if not (endpoint and method.isalpha() and method.isupper() and method != "None"):
            method, endpoint = "", name
        is_agg = i == len(dist.rows) - 1 and name in _DISTRIBUTION_TOTALS
        runs.append(Run(
            tool=TOOL, source=path, latency_source=LATENCY_SOURCE,
            endpoint=endpoint, method=method or None,
            is_aggregate=is_agg, requests=row["requests"],
            percentiles_ms=FrozenMap.wrap(row["percentiles_ms"]),
            notes=dist.notes + (Warn(Code.LOCUST_DISTRIBUTION_ONLY, path=path),),
        ))
    return runs


def _runs_from_history(history: History, path: str) -> list[Run]:
    """Runs from the last history row of each name (totals only: no throughput printed)."""
    last: dict[tuple, dict] = {}
    for row in history.rows:
        last[(row["method"], row["name"])] = row
    runs = []
    for (method, name), row in last.items():
        is_agg = name == "Aggregated" and method is None
        runs.append(Run(
            tool=TOOL, source=path, latency_source=LATENCY_SOURCE, endpoint=name,
            method=method, is_aggregate=is_agg, requests=row["total_requests"],
            failures=row["total_failures"], latency_mean_ms=row["total_latency_mean_ms"],
            latency_min_ms=row["total_latency_min_ms"],
            latency_max_ms=row["total_latency_max_ms"],
            notes=(Warn(Code.LOCUST_HISTORY_ONLY, path=path, timestamp_s=row["timestamp_s"]),),
        ))
    runs.sort(key=lambda r: (r.is_aggregate, r.endpoint or "", r.method or ""))
    return runs


def _history_by_key(history: History) -> dict[object, list[FrozenMap]]:
    """The history's rows, frozen (built frozen: not copied again), under the key of the run
    they belong to (:func:`_run_key`): the Aggregated rows, or a (method, name)'s."""
    out: dict[object, list[FrozenMap]] = {}
    for r in history.rows:
        aggregated = r["name"] == "Aggregated" and r["method"] is None
        out.setdefault(_AGGREGATED if aggregated else (r["method"], r["name"]), []).append(
            FrozenMap.wrap(r))
    return out


_AGGREGATED = object()


def _run_key(run: Run) -> object:
    return _AGGREGATED if run.is_aggregate else (run.method, run.endpoint)


def _attach(run: Run, sources: tuple[str, ...], history: History | None,
            history_by_key: dict[object, list[FrozenMap]] | None,
            failures: tuple | None, exceptions: tuple | None) -> Run:
    extra = dict(run.extra)
    notes = list(run.notes)
    extra["sources"] = sources
    if history is not None and history_by_key is not None:
        extra["history"] = tuple(history_by_key.get(_run_key(run), ()))
        extra["history_cumulative_percentiles"] = history.cumulative_percentiles
        if run.is_aggregate:
            notes.extend(history.notes)
    if failures is not None:  # rows of text, numbers and tuples of text: frozen as maps
        extra["failures"] = tuple(FrozenMap(f) for f in failures if run.is_aggregate or
                                  (f["method"], f["name"]) == (run.method, run.endpoint))
    if exceptions is not None and run.is_aggregate:
        extra["exceptions"] = tuple(map(FrozenMap, exceptions))
    return replaced_run(run, {"extra": FrozenMap.wrap(extra), "notes": tuple(notes)})
