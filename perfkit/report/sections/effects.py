"""The tuning-effects notebook: what its A/B and factorial sections show, and their headline.

The analysis is :mod:`perfkit.analysis.effects` (the same calls as ``perfkit effects`` and
``perfkit effects --ab``); this module shapes its results for the page and the forest plots.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from perfkit.analysis import ComparisonTable, RunSet, metric
from perfkit.analysis.effects import FactorialResult, ab_comparisons, factorial_effects
from perfkit.formatting import fmt_ci, level_text

#: the largest significant effects the report index lists
MAX_HEADLINE_EFFECTS = 6


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


def _by(per: str | Sequence[str] | None):
    if per is None or per == "":
        return "none"
    return per


def notes(tables: Sequence[ComparisonTable]) -> list[str]:
    """The distinct warnings of the comparisons (e.g. "3 vs 3 runs cannot reach ...")."""
    seen: dict[str, None] = {}
    for table in tables:
        for w in table.warnings:
            seen.setdefault(w, None)
        for row in table.rows:
            for w in row.warnings:
                seen.setdefault(w, None)
    return list(seen)


def display_frame(table: ComparisonTable) -> pd.DataFrame:
    """The comparison's table for the page (the CSV keeps every column)."""
    return table.to_frame().drop(columns=["warnings"])


def forest_rows(result: FactorialResult) -> pd.DataFrame:
    """The effect rows, labelled for a forest plot (``label``, ``level``, ratio and CI)."""
    rows = result.to_frame()
    rows = rows[~rows["term"].isin(["error", "block"])].copy()
    rows["label"] = rows["term"].str.replace(":", " × ")
    per = list(result.per)
    rows["level"] = (rows[per].apply(lambda r: ", ".join(level_text(v) for v in r), axis=1)
                     if per else "all runs")
    p = rows["p_value_holm"] if "p_value_holm" in rows else rows["p_value"]
    rows["significant"] = p < result.alpha
    return rows


def forest_height_in(n_rows: int) -> float:
    """Figure height for a forest plot of ``n_rows`` effects (readable row spacing)."""
    return 0.9 + 0.17 * n_rows


def variation_height_in(result: FactorialResult) -> float:
    levels = result.effects["by"].nunique(dropna=False)
    return 1.5 + 0.3 * levels


def variation_table(result: FactorialResult) -> pd.DataFrame:
    """Allocation of variation: the share of the log metric's variation each term explains,
    one row per level and term (tidy)."""
    frame = result.to_frame()
    return frame[[*result.per, "term", "variation_pct"]]


def coding_text(result: FactorialResult) -> str:
    """How each factor was coded: ``"keepalive: none -> keepalive; cache: none -> ram"``."""
    return "; ".join(f"{f}: {level_text(c['low'])} -> {level_text(c['high'])}"
                     for f, c in result.coding.items())


def check_lines(results: Sequence[FactorialResult], digits: int = 3) -> str:
    """Stable text of every effect ratio and its CI (for the output-checked cell)."""
    lines = []
    for result in results:
        for _, r in forest_rows(result).iterrows():
            lines.append(f"{result.metric.name} {r['level']} {r['term']}: "
                         f"{fmt_ci(r['ratio'], r['ratio_ci_low'], r['ratio_ci_high'], '', digits)}")
    return "\n".join(lines)


def headline(tables: Sequence[ComparisonTable], results: Sequence[FactorialResult],
             alpha: float = 0.05) -> dict[str, str]:
    """The largest significant factorial effects (ratio with CI), and the A/B verdict counts."""
    out: dict[str, str] = {}
    significant = []
    for result in results:
        rows = forest_rows(result)
        for _, r in rows[rows["significant"]].iterrows():
            significant.append((result, r))
    significant.sort(key=lambda item: -abs(np.log(item[1]["ratio"])))
    for result, r in significant[:MAX_HEADLINE_EFFECTS]:
        where = f" at {', '.join(result.per)}={r['level']}" if result.per else ""
        alone = "" if r["interpretable_alone"] else " (not interpretable alone: interaction)"
        out[f"{result.metric.name}: {r['label']}{where}"] = (
            f"x{fmt_ci(r['ratio'], r['ratio_ci_low'], r['ratio_ci_high'])}{alone}")
    if len(significant) > MAX_HEADLINE_EFFECTS:
        out["other significant effects"] = (
            f"{len(significant) - MAX_HEADLINE_EFFECTS} more (smaller), in the forest plots")
    for table in tables:
        counts = pd.Series([r.verdict for r in table.rows]).value_counts()
        names = {"~": "no significant change"}
        out[f"A/B comparisons, {table.metric.name}"] = ", ".join(
            f"{names.get(v, v)}: {n}" for v, n in counts.items())
    if not out:
        out["effects"] = "no effect is significant at the chosen alpha"
    return out


# -- figures (a notebook cell is a call and a display) ------------------------------------------
def forest_figure(result: FactorialResult):
    """The forest plot of ``result``'s effects: filled markers are the significant ones."""
    from perfkit import plots

    rows = forest_rows(result)
    fig, ax = plots.figure(height_in=forest_height_in(len(rows)))
    plots.forest(rows, ax, plots.label(f"effect on {result.metric.label}", "ratio"),
                 label="label", by="level", legend_title=", ".join(result.per) or None,
                 significant="significant")
    return fig


def forest_caption(result: FactorialResult) -> str:
    p = "Holm-adjusted across levels, " if result.per else ""
    return (f"Effects on {result.metric.name} as ratios (high / low) with "
            f"{result.confidence:.0%} t intervals; filled: significant ({p}alpha "
            f"{result.alpha:g}); {result.n_runs} runs; low -> high: {coding_text(result)}")


def variation_figure(result: FactorialResult):
    from perfkit import plots

    frame = result.to_frame()
    levels = (frame[list(result.per)].apply(lambda r: ", ".join(level_text(v) for v in r),
                                            axis=1) if result.per else "all runs")
    frame = frame.assign(level=levels)
    fig, ax = plots.figure(height_in=variation_height_in(result))
    ylabel = (plots.style.column_label(result.per[0]) if len(result.per) == 1
              else ", ".join(result.per) or None)
    plots.variation(frame, ax, by="level", ylabel=ylabel)
    return fig
