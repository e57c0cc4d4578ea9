"""The A/A calibration on the tuning-effects page.

The analysis and its rules (the splits, the run-status rule, the request-level test, when a
rate holds alpha, why no interval is given) are :mod:`perfkit.analysis.compare._aa`; this module
loads the A/A experiment the notebook names (none: the page says so) and formats the result.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import pandas as pd

from perfkit.analysis import ComparisonTable, Experiment, RunSet
from perfkit.analysis.compare import AAResult, aa_calibration
from perfkit.present.compare import row_runs
from perfkit.report.answers import Answer
from perfkit.report.nb import format_number
from perfkit.report.sections import common
from perfkit.warning import Warn

#: the columns of the rates printed in the output-checked cell
CHECKED = ["test", "runs_per_arm", "metric", "comparisons", "significant", "rate"]
#: significant digits of a false-positive rate, on the page and in the headline alike
RATE_DIGITS = 3
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
    """The A/A experiment ``name`` analysed (:func:`perfkit.analysis.compare._aa.aa_calibration`);
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


def designed_caption(table: ComparisonTable, cal: Calibration | None = None) -> str:
    """What the A/A table compares, at which load point, with how many runs per arm."""
    at = f" at {cal.result.load_text()}" if cal is not None and cal.result.load_point else ""
    return (f"A/A{at}: {table.metric.name}, arm against arm ({table.base} vs {table.new}, "
            f"{row_runs(table)} runs)")


def present_designed(table: ComparisonTable, cal: Calibration):
    """The designed A/B table of the A/A calibration as the page shows it
    (:func:`perfkit.present.compare.comparison` over its runs)."""
    from perfkit.present import compare as present_compare

    return present_compare.comparison(table, cal.rows.runs)


def rates(cal: Calibration | None) -> pd.DataFrame:
    """The false-positive rates (:meth:`AAResult.to_frame`; empty without an experiment)."""
    return cal.result.to_frame() if cal is not None else pd.DataFrame()


def rates_caption(cal: Calibration | None, alpha: float) -> str:
    """The caption of the A/A false-positive rates: their level, experiment and load point, and
    whether the rule holds (alpha alone without a calibration)."""
    if cal is None:
        return f"Empirical false-positive rate at alpha {alpha:g}"
    r = cal.result
    at = f" at {r.load_text()}" if r.load_point else ""
    return (f"Empirical false-positive rate at alpha {r.alpha:g}, {r.name}{at}; "
            f"{r.holds_rule()}")


def notes(cal: Calibration | None) -> list[Warn | str]:
    """The analysis' warnings, or why nothing was measured."""
    return list(cal.result.warnings) if cal is not None else [NO_AA]


def check_text(cal: Calibration | None) -> str:
    """Stable text of the rates (for the output-checked cell)."""
    if cal is None:
        return "no A/A experiment"
    return common.text_table(rates(cal)[CHECKED], RATE_DIGITS)


def rate_text(rate: float) -> str:
    """A false-positive rate as the page's table and the headline print it (one format)."""
    return format_number(rate, RATE_DIGITS)


def present_rates(cal: Calibration | None, alpha: float = 0.05):
    """The rates table for the page (:func:`rates`), rates to :data:`RATE_DIGITS` digits."""
    from perfkit.present import frame as present_frame

    return present_frame.frame(rates(cal), rates_caption(cal, alpha), RATE_DIGITS)


def answers(cal: Calibration | None) -> list[Answer]:
    """Per test: its rates (as :func:`rate_text` prints them, with the counts), and the verdict
    of the rule that they hold alpha (:meth:`AAResult.holds_verdict`: a descriptive
    tolerance, not a test; near alpha for runs as the unit, far above it for requests)."""
    if cal is None:
        return []
    r = cal.result
    out = []
    for test in dict.fromkeys(x.test for x in r.rates):
        tested = [x for x in r.rates if x.test == test and x.comparisons]
        if not tested:
            continue
        parts = ", ".join(f"{x.metric} {rate_text(x.rate)} ({x.significant}/{x.comparisons})"
                          for x in tested)
        at = f", at {r.load_text()}" if r.load_point else ""
        out.append(Answer(f"A/A false-positive rate, {test}, {tested[0].design}{at}",
                          f"{parts} at alpha {r.alpha:g}", r.holds_verdict(test),
                          f"{r.n_runs} runs",
                          (r.holds_rule(), "the comparisons share runs: a rate, not a binomial "
                                           "proportion; no interval is given"),
                          group=f"A/A calibration ({cal.experiment.name}): how often a test "
                                "calls the same configuration different",
                          topic="calibration"))
    return out
