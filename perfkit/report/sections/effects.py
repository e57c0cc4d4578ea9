"""The tuning-effects notebook's analysis: A/B comparisons, factorial effects, Holm-adjusted p.

- A/B: each factor's high level against its low level, the other factors held at their low
  (baseline) level, at each load level, for each metric: :func:`perfkit.stats.compare`
  (median and Mann-Whitney U over runs, Hodges-Lehmann ratio with its Moses interval). All
  these p-values form one family, Holm-adjusted together; a comparison whose sample sizes
  cannot reach ``alpha`` says "not enough runs" instead of printing a p-value.
- Factorial: :func:`perfkit.stats.factorial` on log per-run values, per load level; effects and
  interactions as ratios (geometric mean at high over low) with t intervals, and the allocation
  of variation (Jain 1991, ch. 18).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from perfkit.report.sections.common import Experiment, fmt_ci, select
from perfkit.stats import adjust_pvalues, compare
from perfkit.stats.coding import code_factor
from perfkit.stats.factorial import factorial

#: the largest significant effects the report index lists
MAX_HEADLINE_EFFECTS = 6


def lower_is_better(metric: str) -> bool:
    """Latencies and error ratios: lower is better; throughput (``*_rps``): higher is better."""
    return not (metric.endswith("_rps") or "throughput" in metric)


def runs_for_analysis(exp: Experiment, where: dict | None = None) -> pd.DataFrame:
    """The experiment's runs (Locust: the Aggregated rows) matching ``where``."""
    frame = exp.frame
    mask = select(frame, where)
    if "is_aggregate" in frame:
        locust = frame["tool"].eq("locust")
        mask &= ~locust | frame["is_aggregate"].fillna(False).astype(bool)
    return frame[mask.to_numpy()].reset_index(drop=True)


def _levels(frame: pd.DataFrame, factors: Sequence[str]) -> dict[str, tuple]:
    out = {}
    for f in factors:
        _, coding = code_factor(frame[f], f)
        out[f] = (coding["low"], coding["high"])
    return out


def _per_levels(frame: pd.DataFrame, per: str | None) -> list:
    if not per:
        return [None]
    return sorted(frame[per].dropna().unique().tolist())


def _failed(sub: pd.DataFrame) -> np.ndarray:
    if "saturated" not in sub:
        return np.zeros(len(sub), dtype=bool)
    return sub["saturated"].astype(object).eq(True).to_numpy()


def ab_table(frame: pd.DataFrame, factors: Sequence[str], metrics: Sequence[str],
             per: str | None = None, alpha: float = 0.05, confidence: float = 0.95
             ) -> pd.DataFrame:
    """One row per (factor, load level, metric): high vs low, others at their low level.

    Columns: ``factor, per_level, metric, base, new, n_base, n_new, median_base, median_new,
    ratio, ratio_ci_low, ratio_ci_high, p_value, min_attainable_p, p_value_holm, verdict,
    warnings``. ``p_value_holm`` adjusts over every row (one family); ``verdict`` is
    ``better``/``worse`` when the Holm-adjusted p is below ``alpha``, ``~`` (no significant
    change) otherwise, and ``not enough runs`` when the sample sizes cannot reach ``alpha``.
    """
    levels = _levels(frame, factors)
    rows = []
    for factor in factors:
        low, high = levels[factor]
        others = {f: levels[f][0] for f in factors if f != factor}
        for level in _per_levels(frame, per):
            sub = frame[select(frame, {**others, **({per: level} if per else {})}).to_numpy()]
            base = sub[sub[factor] == low]
            new = sub[sub[factor] == high]
            for metric in metrics:
                row = compare(base[metric].astype(float).to_numpy(),
                              new[metric].astype(float).to_numpy(), alpha,
                              confidence=confidence, lower_is_better=lower_is_better(metric),
                              failed_base=_failed(base), failed_new=_failed(new)).iloc[0]
                rows.append({
                    "factor": factor, "per_level": level, "metric": metric,
                    "base": f"{factor}={low}", "new": f"{factor}={high}",
                    "held_at": ", ".join(f"{k}={v}" for k, v in others.items()),
                    **{k: row[k] for k in ("n_base", "n_new", "median_base", "median_new",
                                           "ratio", "ratio_ci_low", "ratio_ci_high",
                                           "p_value", "min_attainable_p")},
                    "warnings": "; ".join(row["warnings"]),
                })
    table = pd.DataFrame(rows)
    if len(table):
        table["p_value_holm"] = adjust_pvalues(table["p_value"].to_numpy(), "holm")
        table["verdict"] = [_verdict(r, alpha) for _, r in table.iterrows()]
    return table


def _verdict(row: pd.Series, alpha: float) -> str:
    if row["min_attainable_p"] > alpha:
        return f"not enough runs ({row['n_base']:.0f} vs {row['n_new']:.0f})"
    if not row["p_value_holm"] < alpha:
        return "~"
    up = row["ratio"] > 1
    better = up != lower_is_better(row["metric"])
    return "better" if better else "worse"


