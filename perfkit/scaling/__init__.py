"""Scaling analysis: USL/Amdahl fits, Little's-law checks and the SLO bracket."""

from perfkit.scaling.littles import littles_law
from perfkit.scaling.slo import (
    RateVerdict,
    SLOBracket,
    runs_needed,
    slo_bracket,
    slo_brackets,
    slo_verdict,
)
from perfkit.scaling.usl_fit import ScalingFit, fit_amdahl, fit_usl, usl

__all__ = [
    "RateVerdict",
    "SLOBracket",
    "ScalingFit",
    "fit_amdahl",
    "fit_usl",
    "littles_law",
    "runs_needed",
    "slo_bracket",
    "slo_brackets",
    "slo_verdict",
    "usl",
]
