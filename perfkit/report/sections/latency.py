"""The latency notebook: spectra with across-run CIs, within-run CIs, CO audit.

Which runs count and what each configuration's percentile is are decided by
:mod:`perfkit.analysis.latency` (the rule the SLO table and the heat map use too: failed runs
left out, saturated and short runs kept and named, the across-runs estimate of the per-run
percentiles with its interval); this module shapes its results for the page and the plots.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from perfkit.analysis import latency as rule
from perfkit.analysis.context import coordinated_omission
from perfkit.analysis.latency import (
    LatencyTable,
    RunGroups,
    histogram_grid,
    interval_text,
    quantile_ci,
)
from perfkit.analysis.latency import spectrum_grid as spectrum_grid  # the grid the plots use
from perfkit.formatting import fmt_ci, level_text, load_text
from perfkit.model import Run, percentile_column
from perfkit.report.answers import Answer
from perfkit.report.sections.common import Experiment, config_text, load_experiment
from perfkit.warning import Code, Warn


def grouped_runs(exp: Experiment, by: Sequence[str] | str,
                 where: Mapping[str, Any] | None = None) -> RunGroups:
    """The analysis rows of ``exp`` matching ``where``, grouped by their ``by`` label
    (:func:`perfkit.analysis.latency.group_runs`; a mapping ``label -> runs``)."""
    return rule.group_runs(exp.rows(where), by)


def co_experiment(exp: Experiment, name: str, data_root: str | None = None) -> Experiment:
    """The experiment holding the wrk2 ``-U`` runs: ``name``, or ``exp`` when none is named."""
    return load_experiment(name, data_root) if name else exp


def percentiles(groups: RunGroups, qs: Sequence[float] = (50, 99, 99.9),
                confidence: float = 0.95, seed: int = 0,
                n_resamples: int = 2000) -> LatencyTable:
    """Each configuration's percentiles under the analysis layer's rule."""
    return rule.percentiles(groups, [float(q) for q in qs], confidence, seed, n_resamples)


def percentile_table(groups: RunGroups, qs: Sequence[float] = (50, 99, 99.9),
                     confidence: float = 0.95, seed: int = 0,
                     n_resamples: int = 2000) -> pd.DataFrame:
    """:func:`percentiles` as a frame (config, percentile, estimate, CI, method, estimand)."""
    return percentiles(groups, qs, confidence, seed, n_resamples).to_frame()


def spectrum(groups: RunGroups, confidence: float = 0.95, seed: int = 0,
             n_resamples: int = 2000) -> LatencyTable:
    """Each configuration's percentile spectrum under the analysis layer's rule."""
    return rule.spectrum(groups, confidence, seed, n_resamples)


def spectrum_frame(groups: RunGroups, confidence: float = 0.95, seed: int = 0,
                   n_resamples: int = 2000) -> pd.DataFrame:
    """Long form ``config, percentile, latency_ms, ci_low_ms, ci_high_ms, method, n_runs``."""
    return spectrum(groups, confidence, seed, n_resamples).to_frame()


def within_run_table(groups: RunGroups, q: float = 99.0,
                     confidence: float = 0.95) -> pd.DataFrame:
    """Each run's percentile with its within-run binomial CI (assumes independent requests),
    in run order.

    ``latency_ms`` is the run's value as the across-run estimate uses it
    (:meth:`perfkit.analysis.latency.ConfigRuns.values_ms`: the percentile the tool printed,
    else its histogram's; NaN for a failed run), so a figure draws each run where the analysis
    puts it. The binomial interval (:func:`perfkit.stats.quantile_ci`) is read from the run's
    histogram, whose own percentile is ``histogram_latency_ms`` (wrk2's histogram is rebuilt
    from its printed spectrum, coarser in the tail: 4.91 ms there for a printed 4.72 ms); it
    is moved to the run's value with its relative width kept (``ci_low_ms``, ``ci_high_ms``),
    and ``within_run_width_pct`` is that width as a percentage of the value."""
    rows = []
    for config in groups.configs:
        values = config.values_ms(q)
        statuses = config.statuses(q)
        for run, value, status in sorted(zip(config.runs, values, statuses, strict=True),
                                         key=lambda t: _run_order(t[0])):
            row = {"config": config.label, "run_id": run.run_id, "status": status.status,
                   "requests_in_histogram": np.nan, "latency_ms": float(value),
                   "histogram_latency_ms": np.nan, "ci_low_ms": np.nan, "ci_high_ms": np.nan,
                   "within_run_width_pct": np.nan}
            if run.histogram is not None and run.histogram.total_count:
                ci = quantile_ci(run.histogram, q, confidence)
                scale = value / ci.estimate_ms if ci.estimate_ms > 0 else np.nan
                row.update(requests_in_histogram=float(ci.n_requests),
                           histogram_latency_ms=ci.estimate_ms, ci_low_ms=ci.low_ms * scale,
                           ci_high_ms=ci.high_ms * scale,
                           within_run_width_pct=100 * (ci.high_ms - ci.low_ms) / ci.estimate_ms)
            rows.append(row)
    return pd.DataFrame(rows)


def _run_order(run: Run) -> tuple:
    return (run.order if run.order is not None else float("inf"), str(run.run_id))


def spread_summary(within: pd.DataFrame, across: LatencyTable, q: float = 99.0) -> pd.DataFrame:
    """Per configuration: the median width of its runs' within-run CIs vs the width of its
    across-run CI, each as a percentage of its estimate (0.034 % vs 282 %: printed as
    percentages, a within-run interval is never rounded to nothing), and how many times wider
    the across-run one is. An across-run width far above the within-run one says runs differ
    by more than request-level noise explains."""
    frame = across.to_frame()
    rows = []
    for config, group in within.groupby("config", sort=True):
        inner = float(group["within_run_width_pct"].median())
        outer_row = frame[(frame["config"] == config) & np.isclose(frame["percentile"], q)]
        outer = (float(100 * (outer_row["ci_high_ms"].iloc[0] - outer_row["ci_low_ms"].iloc[0])
                       / outer_row["latency_ms"].iloc[0]) if len(outer_row) else np.nan)
        rows.append({"config": config, "percentile": float(q), "n_runs": len(group),
                     "within_run_width_pct": inner, "across_run_width_pct": outer,
                     "across_over_within": outer / inner if inner > 0 else np.nan})
    return across.groups.with_load(pd.DataFrame(rows))


def corrected_vs_uncorrected(runs: Sequence[Run]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """wrk2 ``-U`` runs: the audit table and a long spectrum frame (``config`` = corrected or
    uncorrected, per run when there are several)."""
    with_u = co_runs(runs)
    audit = coordinated_omission(with_u) if with_u else pd.DataFrame()
    rows: list[dict[str, Any]] = []
    for run in with_u:
        prefix = f"{run.run_id}: " if len(with_u) > 1 else ""
        values: np.ndarray | list[float]
        for kind, hist, printed in (
                ("corrected", run.histogram, run.percentiles_ms),
                ("uncorrected", run.uncorrected_histogram, run.uncorrected_percentiles_ms)):
            if hist is not None and hist.total_count:
                qs = histogram_grid(hist)
                values = hist.percentiles_us(qs) / 1000.0
            else:
                qs = sorted(q for q in printed if q < 100)
                values = [printed[q] for q in qs]
            rows.extend({"config": prefix + kind, "percentile": q, "latency_ms": float(v)}
                        for q, v in zip(qs, values, strict=True))
    return audit, pd.DataFrame(rows)


def caveats(table: LatencyTable) -> list[Warn]:
    """What a reader must know before trusting these latencies (one sentence each): the
    analysis layer's warnings (closed-loop tools, wrk2's calibration, failed, saturated and
    short runs, too few runs for a distribution-free interval)."""
    return list(table.warnings)


def load_point(where: Mapping[str, Any] | None) -> str:
    """The load point a selection fixes, in words: ``"30000 req/s offered, 64 connections"``
    (:func:`perfkit.formatting.load_text`)."""
    return load_text(where)


def versus(groups: RunGroups, q: float, confidence: float = 0.95, alpha: float = 0.05):
    """Each configuration after the first against the first, at percentile ``q``
    (:func:`perfkit.analysis.compare._compare.compare_runs`, as ``perfkit compare`` gives it):
    ``(base label, new label, ComparisonTable)`` each."""
    from perfkit.analysis import metric
    from perfkit.analysis.compare import compare_runs

    labels = list(groups)
    if len(labels) < 2:
        return []
    base = groups.config(labels[0]).rows
    m = metric(percentile_column(q), base.frame.columns)
    return [(labels[0], label, compare_runs(base, groups.config(label).rows, m, alpha=alpha,
                                            confidence=confidence)) for label in labels[1:]]


def answers(table: LatencyTable, q: float, where: Mapping[str, Any] | None,
            exp: Experiment | None = None, compared: Sequence = ()) -> list[Answer]:
    """The headline percentile of each configuration at the load point shown (an estimate,
    no test: no verdict; the estimand in the answer), with the warnings its estimate carries
    (:meth:`LatencyTable.warnings_of`: its runs' tools and statuses, its interval's) and the
    threats of ``exp`` that bear on latency (a drift); then each configuration against the
    first (``compared``, from :func:`versus`): the ratio, its interval and verdict, listed
    apart when the runs cannot test it."""
    from perfkit.analysis.compare import need_text
    from perfkit.analysis.context import threats_for
    from perfkit.report.answers import ANSWERED, NOT_TESTABLE, ratio_text

    around = threats_for(exp, percentile_column(q), [table]) if exp is not None else ()
    group = (f"p{q:g} latency by {', '.join(table.groups.by)} at {load_point(where)}"
             + (f" ({exp.name})" if exp is not None else ""))
    out = []
    for e in table.estimates:
        if np.isclose(e.ci.q, q):
            row = e.to_record()
            by = [c for c in table.groups.by if c in table.groups.config(e.config).rows.frame]
            first = table.groups.config(e.config).rows.frame[by].iloc[0] if by else ()
            out.append(Answer(config_text(by, tuple(first)),
                              fmt_ci(row["latency_ms"], row["ci_low_ms"], row["ci_high_ms"],
                                     "ms") + f", the {row['estimand']}", "",
                              f"{row['n_runs']} runs", (*table.warnings_of(e), *around),
                              group=group, topic="comparison"))
    for base, new, t in compared:
        for r in t.rows:
            c = r.comparison
            untestable = r.verdict == NOT_TESTABLE  # then the runs it needs, beside its runs
            need = f"; {need_text(t.alpha, t.family)}" if untestable else ""
            # an untestable row gives no ratio of its own: its Hodges-Lehmann ratio, without
            # an interval, is in no table and is not the ratio of the estimates above it
            # (issue 29: "tuned / default x0.796" beside geometric means whose ratio is 0.723)
            out.append(Answer(f"{new} / {base}",
                              "" if untestable else
                              ratio_text(c.ratio, c.ratio_ci_low, c.ratio_ci_high),
                              r.reported_verdict,
                              f"{c.n_base} vs {c.n_new} runs{need}",
                              _without_ratio_notes(r.warnings) if untestable else r.warnings,
                              group=group,
                              topic="comparison",
                              kind=NOT_TESTABLE if r.verdict == NOT_TESTABLE else ANSWERED))
    return out


def present_percentiles(table: LatencyTable, caption: str):
    """The percentiles table as the page shows it, titled ``caption``: its estimand said
    once, in its title (:func:`perfkit.present.latency.percentiles`)."""
    from perfkit.present.latency import percentiles as present

    return present(table.to_frame(), caption)


def selection_table(groups: RunGroups, q: float = 99.0) -> pd.DataFrame:
    """What is compared: per configuration, the runs, tools, histogram sizes and how many runs
    failed, saturated or fell short (their status at percentile ``q``)."""
    return groups.to_frame(q)


# -- text and figures around the results (a notebook cell is a call and a display) -------------
def run_spectra(spectrum: pd.DataFrame, groups: Mapping[str, Sequence[Run]]) -> pd.DataFrame:
    """Each run's own percentiles at its configuration's spectrum grid (``config, run_id,
    percentile, latency_ms``): the per-run lines behind the across-run estimate."""
    rows = []
    for config, runs in groups.items():
        grid = sorted(spectrum.loc[spectrum["config"] == config, "percentile"])
        for run in runs:
            if run.histogram is not None and run.histogram.total_count and grid:
                for q, v in zip(grid, run.histogram.percentiles_us(grid) / 1000.0, strict=True):
                    rows.append({"config": config, "run_id": run.run_id, "percentile": q,
                                 "latency_ms": float(v)})
    return pd.DataFrame(rows, columns=["config", "run_id", "percentile", "latency_ms"])


def spectrum_figure(spectrum: LatencyTable, by, palette=None,
                    where: Mapping[str, Any] | None = None):
    """Spectra per configuration with their across-run bands, each run as a thin line; the alt
    text names the load point ``where``."""
    from perfkit import plots
    from perfkit.plots.alt import note

    frame = spectrum.to_frame()
    fig, ax = plots.figure()
    plots.spectrum(frame, ax, by="config", legend_title=", ".join(by),
                   palette=palette(spectrum.groups, by) if palette else None,
                   runs=run_spectra(frame, spectrum.groups))
    ax.set_title(f"at {load_point(where)}")
    note(ax, f"at {load_point(where)}")
    return fig


def spectrum_caption(spectrum: LatencyTable, where, confidence: float) -> str:
    """What the spectrum shows: the runs per configuration, and what each line and band is,
    named once from the estimates' own methods (:meth:`LatencyTable.value_text`)."""
    frame = spectrum.to_frame()
    n = (frame.groupby("config")["n_runs"].max().astype(int).astype(str).str.cat(sep="/")
         if len(frame) else "0")
    return (f"Percentile spectrum per configuration at {load_point(where)}: {n} runs per "
            f"configuration; each line is, at every percentile, {spectrum.value_text()}, "
            f"the band its {confidence:.0%} across-run interval "
            f"({interval_text(spectrum.found())})")


