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
from perfkit.analysis.caps import is_artefact
from perfkit.analysis.effects import FactorialResult
from perfkit.analysis.scaling import MODEL_NAMES, ScalingResult, ScalingTable, SloTable
from perfkit.formatting import (
    Footnotes,
    fmt_ci,
    fmt_num,
    fmt_p,
    fmt_sig,
    level_text,
    pct,
    pct_change,
)
from perfkit.model import percentile_label
from perfkit.scaling.littles import FLAGS, LITTLE_TOLERANCE
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
        return f"{fmt_sig(est, digits)} (no CI)"
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
                     f"{c.n_base} vs {c.n_new} {notes.mark([*row.warnings, *_without(row)])}"
                     .rstrip()))
    return Table(tuple(cols), tuple(rows), title, tuple(notes.texts))


def _without(row) -> list[str]:
    """The row's result without its short runs (the sensitivity comparison), as a note."""
    s = row.sensitivity
    if s is None or not (row.n_short_base or row.n_short_new):
        return []
    bounds = (f"[{pct_change(s.ratio_ci_low)}, {pct_change(s.ratio_ci_high)}]"
              if s.ratio_ci_low == s.ratio_ci_low else "[no CI]")
    change = f"{pct_change(s.ratio)} {bounds}" if s.ratio == s.ratio else "no ratio"
    return [f"{level_text(', '.join(map(str, row.key))) or 'the row'} without its short runs "
            f"({s.n_base} vs {s.n_new} runs): {change}, p {_p(s.p_value) or '-'}: "
            f"{row.sensitivity_verdict or '-'}"]


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
        share = "-" if r["variation_pct"] != r["variation_pct"] else fmt_sig(r["variation_pct"])
        cells = [*(level_text(r[c]) for c in result.per), term,
                 "" if error else fmt_sig(r[est[0]]),
                 "" if error else f"[{fmt_sig(r[est[1]])}, {fmt_sig(r[est[2]])}]",
                 share, _p(r["p_value"])]
        if result.per:
            cells.append(_p(r.get("p_value_holm")))
        cells.append(_verdict(r["verdict"], result.level_warnings.get(keys[i], ()), notes))
        rows.append(tuple(cells))
    out = [Table(tuple(cols), tuple(rows), title, tuple(notes.texts))]
    if len(result.simple_effects):
        out.append(_simple(result))
    return out


def _verdict(verdict: str, warnings: Sequence[str], notes: Footnotes) -> str:
    """A verdict, with the mark of the cap warnings when it is an artefact."""
    return f"{verdict} {notes.mark(warnings)}".rstrip() if is_artefact(verdict) else verdict


def _simple(result: FactorialResult) -> Table:
    notes = Footnotes()
    s = result.simple_effects
    cols = [Column(c) for c in result.per] + [
        Column("factor"), Column("at"), Column("ratio" if result.log else "effect", right=True),
        Column(f"{pct(result.confidence)} CI"), Column("p", right=True),
        Column("p Holm", right=True), Column("runs", right=True), Column("verdict")]
    rows = [(*(level_text(r[c]) for c in result.per), r["factor"], r["at"],
             fmt_sig(r["effect"]), f"[{fmt_sig(r['ci_low'])}, {fmt_sig(r['ci_high'])}]",
             _p(r["p_value"]), _p(r["p_value_holm"]), str(r["n_runs"]),
             _verdict(r["verdict"], result.level_warnings.get(r["level_key"], ()), notes))
            for _, r in s.iterrows()]
    return Table(tuple(cols), tuple(rows), "simple effects (each factor at each level of the "
                 "other, where the interaction is significant; Holm over the levels of the "
                 "other factor)", tuple(notes.texts))


# -- scaling ------------------------------------------------------------------------------
def _label(by: Sequence[str], key: Sequence) -> str:
    return "  ".join(f"{k}={level_text(v)}" for k, v in zip(by, key, strict=True)) or "all runs"


def scaling(table: ScalingTable, littles: bool = True,
            threats: Sequence[str] = ()) -> list[Table]:
    """Per configuration: the model's parameters with CIs, then (with ``littles``) Little's law
    per level. ``threats``: the threats to validity that bear on the fit (a drift, blocks that
    differ: :func:`perfkit.analysis.validity.threats_for`), noted beside a claimed N*."""
    out = []
    for r in table.results:
        out.append(_model(r, table, threats))
        if littles and len(r.littles):
            out.append(_littles(r))
    return out


def _model(r: ScalingResult, table: ScalingTable, threats: Sequence[str] = ()) -> Table:
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
        interval = f"[{fmt_sig(p['ci_low'])}, {fmt_sig(p['ci_high'])}]"
        if p["parameter"] == "n_star":
            interval += " " + notes.mark([fit.n_star_reason, *fit.n_star_warnings, *threats])
        elif p["ci_method"] == "percentile":
            interval += " " + notes.mark(f"{p['parameter']}: a percentile interval of the "
                                         "refits (on its bound, where bootstrap-t is "
                                         "degenerate)")
        rows.append((name, fmt_sig(p["estimate"]), interval))
    if fit.n_star is None:
        rows.append(("N*", "-", "no peak claimed " + notes.mark(r.reason or fit.n_star_reason)))
    rest = [w for w in fit.warnings if w not in fit.n_star_warnings]
    rows.append((f"residual SE [{unit}]" if unit else "residual SE", fmt_sig(fit.residual_se),
                 f"({fit.n_obs} runs, {fit.dof} df) {notes.mark(rest)}".rstrip()))
    return Table(cols, tuple(rows), title, tuple(notes.texts))


