"""The scaling notebook: load curves, SLO brackets, heat maps, scalability models, Little's law.

Open-loop runs (wrk2 at fixed offered rates) answer "how does latency grow with the offered
rate, and up to which rate is the SLO met"; closed-loop runs (wrk connections, Locust users)
answer "how does throughput scale with concurrency". The analysis is
:mod:`perfkit.analysis.scaling` (the same calls as ``perfkit scaling``); this module shapes it
for the page, and :mod:`perfkit.report.sections.scaling_figures` (re-exported here) for the
plots. The heat map draws the SLO verdicts' estimates, so a cell holds the
number the SLO table and the latency page give for it. Without a closed-loop experiment the
model functions take None and return None (nothing to show).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from perfkit.analysis import RunSet, metric
from perfkit.analysis.scaling import (
    MODEL_NAMES,
    ScalingTable,
    SloTable,
    scaling_fits,
    slo_brackets,
)
from perfkit.analysis.scaling import concurrency_column as _concurrency
from perfkit.formatting import fmt_ci
from perfkit.model import percentile_column
from perfkit.report.nb import Answer
from perfkit.report.sections.common import (
    Experiment,
    config_labels,
    config_text,
    load_experiment,
)
from perfkit.report.sections.scaling_figures import (  # noqa: F401  (the notebook's names)
    STATUS_HATCH_WORDS,
    STATUS_ORDER,
    heat_marks,
    heat_tables,
    heatmap_caption,
    heatmap_figure,
    latency_figure,
    littles_figure,
    littles_points,
    model_frames,
    models_figure,
    scaling_curve,
    throughput_caption,
    throughput_figure,
    verdict_points,
    with_status,
)


def runs_with_config(exp: Experiment, by: Sequence[str],
                     where: Mapping[str, Any] | None = None) -> tuple[RunSet, pd.DataFrame]:
    """The analysis rows of ``exp`` matching ``where``, and their frame with a ``config``
    legend label (for plots)."""
    rows = exp.rows(where)
    frame = rows.frame.copy()
    frame.insert(1, "config", config_labels(frame, list(by)).to_numpy())
    return rows, frame


def concurrency_column(rows: RunSet) -> str:
    return _concurrency(rows)


def percentile_col(percentile: float) -> str:
    """The runs-frame column of a printed percentile: ``latency_p99_ms``."""
    return percentile_column(percentile)


# -- SLO ------------------------------------------------------------------------------------
def slo(rows: RunSet, by: Sequence[str], slo_ms: float, percentile: float = 99.0,
        confidence: float = 0.95, seed: int = 0, n_resamples: int = 2000) -> SloTable:
    """The SLO bracket of every configuration (as ``perfkit scaling --x target_rate_rps``)."""
    return slo_brackets(rows, slo_ms, percentile=percentile, by=list(by) or "none",
                        confidence=confidence, seed=seed, n_resamples=n_resamples)


def bracket_text(last_pass: float, first_fail: float, inconclusive: Sequence[float] = ()) -> str:
    """``"[30000, 45000] req/s"``; an open side prints as ``below lowest`` / ``none failed``;
    inconclusive rates left open are named (``">= 30000 req/s; 45000 inconclusive: run more
    there"``): :func:`perfkit.present.bracket_text`."""
    from perfkit import present

    return present.bracket_text(None if _missing(last_pass) else last_pass,
                                None if _missing(first_fail) else first_fail, inconclusive)


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


# -- scalability models ----------------------------------------------------------------------
def fits(rows: RunSet, by: Sequence[str], confidence: float = 0.95, alpha: float = 0.05,
         n_resamples: int = 1000, seed: int = 0,
         think_time_ms: float | None = None) -> ScalingTable:
    """The scalability model of every configuration (as ``perfkit scaling --x connections``;
    ``think_time_ms`` as ``--think-time-ms``)."""
    return scaling_fits(rows, metric("throughput_rps", rows.frame.columns),
                        by=list(by) or "none", confidence=confidence, alpha=alpha,
                        n_resamples=n_resamples, seed=seed, think_time_ms=think_time_ms)


def closed_experiment(name: str, data_root: str | None = None) -> Experiment | None:
    """The closed-loop experiment named, or None when none is."""
    return load_experiment(name, data_root) if name else None


def closed_models(closed: Experiment | None, select: Mapping[str, Any] | None,
                  by: Sequence[str], confidence: float = 0.95, alpha: float = 0.05,
                  n_resamples: int = 1000, seed: int = 0,
                  think_time_ms: float | None = None) -> ScalingTable | None:
    """:func:`fits` on the analysis rows of ``closed`` matching ``select``; None without it."""
    if closed is None:
        return None
    return fits(closed.rows(select), by, confidence, alpha, n_resamples, seed, think_time_ms)


def threats(exp: Experiment, closed: Experiment | None, slo_table: SloTable | None = None,
            models: ScalingTable | None = None) -> list[str]:
    """The threats to validity of the experiments on this page, naming the analyses run on
    each (the SLO bracket on ``exp``, the scalability fit on ``closed``)."""
    from perfkit.report.sections.common import threats as _threats

    analyses = {exp.name: [slo_table] if slo_table is not None else []}
    if closed is not None:
        analyses[closed.name] = [models] if models is not None else []
    return _threats([e for e in (exp, closed) if e is not None], analyses)


def models_caption(table: ScalingTable | None) -> str:
    """One sentence per configuration: the model fitted and whether a peak is claimed."""
    parts = []
    for r in table.results if table is not None else ():
        model = MODEL_NAMES.get(r.model, "no model") if r.fit else "no model"
        peak = "" if r.fit is None or r.fit.n_star is None else f", N* = {r.fit.n_star:.0f}"
        parts.append(f"{r.label}: {model}{peak}.")
    return " ".join(parts)


# -- answers ---------------------------------------------------------------------------------
def answers(slo_table: SloTable | None, table: ScalingTable | None,
            exp: Experiment | None = None, closed: Experiment | None = None) -> list[Answer]:
    """The SLO bracket of every configuration and the claimed peaks, each with the warnings
    its result attached (:attr:`SloBracket.warnings`, the fit's) and the threats of its
    experiment that bear on its metric (a drift, blocks that differ:
    :func:`perfkit.analysis.validity.threats_for`)."""
    from perfkit.analysis.validity import threats_for

    out = []
    if slo_table is not None:
        q = f"p{slo_table.percentile:g}"
        around = threats_for(exp, percentile_col(slo_table.percentile), [slo_table]) \
            if exp is not None else ()
        for b in slo_table.brackets:
            out.append(Answer(f"Largest offered rate with {q} < {slo_table.slo_ms:g} ms, "
                              f"{config_text(b.by, b.key)}",
                              bracket_text(b.bracket.last_pass_rps, b.bracket.first_fail_rps,
                                           b.inconclusive_rps),
                              b.verdict, f"{b.n_runs} runs", (*b.warnings, *around)))
    around = threats_for(closed, table.metric.name, [table]) \
        if closed is not None and table is not None else ()
    for r in table.results if table is not None else ():
        model = MODEL_NAMES.get(r.model, "no model")
        if r.fit is not None and r.fit.n_star is not None:
            lo, hi = r.fit.n_star_ci or (math.nan, math.nan)
            text = f"{fmt_ci(r.fit.n_star, lo, hi, r.n_column)} ({model})"
        else:
            text = f"none claimed ({model})"
        out.append(Answer(f"Peak concurrency N*, {config_text(r.by, r.key)}", text, r.verdict,
                          f"{len(r.rows)} runs", tuple(dict.fromkeys((r.reason, *r.warnings,
                                                                      *around)))))
    return out


def present_slo(table: SloTable):
    from perfkit import present

    return present.slo(table)


def present_models(table: ScalingTable | None):
    """The models' parameters as paper tables (Little's law has its own section and table)."""
    from perfkit import present

    return present.scaling(table, littles=False) if table is not None else None


def models_table(table: ScalingTable | None) -> pd.DataFrame | None:
    """The models' parameters (:meth:`ScalingTable.to_frame`); None without a table."""
    return table.to_frame() if table is not None else None


def littles_table(table: ScalingTable | None) -> pd.DataFrame | None:
    """Little's law per configuration and level (:meth:`ScalingTable.littles_frame`)."""
    return table.littles_frame() if table is not None else None


def models_missing(table: ScalingTable | None) -> str | None:
    """The note shown instead of the models when there is no closed-loop experiment."""
    return "No closed-loop experiment given (closed_experiment)." if table is None else None


def methods(exp, slo_table: SloTable | None, closed, models: ScalingTable | None) -> dict:
    """The Methods records of the experiments on this page, with their analyses' methods."""
    from perfkit.report.sections.common import methods as records

    out = records([exp], [slo_table.describe()] if slo_table is not None else [])
    if closed is not None and models is not None:
        out.update(records([closed], [models.describe()]))
    return out
