"""Known timeout caps: the one rule for values on a cap, and what such runs do to each metric.

**On a cap.** A latency of a run sits on a known cap ``c`` (:data:`KNOWN_CAPS_MS`: the Linux
SYN retransmission timeout of 1 s and its next backoff at 3 s, wrk's 2 s timeout) when three
things hold:

1. it lies in the cap's window: ``|v - c| <= CAP_TOLERANCE * c`` for a percentile (a timeout
   plus a little service time, printed to 3 digits: wrk prints 1.01s); a run's
   ``latency_max_ms`` is one request, the timeout plus that request's own latency after the
   retry, so ``c * (1 - CAP_TOLERANCE) <= max <= c * (1 + MAX_ABOVE_CAP)``;
2. the run waited for the timeout. For a SYN retransmission cap (1 s, 3 s) of a run whose
   kernel counters were recorded in a network namespace of its own
   (:mod:`perfkit.ingest.counters`), the counters say so (:func:`kernel_evidence`): listen
   overflows or SYN retransmissions counted, the attempts dropped and retried; none counted,
   no retry, whatever the latency. Otherwise (no counters, counters read system-wide, wrk's
   2 s timeout) it is inferred from the latency. With that evidence, the window of
   condition 1 reaches up by the run's median latency more (a retried request waits the
   timeout, then its turn like any other: p99 1070 ms with a median of 57 ms is on the 1 s
   cap). Without it, the cap stands out from the run's own
   distribution (:func:`stands_out`): the run's median
   is under :data:`SEPARATE_MODE` (a tenth) of the cap, or its percentiles jump at the cap
   (the highest one it reports below the window is at most ``c /`` :data:`JUMP`). The values
   on the cap are then a separate mode, requests that waited for the timeout. A run whose
   latency ramps smoothly through the caps (an open-loop generator's queue: p10 310 ms, p50
   1052, p90 2103, max 2900) has a value in every window and waited for none of them;
3. the run-status rule (:mod:`perfkit.analysis.core._runstatus`, p99 among the run's peers) does not
   call the run *failed* or *saturated*: a saturated run's latencies are queueing, and the
   pages say so where they name its status.

:func:`cap_hits` is this rule; :func:`perfkit.analysis.context._validity.value_caps` (the threat)
and the backlog condition (:mod:`perfkit.analysis.context._conditions`) are built on it.

**What the caps do to a metric** (:func:`cap_check`) of a run with values on a cap:

- a latency whose own value sits on a cap measures the cap: effects and changes computed
  from it are **artefacts** of the cap, and their verdict says so (:func:`artefact`);
- so are the tail statistics of a run that waited for a timeout. Let ``q_below`` be the
  highest percentile it reports below the cap (0 when none is): at least ``q_below``% of its
  requests did not wait, so its percentiles ``q >= q_below``, its max, mean and standard
  deviation can measure the timeout as well as the service (a p99 of 649 ms against 30-39 ms
  for its peers), while a percentile ``q < q_below`` is kept: the requests that waited move it
  at most from the ``q``-th to the ``100 q / q_below``-th percentile of the others (wrk
  reports p50-p99, so a run whose max alone is on the cap keeps p50-p90; one whose p99 is on
  it keeps p50-p75);
- a metric that is not a latency (throughput, a count) of a run that waited for a timeout is
  measured, but the wait bears on it as :mod:`perfkit.analysis.core._cap_effects` says, metric by
  metric (a rate is throttled, the error ratio counts the generator's own timeout, a SYN
  retransmission adds no error): where it bears, its effects and changes keep their verdict
  and carry a warning that they are **affected** by the cap, in every table and answer.

Without counters, a run whose requests genuinely take about the cap with a fast median cannot
be told from one that waited for the timeout: it is flagged too, and its percentiles show it.
Where the runs recorded the kernel's counters, the warning of a 1 s or 3 s cap cites them, run
by run, as the evidence of a SYN retransmission (the listen overflows, attempts dropped from a
full accept queue, and the SYN retransmissions that retried them), and names the runs whose
stall was inferred from the latency alone (no counters). A run whose
values are all far from every cap is never flagged.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from perfkit import vocabulary
from perfkit.analysis.core._cap_effects import affects, consequence
from perfkit.analysis.core._cap_evidence import SYN_CAPS_MS, evidence, kernel_evidence
from perfkit.analysis.core._experiment import RunSet
from perfkit.analysis.core._metrics import Metric, percentile_of
from perfkit.analysis.core._runstatus import peer_columns, percentile_statuses
from perfkit.model import Run
from perfkit.vocabulary import Verdict
from perfkit.warning import Code, Warn
from perfkit.wording import CAP_NAMES, affected_words, artefact_words

#: latencies (ms) that are timeouts, not service times: Linux's initial SYN retransmission
#: timeout (1 s, RFC 6298) and its next backoff (3 s total), wrk's default --timeout (2 s)
#: (their names are :data:`perfkit.wording.CAP_NAMES`')
KNOWN_CAPS_MS = CAP_NAMES
#: a value within this relative distance of a cap is in its window: a timeout plus a little
#: service time, printed to 3 significant digits (wrk prints 1.01s)
CAP_TOLERANCE = 0.05
#: an effect from values on a cap (:data:`perfkit.vocabulary.ARTEFACT`)
ARTEFACT = vocabulary.ARTEFACT
#: a run's max latency up to this share above a cap sits on it (the timeout plus the
#: request's own latency after the retry: up to 100 ms at 1 s)
MAX_ABOVE_CAP = 2 * CAP_TOLERANCE
#: the column holding a run's largest latency
MAX_COLUMN = "latency_max_ms"
#: latency statistics that one request waiting for a timeout can move arbitrarily
WHOLE_RUN = ("latency_max_ms", "latency_mean_ms", "latency_stdev_ms")
#: a cap stands out from a run whose median is under this share of it
SEPARATE_MODE = 0.1
#: ... or whose highest percentile below the cap's window is at most the cap over this: a
#: jump larger than between any two adjacent percentiles wrk reports of an exponential
#: service time (p99 / p90 = 2)
JUMP = 3.0
#: the column holding a run's median latency
MEDIAN_COLUMN = "latency_p50_ms"
#: the rule in words, for the sentences that name it
RULE_TEXT = (f"standing out from the run's own latencies: a median under {SEPARATE_MODE:.0%} "
             f"of the cap, or a jump of x{JUMP:g} or more from the run's highest percentile "
             "below it; failed and saturated runs are not judged")


@dataclasses.dataclass(frozen=True)
class CapHit:
    """One value on a known cap: the run, the column, the value and the cap (ms)."""

    run_id: str
    column: str
    value_ms: float
    cap_ms: float


@dataclasses.dataclass(frozen=True)
class CapCheck:
    """What known caps do to one metric over some runs (module docstring): ``caps_ms``, the
    caps its values are artefacts of (verdict :func:`artefact`); ``affected_ms``, the caps
    that throttle a metric that is not a latency (verdict kept, with a warning); ``warnings``,
    one per cap naming its runs (:attr:`Code.ON_CAP`)."""

    caps_ms: tuple[float, ...] = ()
    affected_ms: tuple[float, ...] = ()
    warnings: tuple[Warn, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.caps_ms or self.affected_ms)


def on_cap(values: np.ndarray, column: str) -> np.ndarray:
    """The known cap (ms) whose window each value of ``column`` lies in, NaN where none
    (module docstring, condition 1: symmetric tolerance for a percentile, up to
    :data:`MAX_ABOVE_CAP` above for the max). Not the whole rule: :func:`cap_hits` is."""
    v = np.asarray(values, dtype=float)
    above = MAX_ABOVE_CAP if column == MAX_COLUMN else CAP_TOLERANCE
    out = np.full(v.shape, np.nan)
    for cap in sorted(KNOWN_CAPS_MS, reverse=True):
        hit = (v >= cap * (1 - CAP_TOLERANCE)) & (v <= cap * (1 + above))
        out[hit] = cap
    return out


def latency_columns(rows: RunSet) -> list[str]:
    """The columns a cap is looked for in: the latency percentiles and the max."""
    return [c for c in rows.frame.columns
            if (c.startswith("latency_p") and c.endswith("_ms")) or c == MAX_COLUMN]


def stands_out(row: pd.Series, cap: float) -> bool:
    """Whether ``cap`` stands out from the run of ``row`` (module docstring, condition 2): its
    median is under :data:`SEPARATE_MODE` of the cap, or its highest percentile below the
    cap's window is at most ``cap /`` :data:`JUMP`."""
    median = _number(row.get(MEDIAN_COLUMN))
    if median < SEPARATE_MODE * cap:
        return True
    below = _below(row, cap)
    return bool(below) and max(below.values()) <= cap / JUMP


