"""Comparisons (:class:`perfkit.analysis.ComparisonTable`) as paper-ready tables
(:class:`perfkit.present.tables.Table`): one presentation for the CLI (text, Markdown, LaTeX)
and the report (HTML, Markdown and LaTeX files).

Formatting only: every number, verdict and warning comes from the result objects of
:mod:`perfkit.analysis`. Estimates print with their interval as ``3.1 [2.9, 3.4]``; a change
as ``+3.1% [+1.0%, +5.2%]`` whatever its verdict (a ``~`` row keeps its estimate and interval:
they say how sure), the verdict in a column of its own (``better``, ``~``, ``not testable``,
``no data``, an artefact of a cap), and for a ``~`` the smallest change the design could have
detected beside it; warnings become numbered notes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import cast

from perfkit.analysis import ComparisonTable
from perfkit.analysis.compare import detectable_df
from perfkit.analysis.core import not_estimable_text
from perfkit.formatting import (
    Footnotes,
    change_ci,
    fmt_p,
    fmt_sig,
    interval_text,
    level_text,
    pct,
    pct_change,
)
from perfkit.present.tables import Column, Table
from perfkit.vocabulary import SIGNIFICANT
from perfkit.warning import Code

#: a run's warnings that its latencies come from a closed loop (noted on latency metrics)
CLOSED_LOOP = (Code.WRK_CLOSED_LOOP, Code.CLOSED_LOOP)

__all__ = ["SIGNIFICANT", "change_text", "comparison", "detectable_text", "row_runs"]



def _p(value: float) -> str:
    return "" if value is None or value != value else fmt_p(value)


def change_text(verdict: str, ratio: float, low: float, high: float, mde=None) -> str:
    """The change with its interval, ``+3.1% [+1.0%, +5.2%]``, for every verdict that has one
    (a ``~`` too: its interval says how sure; ``mde`` is accepted for the old call and not
    printed: :func:`detectable_text` gives it a column). Without a finite ratio it says why:
    values <= 0 (no ratio), or failed runs ranked worst (a ratio of 0 or infinity is no size;
    its finite interval end is a bound); ``-`` without an estimate (no data)."""
    if verdict in SIGNIFICANT and ratio != ratio:
        return f"{verdict} (no ratio: values <= 0)"
    if math.isinf(ratio) or ratio == 0:
        bound = low if math.isinf(ratio) else high
        side = "at least" if math.isinf(ratio) else "at most"
        finite = 0 < bound < math.inf
        return (f"{side} {pct_change(bound)} (failed runs: no finite ratio)" if finite
                else "failed runs: no finite ratio")
    if ratio != ratio:
        return "-"
    return change_ci(ratio, low, high)


def detectable_text(mde) -> str:
    """``about +11.3% / -10.3% (estimate, 8 df)``: the changes a ``~`` row's design could
    have detected at its power (:class:`perfkit.stats.power.MinDetectable`, or a t test's
    :class:`perfkit.stats.tpower.DetectableEffect`), an estimate from the runs' spread on the
    df it rests on (:func:`perfkit.analysis.compare.detectable_df`); empty for another row."""
    if mde is not None and getattr(mde, "any_change", False):
        return "any change (the runs had no run-to-run spread)"
    if mde is None or not mde.testable:
        return ""
    return (f"about {pct_change(mde.ratio_high)} / {pct_change(mde.ratio_low)} "
            f"{estimate_words(detectable_df(mde))}")


def estimate_words(df: float) -> str:
    """``(estimate, 2.4 df)``: what a smallest detectable change is, with the df of the
    spread it rests on (at 2 df that spread lies between 0.16 and 1.9 times the true one in
    95% of designs)."""
    if df != df:
        return "(estimate)"
    return f"(estimate, {f'{df:.0f}' if df >= 10 else fmt_sig(df, 2)} df)"


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
                     if w.code in CLOSED_LOOP}, key=str) if m.is_latency else []
    mark = notes.mark([*closed, *table.warnings])
    holm = f", Holm over {table.family} rows" if table.family > 1 else ""
    unit = f", {m.unit}" if m.unit else ""
    title = (f"{m.name} ({m.better} is better{unit}){mark}: medians of runs with "
             f"{pct(table.confidence)} CIs; change new/base with its {table.interval_words()}; "
             f"alpha {table.alpha:g}{holm}\nbase: {table.base} ({_arm_runs(table, 0)})\n"
             f"new:  {table.new} ({_arm_runs(table, 1)})")
    labels = [k for k, _ in table.rows[0].labels] if table.rows else []
    # the caption says what is held; what a row estimates is a note on its first cell (a
    # column would widen every row by a sentence)
    shown = [k for k in labels if not k.startswith("held_") and k != "estimand"]
    cols = [Column(k) for k in table.keys] + [Column(k) for k in shown]
    power = next((f" ({r.mde.power:.0%} power)" for r in table.rows if r.mde is not None), "")
    detect = any(detectable_text(r.mde) for r in table.rows)  # a column only when one has it
    cols += [Column("base", m.unit, True), Column("new", m.unit, True), Column("vs base"),
             Column("verdict"), *([Column(f"detectable{power}")] if detect else []),
             Column("p", right=True), Column("p Holm", right=True), Column("runs")]
    mechanism = any(r.mechanism for r in table.rows)  # some run recorded what the server counted
    if mechanism:
        cols.append(Column("mechanism (base -> new)"))
    rows = []
    for row in table.rows:
        c = row.comparison
        extra = [cast(str, v) for k, v in row.labels if k in shown]  # only held_ ones are None
        why = row.not_estimable()
        keys = [level_text(v) for v in row.key]
        estimand = dict(row.labels).get("estimand")
        if estimand and keys:
            keys[0] = f"{keys[0]} {notes.mark(f'estimates the {estimand}')}"
        rows.append((*keys, *extra,
                     _median(c.median_base, c.median_base_ci_low, c.median_base_ci_high,
                             why["median_base"]),
                     _median(c.median_new, c.median_new_ci_low, c.median_new_ci_high,
                             why["median_new"]),
                     _change(row), row.reported_verdict,
                     *([detectable_text(row.mde)] if detect else []),
                     _p(c.p_value) or "-", _p(row.p_adjusted) or "-",
                     f"{c.n_base} vs {c.n_new} {notes.mark([*row.warnings, *_without(row)])}"
                     .rstrip(), *([row.mechanism.text()] if mechanism else [])))
    return Table(tuple(cols), tuple(rows), title, tuple(notes.items))


def _change(row) -> str:
    """The change column: the change with its interval (or why it is not estimable); for a
    row whose values sit on a known cap (its change is the cap's artefact, no size of the
    setting: the verdict says) the runs that stalled on it, side by side, with Fisher's test
    (:mod:`perfkit.analysis.core._stalls`)."""
    c = row.comparison
    if row.caps_ms:  # no size of the setting; what the runs show: how many stalled
        return "; ".join(f"runs stalled on {x.cap_ms:g} ms: {x.stalled_base}/{x.n_base} -> "
                         f"{x.stalled_new}/{x.n_new} (p Holm {fmt_p(x.p_adjusted)})"
                         for x in row.stalls)
    why = row.not_estimable()["ratio"]
    if why:
        return f"{pct_change(c.ratio)} ({not_estimable_text(why)})"
    return change_text(row.verdict, c.ratio, c.ratio_ci_low, c.ratio_ci_high)


def _median(est: float, low: float, high: float, why: str) -> str:
    return f"{fmt_sig(est)} ({not_estimable_text(why)})" if why else interval_text(est, low, high)


def _without(row) -> list[str]:
    """The row's result without its short runs (the sensitivity comparison), as a note."""
    return [row.sensitivity_note] if row.sensitivity_note else []
