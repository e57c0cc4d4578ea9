"""The values of every successful parse in the ingest fuzzer (tests/_fuzz.py): invariants that
hold for any input, not golden values.

A Run: counts are ints >= 0; every other number None or finite and >= 0 (missing is None, never
NaN); percentile keys in [0, 100] with finite values >= 0; percentiles non-decreasing, and
none above the max, mean and min not above the max, no more histogram samples than requests
- or else a warning on the Run says so; a histogram's total equals the sum of its buckets, and
for wrk2 the footer's ``Total count``; the warnings and the flat record can be computed. A
Locust history row: counts ints >= 0, numbers None or finite >= 0. The checks are written out
here, independently of :mod:`perfkit.consistency`, with wider slack than it uses.

:func:`strict_problems`: a run as the loader gives it (every run after
:func:`perfkit.consistency.kept_out`) contradicts itself nowhere, warned or not: percentiles in
order and at most the max, min and mean at most the max, no latency above 24 h, no more
failures or non-2xx/3xx responses than requests, no negative counter. :func:`counter_problems`:
a counter snapshot read has integer counts, none negative but ``Tcp: MaxConn``, each written in
ASCII digits in the text.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping

from perfkit.ingest.locust_csv import Distribution, History
from perfkit.model import Run
from perfkit.warning import Code, Warn

#: the warning of a mean or a minimum above the maximum
ABOVE_MAX = {"latency_mean_ms": Code.MEAN_ABOVE_MAX, "latency_min_ms": Code.MIN_ABOVE_MAX}

COUNTS = ("requests", "errors_connect", "errors_read", "errors_write", "errors_timeout",
          "non_2xx_3xx", "failures", "threads", "connections", "users")
NUMBERS = ("duration_s", "target_rate_rps", "throughput_rps", "transfer_bytes_per_s",
           "bytes_read", "latency_mean_ms", "latency_stdev_ms", "latency_min_ms",
           "latency_max_ms")
#: looser than perfkit.consistency (wrk's 2 printed decimals, Locust's 5% rounding)
_SLACK_REL, _SLACK_MS = 0.06, 0.52


def _is_count(value) -> bool:
    return type(value) is int and value >= 0


def _is_number(value) -> bool:
    return (isinstance(value, int | float) and not isinstance(value, bool)
            and math.isfinite(value) and value >= 0)


def _warned(warnings: tuple[Warn, ...], *codes: Code, field: str | None = None) -> bool:
    """One of ``warnings`` has one of ``codes`` (and names ``field``, when given)."""
    return any(w.code in codes and (field is None or w.get("field") == field)
               for w in warnings)


def _one_warned(warnings: tuple[Warn, ...], name: str) -> bool:
    """One of ``warnings`` names a single percentile of the map ``name`` (``name[99]``)."""
    return any(str(w.get("field") or "").startswith(name + "[") for w in warnings)


def _percentile_problems(name: str, percentiles: Mapping, max_ms: float | None,
                         warnings: tuple[Warn, ...]) -> list[str]:
    out = []
    items = sorted(percentiles.items())
    for q, v in items:
        if not (type(q) is float and 0 <= q <= 100):
            out.append(f"{name}: key {q!r} is not a percentile in [0, 100]")
        if not _is_number(v):
            out.append(f"{name}[{q}] = {v!r}")
    if out:
        return out
    values = [v for _, v in items]
    # warned: that they decrease or pass the max, or that one of them cannot be a latency
    # (a day or more: perfkit.consistency then leaves it out of the order checks)
    if any(b < a - 0.0101 for a, b in zip(values, values[1:], strict=False)) and not (
            _warned(warnings, Code.PERCENTILES_DECREASE, field=name)
            or _one_warned(warnings, name)):
        out.append(f"{name} decrease without a warning: {items}")
    if max_ms is not None and any(v > max_ms * (1 + _SLACK_REL) + _SLACK_MS for v in values) \
            and not (_warned(warnings, Code.PERCENTILE_ABOVE_MAX, field=name)
                     or _one_warned(warnings, name)):
        out.append(f"{name} above the max {max_ms} without a warning: {items}")
    return out


def _histogram_problems(run: Run) -> list[str]:
    out = []
    for name in ("histogram", "uncorrected_histogram"):
        hist = getattr(run, name)
        if hist is None:
            continue
        counts = hist.bucket_counts
        total = hist.total_count
        if total != int(counts.sum()) or (len(counts) and int(counts.min()) <= 0):
            out.append(f"{name}: total {total} vs buckets {counts[:5]}...")
        if total and not hist.min_us <= hist.max_us:
            out.append(f"{name}: min {hist.min_us} above max {hist.max_us}")
    held = run.histogram_count
    if held is not None and run.requests is not None and held > run.requests and not _warned(
            run.warnings, Code.HISTOGRAM_ABOVE_REQUESTS):
        out.append(f"histogram holds {held} > {run.requests} requests without a warning")
    if run.tool == "wrk2" and run.histogram is not None:
        footer = run.extra.get("hdr")
        if footer is None or footer["total_count"] != run.histogram.total_count:
            out.append(f"wrk2 footer {footer} vs histogram {run.histogram.total_count}")
    return out


def run_problems(run: Run) -> list[str]:
    """What is wrong with one parsed Run (empty: nothing)."""
    if not isinstance(run, Run):
        return [f"not a Run: {type(run).__name__}"]
    out = [f"{f} = {getattr(run, f)!r}" for f in COUNTS
           if getattr(run, f) is not None and not _is_count(getattr(run, f))]
    out += [f"{f} = {getattr(run, f)!r}" for f in NUMBERS
            if getattr(run, f) is not None and not _is_number(getattr(run, f))]
    if out:
        return out
    warnings = run.warnings
    if not (isinstance(warnings, tuple) and all(isinstance(w, Warn) and w.text
                                                for w in warnings)):
        return [f"warnings {warnings!r}"]
    high = run.latency_max_ms
    out += _percentile_problems("percentiles_ms", run.percentiles_ms, high, warnings)
    out += _percentile_problems("uncorrected_percentiles_ms", run.uncorrected_percentiles_ms,
                                None, warnings)
    for name in ("latency_mean_ms", "latency_min_ms"):
        value = getattr(run, name)
        if None not in (value, high) and value > high * (1 + _SLACK_REL) + _SLACK_MS \
                and not (_warned(warnings, ABOVE_MAX[name])
                         or _warned(warnings, Code.LATENCY_ABOVE_DAY, field=name)):
            out.append(f"{name} {value} above the max {high} without a warning")
    out += _histogram_problems(run)
    record = run.to_record()
    if record["requests"] != run.requests:
        out.append("to_record() lost requests")
    return out


def _row_problems(row: Mapping) -> list[str]:
    out = []
    for key, value in row.items():
        if value is None or isinstance(value, str):
            continue
        if key in ("line", "timestamp_s", "user_count", "total_requests", "total_failures",
                   "occurrences", "count", "requests"):
            ok = _is_count(value)
        elif isinstance(value, tuple):
            ok = all(isinstance(v, str) for v in value)
        else:
            ok = _is_number(value)
        if not ok:
            out.append(f"row {key} = {value!r}")
    return out


def problems(result) -> list[str]:
    """What is wrong with the result of any parser (a list of Runs, a History, rows)."""
    if isinstance(result, History):
        return [p for row in result.rows for p in _row_problems(row)]
    if isinstance(result, Distribution):  # Locust 0.8-0.13.2: counts and percentiles
        return [p for row in result.rows for p in _row_problems(
            {**{k: v for k, v in row.items() if k != "percentiles_ms"},
             **{f"p{q:g}": v for q, v in row["percentiles_ms"].items()}})]
    if isinstance(result, tuple):  # failures / exceptions rows
        return [p for row in result for p in _row_problems(row)]
    if isinstance(result, list):
        return [p for run in result for p in run_problems(run)]
    return [f"unexpected result {type(result).__name__}"]


#: latencies above this (24 h, in ms) are no latency of a load test
DAY_MS = 86_400_000.0


def _loose_above(value: float, limit: float) -> bool:
    return value > limit * (1 + _SLACK_REL) + _SLACK_MS


def strict_run_problems(run: Run) -> list[str]:
    """What contradicts itself in one Run as the loader gives it (empty: nothing)."""
    out = run_problems(run)
    high = run.latency_max_ms
    for name in ("percentiles_ms", "uncorrected_percentiles_ms"):
        items = sorted(getattr(run, name).items())
        values = [v for _, v in items]
        if any(b < a - 0.0101 for a, b in zip(values, values[1:], strict=False)):
            out.append(f"{name} decrease: {items}")
        if name == "percentiles_ms" and high is not None and any(
                _loose_above(v, high) for v in values):
            out.append(f"{name} above the max {high}: {items}")
        if any(v > DAY_MS for v in values):
            out.append(f"{name} beyond a day: {items}")
    for name in ("latency_mean_ms", "latency_stdev_ms", "latency_min_ms", "latency_max_ms"):
        value = getattr(run, name)
        if value is not None and value > DAY_MS:
            out.append(f"{name} {value} beyond a day")
    for name in ("latency_mean_ms", "latency_min_ms"):
        value = getattr(run, name)
        if None not in (value, high) and _loose_above(value, high):
            out.append(f"{name} {value} above the max {high}")
    # a Locust 0.8-0.9 file's requests may count the successes alone (its row's note says
    # so): its failures may pass them
    successes = any(note.code is Code.LOCUST_SUCCESSES_ONLY for note in run.notes)
    for part in ("non_2xx_3xx",) if successes else ("failures", "non_2xx_3xx"):
        count = getattr(run, part)
        if None not in (count, run.requests) and count > run.requests:
            out.append(f"{part} {count} above requests {run.requests}")
    held = run.histogram_count
    if held is not None and run.requests is not None and held > run.requests:
        out.append(f"histogram holds {held} > {run.requests} requests")
    counted = run.counters  # perfkit.counters.ServerCounters: counts, never negative
    for field in dataclasses.fields(counted):
        value = getattr(counted, field.name)
        if value is not None and not _is_count(value):
            out.append(f"{field.name} = {value!r}")
    return out


def strict_problems(runs) -> list[str]:
    """:func:`strict_run_problems` of every Run of ``runs``."""
    if not isinstance(runs, list):
        return [f"unexpected result {type(runs).__name__}"]
    return [p for run in runs for p in strict_run_problems(run)]


_ASCII_COUNT = re.compile(r"-?[0-9]+")


def counter_problems(kind: str, text: str, result) -> list[str]:
    """What is wrong with a counter snapshot read from ``text`` (``stub_status`` or
    ``proc_net``): counts not integers, negative (but MaxConn), or not written in ASCII."""
    if not isinstance(result, dict):
        return [f"unexpected result {type(result).__name__}"]
    out = []
    if kind == "stub_status":
        if set(result) != {"active", "accepts", "handled", "requests", "reading", "writing",
                           "waiting"}:
            out.append(f"stub_status keys {sorted(result)}")
        values = [("", k, v) for k, v in result.items()]
        lines = text.splitlines()[:4]
        tokens = [t for line in lines for t in line.replace(":", " ").split()
                  if any(c.isdigit() for c in t)]
    else:
        values = [(s, k, v) for s, fields in result.items() for k, v in fields.items()]
        lines = [line for line in text.splitlines() if line.strip()]
        tokens = [t for line in lines[1::2] for t in line.partition(":")[2].split()]
    for section, key, value in values:
        if type(value) is not int or (value < 0 and (section, key) != ("Tcp", "MaxConn")):
            out.append(f"{section} {key} = {value!r}")
    bad = [t for t in tokens if not _ASCII_COUNT.fullmatch(t)]
    if bad:
        out.append(f"counts read from text that is not ASCII digits: {bad[:3]}")
    return out
