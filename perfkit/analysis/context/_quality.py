"""Data quality of experiments: which runs failed, saturated, fell short, erred or measured a
busy generator, under the rules every page uses.

Per analysis row (:meth:`Experiment.rows`: a Locust run counts once, by its ``Aggregated``
row), :func:`quality` records:

- the run status (:func:`perfkit.analysis.core._runstatus.experiment_statuses`: ``failed``,
  ``saturated``, ``short`` or ``ok``, judged among the run's peers on p99), the same statuses
  the Methods section lists;
- the error ratio, flagged above :data:`perfkit.model.ERROR_RATIO_WARN` (the share of failed
  requests above which an SLO rate fails);
- the generator's CPU share, flagged at or above
  :data:`perfkit.analysis.core._runstatus.GENERATOR_BUSY` (:func:`~perfkit.analysis.core._runstatus.
  generator_busy`), the count the threats to validity give;
- the host's CPU (client and server together), flagged at or above
  :data:`perfkit.analysis.context._conditions.HOST_BUSY_PERCENT`: a generator using little of its
  cores can still share a saturated box (7 runs had a busy generator where 94 of 146 had a
  busy host), so both are counted, each with the runs that recorded it;
- non-2xx/3xx responses, socket errors and the run's warnings, as counted by the parser.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from perfkit.analysis.context._conditions import HOST_BUSY_PERCENT
from perfkit.analysis.core import (
    GENERATOR_BUSY,
    Experiment,
    experiment_statuses,
    generator_busy,
    generator_share,
    json_records,
)
from perfkit.model import ERROR_RATIO_WARN, Run
from perfkit.vocabulary import RunStatus

#: the per-experiment counts of :meth:`QualityTable.summary_frame`, each a run with a problem
PROBLEMS = (RunStatus.FAILED, RunStatus.SATURATED, RunStatus.SHORT,
            f"error_ratio_over_{ERROR_RATIO_WARN:g}", "non_2xx_runs", "generator_busy",
            "host_cpu_busy", RunStatus.PARTIAL)
#: the counts of runs that recorded what a problem is judged on (``<what>_known``), beside it
KNOWN = {"generator_busy": "generator_cpu_known", "host_cpu_busy": "host_cpu_known"}


@dataclasses.dataclass(frozen=True)
class QualityTable:
    """Every analysis row's quality checks (``runs``: one record per run) and, per experiment,
    the files that could not be read."""

    runs: tuple[Mapping[str, Any], ...]
    experiments: tuple[str, ...]
    unreadable: Mapping[str, int]
    warnings: tuple[str, ...] = ()

    def describe(self) -> str:
        """The rules, in a sentence a reader can paste into a paper."""
        return (f"A run was counted as failed, saturated, short or partial by the run-status "
                f"rule (tool failure; below its offered rate; a generator shortfall kept in "
                f"doubt; fewer connections got in than asked), as erring above "
                f"{ERROR_RATIO_WARN:.0%} failed requests, and as "
                f"measuring a busy generator at or above {GENERATOR_BUSY:.0%} of "
                f"its cores, and a busy host at or above {HOST_BUSY_PERCENT:g}% of all its "
                "cores (client and server together).")

    def to_frame(self) -> pd.DataFrame:
        """One row per run: status and reason, errors, non-2xx/3xx, generator CPU, and
        ``n_warnings``, the count of the run's warnings."""
        return pd.DataFrame.from_records(list(self.runs), columns=list(RUN_COLUMNS))

    def summary_frame(self) -> pd.DataFrame:
        """Per experiment: runs, unreadable files and how many runs have each problem
        (:data:`PROBLEMS`), and how many recorded their generator's CPU."""
        frame = self.to_frame()
        rows = []
        for name in self.experiments:
            g = frame[frame["experiment"] == name]
            rows.append({
                "experiment": name, "runs": len(g),
                "unreadable_files": self.unreadable.get(name, 0),
                **{str(s): int((g["status"] == s).sum()) for s in PROBLEMS[:3]},
                PROBLEMS[3]: int((g["error_ratio"] > ERROR_RATIO_WARN).sum()),
                "non_2xx_runs": int((g["non_2xx_3xx"].fillna(0) > 0).sum()),
                "generator_busy": int(g["generator_busy"].sum()),
                "generator_cpu_known": int(g["generator_cpu_share"].notna().sum()),
                "host_cpu_busy": int(g["host_cpu_busy"].sum()),
                "host_cpu_known": int(g["host_cpu_mean_percent"].notna().sum()),
                str(RunStatus.PARTIAL): int((g["status"] == RunStatus.PARTIAL).sum())})
        return pd.DataFrame(rows)

    def to_dict(self) -> dict[str, Any]:
        return {"error_ratio_max": ERROR_RATIO_WARN,
                "generator_busy": GENERATOR_BUSY, "warnings": list(self.warnings),
                "summary": json_records(self.summary_frame()),
                "runs": json_records(self.to_frame())}


RUN_COLUMNS = ("experiment", "run_id", "tool", "order", "requests", "status", "reason",
               "error_ratio", "non_2xx_3xx", "socket_errors", "generator_cpu_mean_percent",
               "generator_cpu_share", "generator_busy", "host_cpu_mean_percent",
               "host_cpu_busy", "exit_code", "n_warnings")


def quality(experiments: Sequence[Experiment]) -> QualityTable:
    """The quality checks of every analysis row of ``experiments`` (see the module docstring)."""
    records = []
    for exp in experiments:
        rows = exp.rows()
        errors = rows.values("error_ratio") if "error_ratio" in rows.frame \
            else [math.nan] * len(rows)
        for run, status, error in zip(rows.runs, experiment_statuses(exp), errors,
                                      strict=True):
            records.append({
                "experiment": exp.name, "run_id": run.run_id, "tool": run.tool,
                "order": float(run.order) if run.order is not None else math.nan,
                "requests": run.requests, "status": status.status, "reason": status.reason,
                "error_ratio": float(error), "non_2xx_3xx": run.non_2xx_3xx,
                "socket_errors": run.socket_errors,
                "generator_cpu_mean_percent": _cpu(run, "generator_cpu_mean_percent"),
                "generator_cpu_share": generator_share(run),
                "generator_busy": generator_busy(run),
                "host_cpu_mean_percent": (host := _cpu(run, "host_cpu_mean_percent")),
                "host_cpu_busy": host >= HOST_BUSY_PERCENT,
                "exit_code": run.exit_code, "n_warnings": len(run.warnings)})
    return QualityTable(tuple(records), tuple(e.name for e in experiments),
                        {e.name: len(e.errors) for e in experiments})


def _cpu(run: Run, key: str) -> float:
    cpu = (run.manifest or {}).get("cpu") or {}
    value = cpu.get(key) if isinstance(cpu, Mapping) else None
    return float(value) if isinstance(value, int | float) else math.nan
