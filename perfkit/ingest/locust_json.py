"""Pure parser for what Locust's ``--json`` prints on stdout.

The document is a JSON array with one object per request name (``StatsEntry.serialize`` in
``locust/stats.py``): counts, summed response time, min/max, content length, the
``response_times`` buckets (rounded ms -> count) and per-second request counts. It holds no
Aggregated entry and no percentiles, so both are rebuilt here the way Locust builds them:

- the Aggregated entry sums the entries (``StatsEntry.extend``): counts and buckets added,
  ``start_time`` the earliest, ``last_request_timestamp`` the latest, min of mins, max of maxes;
- percentiles use Locust's own rule (``calculate_response_time_percentile``) on the rounded
  buckets, for the percentiles Locust reports (``PERCENTILES_TO_REPORT``);
- throughput is Locust's ``total_rps``: requests / (last request timestamp - start time), with
  the timestamps of the whole run (``self.stats``), not of the entry, for every row.

The JSON records each entry's ``start_time`` (its first request) but not the moment the test
started, which Locust's console uses; so the throughput here counts from the first request and
can exceed the console's figure by a fraction of a percent. :func:`perfkit.ingest.locust.
parse_files` uses the printed ``Requests/s`` of the CSV instead when the CSV holds the final
totals.
"""

from __future__ import annotations

import bisect
import json
import math
import re
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any

from perfkit.errors import ParseError
from perfkit.histogram import HIGHEST_US, LatencyHistogram
from perfkit.ingest.locust_csv import LATENCY_SOURCE, TOOL, check_text
from perfkit.ingest.locust_keys import MAX_COUNT, numeric_keys
from perfkit.model import FrozenMap, Run, built_run, replaced_run
from perfkit.warning import Code, Warn

#: Locust's PERCENTILES_TO_REPORT, keyed by percentile on perfkit's 0-100 scale. The fractions
#: are Locust's own literals so that ``int(n * fraction)`` rounds exactly as Locust's does.
LOCUST_FRACTIONS = {50.0: 0.50, 66.0: 0.66, 75.0: 0.75, 80.0: 0.80, 90.0: 0.90, 95.0: 0.95,
                    98.0: 0.98, 99.0: 0.99, 99.9: 0.999, 99.99: 0.9999, 100.0: 1.0}

_NUMBER = (int, float)
_LONG_NUMBER = re.compile(r"\d{1000,}", re.ASCII)
#: key -> (accepted types, may be null)
_REQUIRED = {
    "name": ((str,), False),
    "method": ((str,), True),
    "num_requests": ((int,), False),
    "num_failures": ((int,), False),
    "total_response_time": (_NUMBER, False),
    "max_response_time": (_NUMBER, False),
    "min_response_time": (_NUMBER, True),
    "total_content_length": ((int,), False),
    "response_times": ((dict,), False),
    "start_time": (_NUMBER, False),
    "last_request_timestamp": (_NUMBER, True),
}
_OPTIONAL = {"num_none_requests": ((int,), False), "num_reqs_per_sec": ((dict,), False),
             "num_fail_per_sec": ((dict,), False)}
WHAT = "a JSON array of Locust request statistics (locust --json)"


@dataclass(frozen=True)
class Entry:
    """One request name's statistics, as Locust serialised them (times in ms, epoch seconds)."""

    name: str
    method: str | None
    num_requests: int
    num_none_requests: int
    num_failures: int
    total_response_time_ms: float
    min_response_time_ms: float | None
    max_response_time_ms: float
    total_content_length_bytes: int
    response_times: Mapping[float, int]
    start_time_s: float
    last_request_timestamp_s: float | None
    requests_by_second: Mapping[int, int] = field(default_factory=dict)
    failures_by_second: Mapping[int, int] = field(default_factory=dict)


