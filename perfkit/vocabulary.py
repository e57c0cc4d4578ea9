"""The words of perfkit's decisions, each defined once.

Every verdict and status perfkit decides is a member of one of these enums (:class:`enum.
StrEnum`), returned by the analysis. A member *is* its string, an identity: it compares equal
to it, formats as it (``f"{Verdict.NO_CHANGE}"`` is ``~``), and :mod:`json`, :mod:`csv` and
pandas write it as it is. Most identities are their own word (``better``, ``~``, ``failed``);
those that are not, and any tunable in their words, are worded once, by
:func:`perfkit.wording.verdict_words` (``stable``: ``no drift beyond ±10%``;
``supported-in-direction``: ``supported in direction; size not comparable``), where the front
ends show them. ``tests/test_vocabulary.py`` checks that no other module types these words.

- :class:`Verdict`: a comparison row or an effect (``better``, ``worse``, ``~``, ``not
  testable``, ``no data``, ``interaction``).
- :class:`RunStatus`: a run under the run-status rule (:mod:`perfkit.analysis.core._runstatus`).
- :class:`ManifestStatus`: how a run ended, as the runner writes it in ``manifest.json``;
  :data:`FAILED_STATUSES` are those of a failed run.
- :class:`GateStatus` and :class:`GateOutcome`: a row of ``perfkit gate`` (with the exit
  status of a gate) and its outcome in words.
- :class:`SloVerdict`: an offered rate under an SLO.
- :class:`DriftVerdict`: the drift over an experiment's run order.
- :class:`ChangeSupport` and :class:`HistoryVerdict`: a change point of a history, and a
  history's answer.
- :class:`ScalingVerdict`: a USL fit's peak.
- :class:`ClaimVerdict`: a published claim against its repeat
(:mod:`perfkit.analysis.seeds._seeds`).
- :class:`NoteKind`: what a run behind a row's warnings is besides a status (on a timeout cap).
"""

from __future__ import annotations

from enum import StrEnum

from perfkit.errors import ERROR_STATUS

__all__ = [
    "ARTEFACT", "FAILED_STATUSES", "ChangeSupport", "ClaimVerdict",
    "DriftVerdict", "GateOutcome", "GateStatus", "HistoryVerdict", "ManifestStatus", "NoteKind",
    "SIGNIFICANT", "RunStatus", "ScalingVerdict", "SloVerdict", "Verdict",
]


class Verdict(StrEnum):
    """The verdict of a comparison row (:func:`perfkit.analysis.compare._compare.verdict`) or of a
    factorial effect (:meth:`perfkit.analysis.effects._effects.FactorialResult.verdicts`)."""

    #: significant, in the metric's good direction
    BETTER = "better"
    #: significant, in the metric's bad direction
    WORSE = "worse"
    #: no significant change (benchstat's word)
    NO_CHANGE = "~"
    #: no data of these run counts could reach alpha
    NOT_TESTABLE = "not testable"
    #: a side has no finished run
    NO_DATA = "no data"
    #: a significant interaction: the factors' effects do not add up
    INTERACTION = "interaction"


#: the verdicts of a significant change
SIGNIFICANT = (Verdict.BETTER, Verdict.WORSE)

#: an effect computed from values on a known timeout cap: where an answer is listed, and what
#: its verdict is (worded with the caps, ``artefact of the 1000 ms cap``, by
#: :func:`perfkit.wording.artefact_words`; :func:`perfkit.analysis.core._caps.artefact`)
ARTEFACT = "artefact"


class RunStatus(StrEnum):
    """A run's status under the run-status rule (:mod:`perfkit.analysis.core._runstatus`)."""

    OK = "ok"
    #: fell slightly short of its target rate: in doubt, kept with its value
    SHORT = "short"
    #: did not sustain its target rate (below 0.9 x, or its latency rose above its peers')
    SATURATED = "saturated"
    #: fewer connections got in than the generator asked for (for the whole run, or for part
    #: of it: the server's socket dropped attempts): its latencies describe those that did
    #: (survivorship); kept with its values, in doubt
    PARTIAL = "partial"
    #: the tool failed, most requests failed, or no value
    FAILED = "failed"
    #: the run ran but its tool never measured the metric (wrk without --latency, ...)
    NO_DATA = Verdict.NO_DATA

    @property
    def counts_as_failed(self) -> bool:
        """Failed or saturated: ranked worst where failing makes a metric worse."""
        return self in (RunStatus.FAILED, RunStatus.SATURATED)


class NoteKind(StrEnum):
    """What a run behind a row's warnings is, besides a :class:`RunStatus`
    (:func:`perfkit.analysis.core._run_notes.run_notes`): a latency on a known timeout cap
    (worded ``on a timeout cap``, :func:`perfkit.wording.verdict_words`)."""

    ON_CAP = "on-cap"


class ManifestStatus(StrEnum):
    """How a run ended, as the runner writes it in ``manifest.json`` (``status``)."""

    COMPLETE = "complete"
    FAILED = RunStatus.FAILED
    KILLED = "killed"
    ABORTED = "aborted"


