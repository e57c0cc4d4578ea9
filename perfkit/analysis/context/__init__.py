"""What surrounds a result: drift over the run order, confounding of arms with drift, the
conditions of the runs (host CPU, listen backlog, think time), the recorded configurations and
factor levels, provenance, data quality, the coordinated-omission audit and the threats to
validity. Builds on :mod:`perfkit.analysis.core`.

Internal: its modules are private (``_name.py``); this namespace is what the other
packages of perfkit use. Re-exports only.
"""

from perfkit.analysis.context._audit import coordinated_omission
from perfkit.analysis.context._conditions import (
    HOST_BUSY_PERCENT,
    RECORDED,
    HostCpu,
    backlog_text,
    conditions,
    host_cpu,
    think_time,
)
from perfkit.analysis.context._configs import CACHE_DIR, STATE_DIR
from perfkit.analysis.context._confounding import (
    FIX,
    ArmDriftOnce,
    RowDrift,
    confounded,
    confounding_notes,
    corrected,
    row_drift,
)
from perfkit.analysis.context._drift import (
    Drift,
    check_drift,
    describe_drift,
    experiment_residuals,
    interleaving,
    residual_trend,
)
from perfkit.analysis.context._levels import backend, changes_text, level_changes
from perfkit.analysis.context._provenance import Provenance, provenance
from perfkit.analysis.context._quality import KNOWN, QualityTable, quality
from perfkit.analysis.context._validity import (
    DRIFT_METRICS,
    Threat,
    threats,
    threats_for,
    value_caps,
)

__all__ = [
    "ArmDriftOnce",
    "CACHE_DIR",
    "DRIFT_METRICS",
    "Drift",
    "FIX",
    "HOST_BUSY_PERCENT",
    "HostCpu",
    "KNOWN",
    "Provenance",
    "QualityTable",
    "RECORDED",
    "RowDrift",
    "STATE_DIR",
    "Threat",
    "backend",
    "backlog_text",
    "changes_text",
    "check_drift",
    "conditions",
    "confounded",
    "confounding_notes",
    "coordinated_omission",
    "corrected",
    "describe_drift",
    "experiment_residuals",
    "host_cpu",
    "interleaving",
    "level_changes",
    "provenance",
    "quality",
    "residual_trend",
    "row_drift",
    "think_time",
    "threats",
    "threats_for",
    "value_caps",
]