def _after_retry(run: Run | None, median_ms: float, value: float, column: str) -> float:
    """The SYN retransmission cap ``value`` sits on when the run's kernel counted retries
    (:func:`kernel_evidence`): a retried request waits the timeout, then its turn like any
    other, so the window's upper edge moves up by the run's median latency; NaN otherwise."""
    median = median_ms
    if not (np.isfinite(value) and np.isfinite(median)):
        return np.nan
    above = MAX_ABOVE_CAP if column == MAX_COLUMN else CAP_TOLERANCE
    for cap in SYN_CAPS_MS:
        if cap * (1 - CAP_TOLERANCE) <= value <= cap * (1 + above) + median \
                and kernel_evidence(run, cap):
            return cap
    return np.nan


def waited(run: Run | None, row: pd.Series, cap: float) -> bool:
    """Condition 2 of the module docstring: the kernel's counters where they are the run's
    own (:func:`kernel_evidence`), else the latency (:func:`stands_out`)."""
    evidence = kernel_evidence(run, cap)
    return stands_out(row, cap) if evidence is None else evidence


def cap_hits(rows: RunSet, columns: Sequence[str] | None = None) -> list[CapHit]:
    """Every value of ``columns`` (default :func:`latency_columns`) on a known cap, run by
    run: the one rule (module docstring: in the window, standing out from its run, the run
    neither failed nor saturated)."""
    cols = [c for c in (latency_columns(rows) if columns is None else columns)
            if c in rows.frame]
    ids = _ids(rows)
    found = []
    runs = list(rows.runs) if len(rows.runs) == len(rows) else [None] * len(rows)
    medians = (pd.to_numeric(rows.frame[MEDIAN_COLUMN], errors="coerce").to_numpy(dtype=float)
               if MEDIAN_COLUMN in rows.frame else np.full(len(rows), np.nan))
    for col in cols:
        values = pd.to_numeric(rows.frame[col], errors="coerce").to_numpy(dtype=float)
        caps = on_cap(values, col)
        for i in np.flatnonzero(~np.isfinite(caps)):  # the retried requests' own service
            caps[i] = _after_retry(runs[i], float(medians[i]), values[i], col)
        found += [(i, CapHit(ids[i], col, float(values[i]), float(caps[i])))
                  for i in np.flatnonzero(np.isfinite(caps))
                  if waited(runs[i], rows.frame.iloc[i], float(caps[i]))]
    if found:
        judged = _not_judged(rows)
        found = [(i, h) for i, h in found if i not in judged]
    return [hit for _, hit in sorted(found, key=lambda item: item[0])]


