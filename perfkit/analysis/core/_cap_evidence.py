"""The kernel's evidence of a SYN-retransmission stall, for the cap rule of
:mod:`perfkit.analysis.core._caps`.

A connection attempt the kernel drops from a full accept queue (a listen overflow) is retried
after 1 s (the SYN retransmission timeout), then 3 s. Where a run recorded the kernel's
counters in a network namespace of its own (:mod:`perfkit.ingest.counters`), the listen
overflows and SYN retransmissions it counted say whether it waited for that timeout
(:func:`kernel_evidence`), instead of the latency alone; :func:`evidence` gives them, run
by run, to the cap's warning.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from perfkit.analysis.core._mechanism import kernel_scope
from perfkit.model import Run

#: the caps (ms) that are SYN retransmissions: the kernel counts them (listen overflows and
#: TCPSynRetrans are the evidence, :func:`perfkit.analysis.core._mechanism.stall_evidence`)
SYN_CAPS_MS = (1000.0, 3000.0)


def kernel_evidence(run: Run | None, cap: float) -> bool | None:
    """Whether ``run``'s kernel counters show connection attempts retried after a SYN
    retransmission cap (1 s, 3 s): listen overflows or SYN retransmissions counted (> 0) in
    a network namespace of the run's own. None, to be judged from the latency alone, for
    another cap, without counters, or with counters read system-wide (other traffic on the
    host could have made them)."""
    if run is None or cap not in SYN_CAPS_MS or not (kernel_scope(run) or "").startswith(
            "netns"):
        return None
    counts = (run.counters.tcp_listen_overflows, run.counters.tcp_syn_retransmits)
    if all(c is None for c in counts):
        return None
    return any(c for c in counts)


def evidence(cap: float, run_ids: Sequence[str], records: Mapping[str, Run]
             ) -> tuple[tuple[str, int | None, int | None, str | None], ...]:
    """What the runs' kernel counters say about a SYN-retransmission cap (1 s, 3 s), run by
    run: ``(run_id, listen overflows, SYN retransmissions, scope)``, the counts None for a run
    whose stall is inferred from the latency alone (no counters); ``()`` when no run recorded
    them (the rule is then the latency's alone, as the module docstring says) or for another
    cap. Worded in the cap's warning (:attr:`perfkit.warning.Code.ON_CAP`)."""
    if cap not in SYN_CAPS_MS:
        return ()
    out = []
    for rid in run_ids:
        run = records.get(rid)
        counts = (None, None) if run is None else (run.counters.tcp_listen_overflows,
                                                   run.counters.tcp_syn_retransmits)
        out.append((rid, *counts, None if run is None else kernel_scope(run)))
    if all(o is None and s is None for _, o, s, _ in out):
        return ()
    return tuple(out)
