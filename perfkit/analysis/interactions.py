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
computed from (:func:`perfkit.analysis.caps.cap_check`): a latency effect from runs whose
requests waited for a timeout is an artefact (its verdict says so instead of
``better``/``worse``/``~``); a throughput effect from such runs keeps its verdict and is
flagged ``cap_affected``; both carry the cap ``warnings``. A ``~`` states the smallest
effect the design could have detected (:func:`perfkit.stats.tpower.min_detectable_effect`,
80% power, Holm's first step over the effect's family) or why there is none.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pandas as pd

from perfkit.analysis.caps import artefact, cap_check, is_artefact
from perfkit.analysis.compare import BETTER, NO_CHANGE, POWER, WORSE
from perfkit.analysis.experiment import RunSet, match
from perfkit.analysis.grouping import rows_at
from perfkit.analysis.mechanism import factor_mechanism
from perfkit.analysis.metrics import Metric
from perfkit.formatting import level_text, plain
from perfkit.stats import adjust_pvalues
from perfkit.stats.factorial_design import factorial
from perfkit.stats.tpower import DetectableEffect, min_detectable_effect
from perfkit.vocabulary import Verdict

if TYPE_CHECKING:
    from perfkit.analysis.effects import FactorialResult

#: the columns of :func:`headline_rows` after the ``per`` columns (:func:`plot_rows` adds
#: ``interaction``)
HEADLINE_COLUMNS = ("level_key", "term", "at", "estimate", "ci_low", "ci_high", "p_value",
                    "significant", "verdict", "n_runs", "cap_affected", "warnings", "size")


#: the verdict of a significant interaction: the factors' effects do not add up (on the
#: analysis scale); neither better nor worse, its simple effects say how each factor acts
INTERACTION = Verdict.INTERACTION


def direction(metric: Metric, effect: float) -> str:
    """``better``/``worse`` for an effect (high minus low on the analysis scale) of ``metric``."""
    return metric.verdict(2.0 if effect > 0 else 0.5)


def simple_effects(rows: RunSet, result: FactorialResult) -> pd.DataFrame:
    """The simple effects of every significant two-factor interaction (module docstring): one
    row each, with ``p_value`` (raw), ``p_value_holm``, ``significant``, ``verdict``,
    ``on_timeout_cap``, ``cap_affected``, ``warnings`` (the cap warnings of its runs),
    ``df_error``, ``holm_family`` (the simple effects its p is adjusted with) and, for a
    ``~``, ``mde_high``/``mde_low`` (on the effect's scale) or ``mde_note`` (why none)."""
    found, checks, mechanisms = [], [], []
    t = result.effects
    pcol = result.p_column()
    for _, r in t[t["term"].str.count(":") == 1].iterrows():
        if not (np.isfinite(r[pcol]) and r[pcol] < result.alpha):
            continue
        a, b = r["term"].split(":")
        at = rows_at(rows, result.per, r["by"])
        for factor, other in ((a, b), (b, a)):
            for level in (result.coding[other]["low"], result.coding[other]["high"]):
                sub = at.subset(match(at.frame[other], [level_text(level)]))
                found.append(_simple_row(sub, factor, other, level, r["by"], r["term"], result))
                checks.append(cap_check(sub, result.metric))
                mechanisms.append(factor_mechanism(sub, factor, result.coding[factor]))
    frame = pd.DataFrame(found)
    if not len(frame):
        return frame
    families: dict[tuple, list[int]] = {}
    for i, (key, factor, term) in enumerate(zip(frame["level_key"], frame["factor"],
                                                frame["interaction"], strict=True)):
        families.setdefault((key_of(key), factor, term), []).append(i)
    holm = np.full(len(frame), np.nan)
    size = np.ones(len(frame), dtype=int)
    for idx in families.values():
        holm[idx] = adjust_pvalues(frame["p_value"].to_numpy(float)[idx], "holm")
        size[idx] = len(idx)
    significant = holm < result.alpha
    scale = [math.log(e) if result.log and e > 0 else e for e in frame["effect"]]
    frame["p_value_holm"] = holm
    frame["significant"] = significant
    frame["verdict"] = [artefact(c.caps_ms) if c.caps_ms else direction(result.metric, e)
                        if s else NO_CHANGE for c, e, s in zip(checks, scale, significant,
                                                               strict=True)]
    frame["on_timeout_cap"] = [bool(c.caps_ms) for c in checks]
    frame["cap_affected"] = [bool(c.affected_ms) for c in checks]
    frame["warnings"] = [c.warnings for c in checks]
    frame["holm_family"] = size
    frame["mechanism"] = cast(Any, mechanisms)  # one object per row
    mde = detectables(result, frame)
    frame["mde_high"] = [m.high if m and m.testable else math.nan for m in mde]
    frame["mde_low"] = [m.low if m and m.testable else math.nan for m in mde]
    frame["mde_note"] = [m.reason if m and not m.testable else "" for m in mde]
    return frame


