"""Throughput scaling over concurrency (USL / Amdahl with Little's-law checks) and the SLO
bracket over offered rates. Builds on core and context.

Internal: its modules are private (``_name.py``); this namespace is what the other
packages of perfkit use. Re-exports only.
"""

from perfkit.analysis.scaling._scaling import (
    FLAGS,
    LITTLE_TOLERANCE,
    MODEL_NAMES,
    ScalingResult,
    ScalingTable,
    concurrency_column,
    scaling_fits,
)
from perfkit.analysis.scaling._slo import (
    SloBracket,
    SloTable,
    not_estimable,
    rate_reason,
    slo_brackets,
    stated,
)

__all__ = [
    "FLAGS",
    "LITTLE_TOLERANCE",
    "MODEL_NAMES",
    "ScalingResult",
    "ScalingTable",
    "SloBracket",
    "SloTable",
    "concurrency_column",
    "not_estimable",
    "rate_reason",
    "scaling_fits",
    "slo_brackets",
    "stated",
]
