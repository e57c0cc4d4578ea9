"""Internal consistency of one parsed run: what no tool can print unless the input is damaged.

:func:`problems` finds every value of a run that cannot be true, each with the fields it
involves; :func:`consistency_warnings` words them (part of :attr:`perfkit.model.Run.warnings`
for a run as a parser gave it), and :func:`kept_out` removes those fields from the run with a
note naming each, so that no analysis ever uses them: the loader passes every run through it
(:mod:`perfkit.ingest.loader`), the one place where runs enter perfkit. A run that passes has

- no negative or non-finite count, latency or rate, no latency above
  :data:`MAX_LATENCY_MS` (24 h: ``1e308`` is no latency, nor is a year);
- percentiles that never decrease with the percentile (p50 <= p75 <= p90 <= p99 <= p99.9)
  and none above the max, a min and a mean at or below the max;
- no more failures (Locust) or non-2xx/3xx responses (wrk) than requests, and no more
  histogram samples than requests;
- no negative server or kernel counter (``run.counters``: stub_status, /proc/net, the
  upstream's, ss: a count only grows).

Where a contradiction involves several values and the text cannot say which one is damaged
(p99 below p90, min above max), every value it involves is kept out. The slack of each
comparison is that of a real output's printing (below), so no real output is touched.

The readers of raw counter snapshots refuse a non-ASCII digit and a negative counter as a
ParseError at its line (:func:`counter_value` is their one check).
"""

from __future__ import annotations

import dataclasses
import math
import re
from typing import Any

from perfkit.warning import Code, Warn

#: numeric fields of a Run checked for sign and finiteness, with their unit for the message
NUMERIC_FIELDS = (
    "duration_s", "target_rate_rps", "requests", "throughput_rps", "transfer_bytes_per_s",
    "bytes_read", "latency_mean_ms", "latency_stdev_ms", "latency_min_ms", "latency_max_ms",
    "errors_connect", "errors_read", "errors_write", "errors_timeout", "non_2xx_3xx",
    "failures", "threads", "connections", "users",
)
#: latency fields in ms, each at most MAX_LATENCY_MS
LATENCY_FIELDS = ("latency_mean_ms", "latency_stdev_ms", "latency_min_ms", "latency_max_ms")
PERCENTILE_MAPS = ("percentiles_ms", "uncorrected_percentiles_ms")
#: the longest latency a run can hold: 24 h, the highest value of perfkit's histograms
#: (:data:`perfkit.hdrlayout.HIGHEST_US`); no load test of this kind runs for a day
MAX_LATENCY_MS = 86_400_000.0
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


@dataclasses.dataclass(frozen=True)
class Problem:
    """A value (or values) of a run that cannot be true: ``warning`` says what is wrong, and
    ``fields`` names each value involved (``percentiles_ms[90]`` for one percentile)."""

    warning: Warn
    fields: tuple[str, ...]

    @property
    def text(self) -> str:
        """What is wrong, in words."""
        return self.warning.text


def percentile_key(name: str, q: float) -> str:
    """How a :class:`Problem` names percentile ``q`` of the map ``name``:
    ``percentiles_ms[99]``."""
    return f"{name}[{q:g}]"


_key = percentile_key


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


def _too_long(name: str, value: Any) -> Warn | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(
            value) and value > MAX_LATENCY_MS:
        return Warn(Code.LATENCY_ABOVE_DAY, field=name, value=value)
    return None


def _counters(run: Any) -> dict[str, Any]:
    """The counters of ``run`` (:class:`perfkit.counters.ServerCounters`, ``run.counters``):
    counts, never negative; {} for a run without them."""
    record = getattr(run, "counters", None)
    if record is None or not dataclasses.is_dataclass(record):
        return {}
    return {f.name: getattr(record, f.name) for f in dataclasses.fields(record)}


def _above(value: float, limit: float, rounded: bool = False) -> bool:
    if rounded:
        return value > limit * (1 + _LOCUST_RELATIVE_SLACK) + _LOCUST_SLACK_MS
    return value > limit * (1 + _RELATIVE_SLACK) + _PRINT_SLACK_MS


def _value_problems(run: Any) -> list[Problem]:
    """Each value wrong on its own: negative, NaN, infinite, a latency above a day."""
    out = []
    for name in NUMERIC_FIELDS:
        value = getattr(run, name, None)
        found = _bad_number(name, value) or (_too_long(name, value) if name in LATENCY_FIELDS
                                             else None)
        if found:
            out.append(Problem(found, (name,)))
    for name, value in _counters(run).items():  # what the server and the kernel counted
        found = _bad_number(name, value)
        if found:
            out.append(Problem(found, (name,)))
    for name in PERCENTILE_MAPS:
        for q, v in sorted(getattr(run, name).items()):
            found = _bad_number(_key(name, q), v) or _too_long(_key(name, q), v)
            if found:
                out.append(Problem(found, (_key(name, q),)))
    return out


