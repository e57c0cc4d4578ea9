"""The history notebook: a metric over a performance history, its change points, and each
label gated against the labels before it.

Every decision comes from :mod:`perfkit.analysis.history._history` (series, change points, gates)
and :mod:`perfkit.analysis.compare._gate`; the tables from :mod:`perfkit.present.history` and
:mod:`perfkit.present.gate`. This module loads the history by name, draws its figure and words its
answers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from perfkit import paths
from perfkit.analysis import Experiment, metric
from perfkit.analysis import history as hist
from perfkit.formatting import fmt_num, fmt_p, pct, pct_change
from perfkit.formatting import load_text as fmt_load
from perfkit.present import gate as present_gate
from perfkit.present import history as present_history
from perfkit.report.answers import Answer, ratio_text
from perfkit.report.sections.common import remember_simulations
from perfkit.vocabulary import ChangeSupport, HistoryVerdict
from perfkit.warning import Warn


def load(name: str, data_root: str | None = None) -> Experiment:
    """The history ``<data_root>/<name>`` (a store, or jobs with labels.csv), or a path."""
    folder = paths.data_dir(name, data_root or None)
    history = hist.load_history(folder, name=name)
    remember_simulations(folder)
    return history


def analyse(history: Experiment, metrics: Sequence[str], select: Mapping[str, Any] | None = None,
            alpha: float = 0.05, confidence: float = 0.95, permutations: int = 199,
            seed: int = 0) -> list[hist.HistoryAnalysis]:
    """One analysis per metric, the change points of each load level with Holm over the
    metrics (:func:`perfkit.analysis.history._metrics.analyse_metrics`)."""
    return hist.analyse_metrics(history, [metric(m, history.frame.columns) for m in metrics],
                                where=dict(select or {}), alpha=alpha, confidence=confidence,
                                permutations=permutations, seed=seed)


def labels_table(history: Experiment, select: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """One row per label: its time, runs (the analysis rows the series count) and tools
    (:func:`perfkit.analysis.history._history.labels_frame`)."""
    return hist.labels_frame(history, dict(select or {}))


def labels_caption(history: Experiment, analyses: Sequence[hist.HistoryAnalysis]) -> str:
    """The caption of the labels table, with the load point the analysed runs share."""
    at = _at(analyses[0]) if analyses else ""
    return f"Labels of {history.name}, in time order{at}"


# -- figure ------------------------------------------------------------------------------------
def series_figure(analysis: hist.HistoryAnalysis):
    """Per run a faint point, per label the median with its interval, the segments' medians as
    steps, and a dashed line before every change point; one panel per load level."""
    from perfkit.plots import style

    n = max(1, len(analysis.series))
    fig, axes = style.figure(nrows=n, height_in=1.2 + 1.6 * n, width_in=style.WIDTH_IN * 1.6)
    m = analysis.metric
    interval = has_interval(analysis)
    for i, (ax, s) in enumerate(zip(style.as_list(axes), analysis.series, strict=False)):
        st = style.neutral_style(0)  # a label is not a configuration: black
        x = np.arange(len(s.points))
        for j, p in enumerate(s.points):
            ax.plot(np.full(len(p.values), j), p.values, linestyle="none", marker=".",
                    color=style.GREY, alpha=0.8, markersize=3, zorder=3,
                    label="runs" if j == 0 else None)
        med = np.array([p.median for p in s.points])
        low = np.array([p.ci_low for p in s.points])
        high = np.array([p.ci_high for p in s.points])
        shown = np.isfinite(med)  # a median of mostly failed runs is infinite: not drawn
        err = np.vstack([med - np.where(np.isfinite(low), low, med),
                         np.where(np.isfinite(high), high, med) - med])
        median = dict(linestyle="none", marker=st["marker"], color=st["color"],
                      markerfacecolor="white")
        if interval:  # the legend's glyph has a bar only when some label's median has one
            ax.errorbar(x[shown], med[shown], yerr=err[:, shown], capsize=2,
                        label="median, interval", **median)
        else:
            ax.plot(x[shown], med[shown], label="median", **median)
        for seg in s.change.segments:
            ax.hlines(seg.median, seg.start - 0.4, seg.end - 0.6, color=style.OKABE_ITO["black"],
                      linewidth=1.0, label="segment median" if seg.start == 0 else None)
        for kind, dash in ((ChangeSupport.SUPPORTED, "--"), (ChangeSupport.WEAK, ":")):
            marks = [c for c in s.change.change_points if c.support == kind]
            for c in marks:
                ax.axvline(c.index - 0.5, color=style.GREY, linestyle=dash,
                           linewidth=0.9, label=(("change point"
                                                  if kind == ChangeSupport.SUPPORTED else
                                                  "weakly supported change point")
                                                 if c is marks[0] else None))
        ax.set_xticks(x, [p.label for p in s.points], rotation=90)
        values = np.concatenate([p.values for p in s.points]) if s.points else np.array([1.0])
        if values.size and values.max() / values.min() > 10:  # more than a decade: log
            from matplotlib.ticker import LogLocator

            ax.set_yscale("log")
            style.plain_log(ax.yaxis)
            ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1, 2, 3, 5, 7)))
        ax.set_ylabel(style.label(m.label, m.unit or "count"))
        where = ", ".join(p for p in (present_gate.key_text(analysis.keys, s.key),
                                      load_text(analysis)) if p)
        ax.set_xlabel("label (in time order)" + (f", at {where}" if where else ""))
        if i == 0:
            ax.legend(loc="best", fontsize=style.FONT_PT - 2)
    return fig


def load_text(analysis: hist.HistoryAnalysis) -> str:
    """The load point every run of the analysis shares, from its data: ``"16 connections, 2
    threads"`` (:attr:`HistoryAnalysis.load`); empty when none is shared."""
    return fmt_load(analysis.load) if analysis.load else ""