def intervals_figure(within: pd.DataFrame, table: LatencyTable, q: float, by, palette=None,
                     confidence: float = 0.95, where: Mapping[str, Any] | None = None):
    """Each run's value (the analysis' per-run value) with its within-run interval, over its
    configuration's across-run estimate and interval; the alt text names the load point
    ``where``."""
    from perfkit import plots
    from perfkit.plots.alt import note

    frame = table.to_frame()
    fig, ax = plots.figure()
    what = ", ".join(by) or "configuration"
    plots.run_intervals(within, frame[np.isclose(frame["percentile"], q)], ax,
                        quantity=f"p{q:g} latency",
                        xlabel=plots.label(f"{what}: its runs in run order", "level"),
                        palette=palette(within["config"], by) if palette else None,
                        confidence=confidence)
    ax.set_title(f"p{q:g} at {load_point(where)}")
    note(ax, f"at {load_point(where)}")
    return fig


def intervals_caption(within: pd.DataFrame, q: float, where, confidence: float) -> str:
    """What the within-vs-across figure shows, and how narrow the within-run bars are."""
    width = float(within["within_run_width_pct"].median()) if len(within) else np.nan
    narrow = (f"; the within-run intervals (median width {width:.2g}% of the value) are "
              "narrower than the markers: drawn at their true size, they hide under them"
              if np.isfinite(width) and width < NARROW_PCT else "")
    return (f"p{q:g} at {load_point(where)}: each run's value as the across-run estimate uses "
            f"it, with its binomial {confidence:.0%} interval (bar; assumes independent "
            f"requests), over the configuration's across-run estimate (line) and "
            f"{confidence:.0%} interval (band){narrow}")


