"""Honest statistics on load-test runs: the run is the experimental unit.

Re-exports only; see the submodules for the methods and their sources.

Internal: import from :mod:`perfkit` (its ``__all__``, documented in docs/api.md); the
modules here may change without notice.
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from perfkit.stats.acrossruns import (
        ESTIMAND,
        FEW_RUNS_METHOD,
        estimand_label,
        per_run_percentiles_ms,
        percentile_ci_across_runs,
        t_log_interval,
    )
    from perfkit.stats.bootstrap import PercentileCI, cluster_bootstrap_quantile
    from perfkit.stats.changepoint import ChangePoint, ChangePoints, Segment, change_points
    from perfkit.stats.comparison import compare
    from perfkit.stats.factorial_design import factorial
    from perfkit.stats.multiple import adjust_pvalues
    from perfkit.stats.orderstats import (
        MedianCI,
        QuantileCI,
        interpolated_median_ci,
        median_ci,
        quantile_ci,
    )
    from perfkit.stats.planning import PlannedChange, plan_observed
    from perfkit.stats.power import (
        MinDetectable,
        PowerAtRatio,
        RunsNeeded,
        min_detectable_ratio,
        power_at_ratio,
        runs_needed,
    )

#: each name's module, imported when the name is first asked for (issue 33: importing one
#: submodule ran this file, which imported all of them: the change-point search and the power
#: simulations for a command that uses neither)
_MODULES = {
    "ESTIMAND": "perfkit.stats.acrossruns",
    "FEW_RUNS_METHOD": "perfkit.stats.acrossruns",
    "estimand_label": "perfkit.stats.acrossruns",
    "per_run_percentiles_ms": "perfkit.stats.acrossruns",
    "percentile_ci_across_runs": "perfkit.stats.acrossruns",
    "t_log_interval": "perfkit.stats.acrossruns",
    "PercentileCI": "perfkit.stats.bootstrap",
    "cluster_bootstrap_quantile": "perfkit.stats.bootstrap",
    "ChangePoint": "perfkit.stats.changepoint",
    "ChangePoints": "perfkit.stats.changepoint",
    "Segment": "perfkit.stats.changepoint",
    "change_points": "perfkit.stats.changepoint",
    "compare": "perfkit.stats.comparison",
    "factorial": "perfkit.stats.factorial_design",
    "adjust_pvalues": "perfkit.stats.multiple",
    "MedianCI": "perfkit.stats.orderstats",
    "QuantileCI": "perfkit.stats.orderstats",
    "interpolated_median_ci": "perfkit.stats.orderstats",
    "median_ci": "perfkit.stats.orderstats",
    "quantile_ci": "perfkit.stats.orderstats",
    "PlannedChange": "perfkit.stats.planning",
    "plan_observed": "perfkit.stats.planning",
    "MinDetectable": "perfkit.stats.power",
    "PowerAtRatio": "perfkit.stats.power",
    "RunsNeeded": "perfkit.stats.power",
    "min_detectable_ratio": "perfkit.stats.power",
    "power_at_ratio": "perfkit.stats.power",
    "runs_needed": "perfkit.stats.power",
}


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module 'perfkit.stats' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:  # the lazy names too (completion in JupyterLab)
    return sorted({*globals(), *__all__})


__all__ = [
    "ESTIMAND",
    "FEW_RUNS_METHOD",
    "ChangePoint",
    "ChangePoints",
    "MedianCI",
    "MinDetectable",
    "PercentileCI",
    "PlannedChange",
    "PowerAtRatio",
    "QuantileCI",
    "RunsNeeded",
    "Segment",
    "adjust_pvalues",
    "change_points",
    "cluster_bootstrap_quantile",
    "compare",
    "estimand_label",
    "factorial",
    "interpolated_median_ci",
    "median_ci",
    "min_detectable_ratio",
    "per_run_percentiles_ms",
    "plan_observed",
    "percentile_ci_across_runs",
    "power_at_ratio",
    "quantile_ci",
    "runs_needed",
    "t_log_interval",
]
