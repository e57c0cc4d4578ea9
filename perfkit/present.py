"""Analysis results as paper-ready tables (:class:`perfkit.tables.Table`): one presentation for
the CLI (text, Markdown, LaTeX) and the report (HTML, Markdown and LaTeX files).

Formatting only: every number, verdict and warning comes from the result objects of
:mod:`perfkit.analysis`. Estimates print with their interval as ``3.1 [2.9, 3.4]``; a change
as ``+3.1% [+1.0%, +5.2%]`` when the analysis calls it significant, else its verdict (``~``,
``not testable``, ``no data``); warnings become numbered notes.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence

from perfkit.analysis import ComparisonTable
from perfkit.analysis.effects import FactorialResult
from perfkit.formatting import (
    Footnotes,
    change_ci,
    fmt_num,
    fmt_p,
    fmt_sig,
    interval_text,
    level_text,
    pct,
    pct_change,
)
from perfkit.present_scaling import bracket_text, littles, scaling, slo
from perfkit.tables import Column, Table

__all__ = ["SIGNIFICANT", "bracket_text", "change_text", "column", "comparison", "factorial",
           "frame", "interval_text", "littles", "row_runs", "scaling", "slo"]

SIGNIFICANT = ("better", "worse")


def _p(value: float) -> str:
    return "" if value is None or value != value else fmt_p(value)


def change_text(verdict: str, ratio: float, low: float, high: float, mde=None) -> str:
    """``+3.1% [+1.0%, +5.2%]`` when significant, else the verdict (``~``, ``not testable``);
    a ``~`` says which changes the design could have detected (``mde``, 80% power). A
    significant change without a finite ratio says why: values <= 0 (no ratio), or failed runs
    ranked worst (a ratio of 0 or infinity is no size; its finite interval end is a bound)."""
    if verdict in SIGNIFICANT and ratio != ratio:
        return f"{verdict} (no ratio: values <= 0)"
    if verdict in SIGNIFICANT and (math.isinf(ratio) or ratio == 0):
        bound = low if math.isinf(ratio) else high
        side = "at least" if math.isinf(ratio) else "at most"
        finite = 0 < bound < math.inf
        return (f"{verdict} ({side} {pct_change(bound)}; failed runs: no finite ratio)"
                if finite else f"{verdict} (failed runs: no finite ratio)")
    if verdict in SIGNIFICANT:
        return change_ci(ratio, low, high)
    if verdict == "~" and mde is not None and mde.testable:
        return (f"~ (could detect {pct_change(mde.ratio_high)} / {pct_change(mde.ratio_low)} "
                f"at {mde.power:.0%} power)")
    return verdict


# -- comparisons ----------------------------------------------------------------------------------
def row_runs(table: ComparisonTable) -> str:
    """The runs per arm of the table's rows: ``"5 vs 5"``, ``"3-5 vs 5"`` when rows differ."""
    sizes = table.row_sizes()

    def span(values: list[int]) -> str:
        low, high = min(values, default=0), max(values, default=0)
        return f"{low}" if low == high else f"{low}-{high}"

    return f"{span([b for b, _ in sizes])} vs {span([n for _, n in sizes])}"


def _arm_runs(table: ComparisonTable, side: int) -> str:
    """``"15 runs; 5 per row"``: an arm's distinct runs, and its runs in each row when the
    table has several rows (rows may share runs: A/B rows share their base)."""
    total = (table.n_base_runs, table.n_new_runs)[side]
    if table.family < 2:
        return f"{total} runs"
    per_row = row_runs(table).split(" vs ")[side]
    return f"{total} runs; {per_row} per row"


def comparison(table: ComparisonTable, runs: Iterable = ()) -> Table:
    """The benchstat-like table of a :class:`ComparisonTable` (``runs``: for the closed-loop
    note on latency metrics)."""
    notes = Footnotes()
    m = table.metric
    closed = sorted({w for r in runs if r.closed_loop for w in r.warnings
                     if "closed-loop" in w}) if m.is_latency else []
    mark = notes.mark([*closed, *table.warnings])
    holm = f", Holm over {table.family} rows" if table.family > 1 else ""
    unit = f", {m.unit}" if m.unit else ""
    title = (f"{m.name} ({m.better} is better{unit}){mark}: medians of runs with "
             f"{pct(table.confidence)} CIs; change new/base with its {pct(1 - table.alpha)} CI; "
             f"alpha {table.alpha:g}{holm}\nbase: {table.base} ({_arm_runs(table, 0)})\n"
             f"new:  {table.new} ({_arm_runs(table, 1)})")
    labels = [k for k, _ in table.rows[0].labels] if table.rows else []
    shown = [k for k in labels if not k.startswith("held_")]  # the caption says what is held
    cols = [Column(k) for k in table.keys] + [Column(k) for k in shown]
    cols += [Column("base", m.unit, True), Column("new", m.unit, True), Column("vs base"),
             Column("p", right=True), Column("p Holm", right=True), Column("runs")]
    mechanism = any(r.mechanism for r in table.rows)  # some run recorded what the server counted
    if mechanism:
        cols.append(Column("mechanism (base -> new)"))
    rows = []
    for row in table.rows:
        c = row.comparison
        extra = [v for k, v in row.labels if k in shown]
        rows.append((*(level_text(v) for v in row.key), *extra,
                     interval_text(c.median_base, c.median_base_ci_low, c.median_base_ci_high),
                     interval_text(c.median_new, c.median_new_ci_low, c.median_new_ci_high),
                     _change(row),
                     _p(c.p_value) or "-", _p(row.p_adjusted) or "-",
                     f"{c.n_base} vs {c.n_new} {notes.mark([*row.warnings, *_without(row)])}"
                     .rstrip(), *([row.mechanism.text()] if mechanism else [])))
    return Table(tuple(cols), tuple(rows), title, tuple(notes.texts))


