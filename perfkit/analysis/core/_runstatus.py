"""The one rule for what a failed run is, and what a run that fell short of its target is.

Every run gets a :class:`RunStatus` for the metric being analysed:

- ``failed``: the tool exited non-zero or was killed, every response failed, the run has no
  value of the metric, or, on a metric where failing is worst (latency, throughput:
  :attr:`Metric.failed_is_worst`), its error ratio is >= :data:`FAILED_ERROR_RATIO` (most of
  its requests failed: the latency of failed requests is not a service time, and their rate
  not a throughput). On the error metrics themselves (``error_ratio``, the error counts) such
  a run keeps its status and enters with its measured value, so that a comparison of the
  error ratio still compares error ratios. In a comparison a failed run ranks worst on
  metrics where failure means "worse" (:attr:`Metric.failed_is_worst`), else it enters with
  its value (a run without one ranks worst); a cell's percentile estimate
  (:mod:`perfkit.analysis.latency`, the SLO verdicts) leaves it out and the SLO verdict fails
  its rate.
- For open-loop wrk2 runs whose achieved rate is below 0.99 x the target rate (the
  "saturation" check of :mod:`perfkit.model`), the rule tells two causes apart:

  - ``saturated``: the server did not sustain the rate. The run achieved less than
    :data:`SATURATED_BELOW` of its target, or its latency moved: it lies above its kept-up
    peers (same arm, same configuration and load) by more than their own spread allows
    (:func:`latency_moved`). Latencies of such a run include queueing, so in a comparison on
    latency metrics it ranks worst, as a failed run does; a cell's percentile estimate keeps
    its measured value (wrk2's corrected latency at the offered rate) and names it, and the
    SLO verdict fails the rate.
  - ``short``: the run fell slightly short, and is in doubt rather than failed: the
    generator used >= :data:`GENERATOR_BUSY` of its cores (the run measured the generator:
    :func:`generator_busy`, the one test every page uses), or the achieved rate is within 10%
    of the target while the latency looks like its kept-up peers', or it is within 10% and
    **no peer kept its rate** (every finished run of its configuration and load fell short:
    :func:`kept_up`). Peers that share the shortfall cannot show what the run's latency would
    be at the rate, so the reason does not call its latency "like its peers'": it says that
    every run of the cell fell short, i.e. the rate was not sustained by this setup, generator
    or server (undecided). Such a run stays in doubt, not saturated: a server that could not
    keep the rate queues requests from their intended send time, which wrk2's corrected
    latency shows and the latency rule judges against kept-up peers; with none, nothing
    measured tells a server that did not keep up from a generator that did not send (a busy
    generator is ruled out only by its CPU share). A latency that rose above the (short)
    peers' still makes the run saturated.
    A short run keeps its measured value, is warned about, and every comparison it enters is
    repeated without the doubtful runs (a sensitivity result) rather than re-ranked.

- ``no data``: the run ran (requests > 0, not failed) but its tool never measured the metric:
  wrk without ``--latency`` prints no percentiles, wrk never prints p99.9, wrk2 without
  ``--latency`` prints none, only wrk2 ``-U`` prints uncorrected latency, Locust reports no
  socket errors (:func:`unmeasured_reason`, the one rule). "No data" is about a (run,
  metric) pair, "failed" about the run: a run without the metric is left out of that
  metric's analysis with a note naming how many runs and why, never failed, never ranked
  worst. A run that recorded no latency sample at all although it asked for one (the
  tool's ``-nan``/``0.00us`` placeholders: every request timed out) did measure, and got
  nothing: it stays ``failed`` ("no value").
- ``partial``: fewer connections got in than the generator asked for (:func:`survivorship`):
  the server accepted fewer connections over the run than wrk opened (nginx's stub_status
  ``accepts``, less wrk's one test connection), or wrk counted connect errors. A closed-loop
  generator times only the connections that got in, so its latencies and rate describe
  those: "163 of 256 connections got in; latencies describe those". Kept with its values, in
  doubt, and named on every row it enters. A wrk2 run that is also short or saturated keeps
  that status, its reason naming the survivorship too.
- ``ok``: everything else.

Where a saturated run recorded the kernel's counters and they show listen overflows or SYN
retransmissions, its reason cites them (:func:`perfkit.analysis.core._mechanism.stall_evidence`):
connection attempts dropped from a full accept queue wait 1 s for their retry, which is
measured, not inferred from the latency.

A run's peers are the runs of its configuration and load (:func:`peer_columns`); for a latency
percentile the status is judged on that percentile's column, else on p99
(:func:`percentile_statuses`), on every page that shows the percentile.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence

import numpy as np

from perfkit.analysis.core._experiment import LOAD_COLUMNS, NOT_FACTORS, Experiment, RunSet
from perfkit.analysis.core._mechanism import stall_evidence
from perfkit.analysis.core._metrics import Metric, metric, percentile_of
from perfkit.consistency import kept_out_note
from perfkit.consistency import percentile_key as _key
from perfkit.model import SATURATION_RATIO, Run, every_response_failed, percentile_column
from perfkit.units import to_float
from perfkit.vocabulary import FAILED_STATUSES, RunStatus
from perfkit.warning import Code, Warn

OK, FAILED, SATURATED, SHORT, PARTIAL = (RunStatus.OK, RunStatus.FAILED, RunStatus.SATURATED,
                                         RunStatus.SHORT, RunStatus.PARTIAL)
#: a (run, metric) pair the run's tool never measured: the verdict word of a comparison row
#: without data, too (:data:`perfkit.analysis.compare._compare.NO_DATA`)
NO_DATA = RunStatus.NO_DATA
#: :func:`failure_reason` of a run that finished without a value of the metric (never
#: measured, e.g. wrk's p99.9, or lost): no data, not a failure of the run
NO_VALUE = "no value"
#: achieved / target below which a wrk2 run is saturated whatever its latency
SATURATED_BELOW = 0.9
#: generator CPU share (of the cores it may use) from which a run measured the generator (>=):
#: the one threshold of the run status, the data-quality table, the threats and the Methods
GENERATOR_BUSY = 0.9
#: a run's log latency beyond its peers' median by this many robust sds has moved ...
MOVED_SDS = 3.0
#: ... and by at least this factor (peers that agree closely would flag tiny differences)
MOVED_FACTOR = 1.5
#: the latency column judged for "moved" when the metric itself is not a latency
REFERENCE_LATENCY = "latency_p99_ms"
#: error ratio from which a run failed (>=) on latency and throughput metrics: most of its
#: requests failed, so what it measured is the failing, not the service
FAILED_ERROR_RATIO = 0.5
#: who did not sustain the rate when every run of a cell fell short: nothing measured tells
UNDECIDED = "generator or server (undecided)"
#: connections wrk and wrk2 open before the run, which the server counts: wrk.resolve() tries
#: each address of the host with wrk.connect() (wg/wrk src/wrk.lua) and closes it again
TEST_CONNECTIONS = {"wrk": 1, "wrk2": 1}


def survivorship(run: Run) -> str:
    """Why fewer connections got in than the generator asked for (empty when nothing says
    so): ``"163 of 256 connections got in (the server accepted 164, 1 of them wrk's test
    connection); latencies describe those"``, or wrk's connect errors.

    wrk opens ``-c`` connections split evenly over its ``-t`` threads (``c // t`` each), plus
    one test connection first. A connection that never got in was never accepted, so
    accepted (less the test connection) below the connections opened means that many at
    least never got in; more accepted says nothing (a connection closed by the server is
    opened again).

    So where the server closes connections (nginx's ``keepalive_requests``: 1000 requests by
    default) the count can hide the ones that never got in: 545 accepted for 256 + 1 with
    ``keepalive_requests 100``, while nginx's socket dropped 1,304 handshakes. The server's
    listening socket's own drops (``server_listen_drops``, ``ss``'s ``skmem d``) say it
    whatever the count: every attempt it dropped kept a connection out for a SYN retry (1 s
    or more), so for part of the run fewer connections were in than asked."""
    extra = TEST_CONNECTIONS.get(run.tool)
    if extra is None or not run.connections:
        return ""
    asked = run.connections
    if run.threads and run.threads <= asked:
        asked = asked // run.threads * run.threads
    accepted = run.counters.server_connections_accepted
    if accepted is not None and accepted - extra < asked:
        got = max(accepted - extra, 0)
        return (f"{got} of {asked} connections got in (the server accepted {accepted}, "
                f"{extra} of them {run.tool}'s test connection); latencies describe those")
    if run.errors_connect:
        return (f"{run.tool} counted {run.errors_connect} connect error(s) with {asked} "
                "connections: latencies describe the connections that got in")
    drops = run.counters.server_listen_drops
    if drops:
        return (f"the server's listening socket dropped {drops:,} connection attempts (each "
                f"kept out for a SYN retry, 1 s or more): for part of the run fewer than "
                f"{asked} connections were in; latencies describe those that were")
    return ""


@dataclasses.dataclass(frozen=True)
class RunJudgement:
    """A run's status for one analysis (:class:`perfkit.vocabulary.RunStatus`), and the reason
    in words (empty when ``ok``)."""

    status: RunStatus
    reason: str = ""

    @property
    def counts_as_failed(self) -> bool:
        return self.status.counts_as_failed


def failure_reason(run: Run, value: float, metric: Metric | None = None) -> str:
    """Why ``run`` failed (empty when it did not), ``value`` being its value of ``metric``.

    The error-ratio rule (>= :data:`FAILED_ERROR_RATIO`) applies on metrics where failing is
    worst (:attr:`Metric.failed_is_worst`), and when ``metric`` is None (the run's status for
    latency and throughput, e.g. whether it kept its rate)."""
    status = run.manifest_status
    if run.exit_code not in (None, 0):
        return f"exit code {run.exit_code}"
    if status in FAILED_STATUSES:
        return f"run {status}"
    if every_response_failed(run):  # the rule of the run's warning FAILED_EVERY_RESPONSE
        return "every response failed"
    ratio = run.error_ratio
    if (metric is None or metric.failed_is_worst) and ratio is not None \
            and ratio >= FAILED_ERROR_RATIO:
        # floored, so that 99.99% never reads as 100% (which "every response failed" means)
        share = math.floor(ratio * 1000) / 10
        return f"{share:.1f}% of requests failed (>= {FAILED_ERROR_RATIO:.0%})"
    if math.isinf(value):
        return "an infinite value (no tool measures one)"
    if not math.isfinite(value):
        return NO_VALUE
    return ""


def unmeasured_reason(run: Run, metric: Metric) -> str:
    """Why ``run`` holds no value of ``metric`` although it ran: its tool never measured it
    (``"wrk prints p50-p99 only"``); empty when the run has the value, failed (exit code,
    status, every response failed, the error ratio: :func:`failure_reason`), completed no
    request, or asked for latencies and recorded none (the tool's no-data placeholders: it
    measured, and got nothing, so it stays failed).

    The one rule telling "no data" (a property of the run and the metric) from "failed" (a
    property of the run), read from the run alone: its tool, ``latency_source``, the
    percentiles it printed and whether it has a histogram."""
    if not math.isnan(_value(run, metric)) or failure_reason(run, 0.0, metric):
        return ""
    q = percentile_of(metric.name)
    field = metric.name if q is None else _key(
        "uncorrected_percentiles_ms" if metric.name.startswith("latency_uncorrected_")
        else "percentiles_ms", q)
    damaged = kept_out_note(run, field)
    if damaged:  # the run measured it, and its value cannot be true
        return f"its value was kept out as damaged ({damaged})"
    if not run.requests:
        return ""
    if not metric.is_latency:
        return f"{run.tool} does not report {metric.label}"
    if not _finite(run.latency_mean_ms) and not _finite(run.latency_max_ms):
        return ""  # it measured latency and recorded no sample: failed ("no value")
    if q is None:
        return f"{run.tool} does not print the {metric.label}"
    if metric.name.startswith("latency_uncorrected_"):
        if run.tool != "wrk2":
            return f"{run.tool} prints no uncorrected latency (wrk2 -U does)"
        if run.uncorrected_percentiles_ms or run.uncorrected_histogram is not None:
            return _printed_only(run.tool, run.uncorrected_percentiles_ms)
        return "wrk2 printed no uncorrected latency (it needs -U and --latency)"
    if run.percentiles_ms or run.histogram is not None:
        return _printed_only(run.tool, run.percentiles_ms)
    if run.tool in ("wrk", "wrk2"):
        return f"{run.tool} without --latency prints no percentiles"
    return f"{run.tool} printed no percentiles"


def _printed_only(tool: str, printed: Mapping[float, float]) -> str:
    qs = sorted(printed)
    if not qs:
        return f"{tool} printed no such percentile"
    span = f"p{qs[0]:g}" if len(qs) == 1 else f"p{qs[0]:g}-p{qs[-1]:g}"
    return f"{tool} prints {span} only"


def _finite(value: float | None) -> bool:
    return value is not None and math.isfinite(value)


def _value(run: Run, metric: Metric) -> float:
    q = percentile_of(metric.name)
    if q is not None:
        found = (run.uncorrected_percentiles_ms if metric.name.startswith(
            "latency_uncorrected_") else run.percentiles_ms).get(q)
        return to_float(found)
    value = getattr(run, metric.name, None)
    return float(value) if isinstance(value, int | float) else math.nan


def unmeasured(rows: RunSet, metric: Metric) -> list[str]:
    """Per run of ``rows``, why it did not measure ``metric`` (:func:`unmeasured_reason`;
    empty for a run with a value, or one that failed)."""
    values = rows.values(metric.name) if metric.name in rows.frame else np.full(len(rows),
                                                                                np.nan)
    return ["" if not math.isnan(v) else unmeasured_reason(run, metric)
            for v, run in zip(values, rows.runs, strict=True)]


def measured_rows(rows: RunSet, metric: Metric, label: str = "") -> tuple[RunSet, list[Warn]]:
    """``rows`` without the runs that did not measure ``metric``, and the notes naming them
    (:func:`unmeasured_note`)."""
    reasons = unmeasured(rows, metric)
    keep = np.array([not r for r in reasons], dtype=bool)
    if keep.all():
        return rows, []
    return rows.subset(keep), unmeasured_note(label, reasons, metric)


def unmeasured_note(label: str, reasons: Sequence[str], metric: Metric) -> list[Warn]:
    """The notes of a side whose runs did not measure ``metric`` (``reasons``: their
    :func:`unmeasured_reason`, empty for the others): ``"new: 3 run(s) did not measure
    latency_p99_9_ms (left out): wrk prints p50-p99 only"``, one per reason
    (:attr:`Code.RUNS_UNMEASURED`)."""
    found = [r for r in reasons if r]
    return [Warn(Code.RUNS_UNMEASURED, side=label or None, runs=found.count(r),
                 metric=metric.name, reason=r) for r in dict.fromkeys(found)]


def generator_share(run: Run) -> float:
    """The load generator's CPU use as a share of the cores it could use (NaN if unknown)."""
    cpu = run.manifest.get("cpu") if run.manifest else None
    value = cpu.get("generator_cpu_share") if isinstance(cpu, Mapping) else None
    return float(value) if isinstance(value, int | float) else math.nan


