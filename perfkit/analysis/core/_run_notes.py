"""The runs behind a row's warnings, one run per record: a tidy companion to the warning
sentences (which name several runs in one cell).

:func:`run_notes` lists, for one side of a comparison or one level of a factorial, every run
the run-status rule did not call ``ok`` (failed, saturated, short: :mod:`perfkit.analysis.
runstatus`, judged on the metric among the runs given) and every latency of a run on a known
timeout cap (:func:`perfkit.analysis.core._caps.cap_hits`), each as ``(run_id, kind, detail)``.
"""

from __future__ import annotations

from collections.abc import Sequence

from perfkit.analysis.core._caps import cap_hits
from perfkit.analysis.core._experiment import RunSet
from perfkit.analysis.core._metrics import Metric
from perfkit.analysis.core._runstatus import NO_VALUE, RunJudgement, run_statuses, statuses_by_cell
from perfkit.vocabulary import NoteKind, RunStatus

#: the columns of a run-notes frame after the row's own keys
COLUMNS = ("side", "run_id", "kind", "detail")
#: the kind of a value on a known cap (:class:`perfkit.vocabulary.NoteKind`)
CAP = NoteKind.ON_CAP


def run_notes(rows: RunSet, metric: Metric, cells: list[str] | None = None,
              statuses: Sequence[RunJudgement] | None = None
              ) -> tuple[tuple[str, str, str], ...]:
    """``(run_id, kind, detail)`` per run with a status other than ``ok`` for ``metric``
    (``kind`` the status, ``detail`` its reason) and per value on a known cap (``kind``
    :data:`CAP`, ``detail`` ``"latency_p99_ms 994 ms on the 1000 ms cap"``); ``cells``: the
    columns whose values make a run's peers (default: ``rows`` are one cell); ``statuses``:
    the runs' statuses so judged, when the caller has them."""
    if not len(rows):
        return ()
    if statuses is None:
        statuses = (statuses_by_cell(rows, metric, cells) if cells
                    else run_statuses(rows, metric))
    out: list[tuple[str, str, str]] = []
    for run, status in zip(rows.runs, statuses, strict=True):
        if status.status != RunStatus.OK and status.reason != NO_VALUE:
            out.append((run.run_id or run.source, status.status, status.reason))
    out += [(h.run_id, CAP, f"{h.column} {h.value_ms:.4g} ms on the {h.cap_ms:g} ms cap")
            for h in cap_hits(rows)]
    return tuple(out)
