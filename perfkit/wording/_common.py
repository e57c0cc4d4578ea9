"""The words every family of warnings shares: the vocabulary's verdicts, plurals,
percentages and p-values, the timeout caps, and where a row sits."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from perfkit.vocabulary import ARTEFACT, ClaimVerdict, DriftVerdict, NoteKind

#: a wording: a str.format template over the fields, or a function of them
Wording = str | Callable[[Mapping[str, Any]], str]


#: a drift smaller than this over a whole experiment (first run to last) does not matter: the
#: tunable of the drift verdict ``stable`` (:mod:`perfkit.analysis.context._drift`)
DRIFT_TOLERANCE_PCT = 10.0


#: the words of the vocabulary's identities whose words are more than the identity
#: (:func:`verdict_words`)
VERDICT_WORDS: dict[str, str] = {
    DriftVerdict.STABLE: f"no drift beyond ±{DRIFT_TOLERANCE_PCT:g}%",
    ClaimVerdict.SUPPORTED_DIRECTION: f"{ClaimVerdict.SUPPORTED} in direction; size not "
                                      "comparable",
    ClaimVerdict.CONTRADICTED: "contradicted by a repeated experiment",
    ClaimVerdict.NOT_TESTABLE_N1: "not testable (n = 1)",
    ClaimVerdict.NOT_TESTABLE_UNSTATED: "not testable (runs not stated)",
    ClaimVerdict.NOT_TESTABLE_NONE: "not testable (no measurement)",
    NoteKind.ON_CAP: "on a timeout cap",
}


def verdict_words(verdict: Any) -> str:
    """A verdict or status of the vocabulary in words (its identity when that is its word:
    ``better``, ``~``; ``stable`` -> ``no drift beyond ±10%``); any other text as it is."""
    return VERDICT_WORDS.get(verdict, str(verdict)) if isinstance(verdict, str) else \
        str(verdict)


def the_caps(caps: Any) -> str:
    """``"the 1000 ms cap"``, ``"the 1000 and 2000 ms caps"``."""
    names = " and ".join(f"{c:g}" for c in sorted(caps))
    return f"the {names} ms cap{'s' if len(caps) > 1 else ''}"


def artefact_words(caps: Any) -> str:
    """The verdict of an effect computed from values on ``caps`` (ms): ``"artefact of the 1000
    ms cap"``."""
    return f"{ARTEFACT} of {the_caps(caps)}"


def affected_words(verdict: str, caps: Any) -> str:
    """A measured verdict from runs that waited for ``caps`` (ms): ``"better (affected by the
    1000 ms cap)"``."""
    return f"{verdict_words(verdict)} (affected by {the_caps(caps)})"


def plural_s(n: int) -> str:
    """The plural ``s`` of ``n`` things (none for one)."""
    return "" if n == 1 else "s"


def pct(share: float) -> str:
    """A share in [0, 1] as a percentage without trailing zeros: ``0.95`` -> ``95%``."""
    return f"{share * 100:g}%"


def fmt_p(p: float) -> str:
    """A p-value in a warning: 2 decimals, 2 significant digits below 0.01."""
    return f"{p:.2f}" if p >= 0.01 else f"{p:.2g}"


def runs_text(n: int) -> str:
    """``1 run``, ``5 runs``."""
    return "1 run" if n == 1 else f"{n} runs"


#: how wrk 4 computes the latencies it prints, as its source does (wg/wrk 4.x, src/wrk.c
#: ``main`` and src/stats.c ``stats_correct``): the one wording of the run's warning, the
#: Methods, every page and ``perfkit show``
WRK_LATENCY = ("wrk is closed-loop: each connection sends its next request only when the "
               "previous response arrives, and latency is timed from the send; before "
               "printing, wrk 4 adds synthetic samples for the requests a slow response held "
               "up (stats_correct: with the run's mean time per request on one connection as "
               "the interval, each latency of two intervals or more adds one sample at every "
               "interval below it), so the printed mean, stdev and percentiles include them "
               "and the max does not; the interval is the run's own achieved one, not an "
               "intended schedule, so the tail may still be understated (coordinated "
               "omission): use wrk2 for tail latency")


#: the known timeout caps (ms), named (:data:`perfkit.analysis.core.KNOWN_CAPS_MS`): Linux's
#: initial SYN retransmission timeout (1 s, RFC 6298) and its next backoff (3 s total), wrk's
#: default --timeout (2 s)
CAP_NAMES = {1000.0: "the Linux SYN retransmission timeout (1 s): connection attempts "
                     "dropped from a full accept queue and retried",
             2000.0: "wrk's default request timeout (2 s)",
             3000.0: "the second SYN retransmission (3 s)"}


def stall_words(overflows: int | None, syn_retransmits: int | None, scope: str | None) -> str:
    """What a run's kernel counters say about connection attempts retried after 1 s: ``"1,234
    listen overflows and 567 SYN retransmissions (netns X)"``, or ``"no listen overflow and no
    SYN retransmission (...)"`` when both are 0."""
    where = f" ({scope})" if scope else ""
    if not overflows and not syn_retransmits:
        return f"no listen overflow and no SYN retransmission{where}"
    parts = [f"{v:,} {name}" for v, name in ((overflows, "listen overflows"),
                                            (syn_retransmits, "SYN retransmissions"))
             if v is not None]
    return " and ".join(parts) + where


#: what to do about a drift the arms' order confounds
DRIFT_FIX = ("interleave the arms (perfkit sweep randomizes the run order) to tell a change "
             "from a drift")


def at_words(where: tuple[tuple[str, Any], ...]) -> str:
    """``" at connections=64, keepalive=on"`` (empty without a key)."""
    text = ", ".join(f"{k}={v}" for k, v in where)
    return f" at {text}" if text else ""


def need_words(need: int | None, family: int, most: int) -> str:
    """What would make a comparison testable: ``"needs >= 5 runs per arm"`` (``need``: the
    fewest equal runs per arm, None beyond ``most``; Holm over ``family`` comparisons)."""
    more = ", or fewer comparisons" if family > 1 else ""
    return (f"needs >= {need} runs per arm{more}" if need
            else f"needs more than {most} runs per arm{more}")


def labels_words(labels: tuple[str, ...]) -> str:
    """``label v03`` or ``labels v03, v07``."""
    return f"label{'s' if len(labels) > 1 else ''} {', '.join(labels)}"