#: a within-run interval narrower than this percentage of its value is narrower than the
#: marker on any axis the figure draws (its bar, at its true size, hides under it)
NARROW_PCT = 1.0


def co_runs(runs: Sequence[Run]) -> list[Run]:
    """The wrk2 ``-U`` runs: those with an uncorrected distribution."""
    return [r for r in runs if r.tool == "wrk2" and (
        r.uncorrected_histogram is not None or r.uncorrected_percentiles_ms)]


def co_load_text(runs: Sequence[Run]) -> str:
    """The configuration, load point and n of the ``-U`` runs: ``"n = 1 run, profile default,
    at 20000 req/s offered, 50 connections"``."""
    with_u = co_runs(runs)
    factors: dict[str, set[str]] = {}
    for r in with_u:
        for k, v in ((r.manifest or {}).get("factors") or {}).items():
            factors.setdefault(k, set()).add(level_text(v))
    config = ", ".join(f"{k} {'/'.join(sorted(v))}" for k, v in factors.items())
    points = list(dict.fromkeys(load_point({"target_rate_rps": r.target_rate_rps,
                                            "connections": r.connections})
                                for r in with_u))
    n = len(with_u)
    return (f"n = {n} run{'s' if n != 1 else ''}" + (f", {config}" if config else "")
            + f", at {'; '.join(points)}")