def generator_busy(run: Run) -> bool:
    """Whether the generator used >= :data:`GENERATOR_BUSY` of its cores (False if unknown)."""
    return generator_share(run) >= GENERATOR_BUSY


def achieved_ratio(run: Run) -> float:
    """Achieved over target rate of an open-loop run (NaN without a target)."""
    if run.target_rate_rps and run.throughput_rps is not None:
        return run.throughput_rps / run.target_rate_rps
    return math.nan


def latency_moved(value: float, peers: np.ndarray) -> bool | None:
    """Whether ``value`` (a latency) lies above ``peers`` by more than their spread allows:
    log(value) > median + max(3 x 1.4826 MAD, log 1.5) of the peers' logs. None with fewer
    than two peers (nothing to judge against)."""
    peers = peers[np.isfinite(peers) & (peers > 0)]
    if len(peers) < 2 or not (math.isfinite(value) and value > 0):
        return None
    logs = np.log(peers)
    centre = float(np.median(logs))
    spread = 1.4826 * float(np.median(np.abs(logs - centre)))
    return math.log(value) - centre > max(MOVED_SDS * spread, math.log(MOVED_FACTOR))


@dataclasses.dataclass(frozen=True)
class _Cell:
    """What the rule reads of one cell's runs: values, judged latencies, achieved ratios,
    failure reasons, and which runs are peers."""

    values: np.ndarray
    latency: np.ndarray
    ratios: np.ndarray
    reasons: list[str]
    comparable: np.ndarray
    kept: np.ndarray


