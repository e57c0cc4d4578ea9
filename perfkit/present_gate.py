"""Gates, histories and plans as paper-ready tables (:class:`perfkit.tables.Table`), and a gate
as JUnit XML: one presentation for the CLI (``perfkit gate/history/plan``) and the report's
history page.

Formatting only: every number, status and reason comes from :mod:`perfkit.analysis.gate`,
:mod:`perfkit.analysis.history` and :mod:`perfkit.analysis.plan`.

JUnit XML (``perfkit gate --format junit``): one ``<testsuite>`` per gate, one ``<testcase>``
per metric and load level (``classname`` ``perfkit.gate.<metric>``, ``name`` the metric and
its load level). A regression is a ``<failure>``; an inconclusive row is ``<skipped>`` (CI test
reporters show it as neither passed nor failed, and the exit status 3 lets the job decide), as
is a row whose runs did not measure the metric (``no data``); a row where a side has no run
is an ``<error>``. The message states the change with its interval, the
threshold and, when inconclusive, the runs per arm needed.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from typing import Any

import pandas as pd

from perfkit.analysis.gate import (
    ERROR,
    INCONCLUSIVE,
    NO_DATA_GATE,
    PASS,
    REGRESSION,
    GateResult,
    GateRow,
)
from perfkit.analysis.history import HistoryAnalysis, HistoryGate
from perfkit.analysis.plan import Plan
from perfkit.formatting import (
    Footnotes,
    change_ci,
    fmt_p,
    fmt_sig,
    level_text,
    load_text,
    pct_change,
)
from perfkit.present import interval_text
from perfkit.tables import Column, Table

#: a gate's overall status as the headline of ``perfkit gate`` and JUnit XML write it (a CI
#: contract: ``perfkit gate: REGRESSION (exit 1; ...)``)
STATUS_TEXT = {PASS: "pass", REGRESSION: "REGRESSION", INCONCLUSIVE: "INCONCLUSIVE",
               ERROR: "ERROR", NO_DATA_GATE: NO_DATA_GATE.upper()}
#: a row's gate in a table, lower-case like every other verdict of a table
ROW_TEXT = {PASS: "pass", REGRESSION: "regression", INCONCLUSIVE: "inconclusive",
            ERROR: "error", NO_DATA_GATE: NO_DATA_GATE}


def _p(value: float) -> str:
    return "-" if value is None or value != value else fmt_p(value)


def change(ratio: float, low: float, high: float) -> str:
    """``+3.1% [+1.0%, +5.2%]``; without an interval only the estimate
    (:func:`perfkit.formatting.change_ci`)."""
    return change_ci(ratio, low, high)


def _median(est: float, low: float, high: float, unit: str) -> str:
    text = interval_text(est, low, high, 3)
    return text if text == "-" else f"{text} {unit}".rstrip()


def gate_status(g: GateRow, junit: bool = False) -> str:
    """A row's gate as a table writes it: ``regression``, ``pass (improvement)``,
    ``inconclusive (straddles threshold)`` ...; ``junit``: as the JUnit messages write it
    (``REGRESSION``, ``INCONCLUSIVE (straddles threshold)``, unchanged for CI reporters)."""
    word = (STATUS_TEXT if junit else ROW_TEXT)[g.status]
    plain = g.outcome in (REGRESSION, "no regression") or g.status == NO_DATA_GATE
    return word if plain else f"{word} ({g.outcome})"


def span(labels: Sequence[str]) -> str:
    """``v01..v07`` for a run of labels, ``v08`` for one."""
    return "..".join(dict.fromkeys((labels[0], labels[-1]))) if labels else ""


def key_text(keys: Sequence[str], key: Sequence) -> str:
    return " ".join(f"{k}={level_text(v)}" for k, v in zip(keys, key, strict=True))


# -- gate -------------------------------------------------------------------------------------
def table_warnings(result: GateResult) -> list[str]:
    """The comparisons' warnings once each; one that not every metric shares (the drift
    check) names its metric."""
    out: list[str] = []
    for t in result.tables:
        for w in t.warnings:
            shared = all(w in other.warnings for other in result.tables)
            out.append(w if shared else f"{t.metric.name}: {w}")
    return list(dict.fromkeys(out))


def gate(result: GateResult) -> Table:
    """The gate as one table: a row per metric and load level."""
    notes = Footnotes()
    keys = list(dict.fromkeys(k for g in result.rows for k in g.keys))
    warns = table_warnings(result)
    counts = result.counts()
    summary = ", ".join(f"{n} {ROW_TEXT[s]}" for s, n in counts.items() if n)
    n_base = max((t.n_base_runs for t in result.tables), default=0)
    n_new = max((t.n_new_runs for t in result.tables), default=0)
    title = (f"perfkit gate: {STATUS_TEXT[result.status]} (exit {result.exit_status}; "
             f"{summary or 'no rows'}): max regression {result.max_regression:.1%}, alpha "
             f"{result.alpha:g}, change new/base with its {1 - result.alpha:.0%} CI"
             f"{notes.mark([*result.warnings, *warns])}\n"
             f"base: {result.base} ({n_base} runs)\nnew:  {result.new} ({n_new} runs)")
    cols = [Column("metric"), *(Column(k) for k in keys), Column("base"), Column("new"),
            Column("change"), Column("threshold", right=True), Column("p Holm", right=True),
            Column("gate"), Column("why"), Column("runs")]
    rows = []
    for g in result.rows:
        c = g.row.comparison
        values = dict(zip(g.keys, g.row.key, strict=True))
        unit = g.metric.unit
        rows.append((g.metric.name, *(level_text(values.get(k, "")) for k in keys),
                     _median(c.median_base, c.median_base_ci_low, c.median_base_ci_high, unit),
                     _median(c.median_new, c.median_new_ci_low, c.median_new_ci_high, unit),
                     change(c.ratio, c.ratio_ci_low, c.ratio_ci_high),
                     pct_change(g.threshold_ratio), _p(g.row.p_adjusted), gate_status(g),
                     g.reason, f"{c.n_base} vs {c.n_new} {notes.mark(g.row.warnings)}".rstrip()))
    return Table(tuple(cols), tuple(rows), title, tuple(notes.texts))


def junit(result: GateResult) -> str:
    """The gate as JUnit XML (see the module docstring)."""
    counts = result.counts()
    attrs = {"tests": str(len(result.rows)), "failures": str(counts[REGRESSION]),
             "errors": str(counts[ERROR]),
             "skipped": str(counts[INCONCLUSIVE] + counts[NO_DATA_GATE]), "time": "0"}
    root = ET.Element("testsuites", {"name": "perfkit gate", **attrs})
    suite = ET.SubElement(root, "testsuite", {"name": f"perfkit gate: {result.new} vs "
                                                      f"{result.base}", **attrs})
    props = ET.SubElement(suite, "properties")
    for name, value in (("base", result.base), ("new", result.new),
                        ("max_regression", f"{result.max_regression:.1%}"),
                        ("alpha", f"{result.alpha:g}"), ("status", result.status),
                        ("exit_status", str(result.exit_status))):
        ET.SubElement(props, "property", {"name": name, "value": value})
    warns = [*result.warnings, *table_warnings(result)]
    for g in result.rows:
        where = key_text(g.keys, g.row.key)
        case = ET.SubElement(suite, "testcase", {
            "classname": f"perfkit.gate.{g.metric.name}",
            "name": f"{g.metric.name} {where}".strip(), "time": "0"})
        c = g.row.comparison
        message = f"{gate_status(g, True)}: {change(c.ratio, c.ratio_ci_low, c.ratio_ci_high)}: " \
                  f"{g.reason}"
        if g.status == REGRESSION:
            ET.SubElement(case, "failure", {"message": message, "type": "regression"}).text = \
                _details(g)
        elif g.status in (INCONCLUSIVE, NO_DATA_GATE):
            ET.SubElement(case, "skipped", {"message": message})
        elif g.status == ERROR:
            ET.SubElement(case, "error", {"message": message, "type": "no data"}).text = \
                _details(g)
        ET.SubElement(case, "system-out").text = _details(g)
    if warns:
        ET.SubElement(suite, "system-err").text = "\n".join(warns)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, "unicode") + "\n"


def _details(g: GateRow) -> str:
    c = g.row.comparison
    unit = g.metric.unit
    lines = [f"metric: {g.metric.name} ({g.metric.better} is better)",
             f"base: {_median(c.median_base, c.median_base_ci_low, c.median_base_ci_high, unit)}"
             f" ({c.n_base} runs)",
             f"new: {_median(c.median_new, c.median_new_ci_low, c.median_new_ci_high, unit)} "
             f"({c.n_new} runs)",
             f"change: {change(c.ratio, c.ratio_ci_low, c.ratio_ci_high)}; threshold "
             f"{pct_change(g.threshold_ratio)}; p {_p(c.p_value)}, p Holm {_p(g.row.p_adjusted)}",
             f"gate: {gate_status(g, True)}: {g.reason}"]
    return "\n".join(lines + [f"note: {w}" for w in g.row.warnings])


# -- history ----------------------------------------------------------------------------------
def series(analysis: HistoryAnalysis) -> list[Table]:
    """Per load level: every label's runs and median with its interval, and the change points."""
    out = []
    m = analysis.metric
    frame = analysis.to_frame()
    changes = analysis.change_frame()
    for s in analysis.series:
        where = key_text(analysis.keys, s.key)
        notes = Footnotes()
        marks = notes.mark([*analysis.warnings, *s.change.warnings])
        at = ", ".join(p for p in (where, load_text(analysis.load) if analysis.load else "")
                       if p)
        title = (f"{m.name} ({m.better} is better) over {len(s.points)} labels of "
                 f"{analysis.name}{' at ' + at if at else ''}: median of runs [interval "
                 f"(coverage)]; {len(s.change.change_points)} change point(s) at alpha "
                 f"{analysis.alpha:g}{marks}")
        part = _rows_of(frame, analysis.keys, s.key)
        rows = []
        for _, r in part.iterrows():
            est, lo, hi = (r[f"{c}{m.suffix}"] for c in ("median", "ci_low", "ci_high"))
            interval = "" if lo != lo else (f"[{fmt_sig(lo)}, {fmt_sig(hi)}] "
                                            f"({r['ci_coverage']:.1%})")
            rows.append((r["label"], r["time_utc"], f"{r['n_runs'] - r['n_failed']}"
                         + (f" (+{r['n_failed']} failed)" if r["n_failed"] else ""),
                         fmt_sig(est), interval, level_text(r["segment"]),
                         "yes" if r["change_point"] else ""))
        cols = (Column("label"), Column("time (UTC)"), Column("runs", right=True),
                Column("median", m.unit, True), Column("interval", m.unit),
                Column("segment", right=True), Column("change point"))
        out.append(Table(cols, tuple(rows), title, tuple(notes.texts)))
        out.append(change_points(changes, analysis, s.key))
    return out


