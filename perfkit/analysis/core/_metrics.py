"""The metric registry: every per-run column perfkit can analyse, its unit and which way is better.

A metric's unit is the suffix of its column name (``_ms`` milliseconds, ``_rps`` requests per
second, ``_bytes_per_s`` bytes per second, ``_ratio`` a share in [0, 1]); counts have none.
Direction follows from what the number measures: time and errors are better lower, rates are
better higher. ``failed_is_worst`` says whether a run that failed (or, for latency, a wrk2 run
that did not keep up with its offered rate) ranks worst on this metric instead of entering
with the value it printed: a latency measured while every response failed, or while the
generator queued requests it could not send, is not a latency of the system under test. The
run-status rule (:mod:`perfkit.analysis.core._runstatus`) also calls a run failed on these metrics
when most of its requests failed; on the error metrics (``failed_is_worst`` False) that run
keeps its status and its measured value, so that error ratios are compared as measured.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Iterable

from perfkit.errors import UsageError
from perfkit.vocabulary import Verdict

LOWER = "lower"
HIGHER = "higher"


@dataclasses.dataclass(frozen=True)
class Metric:
    """One analysable per-run column.

    ``unit`` is the text printed after values (``ms``, ``req/s``); ``suffix`` the column-name
    suffix it comes from (``_ms``); ``better`` is :data:`LOWER` or :data:`HIGHER`;
    ``label`` a short human name for axes and headers; ``digits`` the significant digits shown.
    """

    name: str
    unit: str
    suffix: str
    better: str
    label: str
    failed_is_worst: bool
    digits: int = 3

    @property
    def lower_is_better(self) -> bool:
        return self.better == LOWER

    @property
    def is_latency(self) -> bool:
        return self.suffix == "_ms"

    @property
    def axis_label(self) -> str:
        """``"p99 latency [ms]"``: the label with its unit, for figures and table headers."""
        return f"{self.label} [{self.unit}]" if self.unit else self.label

    def verdict(self, ratio: float) -> Verdict:
        """``better`` or ``worse`` for a significant change new/base = ``ratio``."""
        up = ratio > 1
        return Verdict.WORSE if up == self.lower_is_better else Verdict.BETTER

    def to_dict(self) -> dict[str, str]:
        """``metric``, ``unit`` and which way is better (``lower``/``higher``), as a result's
        JSON gives them."""
        return {"metric": self.name, "unit": self.unit, str(Verdict.BETTER): self.better}


_FIXED = (
    Metric("throughput_rps", "req/s", "_rps", HIGHER, "throughput", True, 4),
    Metric("transfer_bytes_per_s", "B/s", "_bytes_per_s", HIGHER, "transfer", True, 4),
    Metric("latency_mean_ms", "ms", "_ms", LOWER, "mean latency", True),
    Metric("latency_stdev_ms", "ms", "_ms", LOWER, "latency stdev", True),
    Metric("latency_min_ms", "ms", "_ms", LOWER, "min latency", True),
    Metric("latency_max_ms", "ms", "_ms", LOWER, "max latency", True),
    Metric("error_ratio", "", "_ratio", LOWER, "error ratio", False),
    Metric("errors_connect", "", "", LOWER, "connect errors", False),
    Metric("errors_read", "", "", LOWER, "read errors", False),
    Metric("errors_write", "", "", LOWER, "write errors", False),
    Metric("errors_timeout", "", "", LOWER, "timeouts", False),
    Metric("non_2xx_3xx", "", "", LOWER, "non-2xx/3xx responses", False),
    Metric("failures", "", "", LOWER, "failures", False),
)
FIXED_METRICS = {m.name: m for m in _FIXED}

_PERCENTILE = re.compile(r"^latency_(uncorrected_)?p(\d+)(?:_(\d+))?_ms$")


def percentile_of(name: str) -> float | None:
    """The percentile (0-100) a latency column holds: ``latency_p99_9_ms`` -> 99.9."""
    m = _PERCENTILE.match(name)
    if not m:
        return None
    return float(f"{m.group(2)}.{m.group(3)}") if m.group(3) else float(m.group(2))


def _percentile_metric(name: str) -> Metric | None:
    q = percentile_of(name)
    if q is None:
        return None
    kind = "uncorrected " if name.startswith("latency_uncorrected_") else ""
    return Metric(name, "ms", "_ms", LOWER, f"{kind}p{q:g} latency", True)


def metric(name: str, known: Iterable[str] | None = None) -> Metric:
    """The registered metric ``name``; an unknown one raises :class:`UsageError` listing the
    analysable metrics (those in ``known``, e.g. a frame's columns, when given)."""
    found = FIXED_METRICS.get(name) or _percentile_metric(name)
    if found is not None and (known is None or name in set(known)):
        return found
    choices = analysable(known) if known is not None else sorted(FIXED_METRICS)
    where = "in these runs" if found is not None else "known"
    hint = _did_you_mean(name, choices) if found is None else ""
    raise UsageError(f"no metric {name!r} {where}{hint}; metrics: {', '.join(choices)}")


def _did_you_mean(name: str, choices: list[str]) -> str:
    spelled = f"latency_{name.replace('.', '_')}_ms"  # p99 -> latency_p99_ms
    close = ([spelled] if spelled in choices
             else difflib.get_close_matches(name, choices, n=1, cutoff=0.85))
    return f" (did you mean {close[0]!r}?)" if close else ""


def is_metric(name: str) -> bool:
    return name in FIXED_METRICS or percentile_of(name) is not None


def analysable(columns: Iterable[str]) -> list[str]:
    """The columns among ``columns`` that are registered metrics, in their order."""
    return list(dict.fromkeys(c for c in columns if is_metric(c)))