def _cell(rows: RunSet, metric: Metric) -> _Cell:
    values = rows.values(metric.name) if metric.name in rows.frame else np.full(len(rows), np.nan)
    reference = metric.name if metric.is_latency else REFERENCE_LATENCY
    latency = rows.values(reference) if reference in rows.frame else np.full(len(rows), np.nan)
    ratios = np.array([achieved_ratio(r) for r in rows.runs], dtype=float)
    reasons = [failure_reason(run, values[i], metric) for i, run in enumerate(rows.runs)]
    # a run's peers: the other runs of the cell that finished and came within 10% of their
    # target (NaN, no target, counts as kept up): a slightly short run's latency is as
    # comparable as a kept-up one's, and leaving it out lets a few close peers decide alone
    finished = np.array([not r for r in reasons], dtype=bool)
    comparable = ~(ratios < SATURATED_BELOW) & finished
    return _Cell(values, latency, ratios, reasons, comparable, kept_up(rows))


def kept_up(rows: RunSet) -> np.ndarray:
    """Which runs of ``rows`` kept their rate: finished (not failed) and achieved >=
    :data:`perfkit.model.SATURATION_RATIO` of their target (a run without a target counts as
    kept up). A short wrk2 run in a cell where no other run kept up is judged without the
    latency of its peers (:func:`run_statuses`)."""
    ratios = np.array([achieved_ratio(r) for r in rows.runs], dtype=float)
    finished = np.array([not failure_reason(r, 0.0) for r in rows.runs], dtype=bool)
    return finished & ~(ratios < SATURATION_RATIO)


