"""The run model: one :class:`Run` per run of one tool (per endpoint for Locust).

Every numeric field carries its unit in its name. Missing is ``None`` (``NaN`` in frames), never
0: a 0 means the tool said 0. Numbers the tool printed are kept exactly as printed, converted to
the field's unit; derived numbers are computed elsewhere.

``Run.warnings`` is what a reader must know before trusting the run: the notes its parser made
(placeholders turned into missing values, a histogram that covers part of the run, ...) followed by
validity checks derived from the run itself (error ratio, closed-loop latency, saturation). Each
is a coded :class:`perfkit.warning.Warn`, worded by :mod:`perfkit.wording`.
"""

from __future__ import annotations

import dataclasses
import math
import weakref
from collections.abc import Iterator, Mapping
from typing import Any

from perfkit.consistency import consistency_warnings
from perfkit.counters import NO_COUNTERS, ServerCounters, counters_of
from perfkit.counters import SERVER_COLUMNS as _SERVER_COLUMNS
from perfkit.counters import columns as counter_columns
from perfkit.histogram import LatencyHistogram
from perfkit.units import to_float
from perfkit.warning import Code, Warn

#: where a run's latency numbers come from
LATENCY_SOURCES = {
    "hdr_corrected": "wrk2: HdrHistogram corrected for coordinated omission (open loop)",
    "summary_only": "wrk: closed loop, four printed percentiles that include wrk 4's "
                    "synthetic samples (stats_correct)",
    "locust_rounded": "Locust: closed loop, response times rounded before percentiles",
    "hdr_log": "HdrHistogram interval log (.hlog)",
}

CLOSED_LOOP_TOOLS = {"wrk", "locust"}

#: error (or non-2xx/3xx) share above which a run is flagged
ERROR_RATIO_WARN = 0.01
#: achieved / target rate below which a wrk2 run did not keep up
SATURATION_RATIO = 0.99

#: the percentile columns every record has, whatever the tool printed
CONTRACT_PERCENTILES = (50.0, 75.0, 90.0, 99.0, 99.9)
UNCORRECTED_PERCENTILES = (50.0, 90.0, 99.0, 99.9)

#: record columns, in order: the contract later work and users rely on
RECORD_COLUMNS = (
    # identity
    "tool", "source", "endpoint", "url", "threads", "connections", "users",
    # load
    "duration_s", "target_rate_rps", "requests", "throughput_rps", "transfer_bytes_per_s",
    # latency
    "latency_mean_ms", "latency_stdev_ms", "latency_max_ms",
    "latency_p50_ms", "latency_p75_ms", "latency_p90_ms", "latency_p99_ms", "latency_p99_9_ms",
    # errors
    "errors_connect", "errors_read", "errors_write", "errors_timeout", "non_2xx_3xx",
    "failures", "error_ratio",
    # provenance
    "latency_source", "histogram_count", "warnings",
)
#: what the server, its upstream, their sockets and the kernel counted
#: (:mod:`perfkit.counters`): in a record only when the run recorded counters (its manifest has
#: a ``counters`` section), each one missing (NaN) where that counter was not recorded, never 0
SERVER_COLUMNS = _SERVER_COLUMNS


def percentile_label(q: float) -> str:
    """``99.9`` -> ``'99_9'``, ``50`` -> ``'50'`` (for column names)."""
    text = f"{float(q):.6f}".rstrip("0").rstrip(".")
    return text.replace(".", "_")


def percentile_column(q: float, kind: str = "") -> str:
    """Column name of a percentile: ``latency_p99_9_ms``, ``latency_uncorrected_p99_ms``."""
    prefix = f"latency_{kind}_" if kind else "latency_"
    return f"{prefix}p{percentile_label(q)}_ms"


