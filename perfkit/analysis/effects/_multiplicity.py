"""Which tests share a Holm family: the multiplicity of a page's analyses, stated once, as data.

A tuning experiment's runs are tested three ways, each in families of its own (Holm 1979,
"A simple sequentially rejective multiple test procedure", Scand. J. Statist. 6):

- the A/B table (:func:`perfkit.analysis.effects._ab.ab_comparisons`): one family per metric, every
  factor at every load level;
- the factorial (:func:`perfkit.analysis.effects._effects.factorial_effects`): one family per metric
  and term, over the load levels;
- the simple effects (:mod:`perfkit.analysis.effects._interactions`): one family per metric, load
  level and factor, over the levels of the other factor.

No family spans two analyses or two metrics: each answers its own question at alpha, and a
reader comparing answers across them should read each family's alpha (:func:`families`,
:func:`statement`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from perfkit.analysis.compare import ComparisonTable
from perfkit.analysis.effects._effects import FactorialResult
from perfkit.formatting import fmt_p, level_text
from perfkit.vocabulary import SIGNIFICANT, Verdict

COLUMNS = ["analysis", "metric", "family", "tests", "members", "alpha"]


def families(tables: Sequence[ComparisonTable] = (),
             results: Sequence[FactorialResult] = (),
             analysis: str = "A/B") -> pd.DataFrame:
    """One row per Holm family: the analysis, the metric, what the family holds, how many
    tests, which (``members``: the rows' keys, ``; ``-joined) and the family-wise alpha.
    ``tables``: comparison tables (each its own family, named ``analysis``); ``results``:
    factorial results (a family per term over the load levels, and one per set of simple
    effects)."""
    rows = [_table_row(t, analysis) for t in tables]
    for r in results:
        rows += _factorial_rows(r) + _simple_rows(r)
    return pd.DataFrame(rows, columns=COLUMNS)


#: how each analysis forms its families, in words
KINDS = {"A/B": "one family per metric: every row of its table",
         "factorial": "one family per metric and term, over the load levels",
         "simple effects": "one family per metric, load level and factor, over the levels of "
                           "the other factor"}


def statement(frame: pd.DataFrame) -> str:
    """The families in one sentence, for a page to print once: ``Holm's adjustment is applied
    within each family at alpha 0.05, never across: A/B: one family per metric ... (6
    tests); factorial: ... (3 tests each); ...``."""
    if not len(frame):
        return ""
    parts = []
    for analysis, rows in frame.groupby("analysis", sort=False):
        sizes = sorted(set(rows["tests"]))
        each = " each" if len(rows) > 1 else ""
        n = "-".join(str(v) for v in (sizes[0], sizes[-1]) if v is not None) \
            if sizes[0] != sizes[-1] else str(sizes[0])
        parts.append(f"{analysis}: {KINDS.get(str(analysis), 'its own family')} ({len(rows)} "
                     f"famil{'ies' if len(rows) > 1 else 'y'} of {n} tests{each})")
    alphas = sorted(set(frame["alpha"]))
    at = f" at alpha {alphas[0]:g}" if len(alphas) == 1 else ""
    return (f"Holm's adjustment is applied within each family{at}, never across families: "
            + "; ".join(parts) + ". The same runs enter several families, so each verdict "
            "holds within its own family.")


def _table_row(table: ComparisonTable, analysis: str) -> dict[str, Any]:
    keys = ", ".join(table.keys) or "one row"
    members = "; ".join(", ".join(level_text(v) for v in r.key) for r in table.rows)
    return {"analysis": analysis, "metric": table.metric.name,
            "family": f"every row of the table ({keys})", "tests": table.family,
            "members": members, "alpha": table.alpha}


def _factorial_rows(result: FactorialResult) -> list[dict[str, Any]]:
    effects = result.effect_rows()
    out = []
    for term, rows in effects.groupby("term", sort=False):
        levels = "; ".join(level_text(v) for v in rows["by"]) if result.per else "all runs"
        over = (f"the levels of {', '.join(result.per)}" if result.per else "one test")
        out.append({"analysis": "factorial", "metric": result.metric.name,
                    "family": f"{term} over {over}", "tests": len(rows), "members": levels,
                    "alpha": result.alpha})
    return out


def _simple_rows(result: FactorialResult) -> list[dict[str, Any]]:
    s = result.simple_effects
    if not len(s):
        return []
    out = []
    keys = [level_text(k) for k in s["level_key"]]
    for (key, factor, _term), rows in s.assign(_key=keys).groupby(
            ["_key", "factor", "interaction"], sort=False):
        other = rows["at"].iloc[0].split("=")[0]
        where = f", {', '.join(result.per)} = {key}" if result.per else ""
        out.append({"analysis": "simple effects", "metric": result.metric.name,
                    "family": f"{factor} over the levels of {other}{where}",
                    "tests": len(rows), "members": "; ".join(rows["at"]),
                    "alpha": result.alpha})
    return out


def adjusted_verdict(verdict: str, low: float, high: float, null: float, p_adjusted: float,
                     family: int, identity: str | None = None) -> str:
    """A verdict as a row beside its interval shows it, where the two could seem to disagree.

    The intervals of a Holm family are Bonferroni's (1 - alpha / m each: Dunn 1961), so an
    interval that excludes ``null`` (1 for a ratio, 0 for a difference) always comes with a
    significant verdict: Holm's adjusted p is at most m x p (Holm 1979). The other way round
    can happen: Holm's later steps test at larger levels than Bonferroni's, so a significant
    verdict can sit beside an interval that holds ``null``: it is then ``"better (after Holm
    over 3 tests, p 0.041; its simultaneous interval holds no change)"``. Exact Holm-compatible
    intervals exist (Strassburger & Bretz 2008, "Compatible simultaneous lower confidence
    bounds for the Holm procedure", Stat. Med. 27) but bound such an effect by ``null``
    alone, which says less than the Bonferroni interval printed. A ``~`` beside an interval
    that excludes ``null`` would be an unadjusted interval: it is labelled so. ``verdict`` is
    returned unchanged otherwise (and for a family of one). ``identity``: the verdict of the
    vocabulary the decision reads (``better``) where ``verdict`` is worded beyond it
    (``"better (affected by the 1000 ms cap)"``); ``verdict`` itself when None."""
    if not family or family < 2 or not (low == low and high == high):
        return verdict
    holds = low <= null <= high
    identity = verdict if identity is None else identity
    if identity == Verdict.NO_CHANGE and not holds:
        return (f"{verdict} (p {fmt_p(p_adjusted)} after Holm over {family} tests; the "
                "interval is unadjusted)")
    if identity in SIGNIFICANT and holds:
        return (f"{verdict} (after Holm over {family} tests, p {fmt_p(p_adjusted)}; its "
                "simultaneous interval holds no change)")
    return verdict
