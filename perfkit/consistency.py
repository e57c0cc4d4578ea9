"""Internal consistency of one parsed run: what no tool can print unless the input is damaged.

:func:`consistency_warnings` is part of :attr:`perfkit.model.Run.warnings`. A run that passes
has no negative or non-finite count, latency or rate, percentiles that never decrease with the
percentile (p50 <= p75 <= p90 <= p99 <= p99.9 <= max), a mean between its min and max, and no
more histogram samples than requests. Each warning names the field and what is wrong with it,
so a damaged or hand-edited file cannot slip into an analysis unnoticed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from perfkit.warning import Code, Warn

#: numeric fields of a Run checked for sign and finiteness, with their unit for the message
NUMERIC_FIELDS = (
    "duration_s", "target_rate_rps", "requests", "throughput_rps", "transfer_bytes_per_s",
    "bytes_read", "latency_mean_ms", "latency_stdev_ms", "latency_min_ms", "latency_max_ms",
    "errors_connect", "errors_read", "errors_write", "errors_timeout", "non_2xx_3xx",
    "failures", "threads", "connections", "users",
)
#: slack of a comparison against the max. wrk and wrk2 print 2 decimals in a unit chosen per
#: value (``2.89s``: +-5 ms), and wrk2 prints its max as the lowest value of the max's
#: HdrHistogram bucket but its percentiles as the highest (3 significant digits: up to 0.1%
#: apart): so ``Max 2.89s`` beside ``100.000% 2.90s`` is a real output, not damage.
_PRINT_SLACK_MS = 0.0101
_RELATIVE_SLACK = 0.012
#: Locust takes its percentiles from response times rounded to about 2 significant digits
#: (whole ms below 100 ms, then to 10, 100, 1000 ms: ``locust.stats.bucket_response_time``) but
#: reports its max unrounded: a percentile may pass the max by half a step, at most 5%
#: (105 -> 110) or 0.5 ms below 100 ms. Beyond that it is not rounding.
_LOCUST_RELATIVE_SLACK = 0.05
_LOCUST_SLACK_MS = 0.5 + _PRINT_SLACK_MS


def _bad_number(name: str, value: Any) -> Warn | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, float) and math.isnan(value):
        return Warn(Code.NOT_A_NUMBER, field=name)
    if isinstance(value, int | float) and not math.isfinite(value):
        return Warn(Code.INFINITE, field=name, value=value)
    if isinstance(value, int | float) and value < 0:
        return Warn(Code.NEGATIVE, field=name, value=value)
    return None


def _above(value: float, limit: float, rounded: bool = False) -> bool:
    if rounded:
        return value > limit * (1 + _LOCUST_RELATIVE_SLACK) + _LOCUST_SLACK_MS
    return value > limit * (1 + _RELATIVE_SLACK) + _PRINT_SLACK_MS


def _percentile_order(name: str, percentiles: Mapping[float, float],
                      max_ms: float | None, rounded: bool = False) -> list[Warn]:
    out = []
    items = sorted(percentiles.items())
    for (q1, v1), (q2, v2) in zip(items, items[1:], strict=False):
        if v2 < v1 - _PRINT_SLACK_MS:
            out.append(Warn(Code.PERCENTILES_DECREASE, field=name, q1=q1, v1=v1, q2=q2, v2=v2))
    if max_ms is not None and math.isfinite(max_ms):
        above = [(q, v) for q, v in items if _above(v, max_ms, rounded)]
        if above:
            q, v = above[0]
            out.append(Warn(Code.PERCENTILE_ABOVE_MAX, field=name, q=q, value=v,
                            max_ms=max_ms, rounded=rounded))
    for q, v in items:
        problem = _bad_number(f"{name}[{q:g}]", v)
        if problem:
            out.append(problem)
    return out


def consistency_warnings(run: Any) -> list[Warn]:
    """Warnings for a :class:`~perfkit.model.Run` that contradicts itself (empty if none)."""
    out = [p for p in (_bad_number(n, getattr(run, n)) for n in NUMERIC_FIELDS) if p]
    # Locust rounds its percentiles but not its max: the max check allows for the rounding
    rounded = run.latency_source == "locust_rounded"
    out += _percentile_order("percentiles_ms", run.percentiles_ms, run.latency_max_ms, rounded)
    out += _percentile_order("uncorrected_percentiles_ms", run.uncorrected_percentiles_ms,
                             None)
    low, mean, high = run.latency_min_ms, run.latency_mean_ms, run.latency_max_ms
    if None not in (mean, high) and _above(mean, high):
        out.append(Warn(Code.MEAN_ABOVE_MAX, mean=mean, high=high))
    if None not in (low, high) and _above(low, high):
        out.append(Warn(Code.MIN_ABOVE_MAX, low=low, high=high))
    held = run.histogram_count
    if held is not None and run.requests is not None and held > run.requests >= 0:
        out.append(Warn(Code.HISTOGRAM_ABOVE_REQUESTS, held=held, requests=run.requests))
    return out
