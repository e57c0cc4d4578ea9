"""perfkit: turn wrk, wrk2 and Locust load tests into trustworthy, publishable answers.

The public surface is this namespace: the names in :data:`__all__`, each documented with a
runnable example in ``docs/api.md``. Every other module (``perfkit.analysis``, ``perfkit.stats``,
``perfkit.ingest``, ``perfkit.store``, ...) is internal and may change: import from
``perfkit``. ``perfkit.plots`` (the figure functions) is public as a namespace.

Re-exports only. The errors, the vocabulary and the warning values load with ``import
perfkit``; the runs, histograms and the loader (numpy, hdrh), the analysis (pandas, scipy) and
the figures (matplotlib) load on first use of one of their names (:func:`__getattr__`), so
``import perfkit`` stays cheap: ``perfkit --help`` and ``perfkit --version`` import it for
the version alone (issue 24; ``tests/test_startup.py``).
"""

from typing import Any

from perfkit import _lazy
from perfkit.errors import (
    DataError,
    LoadError,
    ParseError,
    PerfkitError,
    UnknownFormatError,
    UsageError,
)
from perfkit.vocabulary import (
    BracketVerdict,
    ChangeSupport,
    ClaimVerdict,
    DriftVerdict,
    GateOutcome,
    GateStatus,
    HistoryVerdict,
    ManifestStatus,
    RunStatus,
    ScalingVerdict,
    SloVerdict,
    Verdict,
)
from perfkit.warning import Code as WarningCode
from perfkit.warning import Warn

__version__ = "0.1.0"

#: public name -> (module, name there), imported on first use
_LAZY = {
    # runs, histograms and the loader
    "LatencyHistogram": ("perfkit.histogram", "LatencyHistogram"),
    "Run": ("perfkit.model", "Run"),
    "LoadResult": ("perfkit.ingest.loader", "LoadResult"),
    "load": ("perfkit.ingest.loader", "load"),
    "scan": ("perfkit.ingest.loader", "scan"),
    # tidy frames, several clients' runs as one
    "runs_frame": ("perfkit.frames", "runs_frame"),
    "combine_groups": ("perfkit.combine", "combine_groups"),
    "combine_runs": ("perfkit.combine", "combine_runs"),
    # experiments and selections
    "Experiment": ("perfkit.analysis.core", "Experiment"),
    "RunSet": ("perfkit.analysis.core", "RunSet"),
    "Selection": ("perfkit.analysis.core", "Selection"),
    "load_experiment": ("perfkit.analysis.core", "load_experiment"),
    # the metric registry and the run-status rule
    "Metric": ("perfkit.analysis.core", "Metric"),
    "metric": ("perfkit.analysis.core", "metric"),
    "RunJudgement": ("perfkit.analysis.core", "RunJudgement"),
    "run_statuses": ("perfkit.analysis.core", "run_statuses"),
    # compare, gate, plan
    "ComparisonRow": ("perfkit.analysis.compare", "ComparisonRow"),
    "ComparisonTable": ("perfkit.analysis.compare", "ComparisonTable"),
    "compare_runs": ("perfkit.analysis.compare", "compare_runs"),
    "GateResult": ("perfkit.analysis.compare", "GateResult"),
    "GateRow": ("perfkit.analysis.compare", "GateRow"),
    "gate_runs": ("perfkit.analysis.compare", "gate_runs"),
    "PowerPlan": ("perfkit.analysis.compare", "PowerPlan"),
    "plan_runs": ("perfkit.analysis.compare", "plan_runs"),
    # latency percentiles with intervals
    "LatencyTable": ("perfkit.analysis.latency", "LatencyTable"),
    "RunGroups": ("perfkit.analysis.latency", "RunGroups"),
    "group_runs": ("perfkit.analysis.latency", "group_runs"),
    "latency_percentiles": ("perfkit.analysis.latency", "percentiles"),
    "latency_spectrum": ("perfkit.analysis.latency", "spectrum"),
    # factorial effects, scaling, SLO, drift
    "FactorialResult": ("perfkit.analysis.effects", "FactorialResult"),
    "factorial_effects": ("perfkit.analysis.effects", "factorial_effects"),
    "ScalingResult": ("perfkit.analysis.scaling", "ScalingResult"),
    "ScalingTable": ("perfkit.analysis.scaling", "ScalingTable"),
    "scaling_fits": ("perfkit.analysis.scaling", "scaling_fits"),
    "SloBracket": ("perfkit.analysis.scaling", "SloBracket"),
    "SloTable": ("perfkit.analysis.scaling", "SloTable"),
    "slo_brackets": ("perfkit.analysis.scaling", "slo_brackets"),
    "Drift": ("perfkit.analysis.context", "Drift"),
    "check_drift": ("perfkit.analysis.context", "check_drift"),
    # performance histories
    "HistoryAnalysis": ("perfkit.analysis.history", "HistoryAnalysis"),
    "HistoryGate": ("perfkit.analysis.history", "HistoryGate"),
    "analyse_history": ("perfkit.analysis.history", "analyse"),
    "history_gates": ("perfkit.analysis.history", "gates"),
    "history_verdict": ("perfkit.analysis.history", "series_verdict"),
    "load_history": ("perfkit.analysis.history", "load_history"),
    # figures: f(frame, ax, ...) -> ax
    "plots": ("perfkit.plots", None),
}

__all__ = [
    "BracketVerdict", "ChangeSupport", "ClaimVerdict", "ComparisonRow", "ComparisonTable",
    "DataError", "Drift", "DriftVerdict", "Experiment", "FactorialResult", "GateOutcome",
    "GateResult", "GateRow", "GateStatus", "HistoryAnalysis", "HistoryGate", "HistoryVerdict",
    "LatencyHistogram", "LatencyTable", "LoadError", "LoadResult", "ManifestStatus", "Metric",
    "ParseError", "PerfkitError", "PowerPlan", "Run", "RunGroups", "RunJudgement", "RunSet",
    "RunStatus", "ScalingResult", "ScalingTable", "ScalingVerdict", "Selection", "SloBracket",
    "SloTable", "SloVerdict", "UnknownFormatError", "UsageError", "Verdict", "Warn",
    "WarningCode", "__version__",
    "analyse_history", "check_drift", "combine_groups", "combine_runs", "compare_runs",
    "factorial_effects", "gate_runs", "group_runs", "history_gates", "history_verdict",
    "latency_percentiles", "latency_spectrum", "load", "load_experiment", "load_history", "metric",
    "plan_runs", "plots", "run_statuses", "runs_frame", "scaling_fits", "scan", "slo_brackets",
]


def __getattr__(name: str) -> Any:
    """Import a public name of the analysis or the figures on first use (PEP 562)."""
    return _lazy.attribute(globals(), _LAZY, name)


def __dir__() -> list[str]:
    return _lazy.names(globals(), _LAZY)
