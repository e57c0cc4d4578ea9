"""Analysis results as paper-ready tables (:class:`perfkit.tables.Table`): one presentation for
the CLI (text, Markdown, LaTeX) and the report (HTML, Markdown and LaTeX files).

Formatting only: every number, verdict and warning comes from the result objects of
:mod:`perfkit.analysis`. Estimates print with their interval as ``3.1 [2.9, 3.4]``; a change
as ``+3.1% [+1.0%, +5.2%]`` when the analysis calls it significant, else its verdict (``~``,
``not testable``, ``no data``); warnings become numbered notes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from perfkit.analysis import ComparisonTable
from perfkit.analysis.effects import FactorialResult
from perfkit.analysis.scaling import MODEL_NAMES, ScalingResult, ScalingTable, SloTable
from perfkit.formatting import Footnotes, fmt_ci, fmt_num, fmt_p, level_text, pct, pct_change
from perfkit.model import percentile_label
from perfkit.scaling.littles import FLAGS
from perfkit.tables import Column, Table

SIGNIFICANT = ("better", "worse")


def _p(value: float) -> str:
    return "" if value is None or value != value else fmt_p(value)


def interval_text(est: float, low: float, high: float, digits: int = 3) -> str:
    """``3.1 [2.9, 3.4]``; ``3.1 (no CI)`` when too few runs bound the interval (a footnote
    says how many it needs); ``-`` without an estimate; ``failed run`` when the median is a
    run ranked worst (failed: no value)."""
    if est != est:
        return "-"
    if math.isinf(est):
        return "failed run"
    if math.isinf(low) or math.isinf(high):
        return f"{fmt_num(est, digits)} (no CI)"
    return fmt_ci(est, low, high, digits=digits)


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
        return f"{pct_change(ratio)} [{pct_change(low)}, {pct_change(high)}]"
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
    rows = []
    for row in table.rows:
        c = row.comparison
        extra = [v for k, v in row.labels if k in shown]
        rows.append((*(level_text(v) for v in row.key), *extra,
                     interval_text(c.median_base, c.median_base_ci_low, c.median_base_ci_high),
                     interval_text(c.median_new, c.median_new_ci_low, c.median_new_ci_high),
                     change_text(row.verdict, c.ratio, c.ratio_ci_low, c.ratio_ci_high,
                                 row.mde),
                     _p(c.p_value) or "-", _p(row.p_adjusted) or "-",
                     f"{c.n_base} vs {c.n_new} {notes.mark(row.warnings)}".rstrip()))
    return Table(tuple(cols), tuple(rows), title, tuple(notes.texts))


# -- factorial effects ----------------------------------------------------------------------------
def factorial(result: FactorialResult) -> list[Table]:
    """The effects table, and the simple effects where an interaction is significant. A
    warning about one load level (values on a timeout cap) is marked on that level's
    verdicts, the others after the metric's name."""
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
    cols = [Column(c) for c in result.per] + [
        Column("term"), Column("ratio" if result.log else "effect",
                               "" if result.log else result.metric.unit, True),
        Column(f"{pct(result.confidence)} CI"), Column("variation", "%", True),
        Column("p", right=True)] + ([Column("p Holm", right=True)] if result.per else []) + [
        Column("verdict")]
    rows = []
    for i, r in frame.iterrows():
        error = r["term"] in ("error", "block")
        term = r["term"]
        if not error and not r["interpretable_alone"]:
            term += " " + notes.mark("not interpretable alone: its interaction is significant "
                                     "(see the simple effects)")
        share = "-" if r["variation_pct"] != r["variation_pct"] else f"{r['variation_pct']:.1f}"
        cells = [*(level_text(r[c]) for c in result.per), term,
                 "" if error else fmt_num(r[est[0]], 3),
                 "" if error else f"[{fmt_num(r[est[1]], 3)}, {fmt_num(r[est[2]], 3)}]",
                 share, _p(r["p_value"])]
        if result.per:
            cells.append(_p(r.get("p_value_holm")))
        cells.append(_verdict(r["verdict"], result.level_warnings.get(keys[i], ())
                              if not error else (), notes, mde[i]))
        rows.append(tuple(cells))
    out = [Table(tuple(cols), tuple(rows), title, tuple(notes.texts))]
    if len(result.simple_effects):
        out.append(_simple(result))
    return out