def _not_judged(rows: RunSet) -> set[int]:
    """The rows whose run the run-status rule calls failed or saturated (p99, among its
    peers in ``rows``); none when ``rows`` carries no run records to judge."""
    if not len(rows) or any(r is None for r in rows.runs):
        return set()
    statuses = percentile_statuses(rows, 99.0, peer_columns(rows))
    return {i for i, s in enumerate(statuses) if s.counts_as_failed}


def _number(value) -> float:
    v = pd.to_numeric(value, errors="coerce")
    return float(v) if v is not None and np.isfinite(v) else np.nan


def _below(row: pd.Series, cap: float) -> dict[float, float]:
    """The percentiles (q -> value, ms) ``row`` reports below ``cap``'s window."""
    out = {}
    for c in row.index:
        q = percentile_of(c)
        if q is None or c.startswith("latency_uncorrected_"):
            continue
        v = _number(row[c])
        if np.isfinite(v) and v < cap * (1 - CAP_TOLERANCE):
            out[q] = v
    return out


def _q_below(row: pd.Series, cap: float) -> float:
    """The highest percentile ``row`` reports below ``cap``'s window (0 when none is)."""
    return max(_below(row, cap), default=0.0)


def tainting(rows: RunSet, metric: Metric) -> list[CapHit]:
    """The cap hits that bear on ``metric`` over ``rows`` (module docstring): its own values
    on a cap (a latency), and the other hits of the runs whose ``metric`` they bear on."""
    hits = cap_hits(rows)
    own = [h for h in hits if h.column == metric.name] if metric.is_latency else []
    last = {rid: i for i, rid in enumerate(_ids(rows))}  # a run id's row: its last, as a dict
    by_run: dict[str, list[CapHit]] = {}
    for h in hits:
        by_run.setdefault(h.run_id, []).append(h)
    out = list(own)
    for rid, found in by_run.items():  # the row of a run with a hit alone, as iterrows made it
        row = next(rows.frame.iloc[[last[rid]]].iterrows())[1]
        if _bears(metric, found, row):
            out += [h for h in found if h not in own]
    return out


def _ids(rows: RunSet) -> list[str]:
    return (rows.frame["run_id"].astype(str).tolist() if "run_id" in rows.frame
            else [str(i) for i in range(len(rows))])