def _percentile_order(name: str, items: list[tuple[float, float]], max_ms: float | None,
                      rounded: bool = False) -> list[Problem]:
    out = []
    for (q1, v1), (q2, v2) in zip(items, items[1:], strict=False):
        if v2 < v1 - _PRINT_SLACK_MS:
            out.append(Problem(Warn(Code.PERCENTILES_DECREASE, field=name, q1=q1, v1=v1, q2=q2,
                                    v2=v2), (_key(name, q1), _key(name, q2))))
    if max_ms is not None:
        above = [(q, v) for q, v in items if _above(v, max_ms, rounded)]
        if above:
            q, v = above[0]
            out.append(Problem(Warn(Code.PERCENTILE_ABOVE_MAX, field=name, q=q, value=v,
                                    max_ms=max_ms, rounded=rounded),
                               (*(_key(name, q) for q, _ in above), "latency_max_ms")))
    return out


def _relation_problems(run: Any, bad: set[str]) -> list[Problem]:
    """Values that contradict each other (the values of ``bad`` left aside)."""

    def value(name: str) -> Any:
        return None if name in bad else getattr(run, name)

    out = []
    high = value("latency_max_ms")
    # Locust rounds its percentiles but not its max: the max check allows for the rounding
    rounded = run.latency_source == "locust_rounded"
    for name, limit in (("percentiles_ms", high), ("uncorrected_percentiles_ms", None)):
        items = [(q, v) for q, v in sorted(getattr(run, name).items())
                 if _key(name, q) not in bad]
        out += _percentile_order(name, items, limit, rounded and limit is not None)
    mean, low = value("latency_mean_ms"), value("latency_min_ms")
    if None not in (mean, high) and _above(mean, high):
        out.append(Problem(Warn(Code.MEAN_ABOVE_MAX, mean=mean, high=high),
                           ("latency_mean_ms", "latency_max_ms")))
    if None not in (low, high) and _above(low, high):
        out.append(Problem(Warn(Code.MIN_ABOVE_MAX, low=low, high=high),
                           ("latency_min_ms", "latency_max_ms")))
    requests = value("requests")
    # a Locust 0.8-0.13.2 row's requests may count the successes alone (its note says so)
    successes = any(n.code is Code.LOCUST_SUCCESSES_ONLY for n in run.notes)
    for part in ("non_2xx_3xx",) if successes else ("failures", "non_2xx_3xx"):
        count = value(part)
        if None not in (count, requests) and count > requests:
            out.append(Problem(Warn(Code.COUNT_ABOVE_REQUESTS, field=part, count=count,
                                    requests=requests), (part, "requests")))
    held = run.histogram_count
    if held is not None and requests is not None and held > requests >= 0:
        out.append(Problem(Warn(Code.HISTOGRAM_ABOVE_REQUESTS, held=held, requests=requests),
                           ("requests", "histogram")))
    return out


def problems(run: Any) -> list[Problem]:
    """Every value of ``run`` (a :class:`~perfkit.model.Run`) that cannot be true."""
    found = _value_problems(run)
    bad = {f for p in found for f in p.fields}
    return found + _relation_problems(run, bad)


def consistency_warnings(run: Any) -> list[Warn]:
    """Warnings for a :class:`~perfkit.model.Run` that contradicts itself (empty if none)."""
    return [p.warning for p in problems(run)]


def kept_out(run: Any) -> Any:
    """``run`` without the values that cannot be true (:func:`problems`), each removed (a
    missing value: None, or a percentile no longer there) and named in a note, so no analysis
    uses it; ``run`` itself when none. Until none is left: two neighbours removed for a
    decrease can leave two others that decrease (p99.9 20 ms, p99.99 20, p99.999 0, p100 0)."""
    found = problems(run)
    if not found:
        return run
    every: list[Problem] = []
    while found:  # each round removes at least one value: it ends
        every += found
        run = _without(run, {f for p in found for f in p.fields})
        found = problems(run)
    notes = tuple(Warn(Code.KEPT_OUT, warning=p.warning, fields=tuple(sorted(p.fields)))
                  for p in every)
    return run.replace(notes=(*run.notes, *notes))


def _without(run: Any, fields: set[str]) -> Any:
    """``run`` with the values ``fields`` names removed."""
    counted = fields & _counters(run).keys()
    changes: dict[str, Any] = {f: None for f in fields - counted if "[" not in f}
    if counted:
        changes["counters"] = dataclasses.replace(run.counters, **dict.fromkeys(counted))
    for name in PERCENTILE_MAPS:
        dropped = {q for q in getattr(run, name) if _key(name, q) in fields}
        if dropped:
            changes[name] = {q: v for q, v in getattr(run, name).items() if q not in dropped}
    return run.replace(**changes)


def kept_out_note(run: Any, field: str) -> Warn | None:
    """Why ``run``'s value ``field`` (as :class:`Problem` names it: ``latency_max_ms``,
    ``percentiles_ms[99]``) was kept out (the problem of its :attr:`Code.KEPT_OUT` note), or
    None when it was not."""
    for note in run.notes:
        if note.code is Code.KEPT_OUT and field in note["fields"]:
            return note["warning"]
    return None


#: at most 20 digits: a 64-bit counter (the kernel's and nginx's) has no more
_COUNT = re.compile(r"-?[0-9]{1,20}")


def counter_value(text: str, signed: bool = False) -> int | None:
    """A counter as the kernel or nginx prints it: ASCII digits (at most 20: 64 bits), a sign
    only where ``signed`` (/proc/net/snmp's ``MaxConn`` is -1); None for anything else (a
    Unicode digit, which ``int()`` would read, ``+5``, ``1_000``, a negative count)."""
    if not _COUNT.fullmatch(text) or (text.startswith("-") and not signed):
        return None
    return int(text)

