"""What must travel with a seeds claim's numbers, in words: published values that sit on a known
timeout, what the runs ranked worst in a repeat were, the runs kept in doubt, and the threats
to validity of the repeat's experiment that bear on its numbers.

Each function states a finding of the analysis (:mod:`perfkit.analysis.core._runstatus`,
:mod:`perfkit.analysis.context._validity`); none decides a verdict.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np

from perfkit import units
from perfkit.analysis.compare import NOT_TESTABLE, cell_runs, untestable_text
from perfkit.analysis.context import Threat
from perfkit.analysis.core import (
    CAP_TOLERANCE,
    FAILED,
    KNOWN_CAPS_MS,
    MOVED_FACTOR,
    MOVED_SDS,
    REFERENCE_LATENCY,
    SATURATED,
    SHORT,
    UNDECIDED,
    RunJudgement,
    RunSet,
    achieved_ratio,
    kept_up,
    metric,
    peer_latencies,
    run_statuses,
)

#: the threats of a repeat's experiment that bear on the numbers of its comparisons
NUMBER_THREATS = ("drift", "blocks", "value-cap", "generator-busy")

_TIME = re.compile(r"(\d+(?:\.\d+)?)(?:\s*-\s*(\d+(?:\.\d+)?))?\s*(ms|seconds?|s)\b")


def published_caps(text: str) -> list[str]:
    """The published times in ``text`` (``'spikes around 1000ms'``, ``5 seconds``) that sit on
    a known timeout (:data:`perfkit.analysis.context._validity.KNOWN_CAPS_MS`, within
    :data:`~perfkit.analysis.context._validity.CAP_TOLERANCE`): one sentence each, naming the
    cap."""
    return list(dict.fromkeys(
        f"the published {found!r} sits on {cap:g} ms, {KNOWN_CAPS_MS[cap]}: an artefact of "
        "that timeout, not a service time of the setting" for found, cap in _on_caps(text)))


def published_cap_values(text: str) -> list[float]:
    """The known timeouts (ms) the published times in ``text`` sit on (:func:`published_caps`)."""
    return list(dict.fromkeys(cap for _, cap in _on_caps(text)))


def _on_caps(text: str) -> list[tuple[str, float]]:
    out = []
    for m in _TIME.finditer(str(text or "")):
        unit = "ms" if m.group(3) == "ms" else "s"
        for number in filter(None, m.group(1, 2)):
            value = units.time_ms(f"{number}{unit}")
            out += [(m.group(0), cap) for cap in KNOWN_CAPS_MS
                    if abs(value - cap) <= CAP_TOLERANCE * cap]
    return out


#: the runs-frame column of the kernel's listen-queue overflows during a run (TcpExtListen-
#: Overflows), where the testbed recorded it
LISTEN_OVERFLOWS = "tcp_listen_overflows"


def regime_gap(rep, published_text: str) -> str:
    """Why the repeat did not reach the regime the claim is about, from its runs at the claim's
    load level (``""`` when it did, or nothing in the data says otherwise):

    - no run of either arm kept its offered rate (an open-loop repeat whose every run fell
      short measures a load it did not apply);
    - the published values sit on a known timeout (``'spikes around 1000ms'``: the 1 s SYN
      retry after a listen-queue overflow) while the base arm shows none of it: no run with a
      latency on that cap (:func:`perfkit.analysis.core._stalls.stalled`) and, where the runs
      recorded the kernel's listen overflows (:data:`LISTEN_OVERFLOWS`), none.
    """
    from perfkit.analysis.core import stalled

    sides = {side: cell_runs(getattr(rep, side), rep.table.keys, rep.row.key)
             for side in ("base", "new")}
    runs = [r for rows in sides.values() for r in rows.runs]
    ratios = [x for x in (achieved_ratio(r) for r in runs) if x == x]
    gaps = []
    if ratios and len(ratios) == len(runs) and not any(kept_up(rows).any()
                                                       for rows in sides.values()):
        gaps.append(f"no run kept its offered rate: all {len(runs)} runs reached only "
                    f"{_span(ratios)} x their target")
    base = sides["base"]
    for cap in published_cap_values(published_text):
        hit = stalled(base, cap)
        over = base.values(LISTEN_OVERFLOWS) if LISTEN_OVERFLOWS in base.frame else None
        overflowed = over is not None and bool((over > 0).any())
        if hit.any() or overflowed:
            continue
        seen = (f"; no listen overflows in its {int(np.isfinite(over).sum())} runs that "
                "recorded them" if over is not None and np.isfinite(over).any() else "")
        gaps.append(f"the base arm shows no {cap / 1000:g} s spikes where the published values "
                    f"have them (0 of {len(base)} runs with a latency on the {cap:g} ms "
                    f"cap{seen})")
    return "; ".join(gaps)


def cell_statuses(rep, side: str) -> tuple[RunSet, list[RunJudgement]]:
    """The runs of one arm (``base``/``new``) of a replication at its claim's load level, and
    their statuses for its metric."""
    rows = cell_runs(getattr(rep, side), rep.table.keys, rep.row.key)
    return rows, run_statuses(rows, rep.metric)


def ranked_worst(rep) -> list[str]:
    """What the runs the repeat ranked worst at the claim's load level were, per arm: failed
    (with what the arm's other runs served) or saturated (with its latency against its
    peers', the rule's evidence)."""
    out = []
    for side in ("base", "new"):
        rows, statuses = cell_statuses(rep, side)
        worst = list(getattr(rep.row, f"worst_{side}"))
        if not any(worst):
            continue
        failed = [s for s, w in zip(statuses, worst, strict=True) if w and s.status == FAILED]
        values = rows.values(rep.metric.name)
        if failed:
            why = "; ".join(dict.fromkeys(s.reason for s in failed))
            out.append(f"the {side} configuration failed in {len(failed)} of {len(rows)} runs "
                       f"at {rep.link.at} ({why}: no {rep.metric.label})"
                       + _others(rows, statuses, values, rep.metric))
        for i, s in enumerate(statuses):
            if worst[i] and s.status == SATURATED:
                reaches = "0" if (side == "base") == rep.metric.lower_is_better else "infinity"
                out.append(f"{side} run {rows.runs[i].run_id}: {_saturated(rows, i, s)}; "
                           f"ranked worst, so the ratio's interval reaches {reaches}")
    return out


def _others(rows, statuses: Sequence[RunJudgement], values: np.ndarray, m) -> str:
    rest = [i for i, s in enumerate(statuses) if s.status != FAILED]
    if not rest:
        return ""
    errors = rows.values("error_ratio") if "error_ratio" in rows.frame else None
    shown = ", ".join(f"{values[i]:.3g}" + (f" ({_share(errors[i])} errors)"
                                           if errors is not None and errors[i] > 0 else "")
                      for i in rest)
    return f"; its other {len(rest)} run(s): {shown} {m.unit}".rstrip()


def _share(value: float) -> str:
    """A share as a percentage that never rounds up to 100% (99.99% errors served 0.01%)."""
    return f"{math.floor(value * 1000) / 10:.1f}%"


def _saturated(rows, i: int, status: RunJudgement) -> str:
    """The evidence of the saturated rule for run ``i``: its latency against the median of its
    peers (same arm and load, within 10% of their target), beside the rule's factor."""
    latency = rows.values(REFERENCE_LATENCY) if REFERENCE_LATENCY in rows.frame else None
    text = f"saturated by the run-status rule ({status.reason})"
    peers = None if latency is None else peer_latencies(rows, metric(REFERENCE_LATENCY), i)
    if peers is None or not len(peers):
        return text
    assert latency is not None  # peers come from it
    logs = np.log(peers)
    mad_sd = 1.4826 * float(np.median(np.abs(logs - np.median(logs))))
    bound = math.exp(max(MOVED_SDS * mad_sd, math.log(MOVED_FACTOR)))
    factor = latency[i] / float(np.exp(np.median(logs)))
    return (f"{text}: its p99 {latency[i]:.3g} ms is x{factor:.2f} the median of its "
            f"{len(peers)} peers ({peers.min():.3g}-{peers.max():.3g} ms), beyond the "
            f"rule's x{bound:.2f} (the larger of x{MOVED_FACTOR:g} and {MOVED_SDS:g} robust "
            "sds of the peers)")


