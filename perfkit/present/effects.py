"""Factorial effects (:class:`perfkit.analysis.effects._effects.FactorialResult`) as paper-ready
tables (:class:`perfkit.present.tables.Table`): the effects table and the simple effects, for
``perfkit effects`` and the report's tuning-effects page.

Formatting only: every number, verdict and warning comes from
:mod:`perfkit.analysis.effects._effects`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import cast

from perfkit.analysis.core import interval_or_reason
from perfkit.analysis.effects import FactorialResult
from perfkit.formatting import Footnotes, fmt_sig, level_text
from perfkit.present.compare import _p, estimate_words
from perfkit.present.tables import Column, Table
from perfkit.vocabulary import SIGNIFICANT, Verdict
from perfkit.warning import Warn


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
    dfs = [v for v in result.effect_rows()["df"] if v == v]
    span = (f"{min(dfs):.3g}" if dfs and f"{min(dfs):.3g}" == f"{max(dfs):.3g}"
            else f"{min(dfs):.3g}-{max(dfs):.3g}" if dfs else "none")
    per = f"; per {', '.join(result.per)}, Holm across levels" if result.per else ""
    block = f"; blocks: {result.block}" if result.block else ""
    coding = "; ".join(f"{name}: {level_text(c['low'])} -> {level_text(c['high'])} "
                       f"({c['rule']})" for name, c in result.coding.items())
    at_level = {w for ws in result.level_warnings.values() for w in ws}
    marks = notes.mark([w for w in result.warnings if w not in at_level])
    title = (f"{result.metric.name}{marks}, {result.n_runs} runs: {scale}; "
             f"{result.interval_words()} from t without equal spread across cells (HC2, "
             f"Satterthwaite df {span}){per}{block}\ncoding (low -> high): {coding}")
    frame, keys = result.to_frame(), result.effects["by"].to_numpy()  # aligned row by row
    mde = result.detectable()
    est = (("ratio", "ratio_ci_low", "ratio_ci_high") if result.log else
           tuple(f"effect{s}{result.metric.suffix}" for s in ("", "_ci_low", "_ci_high")))
    mechanism = "mechanism" in frame  # some run recorded what the server counted
    cols = [Column(c) for c in result.per] + [
        Column("term"), Column("estimand"), Column("ratio" if result.log else "effect",
                                                   "" if result.log else result.metric.unit,
                                                   True),
        Column(_ci_header(result.interval_words())), Column(_detectable_header(mde)),
        *([Column("variation", "%", True)] if variation else []),
        Column("p", right=True)] + ([Column("p Holm", right=True)] if result.per else []) + [
        Column("verdict")] + ([Column("mechanism (low -> high, averaged as the effect)")]
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
        cells = [*(level_text(r[c]) for c in result.per), term, r["estimand"],
                 "" if error else fmt_sig(r[est[0]]),
                 "" if error else _interval(r[est[1]], r[est[2]], r["not_estimable"]),
                 detectable_text(mde[i], r.get("mde_note", "")),
                 *([share] if variation else []), _p(r["p_value"])]
        if result.per:
            cells.append(_p(cast(float, r.get("p_value_holm"))))
        verdict = result.reported_verdict(r["verdict"], keys[i], r["cap_affected"])
        if not error and not r["interpretable_alone"] and r["verdict"] in SIGNIFICANT:
            # its interaction is significant: the average over the other factor's levels is
            # no verdict a reader can act on; the simple effects are
            verdict = "see the simple effects"
        cells.append(_verdict(verdict, result.level_warnings.get(keys[i], ())
                              if not error else (), notes))
        if mechanism:
            cells.append(r["mechanism"])
        rows.append(tuple(cells))
    return Table(tuple(cols), tuple(rows), title, tuple(notes.items))


def _verdict(verdict: str, warnings: Sequence[Warn], notes: Footnotes) -> str:
    """A verdict, with the mark of its cap warnings (an artefact, or a count or rate a cap
    affects)."""
    return f"{verdict} {notes.mark(warnings)}".rstrip() if warnings else verdict


def _interval(low: float, high: float, why: str) -> str:
    """``[0.547, 1.03]``, or ``not estimable: ...`` (:mod:`perfkit.analysis.core._intervals`)."""
    return interval_or_reason(f"[{fmt_sig(low)}, {fmt_sig(high)}]", why)


def _ci_header(words: str) -> str:
    """``"98.3% CI"``: the column header of the intervals (the title and notes say over
    what they are adjusted)."""
    return words.split(" (")[0].replace("CIs", "CI")


def _detectable_header(mde) -> str:
    power = next((m.power for m in mde if m is not None), None)
    return f"detectable ({power:.0%} power)" if power else "detectable"


def detectable_text(mde, note: str = "", df: float = math.nan) -> str:
    """A ``~`` row's smallest detectable effect, an estimate on the error df of its t test
    (``about x1.87 / x0.535 (estimate, 2.4 df)``, or ``about ±2.1 ms (estimate, 8 df)``), or
    why there is none; empty for another row. ``mde``: a
    :class:`perfkit.stats.tpower.DetectableEffect`, or the high and low of a frame row (its
    ``df`` given)."""
    if isinstance(mde, tuple):
        high, low = mde
        if high == high and low == low:
            return f"about x{fmt_sig(high)} / x{fmt_sig(low)} {estimate_words(df)}"
        return f"none: {note}" if note else ""
    if mde is None:
        return ""
    if not mde.testable:
        return f"none: {mde.reason}"
    if mde.se == 0:
        return "any change (no spread within the cells)"
    size = (f"x{fmt_sig(mde.high)} / x{fmt_sig(mde.low)}" if mde.log
            else f"±{fmt_sig(mde.high)} {mde.unit}".rstrip())
    return f"about {size} {estimate_words(mde.df if mde.df is not None else math.nan)}"


def simple_effects(result: FactorialResult) -> Table:
    """The simple effects table (:meth:`FactorialResult.simple_frame`'s rows): each row's
    estimate and interval, what it estimates and how it was computed (the A/B table's rule for
    a two-cell contrast), its detectable effect when ``~``."""
    notes = Footnotes()
    s = result.simple_effects
    mechanism = "mechanism" in s and any(s["mechanism"])
    cols = [Column(c) for c in result.per] + [
        Column("factor"), Column("at"), Column("ratio" if result.log else "effect", right=True),
        Column(_ci_header(result.interval_words(simple=True))),
        Column("detectable (80% power)"),
        Column("p", right=True), Column("p Holm", right=True), Column("runs", right=True),
        Column("verdict")] + ([Column("mechanism (low -> high)")] if mechanism else [])
    rows = []
    methods = list(dict.fromkeys(s["method"])) if len(s) else []
    for _, r in s.iterrows():
        method = notes.mark([f"computed {r['method']}"]) if len(methods) > 1 else ""
        rows.append((*(level_text(r[c]) for c in result.per),
                     f"{r['factor']} {method}".rstrip(), r["at"], fmt_sig(r["effect"]),
                     _interval(r["ci_low"], r["ci_high"], r["not_estimable"]),
                     detectable_text((r["mde_high"], r["mde_low"]), r["mde_note"],
                                     r["df_error"])
                     if r["verdict"] == Verdict.NO_CHANGE else "",
                     _p(r["p_value"]), _p(r["p_value_holm"]), str(r["n_runs"]),
                     _verdict(result.reported_verdict(r["verdict"], r["level_key"],
                                                      r["cap_affected"]), r["warnings"], notes),
                     *([r["mechanism"].text()] if mechanism else [])))
    how = f"; {methods[0]}" if len(methods) == 1 else ""
    return Table(tuple(cols), tuple(rows), "simple effects (each factor at each level of the "
                 "other, where the interaction is significant; Holm over the levels of the "
                 f"other factor, {result.interval_words(simple=True)}){how}",
                 tuple(notes.items))