def _verdict(verdict: str, warnings: Sequence[str], notes: Footnotes, mde=None) -> str:
    """A verdict, with the mark of its cap warnings (an artefact, or a count or rate a cap
    affects); a ``~`` with the smallest effect the design could have detected, or why none
    (``mde``: :class:`perfkit.stats.tpower.DetectableEffect`)."""
    if verdict == "~" and mde is not None:
        verdict = f"~ ({mde.statement})"
    return f"{verdict} {notes.mark(warnings)}".rstrip() if warnings else verdict


def _simple(result: FactorialResult) -> Table:
    notes = Footnotes()
    s = result.simple_effects
    cols = [Column(c) for c in result.per] + [
        Column("factor"), Column("at"), Column("ratio" if result.log else "effect", right=True),
        Column(f"{pct(result.confidence)} CI"), Column("p", right=True),
        Column("p Holm", right=True), Column("runs", right=True), Column("verdict")]
    rows = [(*(level_text(r[c]) for c in result.per), r["factor"], r["at"],
             fmt_num(r["effect"], 3), f"[{fmt_num(r['ci_low'], 3)}, {fmt_num(r['ci_high'], 3)}]",
             _p(r["p_value"]), _p(r["p_value_holm"]), str(r["n_runs"]),
             _verdict(r["verdict"], r["warnings"], notes, mde))
            for (_, r), mde in zip(s.iterrows(), result.simple_detectable(), strict=True)]
    return Table(tuple(cols), tuple(rows), "simple effects (each factor at each level of the "
                 "other, where the interaction is significant; Holm over the levels of the "
                 "other factor)", tuple(notes.texts))


# -- scaling ------------------------------------------------------------------------------
def _label(by: Sequence[str], key: Sequence) -> str:
    return "  ".join(f"{k}={level_text(v)}" for k, v in zip(by, key, strict=True)) or "all runs"


def scaling(table: ScalingTable, littles: bool = True) -> list[Table]:
    """Per configuration: the model's parameters with CIs, then (with ``littles``) Little's law
    per level."""
    out = []
    for r in table.results:
        out.append(_model(r, table))
        if littles and len(r.littles):
            out.append(_littles(r))
    return out


def _model(r: ScalingResult, table: ScalingTable) -> Table:
    notes = Footnotes()
    tools = ",".join(sorted(r.rows.frame["tool"].unique()))
    levels = sorted(r.rows.frame[r.n_column].dropna().unique())
    fit, unit = r.fit, r.metric.unit
    scheme = f"{fit.bootstrap} bootstrap" if fit is not None else "bootstrap"
    title = (f"{_label(r.by, r.key)}: {r.metric.name} vs {r.n_column} ({tools}, {len(r.rows)} "
             f"runs at {', '.join(level_text(v) for v in levels)}); {pct(table.confidence)} "
             f"CIs from {table.n_resamples} {scheme} refits, seed {table.seed}: bootstrap-t, "
             f"percentile where marked{notes.mark(table.warnings)}")
    cols = (Column(MODEL_NAMES.get(r.model, "model")), Column("estimate", right=True),
            Column(f"{pct(table.confidence)} CI"))
    if fit is None:
        return Table(cols, (("none", "-", notes.mark(r.reason)),), title, tuple(notes.texts))
    rows = []
    for p in fit.parameters():
        name = {"gamma": f"gamma [{unit}/N]" if unit else "gamma", "n_star": "N*"}.get(
            p["parameter"], p["parameter"])
        interval = f"[{fmt_num(p['ci_low'])}, {fmt_num(p['ci_high'])}]"
        if p["parameter"] == "n_star":
            interval += " " + notes.mark([fit.n_star_reason, *fit.n_star_warnings])
        elif p["ci_method"] == "percentile":
            interval += " " + notes.mark(f"{p['parameter']}: a percentile interval of the "
                                         "refits (on its bound, where bootstrap-t is "
                                         "degenerate)")
        rows.append((name, fmt_num(p["estimate"]), interval))
    if fit.n_star is None:
        rows.append(("N*", "-", "no peak claimed " + notes.mark(r.reason or fit.n_star_reason)))
    rest = [w for w in fit.warnings if w not in fit.n_star_warnings]
    rows.append((f"residual SE [{unit}]" if unit else "residual SE", fmt_num(fit.residual_se),
                 f"({fit.n_obs} runs, {fit.dof} df) {notes.mark(rest)}".rstrip()))
    return Table(cols, tuple(rows), title, tuple(notes.texts))