def locust_percentile_ms(buckets: Mapping[float, int], num_requests: int,
                         fraction: float) -> float | None:
    """Locust's percentile of rounded response times (``calculate_response_time_percentile``).

    Locust walks the buckets from the slowest down and returns the first one at which at most
    ``int(num_requests * fraction)`` requests remain below. Equivalently: the largest bucket
    ``k`` with ``num_requests - count(>= k) <= int(num_requests * fraction)``. None where Locust
    returns its placeholder 0 (no bucket qualifies, e.g. no timed requests).
    """
    if not buckets:
        return None
    keys, below = _below(buckets, num_requests)
    return _at(keys, below, num_requests, fraction)


def _below(buckets: Mapping[float, int], num_requests: int) -> tuple[list[float], list[int]]:
    """The bucket keys in order, and the requests "not yet processed" when bucket k is
    reached: ``num_requests - count(>= k)``."""
    keys = sorted(buckets)
    counts = [buckets[k] for k in keys]
    total = sum(counts)
    return keys, [num_requests - total + b for b in accumulate([0] + counts[:-1])]


def _at(keys: list[float], below: list[int], num_requests: int, fraction: float
        ) -> float | None:
    idx = bisect.bisect_right(below, int(num_requests * fraction)) - 1
    return None if idx < 0 else float(keys[idx])


def locust_percentiles_ms(buckets: Mapping[float, int], num_requests: int) -> dict[float, float]:
    """Every percentile Locust reports, ``{50.0: .., 99.99: .., 100.0: ..}`` (missing omitted);
    each is :func:`locust_percentile_ms`, with the buckets ordered and summed once."""
    if not buckets:
        return {}
    keys, below = _below(buckets, num_requests)
    out = {}
    for q, fraction in LOCUST_FRACTIONS.items():
        value = _at(keys, below, num_requests, fraction)
        if value is not None:
            out[q] = value
    return out


# -- decoding ---------------------------------------------------------------------------------
def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


def decode_documents(text: str, source: str = "<string>") -> list[tuple[int, object]]:
    """Every JSON document in ``text``, back to back, as ``(start offset, value)``.

    With ``--processes N`` Locust forks N workers that share the master's stdout; each worker
    prints its own (empty, ``[]``) statistics at exit and the master prints the real array
    last, so stdout holds N+1 documents that a single ``json.loads`` refuses ("Extra data").
    """
    check_text(text, source, WHAT)
    decoder = json.JSONDecoder()
    docs = []
    pos = _skip_ws(text, 0)
    while pos < len(text):
        try:
            value, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            rest = text[exc.pos:]
            if not rest.strip():
                found = "end of file"
            elif "\n" not in rest.rstrip():  # the document stops on this line: cut off
                found = f"{rest.strip()[:20]!r}, then end of file"
            else:
                found = repr(rest[:20])
            raise ParseError(source, exc.lineno, f"valid JSON ({exc.msg})", found) from exc
        except ValueError as exc:  # an integer of more than 4300 digits
            m = _LONG_NUMBER.search(text, pos)
            raise ParseError(source, _line_of(text, m.start() if m else pos),
                             "valid JSON with numbers of a sane size", str(exc)[:60]) from None
        docs.append((pos, value))
        pos = _skip_ws(text, end)
    return docs


def _element_starts(text: str, start: int) -> list[int]:
    """Offsets of the elements of the (valid) JSON array starting at ``start``."""
    decoder = json.JSONDecoder()
    pos = _skip_ws(text, start + 1)
    starts = []
    while text[pos] != "]":
        starts.append(pos)
        _, pos = decoder.raw_decode(text, pos)
        pos = _skip_ws(text, pos)
        if text[pos] == ",":
            pos = _skip_ws(text, pos + 1)
    return starts


def _check_value(key: str, value: object, types: tuple, nullable: bool) -> str | None:
    if value is None:
        return None if nullable else f"{key!r} is null"
    if isinstance(value, bool) or not isinstance(value, types):
        return f"{key!r} is {type(value).__name__}"
    if isinstance(value, int) and not 0 <= value < MAX_COUNT:
        return f"{key!r} is {'negative' if value < 0 else 'beyond 2**62'}"
    if isinstance(value, float) and not 0 <= value < math.inf:
        return f"{key!r} is {value!r} (Locust writes finite, non-negative numbers)"
    return None