def _at(analysis: hist.HistoryAnalysis, where: str = "") -> str:
    """`` at connections=64, 2 threads``: a series' level (``where``), then the shared load."""
    parts = [p for p in (where, load_text(analysis)) if p]
    return f" at {', '.join(parts)}" if parts else ""


def has_interval(analysis: hist.HistoryAnalysis) -> bool:
    """Whether some label's median has an interval (enough runs for one at the analysis's
    confidence): the series figure draws bars, and its caption and legend name them, only
    then."""
    return any(np.isfinite(p.coverage) for s in analysis.series for p in s.points)


def series_caption(analysis: hist.HistoryAnalysis) -> str:
    """What the series figure draws, and only that: the runs, each label's median with its
    interval where the runs allow one, the segments' medians, and the change points by the
    line each kind is drawn with (dashed: supported, dotted: weakly supported), when found."""
    s0 = analysis.series[0] if analysis.series else None
    runs = sum(p.n_runs for s in analysis.series for p in s.points)
    n_labels = len(s0.points) if s0 else 0
    covers = sorted({p.coverage for s in analysis.series for p in s.points
                     if np.isfinite(p.coverage)})
    need = hist.median_runs_needed(analysis.confidence)
    medians = ("markers each label's median (no interval: every label has fewer than the "
               f"{need} runs a {pct(analysis.confidence)} median interval needs)"
               if not has_interval(analysis)
               else "markers each label's median with its order-statistic interval (coverage "
               + (pct(covers[0]) if len(covers) == 1 else f"{pct(covers[0])} to "
                  f"{pct(covers[-1])}") + f"; none below {need} runs; the table gives each "
               "label's)")
    found = {c.support for s in analysis.series for c in s.change.change_points}
    how = (f"E-divisive means (permutation tests shuffling labels, alpha "
           f"{analysis.alpha:g})")
    lines = ([f"dashed lines the change points found by {how}"]
             if ChangeSupport.SUPPORTED in found else [])
    if ChangeSupport.WEAK in found:
        lines.append(("dotted ones" if lines else f"dotted lines the change points found by "
                      f"{how}, all") + " weakly supported (no ratio interval excluding 1)")
    changes = "; ".join(lines) if lines else f"no change point found by {how}"
    return (f"{analysis.metric.label} over {n_labels} labels of {analysis.name}{_at(analysis)} "
            f"({runs} runs): grey dots are runs, {medians}; black steps are the segments' "
            f"medians; {changes}.")


def series_alt(analysis: hist.HistoryAnalysis) -> str:
    """The series figure's alternative text: the metric per label, and each change point with
    its change (or 'no change point')."""
    found = "; ".join(f"{c.label} {pct_change(c.ratio)}" + ("" if c.supported else " (weak)")
                      for s in analysis.series
                      for c in s.change.change_points) or "no change point"
    return (f"{analysis.metric.label} per label of {analysis.name}{_at(analysis)}, with change "
            f"points: {found}")