def peer_latencies(rows: RunSet, metric: Metric, i: int) -> np.ndarray:
    """The latencies run ``i`` of ``rows`` is judged against (see :func:`run_statuses`)."""
    cell = _cell(rows, metric)
    return cell.latency[cell.comparable & (np.arange(len(rows)) != i)]


def run_statuses(rows: RunSet, metric: Metric) -> list[RunJudgement]:
    """The status of every run of ``rows`` for ``metric``; ``rows`` should be one arm of one
    configuration and load level, so that a run's peers are the other runs in it (those that
    finished within 10% of their target rate)."""
    cell = _cell(rows, metric)
    out = []
    for i, run in enumerate(rows.runs):
        reason = cell.reasons[i]
        unmeasured = unmeasured_reason(run, metric) if reason == NO_VALUE else ""
        if unmeasured:
            out.append(RunJudgement(NO_DATA, unmeasured))
        elif reason:
            out.append(RunJudgement(FAILED, reason))
        elif run.tool == "wrk2" and cell.ratios[i] < SATURATION_RATIO:
            others = np.arange(len(rows)) != i
            peers = cell.latency[cell.comparable & others]
            finished = others & np.array([not r for r in cell.reasons], dtype=bool)
            # peers that all fell short too cannot say what its latency should be
            cell_short = (cell.ratios[finished | ~others]
                          if finished.any() and not (cell.kept & others).any() else None)
            judged = _short_or_saturated(run, cell.ratios[i], cell.latency[i], peers,
                                         cell_short)
            partial = survivorship(run)
            out.append(dataclasses.replace(judged, reason=f"{judged.reason}; {partial}")
                       if partial else judged)
        elif partial := survivorship(run):
            out.append(RunJudgement(PARTIAL, partial))
        else:
            out.append(RunJudgement(OK))
    return out