class FrozenMap(Mapping):
    """A read-only, picklable mapping (keeps :class:`Run` immutable all the way down)."""

    __slots__ = ("_data",)
    _data: dict

    def __init__(self, data: Mapping | None = None, /, **kwargs: Any):
        object.__setattr__(self, "_data", dict(data or {}, **kwargs))

    @classmethod
    def wrap(cls, data: dict) -> FrozenMap:
        """A FrozenMap of ``data`` itself, not a copy: the caller gives up ``data``."""
        new = cls.__new__(cls)
        object.__setattr__(new, "_data", data)
        return new

    def __getitem__(self, key):
        return self._data[key]

    def __iter__(self) -> Iterator:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    # the dict's own methods: Mapping's generic ones go through __getitem__ and are slow
    def get(self, key, default=None):
        return self._data.get(key, default)

    def __contains__(self, key) -> bool:
        return key in self._data

    def keys(self):
        return self._data.keys()

    def items(self):
        return self._data.items()

    def values(self):
        return self._data.values()

    def __repr__(self) -> str:
        return f"FrozenMap({self._data!r})"

    def __eq__(self, other: object) -> bool:
        return dict(self) == dict(other) if isinstance(other, Mapping) else NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(sorted(self._data.items(), key=repr)))

    def __reduce__(self):
        return (FrozenMap, (self._data,))


_SCALARS = (str, int, float, bool, type(None))