def series_table_caption(analysis: hist.HistoryAnalysis) -> str:
    """The caption of a series table: the metric, the load point and what the table holds."""
    return f"{analysis.metric.name} per label{_at(analysis)}, change points"


def gates_caption(analysis: hist.HistoryAnalysis, max_regression: float) -> str:
    """The caption of a gates table: the metric, the threshold and the load point."""
    return (f"{analysis.metric.name}: each label gated at a maximum regression of "
            f"{max_regression:.0%}{_at(analysis)}")


# -- tables ------------------------------------------------------------------------------------
def series_tables(analysis: hist.HistoryAnalysis):
    """(frame, presentation) of the series with its change points."""
    return analysis.to_frame(), present_history.series(analysis)


def change_text(analysis: hist.HistoryAnalysis) -> str:
    """The change points as stable text (for the output-checked cell)."""
    frame = analysis.change_frame()
    if not len(frame):
        return f"{analysis.metric.name}: no change point at alpha {analysis.alpha:g}"
    lines = [f"{analysis.metric.name}: {len(frame)} change point(s)"]
    for _, r in frame.iterrows():
        lines.append(f"  {r['label_before']} -> {r['label']} (position {int(r['position'])}): "
                     f"ratio {fmt_num(r['ratio'], 3)} [{fmt_num(r['ratio_ci_low'], 3)}, "
                     f"{fmt_num(r['ratio_ci_high'], 3)}], p {fmt_p(r['p_value'])}, "
                     f"{r['direction']}, {r['support']}")
    return "\n".join(lines)


def gates(history: Experiment, analysis: hist.HistoryAnalysis, max_regression: float,
          select: Mapping[str, Any] | None = None, n_sim: int = 2000, seed: int = 0):
    """(frame, presentation) of every label gated against the labels before it."""
    items = hist.gates(history, analysis, max_regression, where=dict(select or {}),
                       n_sim=n_sim, seed=seed)
    return (hist.gates_frame(items, analysis.keys),
            present_history.history_gates(items, analysis.keys, max_regression,
                                         analysis.load), items)


def gates_text(frame: pd.DataFrame) -> str:
    """The gates as stable text: label, baseline, gate status."""
    if not len(frame):
        return "no gates"
    return "\n".join(f"{r['metric']} {r['label']} vs {r['baseline']}: {r['gate']}"
                     + ("" if r["outcome"] == r["gate"] else f" ({r['outcome']})")
                     for _, r in frame.iterrows())


def describe(analyses: Sequence[hist.HistoryAnalysis], max_regression: float,
             alpha: float) -> list[str]:
    """The Methods sentences of the analyses shown."""
    out = [a.describe() for a in analyses]
    if len(analyses) > 1:
        out.append(f"The change points of the {len(analyses)} metrics were tested with Holm "
                   f"over the metrics at each load level (alpha {alpha:g}): the first test of "
                   "each metric's search (is there any change point?) ordered by its p, the "
                   f"k-th of {len(analyses)} at alpha / ({len(analyses)} - k + 1), and the "
                   "metric's whole search at that level. Metrics that move together still do "
                   "not make one test: tested each at alpha, a flat history of 12 labels showed "
                   "a change point in p99 or throughput in 0.064-0.080 of simulated histories "
                   "(correlation 0 to 0.95, 4000 each, Monte Carlo error +-0.009; "
                   "benchmarks/calibration_changepoint_metrics.py), with Holm 0.028-0.035; "
                   "a weakly supported change point is not confirmed by its ratio's interval. "
                   "The tests of the newest labels are a second Holm family over the metrics "
                   "at each load level (p Holm-adjusted, interval Bonferroni over the windows "
                   "and the metrics): on such flat pages of 2 metrics a false recent step "
                   "showed in 0.021-0.035, a false change point or recent step in 0.054-0.065 "
                   "(two families at alpha each; +-0.011, 2000 each, "
                   "benchmarks/calibration_recent.py).")
    out.append("The newest 1-3 labels of each series were tested against the labels of the "
               "segment before them: the two-sample t of the labels' log medians, its p from "
               "the statistic's distribution when the labels' values are Student t with 4 df "
               "(simulated; Student's p, which assumes them normal, called a step on 4.9-6.5% "
               "of flat histories with t3 label effects), Bonferroni over the windows tried. "
               "On flat histories of 8-40 labels it called a step in 2.5-3.5% (normal label "
               "effects) and 3.1-4.9% (t3), +-0.010, and found a x3 step in the newest 2 of "
               "8-12 labels in every one of 2000 (benchmarks/calibration_recent.py).")
    out.append(f"Each label was gated against the labels before it in its segment (the first "
               f"label of a segment against the whole previous segment) at a maximum "
               f"regression of {max_regression:.1%}: a regression is a significantly worse "
               f"change (Mann-Whitney U over per-run values, alpha {alpha:g}) whose whole "
               f"{1 - alpha:.0%} ratio interval lies beyond the threshold; the baseline pools "
               "the runs of several labels, so a spread between labels makes the test liberal.")
    return out


