"""The notes a comparison row carries about its runs' statuses
(:mod:`perfkit.analysis.runstatus`): which runs it ranks worst, the saturated and the doubtful
ones, each run named once (a saturated run ranked worst is never also called failed).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from perfkit.analysis import runstatus
from perfkit.analysis.metrics import Metric
from perfkit.stats.comparison import Comparison


def ranked_worst(statuses: Sequence[runstatus.RunStatus], metric: Metric) -> np.ndarray:
    """Which runs a comparison of ``metric`` ranks worst whatever their value: the failed and
    saturated ones, on a metric where failing is worst (:attr:`Metric.failed_is_worst`). A
    run without a value ranks worst in any case (:func:`perfkit.stats.compare` takes NaN as
    failed)."""
    return np.array([s.counts_as_failed and metric.failed_is_worst for s in statuses],
                    dtype=bool)


def status_notes(label: str, statuses: list[runstatus.RunStatus]) -> list[str]:
    out = []
    for kind, text in ((runstatus.SATURATED, "saturated (ranked with the failed runs)"),
                       (runstatus.SHORT, "in doubt, kept with their values (the row's "
                                         "result without them is noted on the row)")):
        reasons = [s.reason for s in statuses if s.status == kind]
        if reasons:
            out.append(f"{label}: {len(reasons)} run(s) {text}: {'; '.join(reasons[:3])}"
                       + (" ..." if len(reasons) > 3 else ""))
    return out


def one_note_per_run(c: Comparison, statuses: Sequence[list[runstatus.RunStatus]],
                      failed: Sequence[np.ndarray], metric: Metric) -> Comparison:
    """``c`` with the test's note on the runs it ranked worst counting only the failed ones: a
    saturated run ranked worst has its own note (:func:`status_notes`), so the same run is
    never described as both saturated and failed."""
    notes = list(c.warnings)
    side = "slower" if metric.lower_is_better else "lower"
    for label, st, worst in zip(("base", "new"), statuses, failed, strict=True):
        saturated = sum(1 for s, w in zip(st, worst, strict=True)
                        if w and s.status == runstatus.SATURATED)
        if not saturated:
            continue
        for i, note in enumerate(notes):
            head = f"{label}: "
            tail = f" failed run(s) ranked {side} than every finished run"
            if note.startswith(head) and note.endswith(tail):
                left = int(note[len(head):-len(tail)]) - saturated
                notes[i] = f"{head}{left}{tail}" if left > 0 else ""
    return dataclasses.replace(c, warnings=tuple(n for n in notes if n))
