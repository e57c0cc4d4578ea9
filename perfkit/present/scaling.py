"""Scaling results as paper-ready tables (:class:`perfkit.present.tables.Table`): the scalability
models with their parameters, Little's law, and the SLO bracket with the verdict at every offered
rate. One presentation for ``perfkit scaling`` and the report's scaling page.

Formatting only: every number, verdict and warning comes from
:mod:`perfkit.analysis.scaling._scaling`.
"""

from __future__ import annotations

from collections.abc import Sequence

from perfkit.analysis.core import not_estimable_text
from perfkit.analysis.scaling import (
    FLAGS,
    LITTLE_TOLERANCE,
    MODEL_NAMES,
    ScalingResult,
    ScalingTable,
    SloTable,
    rate_reason,
    stated,
)
from perfkit.analysis.scaling import not_estimable as slo_not_estimable
from perfkit.formatting import Footnotes, fmt_num, fmt_sig, level_text, pct
from perfkit.model import percentile_label
from perfkit.present.compare import _median
from perfkit.present.tables import Column, Table
from perfkit.vocabulary import RunStatus, SloVerdict
from perfkit.warning import Warn


def _label(by: Sequence[str], key: Sequence) -> str:
    return "  ".join(f"{k}={level_text(v)}" for k, v in zip(by, key, strict=True)) or "all runs"


def scaling(table: ScalingTable, littles: bool = True,
            threats: Sequence[str] = ()) -> list[Table]:
    """Per configuration: the model's parameters with CIs, then (with ``littles``) Little's law
    per level. ``threats``: the threats to validity that bear on the fit (a drift, blocks that
    differ: :func:`perfkit.analysis.context._validity.threats_for`), noted beside a claimed N*."""
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
        return Table(cols, (("none", "-", notes.mark([] if r.reason is None else r.reason)),),
                     title, tuple(notes.items))
    rows = []
    for p in fit.parameters():
        name = {"gamma": f"gamma [{unit}/N]" if unit else "gamma", "n_star": "N*"}.get(
            p["parameter"], p["parameter"])
        interval = f"[{fmt_sig(p['ci_low'])}, {fmt_sig(p['ci_high'])}]"
        if p["parameter"] == "n_star":
            if r.n_star_not_estimable:
                interval = not_estimable_text(r.n_star_not_estimable)
            scope = [f"N* is {r.peak_scope}"] if r.peak_scope else []
            reason = [fit.n_star_reason] if fit.n_star_reason is not None else []
            interval += " " + notes.mark([*scope, *reason, *fit.n_star_warnings, *threats])
        elif p["ci_method"] == "percentile":
            interval += " " + notes.mark(f"{p['parameter']}: a percentile interval of the "
                                         "refits (on its bound, where bootstrap-t is "
                                         "degenerate)")
        rows.append((name, fmt_sig(p["estimate"]), interval))
    if fit.n_star is None:
        why = r.reason or fit.n_star_reason
        rows.append(("N*", "-", "no peak claimed " + notes.mark([] if why is None else why)))
    rest = [w for w in fit.warnings if w not in fit.n_star_warnings]
    rows.append((f"residual SE [{unit}]" if unit else "residual SE", fmt_sig(fit.residual_se),
                 f"({fit.n_obs} runs, {fit.dof} df) {notes.mark(rest)}".rstrip()))
    return Table(cols, tuple(rows), title, tuple(notes.items))


def _littles(r: ScalingResult) -> Table:
    notes = Footnotes()
    locust = bool((r.rows.frame["tool"] == "locust").any())
    rows = _littles_rows(r, notes, locust, ())
    return Table(_littles_columns(r.n_column, locust, ()), tuple(rows),
                 f"{_label(r.by, r.key)}: Little's law (medians of runs)", tuple(notes.items))


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
                 tuple(notes.items))


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
    :attr:`~perfkit.analysis.scaling._scaling.SloBracket.inconclusive_rps`) it says so, e.g.
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
        marks = notes.mark([*table.warnings, *b.bracket.warnings, *sorted(common, key=str)])
        answer = bracket_text(*b.bracket.bracket, b.inconclusive_rps)
        title = (f"{_label(b.by, b.key)} ({b.n_runs} runs): SLO {q} < {fmt_num(table.slo_ms)} "
                 f"ms, bracket {answer} {marks}").rstrip()
        rows = []
        for v in b.bracket.rates:
            said = [n for n in notes.items if isinstance(n, Warn)]
            extra = [notes.mark(stated(w, said) or w) for w in v.warnings if w not in common]
            if v.verdict != SloVerdict.PASS:
                extra.insert(0, notes.mark(rate_reason(v)))
            counts = [str(v.n_kept_up), str(v.n_short), str(v.n_saturated)]
            rows.append((fmt_num(v.rate_rps), *counts, *([str(v.n_failed)] if any_failed else []),
                         _rate_value(v),
                         " ".join([v.verdict, *dict.fromkeys(extra)])))
        cols = (Column("rate", "req/s", True), Column("kept up", right=True),
                Column(RunStatus.SHORT, right=True), Column(RunStatus.SATURATED, right=True),
                *([Column(RunStatus.FAILED, right=True)] if any_failed else []),
                Column(f"{q} with {pct(table.confidence)} CI", "ms", True), Column("verdict"))
        out.append(Table(cols, tuple(rows), title, tuple(notes.items)))
    return out


def _rate_value(v) -> str:
    """A rate's percentile with its interval, or why the interval is not estimable."""
    return _median(v.estimate_ms, v.ci_low_ms, v.ci_high_ms, slo_not_estimable(v))