def effects(frame: pd.DataFrame, factors: Sequence[str], metric: str, per: str | None = None,
            confidence: float = 0.95) -> pd.DataFrame:
    """Factorial effects of ``metric`` (log scale: ratios), per load level when ``per`` is set.

    Randomized complete blocks recorded in the runs (``block``) enter as a nuisance term when
    every block holds the whole design.
    """
    block = "block" if _usable_blocks(frame, factors, per) else None
    table = factorial(frame, list(factors), metric, log=True, confidence=confidence,
                      block=block, by=per or None)
    if "by" not in table:
        table.insert(0, "by", "all")
    table.insert(1, "metric", metric)
    return table


def _usable_blocks(frame: pd.DataFrame, factors: Sequence[str], per: str | None) -> bool:
    if "block" not in frame or frame["block"].isna().any() or frame["block"].nunique() < 2:
        return False
    keys = list(factors) + ([per] if per else [])
    per_block = frame.groupby("block")[keys].apply(lambda g: len(g.drop_duplicates()))
    return per_block.nunique() == 1


def forest_rows(table: pd.DataFrame, per: str | None) -> pd.DataFrame:
    """The effect rows of :func:`effects` (no ``error``/``block``), labelled for a forest plot."""
    rows = table[~table["term"].isin(["error", "block"])].copy()
    rows["label"] = rows["term"].str.replace(":", " × ")
    rows["level"] = [_fmt(v) if per else "all runs" for v in rows["by"]]
    return rows


def variation_table(table: pd.DataFrame) -> pd.DataFrame:
    """Allocation of variation: % of the variation explained by each term, per load level."""
    wide = table.pivot_table(index="term", columns="by", values="variation_pct",
                             aggfunc="first", sort=False)
    wide.columns = [f"{_fmt(c)}" for c in wide.columns]
    return wide.reset_index()


def _fmt(v) -> str:
    return str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)


def headline(ab: pd.DataFrame, tables: Sequence[pd.DataFrame], per: str | None,
             alpha: float = 0.05) -> dict:
    """The significant factorial effects (ratio with CI), and what the A/B tests could show."""
    out: dict[str, str] = {}
    significant = []
    for table in tables:
        for _, r in forest_rows(table, per).iterrows():
            p = r.get("p_value_holm", r["p_value"])
            if np.isfinite(p) and p < alpha:
                significant.append(r)
    significant.sort(key=lambda r: -abs(np.log(r["ratio"])))
    for r in significant[:MAX_HEADLINE_EFFECTS]:
        where = f" at {per}={r['level']}" if per else ""
        out[f"{r['metric']}: {r['label']}{where}"] = (
            f"x{fmt_ci(r['ratio'], r['ratio_ci_low'], r['ratio_ci_high'])}")
    if len(significant) > MAX_HEADLINE_EFFECTS:
        out["other significant effects"] = (
            f"{len(significant) - MAX_HEADLINE_EFFECTS} more (smaller), in the forest plots")
    if len(ab):
        kinds = ab["verdict"].str.replace(r" \(.*\)$", "", regex=True)
        counts = kinds.replace("~", "no significant change").value_counts()
        out["A/B comparisons"] = ", ".join(f"{v}: {n}" for v, n in counts.items())
    if not out:
        out["effects"] = "no effect is significant at the chosen alpha"
    return out


def ab_notes(ab: pd.DataFrame) -> list[str]:
    """The distinct warnings of the A/B comparisons (e.g. "3 vs 3 runs cannot reach ...")."""
    seen: dict[str, None] = {}
    for text in ab.get("warnings", []):
        for w in str(text).split("; "):
            if w:
                seen.setdefault(w, None)
    return list(seen)


def forest_height_in(n_rows: int) -> float:
    """Figure height for a forest plot of ``n_rows`` effects (readable row spacing)."""
    return 0.9 + 0.17 * n_rows


def check_lines(tables: Sequence[pd.DataFrame], digits: int = 3) -> str:
    """Stable text of every effect ratio and its CI (for the output-checked cell)."""
    lines = []
    for table in tables:
        for _, r in table[~table["term"].isin(["error", "block"])].iterrows():
            lines.append(f"{r['metric']} {_fmt(r['by'])} {r['term']}: "
                         f"{fmt_ci(r['ratio'], r['ratio_ci_low'], r['ratio_ci_high'], '', digits)}")
    return "\n".join(lines)


def coding_text(table: pd.DataFrame) -> str:
    """How each factor was coded: ``"profile: default -> tuned; connections: 16 -> 64"``."""
    coding = table.attrs.get("coding", {})
    return "; ".join(f"{f}: {c['low']} -> {c['high']}" for f, c in coding.items())