def _rows_of(frame: pd.DataFrame, keys: Sequence[str], key: Sequence) -> pd.DataFrame:
    mask = pd.Series(True, index=frame.index)
    for k, v in zip(keys, key, strict=True):
        mask &= frame[k].astype(str).eq(level_text(v))
    return frame[mask]


def change_points(changes: pd.DataFrame, analysis: HistoryAnalysis, key: Sequence) -> Table:
    """The change points of one series: position, label, ratio after/before with CI, p."""
    m = analysis.metric
    part = _rows_of(changes, analysis.keys, key)
    s = next(x for x in analysis.series if tuple(x.key) == tuple(key))
    stop = s.change.stop_p_value
    title = (f"change points of {m.name}: E-divisive means, permutation p (next candidate's "
             f"p: {_p(stop)}); ratio after/before: the {s.change.ratio_estimator} (the "
             f"median of their pairwise ratios), with its {analysis.confidence:.0%} Moses CI; "
             "not the ratio of the medians of runs beside it, which pool every run")
    notes = Footnotes()
    found = {c.index: c for c in s.change.change_points}
    rows = [(str(int(r["position"])), r["label"], f"{r['label_before']} -> {r['label']}",
             f"{fmt_sig(r[f'median_before{m.suffix}'])} -> "
             f"{fmt_sig(r[f'median_after{m.suffix}'])} {m.unit}".rstrip(),
             change(r["ratio"], r["ratio_ci_low"], r["ratio_ci_high"]), _p(r["p_value"]),
             _p(r["p_value_adjacent"]), r["direction"],
             f"{r['support']} {notes.mark(found[int(r['position'])].warnings)}".rstrip())
            for _, r in part.iterrows()]
    if not rows:
        rows = [("-", "none", "", "", "", "", "", "", "")]
    cols = (Column("position", right=True), Column("label"), Column("between"),
            Column("median of runs before -> after"),
            Column("Hodges-Lehmann ratio after/before"),
            Column("p", right=True), Column("p adjacent", right=True), Column("direction"),
            Column("support"))
    return Table(cols, tuple(rows), title, tuple(notes.texts))


