"""The tuning-effects notebook: what its A/B and factorial sections show, and their headline.

The analysis is :mod:`perfkit.analysis.effects._effects` (the same calls as ``perfkit effects`` and
``perfkit effects --ab``); this module shapes its results for the page and the forest plots.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import pandas as pd

from perfkit.analysis import ComparisonTable, Experiment, RunSet, metric
from perfkit.analysis.effects import (
    FactorialResult,
    ab_comparisons,
    adjusted_verdict,
    factorial_effects,
    main_estimand,
)
from perfkit.formatting import fmt_ci, level_text
from perfkit.present.compare import row_runs
from perfkit.report.answers import ANSWERED, ARTEFACT, NOT_TESTABLE, Answer, Caveat, ratio_text
from perfkit.report.sections.common import LOAD_WORDS
from perfkit.vocabulary import RunStatus, Verdict
from perfkit.warning import Code, Warn

#: the forest plots' width, in column widths: room for the simple effects' labels, the
#: values beside the axis and the legend
FOREST_WIDTH = 1.6


def ab_tables(rows: RunSet, factors: Sequence[str], metrics: Sequence[str],
              per: str | Sequence[str] | None = "auto", alpha: float = 0.05,
              confidence: float = 0.95) -> list[ComparisonTable]:
    """High vs low of each factor at each load level, one table (one Holm family) per metric."""
    return [ab_comparisons(rows, factors, metric(m, rows.frame.columns), by=_by(per),
                           alpha=alpha, confidence=confidence) for m in metrics]


def factorials(rows: RunSet, factors: Sequence[str], metrics: Sequence[str],
               per: str | Sequence[str] | None = "auto", confidence: float = 0.95,
               alpha: float = 0.05) -> list[FactorialResult]:
    """The factorial analysis of each metric (log scale), per load level."""
    return [factorial_effects(rows, factors, metric(m, rows.frame.columns), by=_by(per),
                              confidence=confidence, alpha=alpha) for m in metrics]


@dataclasses.dataclass(frozen=True)
class Other:
    """An experiment answered on the page beside the main factorial (the notebook's
    ``also``: the demo's listen backlog, 8 against 511, is a one-factor design of its own)."""

    exp: Experiment
    results: list[FactorialResult]


def others(also: Mapping[str, Sequence[str]], data_root: str | None, metrics: Sequence[str],
           per: str | Sequence[str] | None = "auto", confidence: float = 0.95,
           alpha: float = 0.05) -> list[Other]:
    """The factorial analysis of each experiment of ``also`` (name -> its factors), all its
    runs, as :func:`factorials`."""
    from perfkit.report.sections.common import load_experiment

    out = []
    for name, factors in also.items():
        exp = load_experiment(name, data_root)
        out.append(Other(exp, factorials(exp.rows(), list(factors), metrics, per,
                                         confidence, alpha)))
    return out


def _by(per: str | Sequence[str] | None):
    if per is None or per == "":
        return "none"
    return per


def notes(tables: Sequence[ComparisonTable]) -> list[Warn]:
    """The distinct warnings of the comparisons (e.g. "3 vs 3 runs cannot reach ...")."""
    seen: dict[Warn, None] = {}
    for table in tables:
        for w in table.warnings:
            seen.setdefault(w, None)
        for row in table.rows:
            for w in row.warnings:
                seen.setdefault(w, None)
    return list(seen)


def notes_below(source: ComparisonTable | FactorialResult, shown) -> list[Warn]:
    """The warnings of ``source`` (a comparison's :func:`notes`, a factorial's
    :attr:`~FactorialResult.warnings`) that its presentation ``shown`` (a
    :class:`perfkit.present.tables.Table`, or a list or tuple of them, e.g. the factorial's
    effects and simple-effects tables) does not already give as a footnote: each caveat is said
    once on the page."""
    tables = shown if isinstance(shown, list | tuple) else [shown]
    said = {n for t in tables if t is not None for n in t.notes}
    texts = notes([source]) if isinstance(source, ComparisonTable) else source.warnings
    return [n for n in dict.fromkeys(texts) if n not in said]


def forest_rows(result: FactorialResult) -> pd.DataFrame:
    """The rows of the forest plot (:meth:`FactorialResult.plot_rows`: simple effects in place
    of the main effects of interacting factors, the interaction kept), labelled (``label``,
    ``level``), with ``artefact`` and ``cap_affected`` flags and the estimate as ``ratio``,
    ``ratio_ci_low``, ``ratio_ci_high`` (in the metric's unit on an additive scale)."""
    rows = result.plot_rows()
    rows = rows.assign(artefact=rows["on_timeout_cap"].astype(bool),
                       ratio=rows["estimate"], ratio_ci_low=rows["ci_low"],
                       ratio_ci_high=rows["ci_high"])
    return _labelled(result, rows)


def _labelled(result: FactorialResult, rows: pd.DataFrame) -> pd.DataFrame:
    return rows.assign(label=[_label(t, a, i) for t, a, i in
                              zip(rows["term"], rows["at"], rows["interaction"], strict=True)],
                       level=[_level(result, r) for _, r in rows.iterrows()])


def _label(term: str, at: str = "", split: bool = False) -> str:
    """``keepalive``; ``keepalive at cache=ram`` (a simple effect); ``keepalive × cache
    (interaction)`` when its simple effects follow it."""
    name = term.replace(":", " × ")
    if at:
        return f"{name} at {at}"
    return f"{name} (interaction)" if split else name


def _level(result: FactorialResult, row: pd.Series) -> str:
    return ", ".join(level_text(row[c]) for c in result.per) if result.per else "all runs"


def variation_height_in(result: FactorialResult) -> float:
    """The variation figure's height: its bars, and its legend's rows above them (a 2^3
    design's seven terms, block and error in one column: nine rows)."""
    from perfkit.plots.effects import legend_columns

    levels = result.effects["by"].nunique(dropna=False)
    terms = [str(t).replace(":", " × ") for t in dict.fromkeys(result.variation_frame()["term"])]
    rows = -(-len(terms) // legend_columns(terms))
    return 1.2 + 0.3 * levels + 0.15 * rows


#: what the variation figure's ``*`` marks
INTERACTING = ("*: the factors interact significantly there, so their main effects' shares "
               "split a variation they cause together (not interpretable alone)")


def variation_caption(result: FactorialResult) -> str:
    """The caption of the allocation of variation: the metric, what a bar is and its runs, and
    what ``*`` marks where factors interact."""
    marked = "; " + INTERACTING if result.variation_frame()["in_interaction"].any() else ""
    return (f"Allocation of the variation of log {result.metric.name} per "
            f"{', '.join(result.per) or 'experiment'} ({result.n_runs} runs){marked}")


def variation_table(result: FactorialResult) -> pd.DataFrame:
    """Allocation of variation: the share of the log metric's variation each term explains,
    one row per level and term (tidy)."""
    return result.variation_frame()


def coding_text(result: FactorialResult) -> str:
    """How each factor was coded: ``"keepalive: none -> keepalive; cache: none -> ram"``."""
    return "; ".join(f"{f}: {level_text(c['low'])} -> {level_text(c['high'])}"
                     for f, c in result.coding.items())


def check_lines(results: Sequence[FactorialResult], digits: int = 3) -> str:
    """Stable text of every effect the forest plots show, with its CI and verdict (for the
    output-checked cell)."""
    lines = []
    for result in results:
        for _, r in forest_rows(result).iterrows():
            at = f" at {r['at']}" if r["at"] else ""
            flag = " (affected by a timeout cap)" if r["cap_affected"] else ""
            lines.append(f"{result.metric.name} {r['level']} {r['term']}{at}: "
                         f"{fmt_ci(r['ratio'], r['ratio_ci_low'], r['ratio_ci_high'], '', digits)}"
                         f" {r['verdict']}{flag}")
    return "\n".join(lines)


def answers(tables: Sequence[ComparisonTable], results: Sequence[FactorialResult],
            exp: Experiment | None = None, metrics: Sequence[str] = ()) -> list[Answer]:
    """One row per designed question: each factor's effect on each metric at each load level
    (:meth:`FactorialResult.headline_rows`: the simple effects at each level of the other
    factor where the two interact), whatever its verdict, grouped by factor; an effect that
    is an artefact of a timeout cap is listed apart (``kind``), as is an A/B table the run
    counts cannot test. Each row carries the cap warnings of its runs and, with ``exp``, the
    drift and block threats that bear on its metric
    (:func:`perfkit.analysis.context._validity.threats_for`); the interaction of two factors at a
    load level is one caveat of its rows. ``metrics``: only the effects on these (all when
    empty): a 2^3 design's 34 rows of p99 and throughput take the index past its 60."""
    from perfkit.analysis.context import backend, threats_for

    # the conditions every row of the experiment shares, in its groups' headings
    shared = f" ({backend(exp).conditions()})" if exp is not None else ""
    if metrics:
        tables = [t for t in tables if t.metric.name in metrics]
        results = [r for r in results if r.metric.name in metrics]
    out = []
    factors = list(dict.fromkeys(f for r in results for f in r.factors))
    # each result's threats and rows once, whatever the number of factors
    each = [(result, threats_for(exp, result.metric.name, [result]) if exp is not None else (),
             result.headline_rows()) for result in results]
    for factor in factors:
        for result, around, rows in each:
            if factor not in result.factors:
                continue
            for _, r in rows[rows["term"] == factor].iterrows():
                out.append(_with(_effect_answer(result, r, shared), around))
    out += [_with(_ab_answer(t), threats_for(exp, t.metric.name, [t]) if exp is not None else ())
            for t in tables if t.not_testable_note()]
    if not out:
        out.append(Answer("Tuning effects", "no effect could be estimated", group="Tuning "
                          "effects", topic="effect", kind=NOT_TESTABLE))
    return out


def level_lines(exp: Experiment, results: Sequence[FactorialResult]) -> list[str]:
    """What each factor's high level changes against its low one in the server's recorded
    configuration (:func:`perfkit.analysis.context._levels.level_changes`), one line per factor."""
    from perfkit.analysis.context import changes_text, level_changes

    if not results:
        return []
    frame = level_changes(exp, results[0].factors)
    return [changes_text(frame, factor) for factor in results[0].factors]


def families_text(tables: Sequence[ComparisonTable], results: Sequence[FactorialResult]) -> str:
    """Which tests share a Holm family, said once for the page: the same runs are tested by
    the A/B tables, the factorial and the simple effects, each in families of its own
    (:func:`perfkit.analysis.effects._multiplicity.statement`)."""
    from perfkit.analysis.effects import families, statement

    return statement(families(tables, results))


def _with(answer: Answer, warnings: Sequence[Caveat]) -> Answer:
    extra = tuple(w for w in warnings if w not in answer.warnings)
    return dataclasses.replace(answer, warnings=answer.warnings + extra) if extra else answer


def factor_group(result: FactorialResult, factor: str) -> str:
    """The heading of a factor's rows: ``"Effect of keepalive: none -> keepalive, as the
    ratio keepalive / none, averaged over cache unless a row names its level"``: what its main
    effects average over is said once, here (an A/B row holds the other factors low)."""
    c = result.coding.get(factor, {})
    low, high = (level_text(c["low"]), level_text(c["high"])) if c else ("low", "high")
    averaged = main_estimand(factor, result.factors).partition("main effect, ")[2]
    over = (f", {averaged} unless a row names {'its' if len(result.factors) == 2 else 'a'} "
            "level" if averaged else "")
    return f"Effect of {factor}: {low} -> {high}, as the ratio {high} / {low}{over}"


def _effect_answer(result: FactorialResult, r: pd.Series, shared: str = "") -> Answer:
    where = ", ".join(f"{level_text(r[c])} {LOAD_WORDS.get(c, c)}" if c in LOAD_WORDS
                      else f"{c} {level_text(r[c])}" for c in result.per)
    at = ""
    caveats = list(r["warnings"])  # the cap warnings of its runs first: artefact or affected
    if r["at"]:
        other, _, level = r["at"].partition("=")
        at = f", {other} = {level}"
        pair = " × ".join(f for f in result.factors if f in {r["term"], other})
        caveats.append(Warn(Code.INTERACT_AT, factors=pair, where=where or None))
    caveats += partial_caveat(result, r.get("level_key"))
    if r.get("not_estimable"):  # "x0.378 (no interval)" says why where it is read
        caveats.append(Warn(Code.EFFECT_INTERVAL_HIDDEN, metric=result.metric.label,
                            where=(where or "all runs") + at, term=r["term"],
                            why=r["not_estimable"]))
    if result.log:
        value = ratio_text(r["estimate"], r["ci_low"], r["ci_high"])
    else:
        value = (f"{fmt_ci(r['estimate'], r['ci_low'], r['ci_high'])} "
                 f"{result.metric.unit} (high - low)").replace("  ", " ")
    # a measured effect from runs that waited for a timeout keeps its verdict, and says so
    # where the verdict is read (its warning says how the cap bears on the metric)
    verdict = result.reported_verdict(r["verdict"], r.get("level_key"),
                                      bool(r.get("cap_affected")))
    # a verdict beside an interval that could seem to disagree says why (Holm vs Bonferroni)
    verdict = adjusted_verdict(verdict, r["ci_low"], r["ci_high"], 1.0 if result.log else 0.0,
                               r["p_value"], int(r["holm_family"]), identity=r["verdict"])
    # what the server and the kernel counted at the two levels (empty: nothing recorded)
    mech = r.get("mechanism")
    counted = mech.text() if mech else ""
    if mech and counted:
        caveats += [w for w in mech.warnings if w not in caveats]
    return Answer(f"{result.metric.label}, {where or 'all runs'}{at}", value, verdict,
                  f"{r['n_runs']} runs", tuple(caveats),
                  group=factor_group(result, r["term"]) + shared,
                  topic="effect", kind=ARTEFACT if r["on_timeout_cap"] else ANSWERED,
                  mechanism=counted)


def partial_caveat(result: FactorialResult, key) -> list[Warn]:
    """The survivorship of a load level's runs as a caveat of its rows: how many are
    :attr:`~perfkit.vocabulary.RunStatus.PARTIAL` (fewer connections got in than the
    generator opened, :func:`perfkit.analysis.core.survivorship`), none when all got in
    (:attr:`Code.LEVEL_RUNS_PARTIAL`)."""
    notes = result.level_run_notes.get(key, ())
    partial = sorted({run for run, kind, _ in notes if kind == RunStatus.PARTIAL})
    if not partial:
        return []
    return [Warn(Code.LEVEL_RUNS_PARTIAL, runs=tuple(partial),
                 of=result.level_runs.get(key, 0))]


def _ab_answer(table: ComparisonTable) -> Answer:
    names: dict[str, str] = {Verdict.NO_CHANGE: "no significant change"}
    # a row computed from values on a timeout cap counts as the cap's artefact, never as
    # better or worse (ComparisonRow.reported_verdict, the A/B table's change column)
    # (all rows not testable: the verdict beside it says so once, not "not testable: 9 not
    # testable"; the group, "A/B comparisons", names the kind of test once)
    counts = ", ".join(f"{names.get(v, v)}: {n}" for v, n in table.reported_counts().items()
                       if v != NOT_TESTABLE or len(table.reported_counts()) > 1)
    note = table.not_testable_note()
    return Answer(f"each factor high vs low, {table.metric.label}", counts, NOT_TESTABLE,
                  f"{table.family} comparisons of {row_runs(table)} runs",
                  (note,) if note else (), group="A/B comparisons", topic="effect",
                  kind=NOT_TESTABLE)


# -- figures (a notebook cell is a call and a display) ------------------------------------------
def forest_figure(result: FactorialResult, palette=None, threshold: float | None = None):
    """The forest plot of ``result``'s effects: filled markers are the significant ones, rows
    in labelled blocks per load level, values printed, the practical ``threshold`` (±, e.g.
    0.05) shaded. ``palette`` is accepted for the notebook's uniform call and not used: the
    rows are effects and load levels, never configurations, so they take no configuration
    colour (:mod:`perfkit.plots.palette`)."""
    from perfkit import plots

    rows = forest_rows(result)
    levels = list(dict.fromkeys(rows["level"]))
    fig, ax = plots.figure(height_in=plots.forest_height_in(len(rows), len(levels)),
                           width_in=plots.style.WIDTH_IN * FOREST_WIDTH)
    plots.forest(rows, ax, plots.label(f"effect on {result.metric.label}", "ratio"),
                 label="label", by="level", legend_title=", ".join(result.per) or None,
                 significant="significant", artefact="artefact", caution="cap_affected",
                 threshold=threshold)
    return fig


def forest_caption(result: FactorialResult, threshold: float | None = None) -> str:
    """The forest plot's caption: the ratios' intervals and their method, what is filled
    (significant, Holm over the levels), the runs, each factor's low -> high and the shaded
    threshold (a fraction, none: no band)."""
    p = "Holm-adjusted across levels, " if result.per else ""
    band = f"; shaded: the practical threshold ±{threshold:.0%}" if threshold else ""
    simple = ("; where an interaction is significant, the simple effects of its factors (each "
              "at each level of the other, Holm over the levels of the other) replace their "
              "main effects" if len(result.simple_effects) else "")
    return (f"Effects on {result.metric.name} as ratios (high / low) with "
            f"{result.confidence:.0%} t intervals (OLS on log values, HC2 errors: no equal "
            "spread across cells assumed); filled: significant "
            f"({p}alpha {result.alpha:g}){simple}; {result.n_runs} runs; low -> high: "
            f"{coding_text(result)}{band}")


def variation_figure(result: FactorialResult):
    """The allocation of the variation of log metric (:func:`perfkit.plots.variation`), a bar
    per load level, its height fitted to its legend (:func:`variation_height_in`)."""
    from perfkit import plots

    frame = result.variation_frame()  # with in_interaction: marked (variation_caption)
    levels = (frame[list(result.per)].apply(lambda r: ", ".join(level_text(v) for v in r),
                                            axis=1) if result.per else "all runs")
    frame = frame.assign(level=levels)
    fig, ax = plots.figure(height_in=variation_height_in(result))
    ylabel = (plots.style.column_label(result.per[0]) if len(result.per) == 1
              else ", ".join(result.per) or None)
    plots.variation(frame, ax, by="level", ylabel=ylabel, flag="in_interaction")
    return fig


# -- text around the results ----------------------------------------------------------------------
def methods(exp, tables: Sequence[ComparisonTable], results: Sequence[FactorialResult],
            calibration=None) -> dict:
    """The Methods records of the experiments this page analyses, with the analyses' own
    description of their method (``calibration``: the page's A/A part, if any)."""
    from perfkit.report.sections.common import methods as records

    out = records([exp], [*(t.describe() for t in tables),
                          *(r.describe() for r in results)])
    if calibration is not None:
        aa = calibration.result
        out.update(records([calibration.experiment],
                           [*(t.describe() for t in aa.designed), aa.describe()]))
    return out


def ab_caption(table: ComparisonTable) -> str:
    """What the A/B rows compare and with how many runs per arm."""
    per = ", ".join(table.keys[1:])
    at = f" at one level of {per}" if per else ""
    return (f"A/B on {table.metric.name}: each row compares one factor's high level (new) with "
            f"its low level (base){at}, the other factors held at their low level; "
            f"{row_runs(table)} runs per row (base vs new); medians of runs with "
            f"{table.confidence:.0%} order-statistic intervals, the change as the "
            f"Hodges-Lehmann ratio with its Moses interval ({table.interval_words()}), "
            f"Mann-Whitney U p-values Holm-adjusted over the {table.family} comparisons")


def present_table(table: ComparisonTable, rows: RunSet):
    """An A/B comparison table as the page shows it (:func:`perfkit.present.compare.comparison`
    over ``rows``' runs)."""
    from perfkit.present import compare as present_compare

    return present_compare.comparison(table, rows.runs)


def present_factorial(result: FactorialResult):
    """The effects table alone: its simple effects are a table of their own
    (:func:`present_simple`, with their own CSV), the variation each term explains too
    (:func:`variation_table`)."""
    from perfkit.present import effects as present_effects

    return present_effects.effects_table(result, variation=False)


def present_simple(result: FactorialResult):
    """A factorial's simple effects as the page shows them
    (:func:`perfkit.present.effects.simple_effects`)."""
    from perfkit.present import effects as present_effects

    return present_effects.simple_effects(result)


def simple_frame(result: FactorialResult) -> pd.DataFrame | None:
    """The simple effects as a tidy frame; None (no table) without a significant
    interaction."""
    return result.simple_frame() if len(result.simple_effects) else None


def simple_caption(result: FactorialResult) -> str:
    """The caption of a factorial's simple effects: each factor of a significant interaction at
    each level of the other."""
    return (f"Simple effects on {result.metric.label}: each factor of a significant "
            "interaction at each level of the other")