def _bears(metric: Metric, hits: list[CapHit], row: pd.Series) -> bool:
    """Whether a run that waited for the caps of ``hits`` taints ``metric`` (a percentile from
    the highest one below the cap up, the max, mean and stdev; any metric not a latency that
    :func:`perfkit.analysis.core._cap_effects.affects`)."""
    if not metric.is_latency:
        return any(affects(metric, h.cap_ms) for h in hits)
    if metric.name in WHOLE_RUN:
        return True
    q = percentile_of(metric.name)
    return q is not None and q >= _q_below(row, min(h.cap_ms for h in hits))


def cap_check(rows: RunSet, metric: Metric, label: str = "") -> CapCheck:
    """What known caps do to ``metric`` over ``rows`` (module docstring); ``label`` prefixes
    the warnings (``"base"``)."""
    return _check(tainting(rows, metric), metric, label, _by_id(rows))


def cap_check_sides(sides: Sequence[RunSet], metric: Metric, label: str = "") -> CapCheck:
    """:func:`cap_check` over several sets of runs together (the two sides of a comparison),
    each run judged among the peers of its own set."""
    hits = [h for side in sides for h in tainting(side, metric)]
    runs = {k: v for side in sides for k, v in _by_id(side).items()}
    return _check(list(dict.fromkeys(hits)), metric, label, runs)


def _by_id(rows: RunSet) -> dict[str, Run]:
    return {i: r for i, r in zip(_ids(rows), rows.runs, strict=True) if r is not None}


def _check(hits: list[CapHit], metric: Metric, label: str,
           runs: Mapping[str, Run] | None = None) -> CapCheck:
    hits = [h for h in hits if affects(metric, h.cap_ms)]
    if not hits:
        return CapCheck()
    caps = tuple(sorted({h.cap_ms for h in hits}))
    warnings = tuple(_sentence(metric, cap, [h for h in hits if h.cap_ms == cap], label,
                               runs or {})
                     for cap in caps)
    return (CapCheck(caps, (), warnings) if metric.is_latency
            else CapCheck((), caps, warnings))


def _sentence(metric: Metric, cap: float, hits: list[CapHit], label: str,
              records: Mapping[str, Run]) -> Warn:
    """The cap's warning (:attr:`Code.ON_CAP`): its runs with their values on it, what the
    kernel counted, and what it does to ``metric`` (``effect``: its values are the timeout's,
    ``below-all``/``below-some``: the run's highest percentile below the cap, moved by it, or
    the consequence for a metric that is not a latency)."""
    runs: dict[str, list[tuple[str, float]]] = {}
    for h in hits:
        runs.setdefault(h.run_id, []).append((_short(h.column), h.value_ms))
    counted = any(kernel_evidence(records.get(rid), cap) is not None for rid in runs)
    if metric.is_latency:
        own = {h.run_id for h in hits if h.column == metric.name}
        # below the cap, as the run's highest percentile below it: the requests that waited
        # can move it up to the slowest request that did not wait (module docstring),
        # however close it lies to its peers' values
        effect = "artefact" if own == set(runs) else "below-some" if own else "below-all"
    else:
        effect = consequence(metric, cap)
    return Warn(Code.ON_CAP, side=label or None, cap_ms=cap, metric=metric.name,
                runs=tuple((rid, tuple(v)) for rid, v in runs.items()), counted=counted,
                tolerance=CAP_TOLERANCE, max_above=MAX_ABOVE_CAP,
                evidence=evidence(cap, list(runs), records), effect=effect)


def _short(column: str) -> str:
    """``latency_p99_ms`` -> ``p99``, ``latency_max_ms`` -> ``max``."""
    return column.removeprefix("latency_").removesuffix("_ms")


def artefact(caps: Sequence[float]) -> str:
    """The verdict of an effect computed from values on ``caps`` (ms), as tables and answers
    report it (:func:`perfkit.wording.artefact_words`: ``"artefact of the 1000 ms cap"``); a
    decision reads the caps (``on_timeout_cap``), never these words."""
    # a latency on the cap, or the tail of a run whose max is on it: the cap, either way
    return artefact_words(caps)


def affected(verdict: str, caps: Sequence[float],
             decided: Sequence[str] = (Verdict.BETTER, Verdict.WORSE, Verdict.INTERACTION)
             ) -> str:
    """The verdict of a measured effect or change (not a latency) from runs that waited for
    ``caps`` (ms), as tables and answers report it: ``"better (affected by the 1000 ms
    cap)"``; a verdict not in ``decided``, or no cap, unchanged."""
    if not caps or verdict not in decided:
        return verdict
    return affected_words(verdict, caps)