#: the manifest statuses of a failed run (the runner writes no other)
FAILED_STATUSES = frozenset({ManifestStatus.FAILED, ManifestStatus.KILLED,
                             ManifestStatus.ABORTED})


class GateStatus(StrEnum):
    """A gated row's status (:mod:`perfkit.analysis.compare._gate`), in the order a gate takes the
    worst of its rows: an error first (the gate could not run as asked)."""

    ERROR = "error"
    REGRESSION = "regression"
    INCONCLUSIVE = "inconclusive"
    #: the runs of a side did not measure the metric: not gated
    NO_DATA = Verdict.NO_DATA
    PASS = "pass"

    @property
    def exit_status(self) -> int:
        """The exit status of a gate whose worst row has this status: 2 (:data:`perfkit.errors.
        ERROR_STATUS`: the gate could not run as asked), 1, 3 (inconclusive, no data) or 0."""
        return {GateStatus.ERROR: ERROR_STATUS, GateStatus.REGRESSION: 1,
                GateStatus.INCONCLUSIVE: 3, GateStatus.NO_DATA: 3, GateStatus.PASS: 0}[self]


class GateOutcome(StrEnum):
    """A gated row's outcome in words: why it got its :class:`GateStatus`."""

    NO_DATA = Verdict.NO_DATA
    NOT_TESTABLE = Verdict.NOT_TESTABLE
    NO_INTERVAL = "no interval"
    REGRESSION = GateStatus.REGRESSION
    BELOW_THRESHOLD = "significant, below threshold"
    IMPROVEMENT = "improvement"
    NO_REGRESSION = "no regression"
    BEYOND_NOT_SIGNIFICANT = "beyond threshold, not significant"
    STRADDLES = "straddles threshold"
    #: the arms ran apart in time, and without the drift the change straddles the threshold
    DRIFT = "could be drift"
    #: the arms ran at different load levels (no level on both sides): nothing to judge
    DIFFERENT_LOAD = "different load levels"


class SloVerdict(StrEnum):
    """An offered rate under an SLO (:func:`perfkit.stats.slo.slo_verdict`)."""

    PASS = GateStatus.PASS
    FAIL = "fail"
    INCONCLUSIVE = GateStatus.INCONCLUSIVE


class BracketVerdict(StrEnum):
    """Where an SLO's largest passing offered rate lies
    (:attr:`perfkit.analysis.scaling._slo.SloBracket.verdict`)."""

    BRACKETED = "bracketed"  # a pass, then a fail at the next rate tested above it
    INCONCLUSIVE_BETWEEN = "inconclusive between"  # rates between them are inconclusive
    INCONCLUSIVE_ABOVE = "inconclusive above"  # no rate failed; those above the pass unclear
    OPEN_ABOVE = "open above"  # every rate passed: test higher rates
    NONE_PASSED = "none passed"
    NOT_MONOTONE = "not monotone"  # a pass above a fail: repeat


class DriftVerdict(StrEnum):
    """The drift over an experiment's run order (:mod:`perfkit.analysis.context._drift`):
    ``stable`` is worded with its tolerance (:func:`perfkit.wording.verdict_words`: ``no drift
    beyond ±10%``, :data:`perfkit.wording.DRIFT_TOLERANCE_PCT`)."""

    DRIFT = "drift"
    STABLE = "stable"
    INCONCLUSIVE = GateStatus.INCONCLUSIVE


class ChangeSupport(StrEnum):
    """A change point's support (:mod:`perfkit.stats.changepoint`): its ratio's interval
    excludes 1, or it has none or one holding 1 (weakly supported)."""

    SUPPORTED = "supported"
    WEAK = "weak"


class HistoryVerdict(StrEnum):
    """Where a history's metric changed
    (:func:`perfkit.analysis.history._history.series_verdict`)."""

    CHANGE = "change"
    WEAK_CHANGE = f"{ChangeSupport.WEAK} change"
    NO_CHANGE = "no change"


class ScalingVerdict(StrEnum):
    """A scalability fit (:attr:`perfkit.analysis.scaling._scaling.ScalingResult.verdict`)."""

    PEAK = "peak"
    NO_PEAK = "no peak"
    NOT_TESTABLE = Verdict.NOT_TESTABLE


class ClaimVerdict(StrEnum):
    """A published claim against its repeated experiment (:func:`perfkit.analysis.seeds._seeds.
    judge`); each worded by :func:`perfkit.wording.verdict_words` (``supported-in-direction``:
    ``supported in direction; size not comparable``)."""

    SUPPORTED = ChangeSupport.SUPPORTED
    SUPPORTED_DIRECTION = "supported-in-direction"
    CONTRADICTED = "contradicted"
    INCONCLUSIVE = GateStatus.INCONCLUSIVE
    NOT_TESTABLE_N1 = "not-testable-n1"
    NOT_TESTABLE_UNSTATED = "not-testable-unstated"
    NOT_TESTABLE_NONE = "not-testable-none"