def answers(analyses: Sequence[hist.HistoryAnalysis],
            gate_items: Mapping[str, Sequence[hist.HistoryGate]]) -> list[Answer]:
    """Per metric: its change points with ratios and CIs (a weakly supported one said so, with
    its reason among the warnings; the verdict decided by :func:`perfkit.analysis.history._history.
    series_verdict`), and at every load level the gate of its newest label
    (:func:`perfkit.analysis.history._history.latest_gates`)."""
    out = []
    for a in analyses:
        for s in a.series:
            where = present_gate.key_text(a.keys, s.key)
            group = f"Change points of {a.name}{_at(a, where)}"
            points = s.change.change_points
            for point in points:
                out.append(Answer(f"{a.metric.label} at {point.label}",
                                  ratio_text(point.ratio, point.ratio_ci_low,
                                             point.ratio_ci_high)
                                  + f" (after / before), p {fmt_p(point.p_value)}",
                                  HistoryVerdict.CHANGE if point.supported
                                  else HistoryVerdict.WEAK_CHANGE,
                                  f"{len(s.points)} labels",
                                  (*s.change.warnings, *point.warnings), group=group,
                                  topic="history"))
            if not points:
                runs = sum(p.n_runs for p in s.points)
                out.append(Answer(f"{a.metric.label}", "no change point",
                                  HistoryVerdict.NO_CHANGE,
                                  f"{len(s.points)} labels, {runs} runs", s.change.warnings,
                                  group=group, topic="history"))
            out += _recent_answer(a, s, group)
        for g in hist.latest_gates(gate_items.get(a.metric.name, ())):
            where = present_gate.key_text(a.keys, g.key)
            for row in g.result.rows:
                c = row.row.comparison
                out.append(Answer(f"{a.metric.label}{_at(a, where)}",
                                  ratio_text(c.ratio, c.ratio_ci_low, c.ratio_ci_high)
                                  + " (new / base)", present_gate.gate_status(row),
                                  f"{c.n_base} vs {c.n_new} runs", (row.reason,),
                                  group=f"Gate: did the newest label ({g.label}) regress "
                                        f"against {present_gate.span(g.baseline)}?",
                                  topic="gate"))
    return out


def _recent_answer(a: hist.HistoryAnalysis, s: hist.Series, group: str) -> list[Answer]:
    """The test of a step in the series' newest labels (:attr:`perfkit.analysis.history.
    Series.recent`) as an answer row: the window against the labels before it, or why it
    cannot be tested (with the labels needed), with why the change points cannot see it."""
    r = s.recent
    if r is None:
        return []
    found = s.unseen()
    unseen: tuple[Warn, ...] = (found,) if found is not None else ()
    if not r.tested:
        why = (r.reason,) if r.reason is not None else ()
        return [Answer(f"{a.metric.label}, newest labels", "not tested",
                       hist.recent_verdict(r), f"{len(s.points)} labels", (*why, *unseen),
                       group=group, topic="history")]
    span = r.first_label if r.k == 1 else f"{r.first_label}..{r.last_label}"
    holm = r.holm_note()
    return [Answer(f"{a.metric.label}, newest labels ({span})",
                   ratio_text(r.ratio, r.ratio_ci_low, r.ratio_ci_high)
                   + f" (newest / {r.before[0]}..{r.before[1]}), p {fmt_p(r.p_verdict)}"
                   + (f" after Holm over {r.family} metrics" if holm else ""),
                   hist.recent_verdict(r), f"{r.k} vs {r.n_before} labels",
                   (*((holm,) if holm else ()), *unseen), group=group, topic="history")]