def _freeze(value: Any) -> Any:
    if type(value) in _SCALARS or isinstance(value, FrozenMap):  # the common cases, cheaply
        return value
    if isinstance(value, Mapping):
        return FrozenMap({k: _freeze(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


@dataclasses.dataclass(frozen=True, eq=False, kw_only=True)
class Provenance:
    """What a run's output never prints, declared once: where it ran from and its place in
    an experiment. A :class:`Run` has these fields (keyword-only), and so does the manifest
    reader's :class:`perfkit.store.manifest.ManifestInfo`, which fills them in."""

    run_id: str | None = None
    tool_version: str | None = None
    argv: tuple[str, ...] | None = None
    factors: Mapping[str, Any] = dataclasses.field(default_factory=FrozenMap)
    repetition: int | None = None
    block: int | None = None
    order: int | None = None
    start_utc: str | None = None
    end_utc: str | None = None
    exit_code: int | None = None


#: the fields of :class:`Provenance`, in order
PROVENANCE_FIELDS = tuple(f.name for f in dataclasses.fields(Provenance))


@dataclasses.dataclass(frozen=True, eq=False)
class Run(Provenance):
    """One run of one load tool (for Locust: one endpoint, or the ``Aggregated`` total).

    Times are in the unit their name says; ``percentiles_ms`` maps a percentile on the 0-100
    scale to the latency the tool printed for it. ``histogram`` is present only when the tool
    gave enough to build one (wrk2 ``--latency``, Locust ``--json``, ``.hlog``); it is never
    invented from a handful of printed percentiles.
    """

    tool: str
    source: str
    latency_source: str
    # identity
    endpoint: str | None = None
    method: str | None = None
    is_aggregate: bool = False
    url: str | None = None
    threads: int | None = None
    connections: int | None = None
    users: int | None = None
    # load
    duration_s: float | None = None
    target_rate_rps: float | None = None
    requests: int | None = None
    throughput_rps: float | None = None
    transfer_bytes_per_s: float | None = None
    bytes_read: float | None = None
    # latency
    latency_mean_ms: float | None = None
    latency_stdev_ms: float | None = None
    latency_min_ms: float | None = None
    latency_max_ms: float | None = None
    percentiles_ms: Mapping[float, float] = dataclasses.field(default_factory=FrozenMap)
    histogram: LatencyHistogram | None = None
    uncorrected_percentiles_ms: Mapping[float, float] = dataclasses.field(
        default_factory=FrozenMap)
    uncorrected_histogram: LatencyHistogram | None = None
    # errors
    errors_connect: int | None = None
    errors_read: int | None = None
    errors_write: int | None = None
    errors_timeout: int | None = None
    non_2xx_3xx: int | None = None
    failures: int | None = None
    # what the server, its upstream, their sockets and the kernel counted over the run
    # (perfkit.counters): deltas from just before the generator started to just after it
    # exited; every field None: not recorded
    counters: ServerCounters = NO_COUNTERS
    # provenance: the parser's notes, the manifest as read and anything else kept (the rest
    # is :class:`Provenance`'s: run_id, tool_version, argv, factors, ... exit_code)
    notes: tuple[Warn, ...] = ()
    manifest: Mapping[str, Any] = dataclasses.field(default_factory=FrozenMap)
    extra: Mapping[str, Any] = dataclasses.field(default_factory=FrozenMap)

    def __post_init__(self) -> None:
        if self.latency_source not in LATENCY_SOURCES:
            raise ValueError(f"latency_source must be one of {sorted(LATENCY_SOURCES)}")
        for name in ("percentiles_ms", "uncorrected_percentiles_ms"):
            value = getattr(self, name)
            if not isinstance(value, FrozenMap):  # Run.replace() passes them on frozen
                frozen = FrozenMap({float(k): float(v) for k, v in dict(value).items()})
                object.__setattr__(self, name, frozen)
        for name in ("factors", "manifest", "extra"):
            value = getattr(self, name)
            if not isinstance(value, FrozenMap):
                object.__setattr__(self, name, _freeze(value))
        if not isinstance(self.notes, tuple):
            object.__setattr__(self, "notes", tuple(self.notes))
        if not isinstance(self.counters, ServerCounters):
            object.__setattr__(self, "counters", counters_of(self.counters))
        if self.argv is not None and not isinstance(self.argv, tuple):
            object.__setattr__(self, "argv", tuple(self.argv))

    def replace(self, **changes: Any) -> Run:
        """A copy with some fields changed (runs are immutable).

        What :func:`dataclasses.replace` does (the fields copied, ``__post_init__`` run on
        the result), without its per-call introspection: loading calls it once per run.
        """
        unknown = changes.keys() - _FIELD_NAMES
        if unknown:
            raise TypeError(f"Run has no field(s) {sorted(unknown)}")
        new = replaced_run(self, changes)
        new.__post_init__()
        return new

    def same_as(self, other: Run) -> bool:
        """True when every field of ``other`` equals this run's, with the same type (an int
        is not a float, NaN equals NaN; histograms compare by counts, maps by content)."""
        return isinstance(other, Run) and all(
            _same(getattr(self, f), getattr(other, f)) for f in _FIELD_NAMES)

    # -- derived ------------------------------------------------------------------------------
    @property
    def histogram_count(self) -> int | None:
        """Requests the histogram holds (None without a histogram)."""
        return None if self.histogram is None else self.histogram.total_count

    @property
    def counters_recorded(self) -> bool:
        """Whether the run's manifest has a ``counters`` section (perfkit recorded what the
        server and the kernel counted, or said why not, counter by counter)."""
        known = _RECORDED.get(self)
        if known is not None:  # as the run store kept it (the manifest not parsed for it)
            return known
        return bool(self.manifest) and isinstance(self.manifest.get("counters"), Mapping)

    @property
    def manifest_status(self) -> Any:
        """The ``status`` the run's manifest records (None without a manifest, or without a
        status): how the runner saw the run end."""
        known = _STATUS.get(self, _UNKNOWN)
        if known is not _UNKNOWN:  # as the run store kept it (the manifest not parsed for it)
            return known
        return self.manifest.get("status") if self.manifest else None

    @property
    def socket_errors(self) -> int | None:
        parts = (self.errors_connect, self.errors_read, self.errors_write, self.errors_timeout)
        return None if all(p is None for p in parts) else sum(p or 0 for p in parts)

    @property
    def error_ratio(self) -> float | None:
        """Share of attempts that failed, in [0, 1].

        wrk/wrk2: (socket errors + non-2xx/3xx) / (completed requests + connect/read/write
        errors), since those errors are attempts that never completed while timeouts and non-2xx
        responses are among the completed requests. Locust: failures / requests.
        """
        if self.tool == "locust" or (self.failures is not None and self.socket_errors is None):
            if self.failures is None or not self.requests:
                return None
            return min(1.0, self.failures / self.requests)
        if self.requests is None:
            return None
        bad = (self.socket_errors or 0) + (self.non_2xx_3xx or 0)
        attempts = self.requests + sum(
            e or 0 for e in (self.errors_connect, self.errors_read, self.errors_write))
        if attempts == 0:
            return None
        return min(1.0, bad / attempts)

    @property
    def below_target(self) -> bool | None:
        """wrk2 only: achieved rate below :data:`SATURATION_RATIO` (0.99) x target. None when
        unknown (no target rate). A raw check of the run alone, not the run-status rule's
        ``saturated`` (:mod:`perfkit.analysis.core._runstatus`, which judges a run among its peers:
        a run below its target may be ``short``, a shortfall in doubt)."""
        if self.tool != "wrk2":
            return None
        if self.target_rate_rps is None or self.throughput_rps is None:
            return None
        return self.throughput_rps < SATURATION_RATIO * self.target_rate_rps

    @property
    def closed_loop(self) -> bool:
        return self.tool in CLOSED_LOOP_TOOLS

    @property
    def warnings(self) -> tuple[Warn, ...]:
        """Parser notes, then validity checks; each says what it means for the numbers (the
        checks computed once per run: a Run does not change once built)."""
        checks = _VALIDITY.get(self)
        if checks is None:
            checks = _VALIDITY[self] = validity_warnings(self)
        return self.notes + checks

    def percentile_ms(self, q: float) -> float | None:
        """The printed latency at percentile ``q`` (0-100), or None if the tool did not print it."""
        return self.percentiles_ms.get(float(q))

    def to_record(self) -> dict[str, Any]:
        """One flat row: the contract columns first, then every other percentile and factor."""
        return run_record(self)


#: each run's :func:`validity_warnings`, by the run (its identity: ``eq=False``), for as long
#: as it lives; a replaced run is another object, checked anew (issue 33: the checks of 1,000
#: runs cost 0.1 s each time the frame, a table's notes or the statuses asked for them)
_VALIDITY: weakref.WeakKeyDictionary[Run, tuple[Warn, ...]] = weakref.WeakKeyDictionary()
#: each run's :attr:`Run.counters_recorded` where the run store kept it with the run (issue 33:
#: otherwise asking parses the run's whole manifest, 0.12 s for 1,000 runs)
_RECORDED: weakref.WeakKeyDictionary[Run, bool] = weakref.WeakKeyDictionary()
#: each run's :attr:`Run.manifest_status` where the run store kept it (a text or None: every
#: failure reason reads it, 0.08 s of manifests parsed for 1,000 runs otherwise)
_STATUS: weakref.WeakKeyDictionary[Run, str | None] = weakref.WeakKeyDictionary()
_UNKNOWN = object()


@dataclasses.dataclass(frozen=True)
class DerivedChecks:
    """What the run store keeps with a run besides its fields (issue 33), derived from the
    run alone: its validity checks, whether its manifest recorded counters, and its manifest's
    status (``status_kept`` False when that is neither a text nor None: read from the
    manifest then)."""

    checks: tuple[Warn, ...]
    counters_recorded: bool
    status: str | None
    status_kept: bool


def derived_checks(run: Run) -> DerivedChecks:
    """:class:`DerivedChecks` of ``run``."""
    checks = _VALIDITY.get(run)
    status = run.manifest_status
    kept = status is None or isinstance(status, str)
    return DerivedChecks(validity_warnings(run) if checks is None else checks,
                         run.counters_recorded, status if kept else None, kept)


def remember_checks(runs: list[Run], checks: list[tuple[Warn, ...]], recorded: list[bool],
                    statuses: list[str | None], kept: list[bool]) -> None:
    """Prime :attr:`Run.warnings`, :attr:`Run.counters_recorded` and
    :attr:`Run.manifest_status` of ``runs`` with what :func:`derived_checks` gave for them
    when the run store was written."""
    _VALIDITY.update(zip(runs, checks, strict=True))
    _RECORDED.update(zip(runs, recorded, strict=True))
    _STATUS.update((r, s) for r, s, k in zip(runs, statuses, kept, strict=True) if k)
_FIELD_NAMES = frozenset(f.name for f in dataclasses.fields(Run))
#: field -> its default where the class holds it as an attribute (a plain default, not a
#: default_factory): a run whose ``__dict__`` lacks such a field reads the class's value
CLASS_DEFAULTS = {f.name: f.default for f in dataclasses.fields(Run)
                  if f.default is not dataclasses.MISSING
                  and any(f.name in vars(c) for c in Run.__mro__)}
#: every field's default (the three without one: None), in field order
_DEFAULTS = {f.name: (f.default if f.default is not dataclasses.MISSING else
                      f.default_factory() if f.default_factory is not dataclasses.MISSING
                      else None) for f in dataclasses.fields(Run)}


#: the defaults a Run's own ``__dict__`` must hold (a default_factory's, and None for the
#: fields without a default); :func:`built_run` leaves the others to the class (a smaller
#: ``__dict__``: at most 42 keys fit the small table)
_INSTANCE_DEFAULTS = {name: value for name, value in _DEFAULTS.items()
                      if name not in CLASS_DEFAULTS}


def replaced_run(run: Run, changes: dict[str, Any]) -> Run:
    """``run.replace(**changes)`` for a caller whose ``changes`` are already what
    ``Run.__post_init__`` would make them (as :func:`built_run`): the loader merges each run's
    manifest this way."""
    state = run.__dict__.copy()
    state.update(changes)
    return _run_of(state)


def built_run(fields: dict[str, Any]) -> Run:
    """A Run of ``fields`` (the rest at their defaults) for a caller that has already made
    them what ``Run.__post_init__`` would: maps FrozenMap, lists tuples, a known
    ``latency_source``. The parsers' fast paths build thousands per load this way."""
    state = _INSTANCE_DEFAULTS.copy()  # the rest read the class's defaults
    state.update(fields)
    return _run_of(state)


def _run_of(state: dict[str, Any]) -> Run:
    """A Run whose ``__dict__`` is ``state`` (no ``__init__``, no checks)."""
    run = object.__new__(Run)
    object.__setattr__(run, "__dict__", state)
    return run


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, LatencyHistogram) and isinstance(b, LatencyHistogram):
        return a == b and (a._min_raw, a._max_raw) == (b._min_raw, b._max_raw)
    if type(a) is not type(b) and not (isinstance(a, Mapping) and isinstance(b, Mapping)):
        return False
    if isinstance(a, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, Mapping):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def every_response_failed(run: Run) -> bool:
    """The one rule for "every response failed" (not a throughput measurement): every completed
    request was a non-2xx/3xx response (a Locust failure), the error ratio is 1, or nothing
    completed while errors were counted. A run with 99% errors still served 1%: it is not."""
    if run.requests is not None and run.requests > 0:
        bad_responses = run.non_2xx_3xx if run.tool != "locust" else run.failures
        if bad_responses is not None and bad_responses >= run.requests:
            return True
    ratio = run.error_ratio
    if ratio is not None and ratio >= 1.0:
        return True
    return bool(run.requests == 0 and (run.socket_errors or run.failures))


def below_target(run: Run) -> Warn:
    """The raw check of a wrk2 run that achieved less than :data:`SATURATION_RATIO` of its
    target rate (:attr:`Code.BELOW_TARGET`): what it measures, not a verdict. Whether the run
    saturated (the server did not keep up) or is only short and in doubt is the run-status
    rule's to say (:mod:`perfkit.analysis.core._runstatus`), among the run's peers."""
    # called only on a run found below its target: both rates are known
    assert run.throughput_rps is not None and run.target_rate_rps is not None
    return Warn(Code.BELOW_TARGET, achieved_rps=run.throughput_rps,
                target_rps=run.target_rate_rps, ratio=SATURATION_RATIO)


def validity_warnings(run: Run) -> tuple[Warn, ...]:
    """Checks every reader of a run needs, derived from the run alone."""
    out: list[Warn] = []
    ratio = run.error_ratio
    all_failed = every_response_failed(run)
    if run.requests == 0 and not all_failed:
        out.append(Warn(Code.NO_REQUEST_COMPLETED))
    if all_failed:
        out.append(Warn(Code.FAILED_EVERY_RESPONSE))
    elif ratio is not None and ratio > ERROR_RATIO_WARN:
        out.append(Warn(Code.ERRORS_HIGH, ratio=ratio))
    if run.tool == "wrk":
        out.append(Warn(Code.WRK_CLOSED_LOOP))
    elif run.tool in CLOSED_LOOP_TOOLS:
        out.append(Warn(Code.CLOSED_LOOP, tool=run.tool))
    if run.tool == "locust":
        out.append(Warn(Code.LOCUST_ROUNDING))
    out.extend(consistency_warnings(run))
    if run.tool == "wrk2":
        sat = run.below_target
        if sat is None:
            out.append(Warn(Code.SATURATION_UNKNOWN))
        elif sat:
            out.append(below_target(run))
    return tuple(out)



def run_record(run: Run) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "tool": run.tool,
        "source": run.source,
        "endpoint": run.endpoint,
        "url": run.url,
        "threads": run.threads,
        "connections": run.connections,
        "users": run.users,
        "duration_s": to_float(run.duration_s),
        "target_rate_rps": to_float(run.target_rate_rps),
        "requests": run.requests,
        "throughput_rps": to_float(run.throughput_rps),
        "transfer_bytes_per_s": to_float(run.transfer_bytes_per_s),
        "latency_mean_ms": to_float(run.latency_mean_ms),
        "latency_stdev_ms": to_float(run.latency_stdev_ms),
        "latency_max_ms": to_float(run.latency_max_ms),
    }
    for q in CONTRACT_PERCENTILES:
        rec[percentile_column(q)] = to_float(run.percentiles_ms.get(q))
    rec.update(
        errors_connect=run.errors_connect,
        errors_read=run.errors_read,
        errors_write=run.errors_write,
        errors_timeout=run.errors_timeout,
        non_2xx_3xx=run.non_2xx_3xx,
        failures=run.failures,
        error_ratio=to_float(run.error_ratio),
        latency_source=run.latency_source,
        histogram_count=run.histogram_count,
        warnings=[w.text for w in run.warnings],
    )
    # beyond the contract
    for q, v in sorted(run.percentiles_ms.items()):
        rec.setdefault(percentile_column(q), v)
    if run.tool == "wrk2":
        for q in UNCORRECTED_PERCENTILES:
            rec[percentile_column(q, "uncorrected")] = to_float(
                run.uncorrected_percentiles_ms.get(q))
    rec.update(
        latency_min_ms=to_float(run.latency_min_ms),
        method=run.method,
        is_aggregate=run.is_aggregate,
        below_target=run.below_target,
        run_id=run.run_id,
        tool_version=run.tool_version,
        repetition=run.repetition,
        block=run.block,
        order=run.order,
        start_utc=run.start_utc,
        exit_code=run.exit_code,
    )
    if run.counters_recorded:
        rec.update(counter_columns(run.counters, run.connections))
    for key, value in run.factors.items():
        if key not in rec:
            rec[key] = value
    return rec
