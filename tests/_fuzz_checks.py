"""The values of every successful parse in the ingest fuzzer (tests/_fuzz.py): invariants that
hold for any input, not golden values.

A Run: counts are ints >= 0; every other number None or finite and >= 0 (missing is None, never
NaN); percentile keys in [0, 100] with finite values >= 0; percentiles non-decreasing, and
none above the max, mean and min not above the max, no more histogram samples than requests
- or else a warning on the Run says so; a histogram's total equals the sum of its buckets, and
for wrk2 the footer's ``Total count``; the warnings and the flat record can be computed. A
Locust history row: counts ints >= 0, numbers None or finite >= 0. The checks are written out
here, independently of :mod:`perfkit.consistency`, with wider slack than it uses.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from perfkit.ingest.locust_csv import History
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
    if any(b < a - 0.0101 for a, b in zip(values, values[1:], strict=False)) and not _warned(
            warnings, Code.PERCENTILES_DECREASE, field=name):
        out.append(f"{name} decrease without a warning: {items}")
    if max_ms is not None and any(v > max_ms * (1 + _SLACK_REL) + _SLACK_MS for v in values) \
            and not _warned(warnings, Code.PERCENTILE_ABOVE_MAX, field=name):
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
                and not _warned(warnings, ABOVE_MAX[name]):
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
                   "occurrences", "count"):
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
    if isinstance(result, tuple):  # failures / exceptions rows
        return [p for row in result for p in _row_problems(row)]
    if isinstance(result, list):
        return [p for run in result for p in run_problems(run)]
    return [f"unexpected result {type(result).__name__}"]
