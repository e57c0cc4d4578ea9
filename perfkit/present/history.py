"""A history as paper-ready tables (:class:`perfkit.present.tables.Table`): each series with its
change points, and each label gated against the labels before it, for ``perfkit history``
and the report's history page.

Formatting only: every number and status comes from :mod:`perfkit.analysis.history._history`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from perfkit.analysis.compare import INCONCLUSIVE
from perfkit.analysis.history import HistoryAnalysis, HistoryGate
from perfkit.formatting import Footnotes, fmt_sig, level_text, load_text
from perfkit.present.gate import _p, change, gate_status, key_text, span
from perfkit.present.tables import Column, Table


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
                 f"{_level_text(s.change.alpha, analysis.alpha)}{marks}")
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
        out.append(Table(cols, tuple(rows), title, tuple(notes.items)))
        out.append(change_points(changes, analysis, s.key))
        out.append(recent(analysis, s.key))
    return out


def recent(analysis: HistoryAnalysis, key: Sequence) -> Table:
    """The test of a step in the newest labels of one series (:attr:`Series.recent`): the
    window, the labels before it, the ratio with its interval, p and the verdict; why the
    change points cannot see such a step, or why it cannot be tested, as notes."""
    s = next(x for x in analysis.series if tuple(x.key) == tuple(key))
    part = _rows_of(analysis.recent_frame(), analysis.keys, key)
    notes = Footnotes()
    r = s.recent
    holm = r is not None and r.family > 1
    rows = []
    for _, f in part.iterrows():
        mark = notes.mark([t for t in (f["adjustment"], f["unseen"], f["reason"]) if t])
        level = "" if f["ratio_ci_level"] != f["ratio_ci_level"] else \
            f" ({f['ratio_ci_level']:.1%} CI)"
        rows.append((f["newest_labels"] or "-", f["against"] or "-",
                     change(f["ratio"], f["ratio_ci_low"], f["ratio_ci_high"]) + level
                     if f["ratio"] == f["ratio"] else "-",
                     _p(f["p_value"]),
                     *([_p(f["p_value_holm"])] if holm else []),
                     f"{f['verdict']} {mark}".rstrip()))
    windows = f"{r.windows} window(s) of the newest 1-3 labels, " if r is not None and \
        r.windows else ""
    title = (f"recent step of {analysis.metric.name}: the newest labels against the segment "
             f"before them (t on the labels' log medians; {windows}p and interval "
             f"Bonferroni-adjusted over the windows"
             + (f"; p Holm over the {r.family} metrics at this load level, the interval "
                "Bonferroni over them too" if holm and r is not None else "")
             + "), the test the change points cannot make at the end of a history")
    cols = (Column("newest labels"), Column("against"), Column("ratio newest/before"),
            Column("p", right=True), *([Column("p Holm", right=True)] if holm else []),
            Column("verdict"))
    return Table(cols, tuple(rows), title, tuple(notes.items))


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
    return Table(cols, tuple(rows), title, tuple(notes.items))


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


def _level_text(level: float, alpha: float) -> str:
    """The level the change points were searched at: ``0.05``, or under Holm over the page's
    metrics ``0.025 (Holm over the metrics at alpha 0.05)``."""
    if level == alpha:
        return f"{alpha:g}"
    return f"{level:.3g} (Holm over the metrics at alpha {alpha:g})"