def in_doubt(rep) -> list[str]:
    """The runs kept in doubt (``short``: a wrk2 run slightly below its target rate) at the
    claim's load level, per arm, with their achieved rates, and what the comparison without
    them finds. Where no run of an arm kept its rate, the note says so, as the run-status rule
    does (:mod:`perfkit.analysis.core._runstatus`): peers that all share the shortfall say nothing
    of the runs' latency, and the rate was not sustained by this setup, generator or server
    (undecided)."""
    parts, every, unkept = [], True, []
    for side in ("base", "new"):
        rows, statuses = cell_statuses(rep, side)
        short = [i for i, s in enumerate(statuses) if s.status == SHORT]
        every &= len(short) == len(rows)
        if short:
            got = [achieved_ratio(rows.runs[i]) for i in short]
            parts.append(f"{side}: {len(short)} of {len(rows)} runs achieved only "
                         f"{_span(got)} x their target rate")
            if not kept_up(rows).any():
                unkept.append(side)
    if not parts:
        return []
    head = (f"at {rep.link.at} every run of both arms fell short of its target rate"
            if every else f"at {rep.link.at} runs fell short of their target rate")
    arms = "either arm" if len(unkept) == 2 else f"the {unkept[0]} arm" if unkept else ""
    alike = (f"; no run of {arms} kept the rate, so no peer shows what their latency would be "
             f"at it: the rate was not sustained by this setup, {UNDECIDED}" if arms else "")
    s, sv = rep.row.sensitivity, rep.row.sensitivity_verdict
    why = (f": {untestable_text(s.n_base, s.n_new, s.alpha, rep.table.family)}"
           if s is not None and sv == NOT_TESTABLE else "")
    without = ("without them no run is left to compare" if s is None or not (s.n_base and s.n_new)
               else f"without them: {sv} ({s.n_base} vs {s.n_new} runs){why}")
    return [f"{head} ({'; '.join(parts)}){alike}: kept, in doubt (not failed); {without}"]


def _span(values: Sequence[float]) -> str:
    lo, hi = min(values), max(values)
    return f"{lo:.3f}" if f"{lo:.3f}" == f"{hi:.3f}" else f"{lo:.3f}-{hi:.3f}"


def experiment_warnings(threats: Sequence[Threat]) -> list[str]:
    """The threats (:func:`perfkit.analysis.context._validity.threats`) of a repeat's experiment
    that bear on its numbers: drift, block differences, values on a timeout, a busy generator."""
    return [t.text for t in threats if t.kind in NUMBER_THREATS]