def history_gates(items: Sequence[HistoryGate], keys: Sequence[str],
                  max_regression: float, load: Sequence[tuple[str, Any]] = ()) -> Table:
    """Each label gated against the baseline labels before it (see analysis.history.gates);
    ``load``: the load point the runs share (:attr:`HistoryAnalysis.load`), in the title."""
    cols = [*(Column(k) for k in keys), Column("label"), Column("baseline"), Column("runs"),
            Column("change"), Column("gate"), Column("runs per arm needed", right=True)]
    rows = []
    for item in items:
        for g in item.result.rows:
            c = g.row.comparison
            need = g.runs_per_arm_needed
            rows.append((*(level_text(v) for v in item.key), item.label,
                         span(item.baseline),
                         f"{c.n_base} vs {c.n_new}",
                         change(c.ratio, c.ratio_ci_low, c.ratio_ci_high), gate_status(g),
                         "" if g.status != INCONCLUSIVE else (str(need) if need else "> 200")))
    metric = items[0].result.rows[0].metric.name if items and items[0].result.rows else ""
    title = (f"{metric}: each label gated against the labels before it in its segment (the "
             f"first label of a segment: the whole previous segment), max regression "
             f"{max_regression:.1%}" + (f", at {load_text(load)}" if load else ""))
    return Table(tuple(cols), tuple(rows), title)