def detectables(result: FactorialResult, frame: pd.DataFrame) -> list[DetectableEffect | None]:
    """Per simple effect of ``frame``: for a ``~``, the smallest effect the design could have
    detected (:func:`detectable`, Holm's first step over its family), else None."""
    return [detectable(result, r["ci_low"], r["ci_high"], r["df_error"], int(r["holm_family"]))
            if r["verdict"] == NO_CHANGE else None for _, r in frame.iterrows()]


def detectable(result: FactorialResult, ci_low: float, ci_high: float, df: int | None,
               family: int) -> DetectableEffect:
    """The smallest effect (on the reported scale) ``result``'s test of an effect with this
    interval could detect at 80% power, at Holm's first step over ``family`` tests."""
    return min_detectable_effect(ci_low, ci_high, df, confidence=result.confidence,
                                 alpha=result.alpha, family_size=family, power=POWER,
                                 log=result.log, unit="" if result.log else result.metric.unit)


def _simple_row(sub: RunSet, factor: str, other: str, level: Any, key: Any, term: str,
                result: FactorialResult) -> dict:
    fixed = {factor: (result.coding[factor]["low"], result.coding[factor]["high"])}
    rest = [f for f in result.factors if f not in (factor, other)]
    table = factorial(sub.frame, [factor, *rest], result.metric.name, log=result.log,
                      confidence=result.confidence, levels=fixed)
    df = table.attrs["df_error"]
    row = table[table["term"] == factor].iloc[0]
    col = "ratio" if result.log else "effect"
    low, high = ("ratio_ci_low", "ratio_ci_high") if result.log else ("ci_low", "ci_high")
    out = {"metric": result.metric.name, "level_key": key}
    out.update({c: plain(v) for c, v in zip(result.per, key if isinstance(key, tuple)
                                             else (key,), strict=False)} if result.per else {})
    out.update({"factor": factor, "at": f"{other}={level_text(level)}", "interaction": term,
                "effect": row[col], "ci_low": row[low], "ci_high": row[high],
                "p_value": row["p_value"], "n_runs": len(sub), "df_error": df})
    return out


def headline_rows(result: FactorialResult) -> pd.DataFrame:
    """The effects a reader can take alone (module docstring), one row each, level by level:
    the ``per`` columns, then :data:`HEADLINE_COLUMNS`: ``term`` (a factor or an
    interaction), ``at`` (``"cache=ram"`` for a simple effect, else empty), ``estimate``,
    ``ci_low``, ``ci_high`` (ratios high / low on logs, else in the metric's unit), ``p_value``
    (the one the verdict reads, Holm-adjusted), ``significant``, ``verdict``, ``n_runs``,
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
                         "significant": frame["significant"], "verdict": frame["verdict"],
                         "n_runs": [result.level_runs.get(k, result.n_runs) for k in keys],
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
                               "p_value": s["p_value_holm"], "significant": s["significant"],
                               "verdict": s["verdict"], "n_runs": s["n_runs"],
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


def headline_effects(results: Sequence[FactorialResult], limit: int | None = None
                     ) -> tuple[list[tuple[FactorialResult, pd.Series]], int]:
    """The measured significant effects of all ``results`` (:func:`headline_rows` whose
    verdict is ``better``/``worse``), largest first (ordered across results by ``size``), at
    most ``limit`` of them: the largest of each factor, then the largest of the rest; and how
    many more there are. Artefacts are not among them: :func:`artefact_effects`."""
    found = [(result, row) for result in results
             for _, row in headline_rows(result).iterrows() if row["verdict"] in (BETTER, WORSE)]
    found.sort(key=lambda item: -item[1]["size"])
    if limit is None:
        return found, 0
    # each factor's largest effect first, so that a reader asking about any factor finds it
    # (one factor's many large effects would otherwise crowd out another's), then the others
    first = list({str(row["term"]): i for i, (_, row) in reversed(list(enumerate(found)))
                  }.values())
    keep = sorted(first)[:limit]
    keep += [i for i in range(len(found)) if i not in keep][: limit - len(keep)]
    shown = [found[i] for i in sorted(keep)]
    return shown, len(found) - len(shown)


def artefact_effects(results: Sequence[FactorialResult]
                     ) -> list[tuple[FactorialResult, pd.Series]]:
    """The effects that would be significant but are computed from values on a known cap
    (:func:`headline_rows` whose verdict is an artefact), level by level."""
    return [(result, row) for result in results
            for _, row in headline_rows(result).iterrows()
            if row["significant"] and is_artefact(row["verdict"])]
