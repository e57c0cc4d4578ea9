"""Factorial effects (:class:`perfkit.analysis.effects.FactorialResult`) as paper-ready tables
(:class:`perfkit.present.tables.Table`): the effects table and the simple effects, for
``perfkit effects`` and the report's tuning-effects page.

Formatting only: every number, verdict and warning comes from :mod:`perfkit.analysis.effects`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from perfkit.analysis.effects import FactorialResult
from perfkit.formatting import Footnotes, fmt_sig, level_text, pct
from perfkit.present.compare import _p
from perfkit.present.tables import Column, Table
from perfkit.vocabulary import SIGNIFICANT, Verdict


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
    for index, r in frame.iterrows():
        i = cast(int, index)  # a RangeIndex
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
            cells.append(_p(cast(float, r.get("p_value_holm"))))
        verdict = result.reported_verdict(r["verdict"], keys[i], r["cap_affected"])
        if not error and not r["interpretable_alone"] and r["verdict"] in SIGNIFICANT:
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
    if verdict == Verdict.NO_CHANGE and mde is not None:
        verdict = f"{Verdict.NO_CHANGE} ({mde.statement})"
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