def _entry(obj: object) -> tuple[Entry | None, str | None]:
    if not isinstance(obj, dict):
        return None, f"a {type(obj).__name__}, not an object"
    missing = [k for k in _REQUIRED if k not in obj]
    if missing:
        return None, f"an object without {missing[0]!r}"
    for key, (types, nullable) in {**_REQUIRED, **_OPTIONAL}.items():
        if key in obj:
            problem = _check_value(key, obj[key], types, nullable)
            if problem:
                return None, problem
    buckets, problem = numeric_keys(obj["response_times"], "response_times", as_int=False,
                                     limit=HIGHEST_US / 1000)
    per_s, problem2 = numeric_keys(obj.get("num_reqs_per_sec", {}), "num_reqs_per_sec", True)
    fail_s, problem3 = numeric_keys(obj.get("num_fail_per_sec", {}), "num_fail_per_sec", True)
    if problem or problem2 or problem3:
        return None, problem or problem2 or problem3
    return Entry(
        name=obj["name"], method=obj["method"] or None,
        num_requests=obj["num_requests"], num_none_requests=obj.get("num_none_requests", 0),
        num_failures=obj["num_failures"],
        total_response_time_ms=float(obj["total_response_time"]),
        min_response_time_ms=obj["min_response_time"],
        max_response_time_ms=float(obj["max_response_time"]),
        total_content_length_bytes=obj["total_content_length"],
        response_times=buckets, start_time_s=float(obj["start_time"]),
        last_request_timestamp_s=obj["last_request_timestamp"],
        requests_by_second=per_s, failures_by_second=fail_s,
    ), None


def parse_entries(text: str, source: str = "<string>") -> tuple[list[Entry], int]:
    """The entries of the last non-empty JSON document, and how many documents there were.

    The last non-empty document is the master's (see :func:`decode_documents`); an output
    whose documents are all ``[]`` (no request was made) gives no entries.
    """
    docs = decode_documents(text, source)
    for start, value in docs:
        if not isinstance(value, list):
            raise ParseError(source, _line_of(text, start), WHAT,
                             f"a JSON {type(value).__name__}")
    nonempty = [(start, value) for start, value in docs if value]
    if not nonempty:
        return [], len(docs)
    start, value = nonempty[-1]
    entries: list[Entry] = []
    for i, obj in enumerate(typing.cast(list, value)):  # each document is a list (above)
        entry, problem = _entry(obj)
        if problem:
            line = _line_of(text, _element_starts(text, start)[i])
            raise ParseError(source, line, "an object with Locust's request statistics keys "
                             "(name, method, num_requests, response_times, ...)", problem)
        entries.append(typing.cast(Entry, entry))  # no problem: an Entry
    return entries, len(docs)


# -- runs ---------------------------------------------------------------------------------------
def aggregate(entries: list[Entry]) -> Entry:
    """The Aggregated entry, summed as Locust's ``StatsEntry.extend`` does."""
    buckets: dict[float, int] = {}
    per_s: dict[int, int] = {}
    fail_s: dict[int, int] = {}
    for e in entries:
        pairs: tuple[tuple[Mapping[Any, int], dict[Any, int]], ...] = (
            (e.response_times, buckets), (e.requests_by_second, per_s),
            (e.failures_by_second, fail_s))
        for src, dest in pairs:
            for k, v in src.items():
                dest[k] = dest.get(k, 0) + v
    mins = [e.min_response_time_ms for e in entries if e.min_response_time_ms is not None]
    lasts = [e.last_request_timestamp_s for e in entries
             if e.last_request_timestamp_s is not None]
    return Entry(
        name="Aggregated", method=None,
        num_requests=sum(e.num_requests for e in entries),
        num_none_requests=sum(e.num_none_requests for e in entries),
        num_failures=sum(e.num_failures for e in entries),
        total_response_time_ms=sum(e.total_response_time_ms for e in entries),
        min_response_time_ms=min(mins) if mins else None,
        max_response_time_ms=max((e.max_response_time_ms for e in entries), default=0.0),
        total_content_length_bytes=sum(e.total_content_length_bytes for e in entries),
        response_times=buckets,
        start_time_s=min((e.start_time_s for e in entries), default=0.0),
        last_request_timestamp_s=max(lasts) if lasts else None,
        requests_by_second=dict(sorted(per_s.items())),
        failures_by_second=dict(sorted(fail_s.items())),
    )


