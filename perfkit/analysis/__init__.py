"""The analysis layer: every analysis decision perfkit makes, in one place.

Between the statistics (:mod:`perfkit.stats`) and the front ends (the
CLI in :mod:`perfkit.commands`, the report sections in :mod:`perfkit.report.sections`): which
runs are analysed (:mod:`~perfkit.analysis.core._experiment`), which direction is better and in
which unit (:mod:`~perfkit.analysis.core._metrics`), what a failed run is
(:mod:`~perfkit.analysis.core._runstatus`), which columns make rows
(:mod:`~perfkit.analysis.core._grouping`), and the results, as frozen types with ``to_frame()`` and
``to_dict()`` that both front ends only format. Re-exports only.

Internal: import from :mod:`perfkit` (its ``__all__``, documented in docs/api.md); the
modules here may change without notice.
"""

from perfkit.analysis.compare import ComparisonRow, ComparisonTable, compare_runs, verdict
from perfkit.analysis.core import (
    LOAD_COLUMNS,
    NOT_FACTORS,
    Experiment,
    Metric,
    RunJudgement,
    RunSet,
    Selection,
    load_experiment,
    metric,
    run_statuses,
    select_mask,
)
from perfkit.vocabulary import RunStatus

__all__ = [
    "LOAD_COLUMNS",
    "NOT_FACTORS",
    "ComparisonRow",
    "ComparisonTable",
    "Experiment",
    "Metric",
    "RunJudgement",
    "RunSet",
    "RunStatus",
    "Selection",
    "compare_runs",
    "load_experiment",
    "metric",
    "run_statuses",
    "select_mask",
    "verdict",
]