def _short_or_saturated(run: Run, ratio: float, latency: float, peers: np.ndarray,
                        cell_short: np.ndarray | None = None) -> RunJudgement:
    """``cell_short``: the achieved ratios of every finished run of the cell when none of
    the run's peers kept its rate (None otherwise)."""
    share = generator_share(run)
    achieved = f"achieved {ratio:.3f} x its target rate"
    if generator_busy(run):
        return RunJudgement(SHORT, f"{achieved} with the generator at {share:.0%} of its cores: "
                                   "it measured the generator")
    if ratio < SATURATED_BELOW:
        return RunJudgement(SATURATED, f"{achieved}: the rate was not sustained{_dropped(run)}")
    moved = latency_moved(latency, peers)
    if moved:
        return RunJudgement(SATURATED, f"{achieved} and its latency rose above its "
                                       f"peers'{_dropped(run)}")
    cpu = "" if math.isnan(share) else f", generator at {share:.0%} of its cores"
    if cell_short is not None:
        return RunJudgement(SHORT, f"{achieved}, and every run of its configuration and load "
                                   f"fell short ({_span(cell_short)} x{cpu}): no peer kept the "
                                   "rate to judge its latency by; the rate was not sustained by "
                                   f"this setup, {UNDECIDED}: a shortfall in doubt")
    why = ("no peer to judge its latency by" if moved is None
           else "its latency is like its peers'")
    return RunJudgement(SHORT, f"{achieved} ({why}{cpu}): a shortfall in doubt, not a failed "
                               "server")