# -- plan -------------------------------------------------------------------------------------
def plan(p: Plan) -> Table:
    """Runs per arm needed for the stated change, and what the current design detects."""
    notes = Footnotes()
    marks = notes.mark(p.warnings)
    holm = f", Holm over {p.family} rows" if p.family > 1 else ""
    title = (f"plan for {p.metric.name}: runs per arm to detect {pct_change(p.ratio)} with "
             f"{p.power:.0%} power at alpha {p.alpha:g}{holm}, at the run-to-run spread of "
             f"{' and '.join(p.sources)}{marks}")
    seen = len(p.sources) == 2
    cols = [*(Column(k) for k in p.keys), Column("runs now"), Column("spread (log sd)",
                                                                      right=True),
            Column(f"runs per arm for {pct_change(p.ratio)}", right=True),
            *([Column("change seen"), Column("runs per arm for it", right=True)] if seen
              else []),
            Column("power now", right=True), Column(f"now detects ({p.power:.0%} power)")]
    rows = []
    for r in p.rows:
        now = "-" if r.power_now.power is None else f"{r.power_now.power:.2f}"
        cur = r.current
        detects = ("any change" if cur.any_change else
                   f">= {pct_change(cur.ratio_high)} or <= {pct_change(cur.ratio_low)}"
                   if cur.testable else f"nothing {notes.mark(cur.reason)}")
        observed = ((pct_change(r.observed_ratio),
                     _need_text(r.needed_observed) if r.needed_observed else "-")
                    if seen else ())
        rows.append((*(level_text(v) for v in r.key),
                     f"{r.n_base} vs {r.n_new} {notes.mark(r.warnings)}".rstrip(),
                     f"{r.needed.log_sd:.3f}", _need_text(r.needed), *observed, now, detects))
    return Table(tuple(cols), tuple(rows), title, tuple(notes.texts))


def _need_text(needed) -> str:
    """``"36 (power 0.80)"``, or more than the most runs searched."""
    need = needed.runs_per_arm
    return (f"{need} (power {needed.power_stated:.2f})" if need is not None
            else f"> {needed.max_runs}")