def co_figure(co_spectrum: pd.DataFrame, runs: Sequence[Run] = ()):
    """The corrected and uncorrected spectra of the wrk2 ``-U`` runs (black and grey: kinds
    of measurement, not configurations), the legend naming the load point and n; None without
    any run."""
    from perfkit import plots

    if not len(co_spectrum):
        return None
    from perfkit.plots.alt import note

    n_runs = max(1, len(co_runs(runs)))
    fig, ax = plots.figure()
    plots.spectrum(co_spectrum, ax, by="config", low=None, high=None,
                   palette=plots.style.Neutral.for_labels(co_spectrum["config"]),
                   legend_title=co_load_text(runs).replace(", at ", ",\nat ") if runs else None,
                   legend_loc="lower right",
                   series=("measurements of one run's requests (corrected and uncorrected)"
                           if n_runs == 1 else f"measurements of {n_runs} runs' requests "
                           "(corrected and uncorrected, per run)"))
    if runs:
        note(ax, co_load_text(runs))
    return fig


def co_caption(co: Experiment) -> str:
    """The caption of the corrected-vs-uncorrected figure: the experiment, and the
    configuration, load point and n of its runs (:func:`co_load_text`)."""
    return (f"{co.name}: wrk2 corrected vs uncorrected spectra of the same requests, "
            f"{co_load_text(co.runs)}; the corrected latency counts from each request's "
            "scheduled send time, the uncorrected from its actual one")