def _littles(r: ScalingResult) -> Table:
    notes = Footnotes()
    locust = bool((r.rows.frame["tool"] == "locust").any())
    rows = []
    for _, row in r.littles.iterrows():
        flags = [(f, int(row[f"runs_{f}"])) for f in FLAGS if row.get(f"runs_{f}", 0)]
        marks = " ".join(f"{f} x{n} {notes.mark(f'{f}: {FLAGS[f]}')}" for f, n in flags)
        cells = [level_text(row[r.n_column]), str(int(row["runs"])), fmt_num(row["throughput_rps"]),
                 fmt_num(row["latency_mean_ms"]), fmt_num(row["ratio"], 3)]
        if locust:
            cells.append(fmt_num(row["implied_think_time_ms"]))
        rows.append(tuple(cells + [marks or "ok"]))
    cols = [Column(r.n_column, right=True), Column("runs", right=True),
            Column("X", "req/s", True), Column("R", "ms", True),
            Column("X(R+Z)/N" if locust else "X*R/N", right=True)]
    cols += [Column("Z = N/X-R", "ms", True)] if locust else []
    cols += [Column("flags")]
    return Table(tuple(cols), tuple(rows), f"{_label(r.by, r.key)}: Little's law "
                                           "(medians of runs)", tuple(notes.texts))


def slo(table: SloTable) -> list[Table]:
    """Per configuration: the bracket, then the verdict at every offered rate."""
    q = f"p{percentile_label(table.percentile).replace('_', '.')}"
    out = []
    for b in table.brackets:
        notes = Footnotes()
        lo, hi = (fmt_num(v) if v is not None else "-" for v in b.bracket.bracket)
        common = set.intersection(*(set(v.warnings) for v in b.bracket.rates))
        marks = notes.mark([*table.warnings, *b.bracket.warnings, *sorted(common)])
        title = (f"{_label(b.by, b.key)} ({b.n_runs} runs): SLO {q} < {fmt_num(table.slo_ms)} "
                 f"ms, bracket [{lo}, {hi}] req/s {marks}").rstrip()
        rows = []
        for v in b.bracket.rates:
            extra = [notes.mark(w) for w in v.warnings if w not in common]
            if v.verdict != "pass":
                extra.insert(0, notes.mark(f"{fmt_num(v.rate_rps)} req/s: {v.reason}"))
            rows.append((fmt_num(v.rate_rps), f"{v.n_kept_up}/{v.n_runs}",
                         interval_text(v.estimate_ms, v.ci_low_ms, v.ci_high_ms, 4),
                         " ".join([v.verdict, *extra])))
        cols = (Column("rate", "req/s", True), Column("kept up", right=True),
                Column(f"{q} with {pct(table.confidence)} CI", "ms", True), Column("verdict"))
        out.append(Table(cols, tuple(rows), title, tuple(notes.texts)))
    return out


# -- any tidy frame ------------------------------------------------------------------------
_SUFFIX_UNITS = (("_bytes_per_s", "B/s"), ("_rps", "req/s"), ("_ms", "ms"), ("_us", "us"),
                 ("_pct", "%"), ("_percent", "%"), ("_bytes", "B"), ("_s", "s"))


def column(name: str, numeric: bool) -> Column:
    """A tidy column name as a header with its unit: ``median_base_ms`` -> ``median base [ms]``."""
    for suffix, unit in _SUFFIX_UNITS:
        if name.endswith(suffix) and len(name) > len(suffix):
            return Column(name[: -len(suffix)].replace("_", " "), unit, numeric)
    return Column(name.replace("_", " "), "", numeric)


def frame(table, title: str = "", digits: int = 3, hide: Sequence[str] = ("warnings",)) -> Table:
    """Any tidy frame as a :class:`Table`: units from the column suffixes, floats to ``digits``
    significant digits, whole numbers without a decimal point, missing as blank."""
    import pandas as pd

    shown = table.drop(columns=[c for c in hide if c in table])
    cols, cells = [], []
    for name in shown.columns:
        values = shown[name]
        numeric = pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)
        cols.append(column(str(name), numeric))
        cells.append(["" if v is None or v is pd.NA or (isinstance(v, float) and v != v)
                      else fmt_num(v, digits) if numeric else level_text(v) for v in values])
    rows = tuple(zip(*cells, strict=True)) if cells else ()
    return Table(tuple(cols), tuple(tuple(r) for r in rows), title)