def _change(row) -> str:
    """The change column: the change (or the artefact verdict of a row on a cap), with the
    qualifier of a measured change from runs that waited for a cap."""
    c = row.comparison
    if row.caps_ms:
        return change_text(row.reported_verdict, c.ratio, c.ratio_ci_low, c.ratio_ci_high,
                           row.mde)
    text = change_text(row.verdict, c.ratio, c.ratio_ci_low, c.ratio_ci_high, row.mde)
    qualifier = row.reported_verdict.removeprefix(row.verdict).strip()
    return f"{text} {qualifier}" if qualifier else text


def _without(row) -> list[str]:
    """The row's result without its short runs (the sensitivity comparison), as a note."""
    return [row.sensitivity_note] if row.sensitivity_note else []


# -- factorial effects ----------------------------------------------------------------------------
def factorial(result: FactorialResult) -> list[Table]:
    """The effects table (:func:`effects_table`), and the simple effects where an interaction
    is significant (:func:`simple_effects`)."""
    out = [effects_table(result)]
    if len(result.simple_effects):
        out.append(simple_effects(result))
    return out


def effects_table(result: FactorialResult, variation: bool = True) -> Table:
    """The effects table. A warning about one load level (values on a timeout cap) is marked
    on that level's verdicts, the others after the metric's name. ``variation``: with the
    share of the variation each term explains (the report gives it a table of its own)."""
    notes = Footnotes()
    scale = ("additive effects q (half of high minus low)" if not result.log else
             "log scale: effect = ratio of geometric means, high / low")
    dfs = sorted({v for v in result.df_error.values() if v is not None})
    per = f"; per {', '.join(result.per)}, Holm across levels" if result.per else ""
    block = f"; blocks: {result.block}" if result.block else ""
    coding = "; ".join(f"{name}: {level_text(c['low'])} -> {level_text(c['high'])} "
                       f"({c['rule']})" for name, c in result.coding.items())
    at_level = {w for ws in result.level_warnings.values() for w in ws}
    marks = notes.mark([w for w in result.warnings if w not in at_level])
    title = (f"{result.metric.name}{marks}, {result.n_runs} runs: {scale}; "
             f"{pct(result.confidence)} t CIs (error df {', '.join(map(str, dfs))}){per}{block}"
             f"\ncoding (low -> high): {coding}")
    frame, keys = result.to_frame(), result.effects["by"].to_numpy()  # aligned row by row
    mde = result.detectable()
    est = (("ratio", "ratio_ci_low", "ratio_ci_high") if result.log else
           tuple(f"effect{s}{result.metric.suffix}" for s in ("", "_ci_low", "_ci_high")))
    mechanism = "mechanism" in frame  # some run recorded what the server counted
    cols = [Column(c) for c in result.per] + [
        Column("term"), Column("ratio" if result.log else "effect",
                               "" if result.log else result.metric.unit, True),
        Column(f"{pct(result.confidence)} CI"),
        *([Column("variation", "%", True)] if variation else []),
        Column("p", right=True)] + ([Column("p Holm", right=True)] if result.per else []) + [
        Column("verdict")] + ([Column("mechanism (low -> high, other factors low)")]
                              if mechanism else [])
    rows = []
    for i, r in frame.iterrows():
        error = r["term"] in ("error", "block")
        term = r["term"]
        if not error and not r["interpretable_alone"]:
            term += " " + notes.mark("not interpretable alone: its interaction is significant "
                                     "(see the simple effects)")
        share = "-" if r["variation_pct"] != r["variation_pct"] else fmt_sig(r["variation_pct"])
        cells = [*(level_text(r[c]) for c in result.per), term,
                 "" if error else fmt_sig(r[est[0]]),
                 "" if error else f"[{fmt_sig(r[est[1]])}, {fmt_sig(r[est[2]])}]",
                 *([share] if variation else []), _p(r["p_value"])]
        if result.per:
            cells.append(_p(r.get("p_value_holm")))
        verdict = result.reported_verdict(r["verdict"], keys[i], r["cap_affected"])
        if not error and not r["interpretable_alone"] and r["verdict"] in ("better", "worse"):
            # its interaction is significant: the average over the other factor's levels is
            # no verdict a reader can act on; the simple effects are
            verdict = "see the simple effects"
        cells.append(_verdict(verdict, result.level_warnings.get(keys[i], ())
                              if not error else (), notes, mde[i]))
        if mechanism:
            cells.append(r["mechanism"])
        rows.append(tuple(cells))
    return Table(tuple(cols), tuple(rows), title, tuple(notes.texts))


