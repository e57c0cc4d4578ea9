"""The A/A calibration on the tuning-effects page.

The analysis and its rules (the splits, the run-status rule, the request-level test, when a
rate holds alpha, why no interval is given) are :mod:`perfkit.analysis.aa`; this module loads
the A/A experiment the notebook names (none: the page says so) and formats the result.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import pandas as pd

from perfkit.analysis import ComparisonTable, Experiment, RunSet
from perfkit.analysis.aa import AAResult, aa_calibration
from perfkit.report.nb import Answer
from perfkit.report.sections import common

#: the columns of the rates printed in the output-checked cell
CHECKED = ["test", "metric", "comparisons", "significant", "rate"]
NO_AA = "No A/A experiment given (aa_experiment): the false-positive rate is not measured here."


@dataclasses.dataclass(frozen=True)
class Calibration:
    """The A/A experiment of the page, its analysis rows and its analysis."""

    experiment: Experiment
    rows: RunSet
    result: AAResult


def calibrate(name: str, data_root: str | None, arm: str, metrics: Sequence[str],
              alpha: float = 0.05, runs_per_arm: int = 5, splits: int = 200,
              seed: int = 0) -> Calibration | None:
    """The A/A experiment ``name`` analysed (:func:`perfkit.analysis.aa.aa_calibration`);
    None when no experiment is named (the parameter is empty)."""
    if not name:
        return None
    exp = common.load_experiment(name, data_root)
    rows = exp.rows()
    return Calibration(exp, rows, aa_calibration(rows, arm, metrics, alpha=alpha,
                                                 k=runs_per_arm, n_splits=splits, seed=seed))


def designed(cal: Calibration | None) -> list[ComparisonTable]:
    """The arm-against-arm tables, one per metric (none without an A/A experiment)."""
    return list(cal.result.designed) if cal is not None else []


def designed_caption(table: ComparisonTable) -> str:
    return f"A/A: arm against arm, {table.metric.name}"


def present_designed(table: ComparisonTable, cal: Calibration):
    from perfkit import present

    return present.comparison(table, cal.rows.runs)


def rates(cal: Calibration | None) -> pd.DataFrame:
    """The false-positive rates (:meth:`AAResult.to_frame`; empty without an experiment)."""
    return cal.result.to_frame() if cal is not None else pd.DataFrame()


def rates_caption(cal: Calibration | None, alpha: float) -> str:
    a = cal.result.alpha if cal is not None else alpha
    return f"Empirical false-positive rate at alpha {a:g}"


def notes(cal: Calibration | None) -> list[str]:
    """The analysis' warnings, or why nothing was measured."""
    return list(cal.result.warnings) if cal is not None else [NO_AA]


def check_text(cal: Calibration | None) -> str:
    """Stable text of the rates (for the output-checked cell)."""
    if cal is None:
        return "no A/A experiment"
    return common.text_table(rates(cal)[CHECKED])


def answers(cal: Calibration | None) -> list[Answer]:
    """Per test: its rates, and whether they hold alpha (near it for runs as the unit, far
    above it for requests)."""
    if cal is None:
        return []
    r = cal.result
    out = []
    for test in dict.fromkeys(x.test for x in r.rates):
        tested = [x for x in r.rates if x.test == test and x.comparisons]
        if not tested:
            continue
        parts = ", ".join(f"{x.metric} {x.rate:.2f}" for x in tested)
        counts = "/".join(map(str, sorted({x.comparisons for x in tested})))
        out.append(Answer(f"A/A false-positive rate, {test}",
                          f"{parts} of {counts} comparisons at alpha {r.alpha:g}",
                          "holds alpha" if r.holds(test) else "does not hold alpha",
                          f"{r.n_runs} runs",
                          ("the comparisons share runs: a rate, not a binomial proportion; no "
                           "interval is given",)))
    return out
