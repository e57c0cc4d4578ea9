"""Scaling analysis: USL/Amdahl fits, Little's-law checks and the SLO bracket."""

from perfkit.scaling.littles import littles_law
from perfkit.scaling.usl import ScalingFit, fit_amdahl, fit_usl, usl

__all__ = ["ScalingFit", "fit_amdahl", "fit_usl", "littles_law", "usl"]