def _verdict(verdict: str, warnings: Sequence[str], notes: Footnotes, mde=None) -> str:
    """A verdict, with the mark of its cap warnings (an artefact, or a count or rate a cap
    affects); a ``~`` with the smallest effect the design could have detected, or why none
    (``mde``: :class:`perfkit.stats.tpower.DetectableEffect`)."""
    if verdict == "~" and mde is not None:
        verdict = f"~ ({mde.statement})"
    return f"{verdict} {notes.mark(warnings)}".rstrip() if warnings else verdict


def simple_effects(result: FactorialResult) -> Table:
    """The simple effects table (:meth:`FactorialResult.simple_frame`'s rows)."""
    notes = Footnotes()
    s = result.simple_effects
    mechanism = "mechanism" in s and any(s["mechanism"])
    cols = [Column(c) for c in result.per] + [
        Column("factor"), Column("at"), Column("ratio" if result.log else "effect", right=True),
        Column(f"{pct(result.confidence)} CI"), Column("p", right=True),
        Column("p Holm", right=True), Column("runs", right=True), Column("verdict")] + (
        [Column("mechanism (low -> high)")] if mechanism else [])
    rows = [(*(level_text(r[c]) for c in result.per), r["factor"], r["at"],
             fmt_sig(r["effect"]), f"[{fmt_sig(r['ci_low'])}, {fmt_sig(r['ci_high'])}]",
             _p(r["p_value"]), _p(r["p_value_holm"]), str(r["n_runs"]),
             _verdict(result.reported_verdict(r["verdict"], r["level_key"], r["cap_affected"]),
                      r["warnings"], notes, mde), *([r["mechanism"].text()] if mechanism else []))
            for (_, r), mde in zip(s.iterrows(), result.simple_detectable(), strict=True)]
    return Table(tuple(cols), tuple(rows), "simple effects (each factor at each level of the "
                 "other, where the interaction is significant; Holm over the levels of the "
                 "other factor)", tuple(notes.texts))


# -- any tidy frame ------------------------------------------------------------------------
_SUFFIX_UNITS = (("_bytes_per_s", "B/s"), ("_rps", "req/s"), ("_ms", "ms"), ("_us", "us"),
                 ("_pct", "%"), ("_percent", "%"), ("_bytes", "B"), ("_s", "s"))


def column(name: str, numeric: bool) -> Column:
    """A tidy column name as a header with its unit: ``median_base_ms`` -> ``median base [ms]``,
    a percentile as it is written (``latency_p99_9_ms`` -> ``latency p99.9 [ms]``)."""
    unit = ""
    for suffix, u in _SUFFIX_UNITS:
        if name.endswith(suffix) and len(name) > len(suffix):
            name, unit = name[: -len(suffix)], u
            break
    words = re.sub(r"(?<![A-Za-z0-9])p(\d+)_(\d+)(?![A-Za-z0-9])", r"p\1.\2", name)
    return Column(words.replace("_", " "), unit, numeric)


def frame(table, title: str = "", digits: int = 3, hide: Sequence[str] = ("warnings",)) -> Table:
    """Any tidy frame as a :class:`Table`: units from the column suffixes, floats to ``digits``
    significant digits, whole numbers without a decimal point, missing as blank; a column
    missing in every row is not shown (the CSV keeps it)."""
    import pandas as pd

    shown = table.drop(columns=[c for c in hide if c in table])
    empty = [c for c in shown.columns
             if shown[c].map(lambda v: v is None or v is pd.NA or v == "" or
                             (isinstance(v, float) and v != v)).all()]
    shown = shown.drop(columns=empty) if len(shown) else shown
    cols, cells = [], []
    for name in shown.columns:
        values = shown[name]
        numeric = pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)
        cols.append(column(str(name), numeric))
        cells.append(["" if v is None or v is pd.NA or (isinstance(v, float) and v != v)
                      else fmt_num(v, digits) if numeric else level_text(v) for v in values])
    rows = tuple(zip(*cells, strict=True)) if cells else ()
    return Table(tuple(cols), tuple(tuple(r) for r in rows), title)
