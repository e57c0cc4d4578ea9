"""Simple effects of a significant interaction, and the one rule for the effects a headline
reports.

- :func:`simple_effects`: for every significant two-factor interaction A:B at a level, the
  effect of A at each level of B and of B at each level of A, each fitted on the runs at that
  level alone. The simple effects of one factor at one load level (one per level of the other
  factor) are one family: their p-values are Holm-adjusted over it (Maxwell & Delaney,
  *Designing Experiments and Analyzing Data*, 2004, ch. 7: simple effects tested after an
  interaction, the error rate controlled over the levels of the other factor).
- :func:`headline_rows`: the effects a reader can take alone. Where an interaction is
  significant, the main effects of its factors are not interpretable alone and the
  interaction itself only says that they depend on each other: the simple effects replace
  all three. :func:`plot_rows` applies the same rule for a forest plot, keeping the
  interaction row (flagged ``interaction``) above its simple effects.

Every effect, main or simple, is checked against the known timeout caps over the runs it is
computed from (:func:`perfkit.analysis.core._caps.cap_check`): a latency effect from runs whose
requests waited for a timeout is an artefact (its verdict says so instead of
``better``/``worse``/``~``); a throughput effect from such runs keeps its verdict and is
flagged ``cap_affected``; both carry the cap ``warnings``. A ``~`` states the smallest
effect the design could have detected (:func:`perfkit.stats.tpower.min_detectable_effect`,
80% power, Holm's first step over the effect's family) or why there is none.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pandas as pd

from perfkit.analysis.compare import BETTER, NO_CHANGE, NO_MDE, POWER, WORSE, Cell, compare_cells
from perfkit.analysis.core import (
    NOT_ESTIMABLE_COLUMN,
    Metric,
    RunSet,
    artefact,
    averaged_mechanism,
    cap_check,
    judge_interval,
    match,
    rows_at,
    statuses_by_cell,
)
from perfkit.formatting import level_text, plain
from perfkit.stats import adjust_pvalues
from perfkit.stats.factorial_design import factorial
from perfkit.stats.tpower import DetectableEffect, min_detectable_effect
from perfkit.vocabulary import RunStatus, Verdict

if TYPE_CHECKING:
    from perfkit.analysis.effects._effects import FactorialResult

#: the columns of :func:`headline_rows` after the ``per`` columns (:func:`plot_rows` adds
#: ``interaction``)
HEADLINE_COLUMNS = ("level_key", "term", "at", "estimate", "ci_low", "ci_high", "p_value",
                    "holm_family", "significant", "verdict", "n_runs", "not_estimable",
                    "on_timeout_cap", "cap_affected", "warnings", "size")


#: how a simple effect was computed: the comparison rule (as the A/B table), or the
#: factorial's HC2 t on the runs at the other factor's level
COMPARED = ("each a comparison of two cells by the A/B table's rule (Hodges-Lehmann ratio, "
            "Moses interval, Mann-Whitney U on per-run values)")
FITTED = "factorial effect on the runs at that level (HC2 t)"

#: the verdict of a significant interaction: the factors' effects do not add up (on the
#: analysis scale); neither better nor worse, its simple effects say how each factor acts
INTERACTION = Verdict.INTERACTION


def direction(metric: Metric, effect: float) -> str:
    """``better``/``worse`` for an effect (high minus low on the analysis scale) of ``metric``."""
    return metric.verdict(2.0 if effect > 0 else 0.5)


def simple_effects(rows: RunSet, result: FactorialResult,
                   at_level: Callable[[Any], RunSet] | None = None) -> pd.DataFrame:
    """The simple effects of every significant two-factor interaction (module docstring): one
    row each, with ``p_value`` (raw), ``p_value_holm``, ``significant``, ``verdict``,
    ``on_timeout_cap``, ``cap_affected``, ``warnings`` (the cap warnings of its runs),
    ``df_error``, ``holm_family`` (the simple effects its p is adjusted with), ``estimand``,
    ``method``, ``mechanism`` (what the server and the kernel counted at the factor's two
    levels: :mod:`perfkit.analysis.core._mechanism`) and, for a ``~``, ``mde_high``/``mde_low``
    (on the effect's scale) or ``mde_note`` (why none).

    In a two-factor design on logs a simple effect compares two cells, run against run: it
    is computed by the comparison rule of :func:`perfkit.analysis.compare._compare.compare_cells`
    (the A/B table's: Hodges-Lehmann ratio, Moses interval, Mann-Whitney U, run statuses), so the
    A/B row of the same contrast has the same estimate and interval; its family is the levels of the
    other factor. With more factors (a simple effect averages over the rest) or on an additive scale
    it is the factorial's effect on the runs at that level. ``at_level``: the runs of ``rows`` at
    a level of ``result.per``, when the caller has them already (default :func:`rows_at`)."""
    found = []
    t = result.effects
    pcol = result.p_column()
    for _, r in t[t["term"].str.count(":") == 1].iterrows():
        if not (np.isfinite(r[pcol]) and r[pcol] < result.alpha):
            continue
        a, b = r["term"].split(":")
        at = rows_at(rows, result.per, r["by"]) if at_level is None else at_level(r["by"])
        for factor, other in ((a, b), (b, a)):
            family = (_compared_family if result.log and len(result.factors) == 2
                      else _fitted_family)
            found.extend(family(at, factor, other, r["by"], r["term"], result))
    frame = pd.DataFrame(found)
    if len(frame):  # the one interval rule (ends > 100x apart); saturated runs: see below
        why = [w or judge_interval(lo, hi, side_of=1.0) if result.log else w for lo, hi, w in
               zip(frame["ci_low"], frame["ci_high"], frame[NOT_ESTIMABLE_COLUMN],
                   strict=True)]
        frame[NOT_ESTIMABLE_COLUMN] = why
        hidden = np.array([bool(w) for w in why])
        frame.loc[hidden, ["ci_low", "ci_high"]] = math.nan
    return frame


def _compared_family(at: RunSet, factor: str, other: str, key: Any, term: str,
                     result: FactorialResult) -> list[dict]:
    """``factor``'s simple effects at both levels of ``other``: two cells compared run against
    run, Holm over the two (:func:`perfkit.analysis.compare._compare.compare_cells`)."""
    low, high = (level_text(result.coding[factor][s]) for s in ("low", "high"))
    cells, subs = [], []
    for level in (result.coding[other]["low"], result.coding[other]["high"]):
        sub = at.subset(match(at.frame[other], [level_text(level)]))
        cells.append(Cell((level,), sub.where({factor: low}), sub.where({factor: high})))
        subs.append(sub)
    table = compare_cells(cells, result.metric, (other,), f"{factor}={low}",
                          f"{factor}={high}", alpha=result.alpha, confidence=result.confidence)
    out = []
    for cell, row, sub in zip(cells, table.rows, subs, strict=True):
        c, mde = row.comparison, row.mde
        verdict = (artefact(row.caps_ms) if row.caps_ms
                   and row.verdict in (BETTER, WORSE, NO_CHANGE) else row.verdict)
        testable = mde is not None and mde.testable
        out.append({**_head(result, key, factor, other, cell.key[0], term),
                    "effect": c.ratio, "ci_low": c.ratio_ci_low, "ci_high": c.ratio_ci_high,
                    "ci_level": c.ratio_ci_level, "p_value": c.p_value,
                    "n_runs": c.n_base + c.n_new, "df_error": c.df,
                    "p_value_holm": row.p_adjusted,
                    "significant": row.verdict in (BETTER, WORSE),
                    "verdict": verdict, "on_timeout_cap": bool(row.caps_ms),
                    "cap_affected": bool(row.cap_affected_ms),
                    # the cap's sentence over the runs at this level of the other factor, as
                    # the factorial words it for its level (one footnote for both tables)
                    "warnings": cap_check(sub, result.metric).warnings or row.cap_warnings,
                    "holm_family": table.family, "method": COMPARED,
                    "mechanism": _mechanism(sub, factor, other, result),
                    NOT_ESTIMABLE_COLUMN: "",
                    "stalls": "; ".join(x.text() for x in row.stalls),
                    "mde_high": mde.ratio_high if mde is not None and testable else math.nan,
                    "mde_low": mde.ratio_low if mde is not None and testable else math.nan,
                    "mde_note": (mde.reason or "") if mde is not None and not testable else
                    (str(NO_MDE) if verdict == NO_CHANGE and mde is None else "")})
    return out


def _mechanism(sub: RunSet, factor: str, other: str, result: FactorialResult):
    """The counters beside a simple effect: over its runs (``sub``: the other factor at one
    level), averaged over the remaining factors' cells as the effect is
    (:func:`perfkit.analysis.core.averaged_mechanism`)."""
    rest = [f for f in result.factors if f not in (factor, other)]
    return averaged_mechanism(sub, factor, result.coding[factor], rest)


def _fitted_family(at: RunSet, factor: str, other: str, key: Any, term: str,
                   result: FactorialResult) -> list[dict]:
    """``factor``'s simple effects at both levels of ``other``, each the factorial's effect on
    the runs at that level (HC2 t), Holm over the two."""
    rows, checks, subs = [], [], []
    for level in (result.coding[other]["low"], result.coding[other]["high"]):
        sub = at.subset(match(at.frame[other], [level_text(level)]))
        rows.append(_simple_row(sub, factor, other, level, key, term, result))
        rows[-1]["mechanism"] = _mechanism(sub, factor, other, result)
        checks.append(cap_check(sub, result.metric))
        subs.append(sub)
    holm = adjust_pvalues(np.array([r["p_value"] for r in rows], dtype=float), "holm")
    for r, c, p, sub in zip(rows, checks, holm, subs, strict=True):
        significant = bool(p < result.alpha)
        scale = math.log(r["effect"]) if result.log and r["effect"] > 0 else r["effect"]
        saturated = sum(st.status == RunStatus.SATURATED for st in statuses_by_cell(
            sub, result.metric, [*result.factors, *result.per]))
        r[NOT_ESTIMABLE_COLUMN] = judge_interval(
            r["ci_low"], r["ci_high"], n_saturated=saturated, n_runs=r["n_runs"]) \
            if saturated else ""
        r.update(p_value_holm=p, significant=significant, holm_family=len(rows),
                 verdict=artefact(c.caps_ms) if c.caps_ms else direction(result.metric, scale)
                 if significant else NO_CHANGE, on_timeout_cap=bool(c.caps_ms),
                 cap_affected=bool(c.affected_ms), warnings=c.warnings, method=FITTED,
                 stalls="")
    frame = pd.DataFrame(rows)
    mde = detectables(result, frame)
    for r, m in zip(rows, mde, strict=True):
        r.update(mde_high=m.high if m and m.testable else math.nan,
                 mde_low=m.low if m and m.testable else math.nan,
                 mde_note=m.reason if m and not m.testable else "")
    return rows


def _head(result: FactorialResult, key: Any, factor: str, other: str, level: Any,
          term: str) -> dict:
    out = {"metric": result.metric.name, "level_key": key}
    out.update({c: plain(v) for c, v in zip(result.per, key if isinstance(key, tuple)
                                             else (key,), strict=False)} if result.per else {})
    out.update({"factor": factor, "at": f"{other}={level_text(level)}", "interaction": term,
                "estimand": simple_estimand(factor, other, level, result.factors)})
    return out


def detectables(result: FactorialResult, frame: pd.DataFrame) -> list[DetectableEffect | None]:
    """Per simple effect of ``frame``: for a ``~``, the smallest effect the design could have
    detected (:func:`detectable`, Holm's first step over its family), else None."""
    return [detectable(result, r["ci_low"], r["ci_high"], r["df_error"], int(r["holm_family"]),
                       r["ci_level"])
            if r["verdict"] == NO_CHANGE else None for _, r in frame.iterrows()]


def detectable(result: FactorialResult, ci_low: float, ci_high: float, df: int | None,
               family: int, level: float | None = None) -> DetectableEffect:
    """The smallest effect (on the reported scale) ``result``'s test of an effect with this
    interval (of coverage ``level``: the family's Bonferroni level; ``result.confidence`` when
    None) could detect at 80% power, at Holm's first step over ``family`` tests."""
    return min_detectable_effect(ci_low, ci_high, df,
                                 confidence=result.confidence if level is None else level,
                                 alpha=result.alpha, family_size=family, power=POWER,
                                 log=result.log, unit="" if result.log else result.metric.unit)


def _simple_row(sub: RunSet, factor: str, other: str, level: Any, key: Any, term: str,
                result: FactorialResult) -> dict:
    fixed = {factor: (result.coding[factor]["low"], result.coding[factor]["high"])}
    rest = [f for f in result.factors if f not in (factor, other)]
    ci_level = 1 - (1 - result.confidence) / 2  # Bonferroni over the other factor's 2 levels
    table = factorial(sub.frame, [factor, *rest], result.metric.name, log=result.log,
                      confidence=ci_level, levels=fixed)
    table.attrs = {}  # read nothing of it here; pandas would deep-copy it into the row
    row = table[table["term"] == factor].iloc[0]
    col = "ratio" if result.log else "effect"
    low, high = ("ratio_ci_low", "ratio_ci_high") if result.log else ("ci_low", "ci_high")
    out = _head(result, key, factor, other, level, term)
    out.update({"effect": row[col], "ci_low": row[low], "ci_high": row[high],
                "ci_level": ci_level, "p_value": row["p_value"], "n_runs": len(sub),
                "df_error": row["df"]})
    return out


def main_estimand(term: str, factors: Sequence[str]) -> str:
    """What a factorial row estimates, in words (the row names its factor): ``main effect,
    averaged over cache``, ``interaction``, ``effect`` (one factor)."""
    if ":" in term:
        return "interaction"
    others = [f for f in factors if f != term]
    return f"main effect, averaged over {' and '.join(others)}" if others else "effect"


def simple_estimand(factor: str, other: str, level: Any, factors: Sequence[str],
                    held: Sequence[tuple[str, Any]] = ()) -> str:
    """``simple effect, cache held at none`` (the row names ``factor``; ``held``: further
    factors held at a level; a factor neither named nor held is averaged over)."""
    fixed = [(other, level), *held]
    at = ", ".join(f"{f} held at {level_text(v)}" for f, v in fixed)
    rest = [f for f in factors if f != factor and f not in {f for f, _ in fixed}]
    over = f", averaged over {' and '.join(rest)}" if rest else ""
    return f"simple effect, {at}{over}"


def headline_rows(result: FactorialResult) -> pd.DataFrame:
    """The effects a reader can take alone (module docstring), one row each, level by level:
    the ``per`` columns, then :data:`HEADLINE_COLUMNS`: ``term`` (a factor or an
    interaction), ``at`` (``"cache=ram"`` for a simple effect, else empty), ``estimate``,
    ``ci_low``, ``ci_high`` (ratios high / low on logs, else in the metric's unit), ``p_value``
    (the one the verdict reads, Holm-adjusted), ``holm_family`` (the tests it is adjusted
    over: the term's load levels, or the levels of the other factor), ``significant``,
    ``verdict``, ``n_runs``,
    ``cap_affected`` and ``warnings`` (the cap warnings of its runs) and ``size`` (|log
    ratio| on logs, else |effect|)."""
    rows = _rows(result, keep_interactions=False)
    return rows.drop(columns=["interaction"])


def plot_rows(result: FactorialResult) -> pd.DataFrame:
    """The rows of a forest plot: :func:`headline_rows`' rule (simple effects in place of
    the main effects of interacting factors), with each significant interaction kept above
    its simple effects, flagged by ``interaction``."""
    return _rows(result, keep_interactions=True)


def _rows(result: FactorialResult, keep_interactions: bool) -> pd.DataFrame:
    frame = result.effect_frame()
    est = (("ratio", "ratio_ci_low", "ratio_ci_high") if result.log else
           tuple(f"effect{s}{result.metric.suffix}" for s in ("", "_ci_low", "_ci_high")))
    keys = list(frame["level_key"])
    main = pd.DataFrame({**{c: frame[c] for c in result.per}, "level_key": keys,
                         "term": frame["term"], "at": "", "estimate": frame[est[0]],
                         "ci_low": frame[est[1]], "ci_high": frame[est[2]],
                         "p_value": frame[result.p_column()],
                         "holm_family": (frame.groupby("term")["term"].transform("size")
                                         if result.per else 1),
                         "significant": frame["significant"], "verdict": frame["verdict"],
                         "n_runs": [result.level_runs.get(k, result.n_runs) for k in keys],
                         NOT_ESTIMABLE_COLUMN: frame[NOT_ESTIMABLE_COLUMN],
                         "on_timeout_cap": frame["on_timeout_cap"],
                         "cap_affected": frame["cap_affected"],
                         "warnings": [tuple(result.level_warnings.get(k, ())) for k in keys],
                         "mechanism": [result.mechanism_of(t, k)
                                       for t, k in zip(frame["term"], keys, strict=True)],
                         "interaction": False})
    s = result.simple_effects
    if len(s):
        split = {(key_of(k), i) for k, i in zip(s["level_key"], s["interaction"], strict=True)}
        gone = {(key_of(k), t) for k, f, i in zip(s["level_key"], s["factor"], s["interaction"],
                                                strict=True)
                for t in ((f,) if keep_interactions else (f, i))}
        main["interaction"] = [(key_of(k), t) in split for k, t in zip(keys, main["term"],
                                                                     strict=True)]
        main = main[[(key_of(k), t) not in gone for k, t in zip(keys, main["term"], strict=True)]]
        simple = pd.DataFrame({**{c: s[c] for c in result.per}, "level_key": s["level_key"],
                               "term": s["factor"], "at": s["at"], "estimate": s["effect"],
                               "ci_low": s["ci_low"], "ci_high": s["ci_high"],
                               "p_value": s["p_value_holm"], "holm_family": s["holm_family"],
                               "significant": s["significant"],
                               "verdict": s["verdict"], "n_runs": s["n_runs"],
                               NOT_ESTIMABLE_COLUMN: s[NOT_ESTIMABLE_COLUMN],
                               "on_timeout_cap": s["on_timeout_cap"],
                               "cap_affected": s["cap_affected"], "warnings": s["warnings"],
                               "mechanism": s["mechanism"], "interaction": False})
        order = {k: i for i, k in enumerate(dict.fromkeys(map(key_of, keys)))}
        both = pd.concat([main, simple], ignore_index=True)
        main = both.iloc[np.argsort([order[key_of(k)] for k in both["level_key"]], kind="stable")]
    value = main["estimate"].astype(float)
    size = cast(pd.Series, np.log(value)).abs() if result.log else value.abs()
    return main.assign(size=size).reset_index(drop=True)


def key_of(level: Any) -> str:
    """A level of ``per`` (a value, a tuple, None) as a comparable text key."""
    values = level if isinstance(level, tuple) else (level,)
    return repr(tuple(plain(v) for v in values))


def headline_effects(results: Sequence[FactorialResult]
                     ) -> list[tuple[FactorialResult, pd.Series]]:
    """The measured significant effects of all ``results`` (:func:`headline_rows` whose
    verdict is ``better``/``worse``), largest first (ordered across results by ``size``).
    Artefacts of a cap are not among them (their verdict is not better or worse)."""
    found = [(result, row) for result in results
             for _, row in headline_rows(result).iterrows() if row["verdict"] in (BETTER, WORSE)]
    found.sort(key=lambda item: -item[1]["size"])
    return found