def _dropped(run: Run) -> str:
    """The kernel's evidence of connection attempts dropped and retried after 1 s, where the
    run recorded it and it is not nil (``"; the kernel counted 1,234 listen overflows and 567
    SYN retransmissions (netns X): ..."``); ``""`` otherwise."""
    if not (run.counters.tcp_listen_overflows or run.counters.tcp_syn_retransmits):
        return ""
    return (f"; the kernel counted {stall_evidence(run)}: connection attempts dropped from a "
            "full accept queue and retried after 1 s")


def _span(values: np.ndarray) -> str:
    lo, hi = f"{np.nanmin(values):.3f}", f"{np.nanmax(values):.3f}"
    return lo if lo == hi else f"{lo}-{hi}"


def statuses_by_cell(rows: RunSet, metric: Metric, cells: list[str]) -> list[RunJudgement]:
    """:func:`run_statuses` within each cell (the runs sharing the values of ``cells``), so
    that a run's peers are the runs of its own configuration and load; aligned with ``rows``."""
    columns = (rows.frame[c] for c in cells)  # one by one, as itertuples reads them
    keys = [tuple(str(v) for v in r) for r in zip(*columns, strict=True)] \
        if cells else [()] * len(rows)
    out: list[RunJudgement] = [RunJudgement(OK)] * len(rows)
    read = [c for c in dict.fromkeys((metric.name, REFERENCE_LATENCY)) if c in rows.frame]
    narrow = dataclasses.replace(rows, frame=rows.frame[read])  # the columns the rule reads
    values = [narrow.values(c) for c in read]
    for key in dict.fromkeys(keys):
        mask = np.array([k == key for k in keys], dtype=bool)
        where = np.flatnonzero(mask)
        # what the rule reads of the cell: its runs, the metric and the columns' values
        seen = (metric, tuple(rows.runs[i] for i in where), *(v[where].tobytes() for v in values))
        statuses = _CELL_STATUSES.get(seen)
        if statuses is None:
            statuses = run_statuses(narrow.subset(mask), metric)
            if len(_CELL_STATUSES) >= _CELL_STATUSES_MAX:
                _CELL_STATUSES.clear()
            _CELL_STATUSES[seen] = statuses
        for i, status in zip(where, statuses, strict=True):
            out[i] = status
    return out


#: the statuses of a cell's runs, by what :func:`run_statuses` reads of it (its Runs, which
#: never change, the metric, and the values of the columns it reads): ``effects`` asks for the
#: same cells level by level and family by family (issue 33: 12 times on the demo); bounded
_CELL_STATUSES: dict[tuple, list[RunJudgement]] = {}
_CELL_STATUSES_MAX = 4096


def peer_columns(rows: RunSet, by: Sequence[str] = ()) -> list[str]:
    """The columns whose values make a run's peers: the factors, ``by`` and the load columns
    present in ``rows`` (bookkeeping columns never)."""
    cols = [*rows.factors, *by, *LOAD_COLUMNS]
    return [c for c in dict.fromkeys(cols) if c in rows.frame and c not in NOT_FACTORS]


def percentile_statuses(rows: RunSet, q: float, cells: Sequence[str]) -> list[RunJudgement]:
    """:func:`statuses_by_cell` for the latency percentile ``q`` (0-100): judged on its own
    column where the runs frame has one, else on :data:`REFERENCE_LATENCY`."""
    name = percentile_column(q)
    latency = metric(name if name in rows.frame else REFERENCE_LATENCY)
    return statuses_by_cell(rows, latency, list(cells))


def experiment_statuses(exp: Experiment) -> list[RunJudgement]:
    """Every analysis row's status for p99, among its peers (:func:`peer_columns`); aligned
    with ``exp.rows()``."""
    rows = exp.rows()
    return percentile_statuses(rows, 99.0, peer_columns(rows))
