"""Performance histories of CI jobs: loading the history store, change points and the
history gates. Builds on compare.

Internal: its modules are private (``_name.py``); this namespace is what the other
packages of perfkit use. Re-exports only.
"""

from perfkit.analysis.history._history import (
    HistoryAnalysis,
    HistoryGate,
    Series,
    analyse,
    change_and_gate,
    gates,
    gates_frame,
    latest_gates,
    median_runs_needed,
    recent_verdict,
    series_verdict,
)
from perfkit.analysis.history._load import (
    is_history,
    job_dirs,
    labels_frame,
    labels_of,
    load_history,
)
from perfkit.analysis.history._metrics import analyse_metrics, first_p, holm_levels

__all__ = [
    "HistoryAnalysis",
    "HistoryGate",
    "Series",
    "analyse",
    "analyse_metrics",
    "change_and_gate",
    "first_p",
    "gates",
    "gates_frame",
    "holm_levels",
    "is_history",
    "job_dirs",
    "labels_frame",
    "labels_of",
    "latest_gates",
    "load_history",
    "median_runs_needed",
    "recent_verdict",
    "series_verdict",
]
