"""The scaling notebook: load curves, SLO brackets, heat maps, scalability models, Little's law.

Open-loop runs (wrk2 at fixed offered rates) answer "how does latency grow with the offered
rate, and up to which rate is the SLO met"; closed-loop runs (wrk connections, Locust users)
answer "how does throughput scale with concurrency". The analysis is
:mod:`perfkit.analysis.scaling._scaling` (the same calls as ``perfkit scaling``); this module shapes
it for the page, and :mod:`perfkit.report.sections.scaling_figures` (re-exported here) for the
plots. The heat map draws the SLO verdicts' estimates, so a cell holds the number the SLO table and
the latency page give for it. Without a closed-loop experiment the model functions take None and
return None (nothing to show).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from perfkit.analysis import RunSet, metric
from perfkit.analysis.scaling import MODEL_NAMES, ScalingTable, SloTable, scaling_fits, slo_brackets
from perfkit.analysis.scaling import concurrency_column as _concurrency
from perfkit.formatting import fmt_ci
from perfkit.model import percentile_column
from perfkit.report.answers import ANSWERED, NOT_TESTABLE, Answer
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
    heatmap_text,
    latency_caption,
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


def bracket_text(last_pass: float | None, first_fail: float | None,
                 inconclusive: Sequence[float] = ()) -> str:
    """``"[30000, 45000] req/s"``; an open side prints as ``below lowest`` / ``none failed``;
    inconclusive rates left open are named (``">= 30000 req/s; 45000 inconclusive: run more
    there"``): :func:`perfkit.present.scaling.bracket_text`."""
    from perfkit.present import scaling as present_scaling

    return present_scaling.bracket_text(None if _missing(last_pass) else last_pass,
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

    analyses: dict[str, list[Any]] = {exp.name: [slo_table] if slo_table is not None else []}
    if closed is not None:
        analyses[closed.name] = [models] if models is not None else []
    return _threats([e for e in (exp, closed) if e is not None], analyses)


def models_caption(table: ScalingTable | None, closed: Experiment | None = None) -> str:
    """One sentence per configuration: the model fitted and whether a peak is claimed (its N*
    with its interval, and the threats to validity that bear on it, from ``closed``)."""
    parts = []
    for r in table.results if table is not None else ():
        model = MODEL_NAMES.get(r.model, "no model") if r.fit else "no model"
        peak = ""
        if r.fit is not None and r.fit.n_star is not None:
            lo, hi = r.fit.n_star_ci or (math.nan, math.nan)
            peak = f", N* = {fmt_ci(r.fit.n_star, lo, hi)} {r.n_column}"
        parts.append(f"{r.label}: {model}{peak}.")
    threats = fit_threats(table, closed)
    if threats and table is not None and closed is not None and any(  # threats: both given
            r.fit is not None and r.fit.n_star is not None for r in table.results):
        parts.append(f"The claimed peak carries {len(threats)} threat(s) to the validity of "
                     f"{closed.name}'s throughput, noted beside N* in the table below.")
    return " ".join(parts)


def fit_threats(table: ScalingTable | None, closed: Experiment | None) -> tuple[str, ...]:
    """The threats to validity of ``closed`` that bear on the fitted metric (a drift over the
    run order, blocks that differ: :func:`perfkit.analysis.context._validity.threats_for`)."""
    from perfkit.analysis.context import threats_for

    if table is None or closed is None:
        return ()
    return threats_for(closed, table.metric.name, [table])


def intro(exp: Experiment, closed: Experiment | None, slo_table: SloTable | None,
          table: ScalingTable | None) -> str:
    """What this page shows, from its data: the open-loop experiment's rates and connections
    and the closed-loop one's tool and concurrency levels."""
    frame = exp.rows().frame
    rates = sorted(frame["target_rate_rps"].dropna().unique())
    conns = sorted(frame["connections"].dropna().unique()) if "connections" in frame else []
    q = f"p{slo_table.percentile:g} < {slo_table.slo_ms:g} ms" if slo_table is not None else ""
    text = (f"Open-loop runs of {exp.name} ({_tools(frame)} at offered rates "
            f"{_levels(rates)} req/s, {_levels(conns)} connections) show the achieved rate and "
            "the latency against the offered rate, and the largest rate that meets the SLO"
            + (f" ({q})" if q else "") + ".")
    if closed is None or table is None:
        return text + " No closed-loop experiment is given: no scalability model."
    runs = pd.concat([r.rows.frame for r in table.results], ignore_index=True)
    levels = sorted(runs[table.n_column].dropna().unique())
    return text + (f" Closed-loop runs of {closed.name} ({_tools(runs)} at {_levels(levels)} "
                   f"{table.n_column}) show how throughput scales with {table.n_column}: the "
                   "Universal Scalability Law is fitted to every run, and a peak N* is claimed "
                   "only when the data reject Amdahl's law; Little's law checks each run's "
                   f"throughput against its {table.n_column} and mean latency.")


def _tools(frame: pd.DataFrame) -> str:
    return ", ".join(sorted(frame["tool"].dropna().unique())) if "tool" in frame else "runs"


def _levels(values: Sequence[Any]) -> str:
    from perfkit.formatting import level_text

    shown = [level_text(v) for v in values]
    return (shown[0] if len(shown) == 1 else f"{shown[0]} to {shown[-1]}" if len(shown) > 3
            else " and ".join([", ".join(shown[:-1]), shown[-1]]) if shown else "no")


# -- Little's law ----------------------------------------------------------------------------
def littles_text(table: ScalingTable | None) -> list[str]:
    """What the Little's-law table on this page shows, from its data: the relation checked for
    the tools present, then each flag that occurs, where, and what it means
    (:data:`perfkit.stats.littles.FLAGS`)."""
    from perfkit.analysis.scaling import LITTLE_TOLERANCE

    if table is None or not len(table.littles_frame()):
        return []
    n, runs = table.n_column, table.littles_runs_frame()
    tools = sorted(set(runs["tool"]))
    band = f"{1 - LITTLE_TOLERANCE:g} to {1 + LITTLE_TOLERANCE:g}"
    if "locust" in tools:
        out = [f"In a closed loop N = X x (R + Z): the {n} hold a request or wait Z between "
               "requests. Without the configured wait, the implied think time Z = N/X - R is "
               "given instead of a check (flag think_time_unknown)."]
    else:
        out = [f"In a closed loop each of the N {n} holds one request at a time, so N = X x R "
               f"(throughput times mean latency; {', '.join(tools)} sends the next request as "
               "soon as a response arrives, with no think time): "
               f"X*R/N lies within {band} when the latency measured is the time each request "
               f"held its {n[:-1]}."]
    flagged = {f: _flagged(table, f) for f in ("client_bound", "latency_inflated")}
    if flagged["client_bound"]:
        out.append(f"Below {1 - LITTLE_TOLERANCE:g} ({flagged['client_bound']}): {n} sat idle "
                   "outside the measured latency, so the client, not the server, limited the "
                   "load (client CPU, connection set-up or errors).")
    if flagged["latency_inflated"]:
        wrk = set(runs.loc[runs["flag"] == "latency_inflated", "tool"]) == {"wrk"}
        why = ("the printed mean latency is larger than the true one: wrk adds synthetic "
               "samples to its latency statistics before printing them (its stats_correct "
               "step: below every latency above twice the per-connection interval N/X, one "
               "sample at each interval), which raises the printed mean most where N/X is "
               "short against the latency tail, that is at few connections. The throughput X "
               "is counted directly and is not affected, nor is the scalability fit, which "
               "uses throughput only; the mean latencies at these levels overstate the true "
               "ones" if wrk else "the printed mean latency exceeds what the "
               f"{n} can hold (X*R > N): the tool's latency statistics are not the time each "
               "request held its connection")
        out.append(f"Above {1 + LITTLE_TOLERANCE:g} ({flagged['latency_inflated']}): a "
                   f"{n[:-1]} cannot hold more than one request, so X*R cannot exceed N with "
                   f"the true mean latency; {why}.")
    if not any(flagged.values()) and "locust" not in tools:
        out.append(f"Every level lies within {band}: the client did not limit the load.")
    return out


def _flagged(table: ScalingTable, flag: str) -> str:
    """Where runs got ``flag``, per configuration, and the median ratio furthest from 1 among
    those levels; empty when none did."""
    from perfkit.formatting import fmt_sig, level_text

    parts, ratios = [], []
    for r in table.results:
        col = f"runs_{flag}"
        hit = r.littles[r.littles[col] > 0] if col in r.littles else r.littles.iloc[:0]
        if len(hit):
            levels = ", ".join(level_text(v) for v in hit[r.n_column])
            parts.append(f"{config_text(r.by, r.key)} at {levels} {r.n_column}")
            ratios += list(hit["ratio"])
    if not parts:
        return ""
    furthest = max(ratios, key=lambda v: abs(math.log(v)) if v > 0 else math.inf)
    return (f"runs flagged {flag}: {'; '.join(parts)}; the median ratio furthest from 1 among "
            f"these levels {fmt_sig(furthest)}")


# -- answers ---------------------------------------------------------------------------------
def answers(slo_table: SloTable | None, table: ScalingTable | None,
            exp: Experiment | None = None, closed: Experiment | None = None) -> list[Answer]:
    """The SLO bracket of every configuration and the claimed peaks, each with the warnings
    its result attached (:attr:`SloBracket.warnings`, the fit's) and the threats of its
    experiment that bear on its metric (a drift, blocks that differ:
    :func:`perfkit.analysis.context._validity.threats_for`)."""
    from perfkit.analysis.context import threats_for

    out = []
    if slo_table is not None:
        q = f"p{slo_table.percentile:g}"
        around = threats_for(exp, percentile_col(slo_table.percentile), [slo_table]) \
            if exp is not None else ()
        for b in slo_table.brackets:
            out.append(Answer(config_text(b.by, b.key),
                              bracket_text(b.bracket.last_pass_rps, b.bracket.first_fail_rps,
                                           b.inconclusive_rps),
                              b.verdict, f"{b.n_runs} runs", (*b.warnings, *around),
                              group=f"SLO bracket: the largest offered rate with {q} < "
                                    f"{slo_table.slo_ms:g} ms"
                                    + (f" ({exp.name})" if exp is not None else ""),
                              topic="slo"))
    around = fit_threats(table, closed)
    for r in table.results if table is not None else ():
        model = MODEL_NAMES.get(r.model, "no model")
        if r.fit is not None and r.fit.n_star is not None:
            lo, hi = r.fit.n_star_ci or (math.nan, math.nan)
            text = f"{fmt_ci(r.fit.n_star, lo, hi, r.n_column)} ({model})"
            if r.peak_scope_brief:  # what the peak is of: the box, client and server
                text += f", {r.peak_scope_brief}"
        else:
            text = f"none claimed ({model})"
        out.append(Answer(config_text(r.by, r.key), text, r.verdict,
                          f"{len(r.rows)} runs", tuple(dict.fromkeys(
                              (*([r.reason] if r.reason is not None else []), *r.warnings,
                               *around))),
                          group="Peak concurrency N* (throughput over "
                                f"{r.n_column}{f', {closed.name}' if closed else ''})",
                          topic="peak",
                          kind=NOT_TESTABLE if r.verdict == NOT_TESTABLE else ANSWERED))
    return out


def present_slo(table: SloTable):
    """The SLO verdicts at every offered rate as the page shows them
    (:func:`perfkit.present.scaling.slo`)."""
    from perfkit.present import scaling as present_scaling

    return present_scaling.slo(table)


def present_models(table: ScalingTable | None, closed: Experiment | None = None):
    """The models' parameters as paper tables, a claimed N* with the threats to validity of
    ``closed`` beside it (Little's law has its own section and table)."""
    from perfkit.present import scaling as present_scaling

    return (present_scaling.scaling(table, littles=False, threats=fit_threats(table, closed))
            if table is not None else None)


def present_littles(table: ScalingTable | None):
    """Little's law of every configuration and level as one paper table, each flag with its
    meaning as a note (:func:`perfkit.present.scaling.littles`)."""
    from perfkit.present import scaling as present_scaling

    return present_scaling.littles(table) if table is not None else None


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