#: columns of the coordinated-omission audit not shown on the page (the CSV keeps them):
#: ``co_ratio_p99`` is the ``ratio_p99`` column again, under the name the flag reads
CO_HIDDEN = ("warnings", "co_ratio_p99")


def co_audit_caption(co: Experiment) -> str:
    """The caption of the coordinated-omission audit table: its runs' configuration, load
    point and n (:func:`co_load_text`)."""
    return (f"Coordinated-omission audit of {co.name} ({co_load_text(co.runs)}): each run's "
            "corrected and uncorrected percentiles and their ratio")


def co_audit_table(audit: pd.DataFrame, co: Experiment):
    """The coordinated-omission audit as the page shows it (a :class:`perfkit.present.tables.Table`
    titled :func:`co_audit_caption`): the numbers one line per run, and each run's ``note`` (a
    sentence) numbered below the table, its mark on the run's id. As a last column of a table
    wider than the page, the sentence wrapped to a row many lines tall: a blank gap under the
    numbers. The CSV keeps the ``note`` column."""
    from perfkit.formatting import Footnotes
    from perfkit.present import frame as present_frame

    table = present_frame.frame(audit, co_audit_caption(co), hide=(*CO_HIDDEN, "note"))
    if "note" not in audit or "run_id" not in audit:
        return table
    notes = Footnotes()
    at = [c.name for c in table.columns].index("run id")
    rows = tuple((*row[:at], f"{row[at]} {notes.mark(note)}" if note else row[at], *row[at + 1:])
                 for row, note in zip(table.rows, audit["note"].fillna(""), strict=True))
    return dataclasses.replace(table, rows=rows, notes=tuple(notes.items))


def co_missing(co: Experiment) -> str:
    """The note shown instead of the corrected-vs-uncorrected figure when there is none."""
    return f"No wrk2 -U run in {co.name!r}: the size of the correction is not known."


def _without_ratio_notes(warnings: Sequence[Any]) -> tuple[Any, ...]:
    """An untestable row's caveats without those about the ratio it no longer shows (``no 95%
    ratio CI from 3 vs 3 runs`` beside no ratio)."""
    return tuple(w for w in warnings if getattr(w, "code", None) is not Code.NO_RATIO_CI)