def _littles(r: ScalingResult) -> Table:
    notes = Footnotes()
    locust = bool((r.rows.frame["tool"] == "locust").any())
    rows = _littles_rows(r, notes, locust, ())
    return Table(_littles_columns(r.n_column, locust, ()), tuple(rows),
                 f"{_label(r.by, r.key)}: Little's law (medians of runs)", tuple(notes.texts))


def littles(table: ScalingTable) -> Table:
    """Little's law of every configuration and level in one table (medians of runs), each flag
    counted with its meaning as a note; the think-time column only with Locust runs."""
    notes = Footnotes()
    locust = any((r.rows.frame["tool"] == "locust").any() for r in table.results)
    by = table.results[0].by if table.results else ()
    rows = [row for r in table.results for row in _littles_rows(r, notes, locust, by)]
    title = (f"Little's law per configuration and {table.n_column} (medians of runs): "
             f"{'X(R+Z)/N' if locust else 'X*R/N'} is about 1 (within "
             f"+-{LITTLE_TOLERANCE:.0%}) when every {table.n_column[:-1]} holds one request at "
             "a time")
    return Table(_littles_columns(table.n_column, locust, by), tuple(rows), title,
                 tuple(notes.texts))


def _littles_columns(n_column: str, locust: bool, by: Sequence[str]) -> tuple[Column, ...]:
    cols = [*(Column(c) for c in by), Column(n_column, right=True), Column("runs", right=True),
            Column("X", "req/s", True), Column("R", "ms", True),
            Column("X(R+Z)/N" if locust else "X*R/N", right=True)]
    cols += [Column("Z = N/X-R", "ms", True)] if locust else []
    return (*cols, Column("flags"))


def _littles_rows(r: ScalingResult, notes: Footnotes, locust: bool,
                  by: Sequence[str]) -> list[tuple[str, ...]]:
    rows = []
    for _, row in r.littles.iterrows():
        flags = [(f, int(row[f"runs_{f}"])) for f in FLAGS if row.get(f"runs_{f}", 0)]
        marks = " ".join(f"{f} x{n} {notes.mark(f'{f}: {FLAGS[f]}')}" for f, n in flags)
        cells = [*(level_text(row[c]) for c in by), level_text(row[r.n_column]),
                 str(int(row["runs"])), fmt_sig(row["throughput_rps"]),
                 fmt_sig(row["latency_mean_ms"]), fmt_sig(row["ratio"])]
        if locust:
            cells.append(fmt_sig(row["implied_think_time_ms"]))
        rows.append(tuple(cells + [marks or "ok"]))
    return rows


def bracket_text(last_pass: float | None, first_fail: float | None,
                 inconclusive: Sequence[float] = ()) -> str:
    """The SLO bracket in words: ``[30000, 45000] req/s``; an open side as ``below the lowest
    rate`` / ``none failed``; with inconclusive rates left open (``inconclusive``:
    :attr:`~perfkit.analysis.scaling.SloBracket.inconclusive_rps`) it says so, e.g.
    ``>= 30000 req/s; 45000 inconclusive: run more there``."""
    def missing(v: float | None) -> bool:
        return v is None or v != v

    low = "below the lowest rate" if missing(last_pass) else fmt_num(last_pass)
    if inconclusive and missing(first_fail) and not missing(last_pass):
        text = f">= {low} req/s"
    else:
        high = "none failed" if missing(first_fail) else fmt_num(first_fail)
        text = f"[{low}, {high}] req/s"
    if inconclusive:
        text += (f"; {', '.join(fmt_num(r) for r in inconclusive)} inconclusive: run more "
                 "there")
    return text


def slo(table: SloTable) -> list[Table]:
    """Per configuration: the bracket, then the verdict at every offered rate with its runs
    counted by status (kept up, short, saturated; failed when any failed), as the run-status
    rule judged them. A rate's warning already stated for the whole bracket (the bracket's
    "at 5000 req/s, ...") is marked with the bracket's note, not repeated."""
    q = f"p{percentile_label(table.percentile).replace('_', '.')}"
    out = []
    any_failed = any(v.n_failed for b in table.brackets for v in b.bracket.rates)
    for b in table.brackets:
        notes = Footnotes()
        common = set.intersection(*(set(v.warnings) for v in b.bracket.rates))
        marks = notes.mark([*table.warnings, *b.bracket.warnings, *sorted(common)])
        answer = bracket_text(*b.bracket.bracket, b.inconclusive_rps)
        title = (f"{_label(b.by, b.key)} ({b.n_runs} runs): SLO {q} < {fmt_num(table.slo_ms)} "
                 f"ms, bracket {answer} {marks}").rstrip()
        rows = []
        for v in b.bracket.rates:
            extra = [notes.mark(_stated(w, notes.texts)) for w in v.warnings if w not in common]
            if v.verdict != "pass":
                extra.insert(0, notes.mark(f"{fmt_num(v.rate_rps)} req/s: {v.reason}"))
            counts = [str(v.n_kept_up), str(v.n_short), str(v.n_saturated)]
            rows.append((fmt_num(v.rate_rps), *counts, *([str(v.n_failed)] if any_failed else []),
                         interval_text(v.estimate_ms, v.ci_low_ms, v.ci_high_ms),
                         " ".join([v.verdict, *dict.fromkeys(extra)])))
        cols = (Column("rate", "req/s", True), Column("kept up", right=True),
                Column("short", right=True), Column("saturated", right=True),
                *([Column("failed", right=True)] if any_failed else []),
                Column(f"{q} with {pct(table.confidence)} CI", "ms", True), Column("verdict"))
        out.append(Table(cols, tuple(rows), title, tuple(notes.texts)))
    return out


def _stated(warning: str, stated: Sequence[str]) -> str:
    """``warning``, or the note already stated that holds it word for word."""
    return next((s for s in stated if warning in s), warning)


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
