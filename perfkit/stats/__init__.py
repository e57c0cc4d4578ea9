"""Honest statistics on load-test runs: the run is the experimental unit.

Re-exports only; see the submodules for the methods and their sources.

Internal: import from :mod:`perfkit` (its ``__all__``, documented in docs/api.md); the
modules here may change without notice.
"""

from typing import TYPE_CHECKING, Any

from perfkit import _lazy

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
_EXPORTS = {
    **_lazy.same_name("perfkit.stats.acrossruns", "ESTIMAND", "FEW_RUNS_METHOD",
                      "estimand_label", "per_run_percentiles_ms", "percentile_ci_across_runs",
                      "t_log_interval"),
    **_lazy.same_name("perfkit.stats.bootstrap", "PercentileCI", "cluster_bootstrap_quantile"),
    **_lazy.same_name("perfkit.stats.changepoint", "ChangePoint", "ChangePoints", "Segment",
                      "change_points"),
    **_lazy.same_name("perfkit.stats.comparison", "compare"),
    **_lazy.same_name("perfkit.stats.factorial_design", "factorial"),
    **_lazy.same_name("perfkit.stats.multiple", "adjust_pvalues"),
    **_lazy.same_name("perfkit.stats.orderstats", "MedianCI", "QuantileCI",
                      "interpolated_median_ci", "median_ci", "quantile_ci"),
    **_lazy.same_name("perfkit.stats.planning", "PlannedChange", "plan_observed"),
    **_lazy.same_name("perfkit.stats.power", "MinDetectable", "PowerAtRatio", "RunsNeeded",
                      "min_detectable_ratio", "power_at_ratio", "runs_needed"),
}


def __getattr__(name: str) -> Any:
    return _lazy.attribute(globals(), _EXPORTS, name)


def __dir__() -> list[str]:
    return _lazy.names(globals(), _EXPORTS)


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