def entry_run(e: Entry, total: Entry, source: str, histogram: LatencyHistogram | None = None,
              is_aggregate: bool = False) -> Run:
    """A Run for one entry; rates use the run's (``total``'s) span, as Locust's ``total_rps``."""
    duration = None
    if total.last_request_timestamp_s is not None and total.start_time_s:
        span = total.last_request_timestamp_s - total.start_time_s
        duration = span if span > 0 else None
    timed = e.num_requests - e.num_none_requests
    percentiles = locust_percentiles_ms(e.response_times, timed) if timed > 0 else {}
    median = percentiles.get(50.0)
    if median is not None and timed > 0:  # Locust clamps its median into [min, max]
        median = min(median, e.max_response_time_ms)
        if e.min_response_time_ms is not None:
            median = max(median, e.min_response_time_ms)
    notes = []
    if timed <= 0:
        notes.append(Warn(Code.LOCUST_JSON_UNTIMED, endpoint=e.name))
    return built_run(dict(  # built frozen: float keys and values, maps of scalars in extra
        tool=TOOL, source=source, latency_source=LATENCY_SOURCE,
        endpoint=e.name, method=e.method, is_aggregate=is_aggregate,
        duration_s=duration, requests=e.num_requests, failures=e.num_failures,
        throughput_rps=None if duration is None else e.num_requests / duration,
        transfer_bytes_per_s=(None if duration is None
                              else e.total_content_length_bytes / duration),
        latency_mean_ms=e.total_response_time_ms / timed if timed > 0 else None,
        latency_min_ms=e.min_response_time_ms if timed > 0 else None,
        latency_max_ms=e.max_response_time_ms if timed > 0 else None,
        percentiles_ms=FrozenMap.wrap(percentiles),
        histogram=histogram if histogram is not None else
        LatencyHistogram.from_buckets_ms(e.response_times),
        notes=tuple(notes),
        extra=FrozenMap.wrap({
            "latency_median_ms": median,
            "failures_per_s": None if duration is None else e.num_failures / duration,
            "content_size_mean_bytes": (e.total_content_length_bytes / e.num_requests
                                        if e.num_requests else None),
            "num_none_requests": e.num_none_requests,
            "start_time_s": e.start_time_s,
            "last_request_timestamp_s": e.last_request_timestamp_s,
            "requests_by_second": FrozenMap(e.requests_by_second),
            "failures_by_second": FrozenMap(e.failures_by_second),
            "throughput_basis": "json: requests / (last request - first request)",
        }),
    ))


def parse_json(text: str, source: str = "<string>") -> list[Run]:
    """One :class:`Run` per request name in Locust's ``--json`` output, then the Aggregated one.

    Entries come sorted by (name, method), as in Locust's CSV. Each run's ``histogram`` is
    rebuilt from its ``response_times`` buckets (:meth:`LatencyHistogram.from_buckets_ms`); the
    Aggregated histogram merges them by adding counts. An output whose documents are all empty
    (``[]``: no request was made) gives one Aggregated run with 0 requests and a note.
    """
    entries, n_docs = parse_entries(text, source)
    entries.sort(key=lambda e: (e.name, e.method or ""))
    total = aggregate(entries)
    runs = []
    hists = []
    for e in entries:
        run = entry_run(e, total, source)
        hists.append(run.histogram)
        runs.append(run)
    merged = LatencyHistogram.merge(typing.cast(list[LatencyHistogram], hists))  # all built
    agg = entry_run(total, total, source, merged, is_aggregate=True)
    changes: dict[str, object] = {
        "extra": FrozenMap.wrap({**agg.extra, "json_documents": n_docs})}
    if not entries:
        changes["notes"] = agg.notes + (Warn(Code.LOCUST_JSON_EMPTY),)
    runs.append(replaced_run(agg, changes))
    return runs
