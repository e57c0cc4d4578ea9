"""Tuning effects: the 2^k r factorial analysis and the A/B comparisons of a factorial sweep.

- :func:`factorial_effects` wraps :func:`perfkit.stats.factorial` with perfkit's rules: the
  load columns analysed level by level (rows from :mod:`perfkit.analysis.core._grouping`, Holm
  across levels), randomized complete blocks used as a nuisance term when every block holds
  the whole design (:func:`usable_block`), failed runs left out and saturated runs kept with
  a warning, runs that did not measure the metric left out with a note naming them
  (:func:`perfkit.analysis.core._runstatus.measured_rows`), and, when an interaction is
  significant, the simple effects of its factors (each at each level of the other;
  :mod:`perfkit.analysis.effects._interactions`) with a note that the main
  effect is not interpretable alone. An effect on a latency computed from runs whose requests
  waited for a known timeout is an artefact, and its verdict says so; one on throughput keeps
  its verdict with a warning that the cap affects it (:mod:`perfkit.analysis.core._caps`). A ``~``
  states the smallest ratio the design could have detected (80% power, Holm's first step
  across levels; :func:`perfkit.stats.tpower.min_detectable_effect`) or why there is none.
- :func:`headline_effects` (from :mod:`~perfkit.analysis.effects._interactions`): the one rule for
  what a headline reports: simple effects in place of the main effects of interacting
  factors, artefacts apart; :meth:`FactorialResult.plot_rows`
  the same rule for a forest plot, the interaction rows kept.
- :func:`ab_comparisons` (:mod:`perfkit.analysis.effects._ab`, re-exported here): each factor's high
  level against its low level, the other factors held at their low level, at each load level.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Mapping, Sequence
from typing import Any, cast

import numpy as np
import pandas as pd

from perfkit.analysis.compare import NO_CHANGE, POWER, detectable_df, interval_words
from perfkit.analysis.core import (
    NOT_ESTIMABLE,
    NOT_ESTIMABLE_COLUMN,
    Mechanism,
    Metric,
    RunSet,
    affected,
    artefact,
    cap_check,
    judge_interval,
    main_mechanisms,
    measured_rows,
    mechanism_columns,
    row_keys,
    rows_at,
    run_notes,
    statuses_by_cell,
)
from perfkit.analysis.effects._ab import AB_COLUMNS, ab_comparisons, same_contrast
from perfkit.analysis.effects._interactions import (
    INTERACTION,
    detectable,
    direction,
    headline_rows,
    key_of,
    main_estimand,
    plot_rows,
    simple_effects,
)
from perfkit.errors import DataError, PerfkitError, UsageError
from perfkit.formatting import level_text, plain
from perfkit.stats.factorial_design import factorial
from perfkit.stats.tpower import DetectableEffect
from perfkit.vocabulary import RunStatus
from perfkit.warning import Code, Warn, texts

NON_EFFECT_TERMS = ("error", "block")


#: the two-stage procedure's error, measured (issue 34): the Methods' words
TWO_STAGE = ("this two-stage procedure (simple effects only after a significant interaction) "
             "was measured by simulation on the demo's design (6 runs per cell at 3 load "
             "levels, 250 data sets per truth, benchmarks/calibration_simple_effects.py): a "
             "false simple effect in a family (one factor at one load level) in 0.003 of data "
             "sets (+-0.003) under no effect at all, 0.001 (+-0.003) under a main effect alone, "
             "and 0.037 (+-0.010) where a factor acts at one level of the other only, each "
             "within alpha per family; over the page's 6 families the last reaches 0.20 "
             "(+-0.05), as 6 families at alpha each would; in a two-factor design at 3 runs per "
             "cell no simple effect can be significant (3 vs 3 runs in a family of 2: the rank "
             "test's smallest p is 0.1, 0.2 adjusted);")


@dataclasses.dataclass(frozen=True)
class FactorialResult:
    """Effects of two-level ``factors`` on ``metric``, per level of the ``per`` columns.

    ``effects`` is :func:`perfkit.stats.factorial`'s table (a ``by`` column holds the per
    level); ``coding`` maps each factor to its low/high level and the rule that chose them;
    ``simple_effects`` holds, for every significant two-factor interaction, each factor's
    effect at each level of the other.
    """

    metric: Metric
    factors: tuple[str, ...]
    per: tuple[str, ...]
    log: bool
    confidence: float
    alpha: float
    block: str | None
    coding: Mapping[str, Mapping[str, Any]]
    df_error: Mapping[Any, int]
    n_runs: int
    effects: pd.DataFrame
    simple_effects: pd.DataFrame
    warnings: tuple[Warn, ...] = ()
    #: per level of ``per``: the warnings of runs whose requests waited for a known timeout
    #: (:func:`perfkit.analysis.core._caps.cap_check`: artefacts or, not a latency, affected)
    level_warnings: Mapping[Any, tuple[Warn, ...]] = dataclasses.field(default_factory=dict)
    #: runs analysed at each level of ``per`` (``None``: all runs)
    level_runs: Mapping[Any, int] = dataclasses.field(default_factory=dict)
    #: per level of ``per``: the known caps (ms) some of its values sit on; every effect
    #: computed from that level's runs is an artefact (:func:`perfkit.analysis.core._caps.artefact`)
    level_caps_ms: Mapping[Any, tuple[float, ...]] = dataclasses.field(default_factory=dict)
    #: per level of ``per``: the known caps that throttle the metric (not a latency) of some
    #: of its runs; its effects keep their verdict and carry :attr:`level_warnings`
    level_affected_ms: Mapping[Any, tuple[float, ...]] = dataclasses.field(
        default_factory=dict)
    #: per level of ``per``: its runs that did not sustain their offered rate (saturated,
    #: kept with their value): every effect at that level rests on them
    level_saturated: Mapping[Any, int] = dataclasses.field(default_factory=dict)
    #: per level of ``per``: the runs behind its warnings, ``(run_id, kind, detail)``
    level_run_notes: Mapping[Any, tuple[tuple[str, str, str], ...]] = dataclasses.field(
        default_factory=dict)
    #: (term, level of ``per`` as :func:`~perfkit.analysis.effects._interactions.key_of`) -> what
    #: the server and the kernel counted at the factor's low and high level, the other
    #: factors at their low level (main effects only; empty when no run recorded counters:
    #: :mod:`perfkit.analysis.core._mechanism`)
    mechanisms: Mapping[tuple[str, str], Mechanism] = dataclasses.field(default_factory=dict)

    def mechanism_of(self, term: str, level: Any) -> Mechanism:
        """What the counters show beside the effect of ``term`` at ``level`` of ``per`` (an
        empty Mechanism for an interaction, or when nothing was recorded)."""
        return self.mechanisms.get((term, key_of(level)), Mechanism())

    def describe(self) -> str:
        """The method, in a sentence a reader can paste into a paper."""
        k = len(self.factors)
        scale = (f"log {self.metric.name}, effects reported as ratios of geometric means "
                 "(high over low)" if self.log else f"{self.metric.name} (additive effects)")
        block = f", with {self.block} as a nuisance term" if self.block else ""
        per = (f", separately at each level of {', '.join(self.per)} with Holm's adjustment "
               "across levels" if self.per else "")
        simple = ("each a comparison of two cells by the A/B table's rule (Hodges-Lehmann "
                  "ratio, Moses interval, Mann-Whitney U on per-run values), so that the A/B "
                  "row of the same contrast gives the same estimate and interval"
                  if self.log and k == 2 else "the factorial effect on the runs at that level")
        return (f"Factorial effects (Jain 1991, 2^{k}r design) were estimated by ordinary least "
                f"squares on {scale}, with all interactions{block}{per}, with "
                f"{self.confidence:.0%} t intervals that do not assume equal spread across "
                "cells: each effect's HC2 standard error (MacKinnon & White 1985) with the "
                "Satterthwaite degrees of freedom at the cells' own variances (Welch's contrast "
                "of cell means without blocks; coverage checked by simulation with cell log sds "
                "0.02-1.3: benchmarks/calibration_factorial.py); a main effect averages over the "
                "other factors' levels, so it answers another question than an A/B row, which "
                "holds them at their low level (a simple effect); where an interaction was "
                f"significant at alpha {self.alpha:g}, the simple effects of its factors were "
                f"estimated at each level of the other ({simple}; Holm-adjusted over the levels "
                "of the other factor) and reported in place of their main effects; "
                f"{TWO_STAGE} an "
                "effect on a latency computed from runs whose requests waited for a known "
                "timeout (a latency on it, or a tail statistic of a run whose maximum is on it) "
                "was reported as an artefact of it, not as a measured ratio, and one on a "
                "throughput or count from such runs as affected by it; where an effect was not "
                "significant, its estimate and interval are given with the smallest effect the "
                f"design could have detected at {POWER:.0%} power (noncentral t on the same "
                "standard error and df, Holm's first step), an estimate printed with its df: "
                "at 2 df the spread it rests on lies between 0.16 and 1.9 times the true one in "
                "95% of designs.")

    def interval_words(self, simple: bool = False) -> str:
        """What the intervals of the effects (``simple``: of the simple effects) are: ``"95%
        CI"``, or Bonferroni's over a term's load levels (over the 2 levels of the other
        factor for a simple effect), the adjustment their verdicts carry."""
        alpha = 1 - self.confidence
        if simple:
            return interval_words(alpha, 2, "levels of the other factor")
        rows = self.effect_rows()
        family = int(rows.groupby("term")["term"].size().max()) if self.per and len(rows) else 1
        return interval_words(alpha, family, "levels")

    def p_column(self) -> str:
        return "p_value_holm" if "p_value_holm" in self.effects else "p_value"

    def effect_rows(self) -> pd.DataFrame:
        """The factor and interaction rows (no ``error``/``block``)."""
        return self.effects[~self.effects["term"].isin(NON_EFFECT_TERMS)]

    def significant(self) -> pd.Series:
        """Per row of ``effects``: the effect's p (Holm-adjusted across levels when analysed
        per level) is below alpha; never for the ``error``/``block`` rows."""
        p = self.effects[self.p_column()].astype(float)
        return (p < self.alpha) & ~self.effects["term"].isin(NON_EFFECT_TERMS)

    def verdicts(self) -> pd.Series:
        """Per row of ``effects``: ``better``/``worse`` (the metric's direction, high over low)
        for a significant main effect, ``interaction`` for a significant interaction (the
        factors' effects do not add up: neither better nor worse, its simple effects say how
        each acts), ``~`` for another effect, an artefact (``"artefact of the 1000 ms
        cap"``) for any effect at a level with values on a known cap, empty for
        ``error``/``block``."""
        out = []
        for term, eff, s, by in zip(self.effects["term"], self.effects["effect"],
                                    self.significant(), self.effects["by"], strict=True):
            caps = self.level_caps_ms.get(by)
            out.append("" if term in NON_EFFECT_TERMS else artefact(caps) if caps
                       else NO_CHANGE if not s else INTERACTION if ":" in term
                       else direction(self.metric, eff))
        return pd.Series(out, index=self.effects.index, dtype=object)

    def reported_verdict(self, verdict: str, level_key: Any, cap_affected: bool) -> str:
        """A row's verdict as tables and answers report it: a measured effect from runs that
        waited for a timeout (``cap_affected``) says which cap affects it (:func:`perfkit.
        analysis.caps.affected`: ``"better (affected by the 1000 ms cap)"``); ``level_key``:
        the row's level of ``per`` (:attr:`level_affected_ms`)."""
        return (affected(verdict, self.level_affected_ms.get(level_key, ()))
                if cap_affected else verdict)

    def headline_rows(self) -> pd.DataFrame:
        """The effects a reader can take alone: simple effects in place of interacting
        factors' main effects (:func:`perfkit.analysis.effects._interactions.headline_rows`)."""
        return headline_rows(self)

    def plot_rows(self) -> pd.DataFrame:
        """The rows of a forest plot: :meth:`headline_rows` with the significant interactions
        kept above their simple effects
        (:func:`perfkit.analysis.effects._interactions.plot_rows`)."""
        return plot_rows(self)

    def detectable(self) -> list[DetectableEffect | None]:
        """Per row of ``effects``: for a ``~``, the smallest effect the design could have
        detected at 80% power (Holm's first step over the term's levels), or why none;
        None for another row."""
        family = self.effects.groupby("term")["term"].transform("size") if self.per else \
            pd.Series(1, index=self.effects.index)
        low, high = (("ratio_ci_low", "ratio_ci_high") if self.log else ("ci_low", "ci_high"))
        why = self.not_estimable()
        return [(dataclasses.replace(detectable(self, math.nan, math.nan, r["df"], int(n)),
                                     reason=f"its interval is {NOT_ESTIMABLE}") if w
                 else detectable(self, r[low], r[high], r["df"], int(n), r["ci_level"]))
                if v == NO_CHANGE else None
                for (_, r), v, n, w in zip(self.effects.iterrows(), self.verdicts(), family,
                                           why, strict=True)]

    def not_estimable(self) -> list[str]:
        """Per row of ``effects``: why its interval may not be printed
        (:func:`perfkit.analysis.core._intervals.judge`: ends more than 100x apart on the ratio
        scale, or resting on a saturated run of its level), else ``""``."""
        out = []
        for _, r in self.effects.iterrows():
            if r["term"] in NON_EFFECT_TERMS or r["ci_low"] != r["ci_low"]:
                out.append("")
                continue
            # the spread rule reads ratios; an additive effect's interval only its runs
            lo, hi = ((r["ratio_ci_low"], r["ratio_ci_high"]) if self.log else (1.0, 1.0))
            out.append(judge_interval(lo, hi, n_saturated=self.level_saturated.get(r["by"], 0),
                                       n_runs=self.level_runs.get(r["by"], self.n_runs),
                                       side_of=1.0))
        return out

    def effect_frame(self) -> pd.DataFrame:
        """:meth:`to_frame` without the ``error``/``block`` rows, with ``level_key``: the level
        of ``per`` as :attr:`level_runs` and :attr:`level_warnings` key it."""
        frame = self.to_frame()
        keep = (~frame["term"].isin(NON_EFFECT_TERMS)).to_numpy()
        out = frame[keep].copy()
        out["level_key"] = self.effects["by"].to_numpy()[keep]
        return out

    def ranked(self) -> pd.DataFrame:
        """The significant effects, largest first: :meth:`effect_frame` rows ordered by
        ``size``, |log ratio| on logs (else the absolute effect, in the metric's unit)."""
        frame = self.effect_frame()
        size = (cast(pd.Series, np.log(frame["ratio"].astype(float))) if self.log
                else frame[f"effect{self.metric.suffix}"].astype(float))
        frame = frame.assign(size=size.abs())
        return frame[frame["significant"]].sort_values("size", ascending=False, kind="stable")

    def interpretable(self, term: str, level: Any) -> bool:
        """False for a main effect whose factor is in a significant interaction at ``level``."""
        if ":" in term or not len(self.simple_effects):
            return True
        s = self.simple_effects  # in Python: a frame filtered per row cost more (issue 33)
        return not any(f == term and (k == level or (_nan(k) and _nan(level)))
                       for f, k in zip(s["factor"], s["level_key"], strict=True))

    def block_treatment(self) -> tuple[str, str, bool]:
        """How this result treats an experiment's blocks: what it is, of what, and
        whether it models them (:func:`perfkit.analysis.context._validity.block_treatment`)."""
        return "the factorial effects", self.metric.label, self.block is not None

    def to_frame(self) -> pd.DataFrame:
        """Tidy: one row per level and term; the log scale of ``effect``/``ss`` is named (a
        copy of the frame made on the first call: the result is frozen)."""
        return self._tidy.copy()

    @functools.cached_property
    def _tidy(self) -> pd.DataFrame:
        """:meth:`_make_frame`, made on first use (a report page asks for it six times per
        result; a replaced result is another object, made anew)."""
        return self._make_frame()

    def _make_frame(self) -> pd.DataFrame:
        t = self.effects
        out = pd.DataFrame({"metric": self.metric.name}, index=t.index)
        for i, col in enumerate(self.per):
            values = t["by"] if len(self.per) == 1 else t["by"].map(lambda v, i=i: v[i])
            out[col] = [plain(v) for v in values]
        out["term"] = t["term"]
        out["estimand"] = ["" if term in NON_EFFECT_TERMS else main_estimand(term, self.factors)
                           for term in t["term"]]
        if self.log:
            for src in ("ratio", "ratio_ci_low", "ratio_ci_high"):
                out[src] = t[src]
        scale = "_log" if self.log else self.metric.suffix
        out[f"effect{scale}"] = t["effect"]
        out[f"effect_ci_low{scale}"] = t["ci_low"]
        out[f"effect_ci_high{scale}"] = t["ci_high"]
        out["ci_level"] = t["ci_level"]
        out["ss" + ("_log" if self.log else "")] = t["ss"]
        out["variation_pct"] = t["variation_pct"]
        out["p_value"] = t["p_value"]
        if "p_value_holm" in t:
            out["p_value_holm"] = t["p_value_holm"]
        out["significant"] = self.significant()
        out["verdict"] = self.verdicts()
        levels = t["by"] if "by" in t else pd.Series([None] * len(t), index=t.index)
        out["df"] = t["df"]
        out["interpretable_alone"] = [
            term not in NON_EFFECT_TERMS and self.interpretable(term, lv)
            for term, lv in zip(t["term"], levels, strict=True)]
        out["on_timeout_cap"] = [bool(self.level_caps_ms.get(lv)) for lv in levels]
        out["cap_affected"] = [bool(self.level_affected_ms.get(lv)) for lv in levels]
        mde = self.detectable()
        names = (("mde_ratio_high", "mde_ratio_low") if self.log else
                 (f"mde_effect_high{self.metric.suffix}", f"mde_effect_low{self.metric.suffix}"))
        out[names[0]] = [m.high if m and m.testable else math.nan for m in mde]
        out[names[1]] = [m.low if m and m.testable else math.nan for m in mde]
        out["mde_note"] = [m.reason if m and not m.testable else "" for m in mde]
        out["detectable_df"] = [detectable_df(m) for m in mde]
        if self.mechanisms:  # only where some run recorded counters: other tables unchanged
            mech = pd.DataFrame([mechanism_columns(self.mechanism_of(t, lv), "low", "high")
                                 for t, lv in zip(t["term"], levels, strict=True)],
                                index=out.index)
            out = pd.concat([out, mech], axis=1)
        why = self.not_estimable()
        hidden = np.array([bool(w) for w in why])
        for col in ("ratio_ci_low", "ratio_ci_high", f"effect_ci_low{scale}",
                    f"effect_ci_high{scale}"):
            if col in out:
                out.loc[hidden, col] = math.nan
        out[NOT_ESTIMABLE_COLUMN] = why
        return out.reset_index(drop=True)

    def simple_frame(self) -> pd.DataFrame:
        """Tidy: one row per simple effect (each factor of a significant interaction at each
        level of the other), named as :meth:`to_frame` names its columns; empty without a
        significant interaction."""
        s = self.simple_effects
        if not len(s):  # no significant interaction: no rows (and the frame has no columns)
            return pd.DataFrame(columns=["metric", *self.per, "factor", "interaction",
                                         "estimand", "at_factor", "at_level"])
        out = pd.DataFrame({"metric": self.metric.name}, index=s.index)
        for col in self.per:
            out[col] = [plain(v) for v in s[col]]
        out["factor"], out["interaction"] = s["factor"], s["interaction"]
        out["estimand"] = s["estimand"]
        # one value per cell: "cache=ram" is the other factor and its level
        other = [str(a).partition("=") for a in s["at"]]
        out["at_factor"] = [o[0] for o in other]
        out["at_level"] = [o[2] for o in other]
        names = (("ratio", "ratio_ci_low", "ratio_ci_high") if self.log else
                 tuple(f"effect{x}{self.metric.suffix}" for x in ("", "_ci_low", "_ci_high")))
        for name, src in zip(names, ("effect", "ci_low", "ci_high"), strict=True):
            out[name] = s[src]
        out["ci_level"] = s["ci_level"]
        for col in ("p_value", "p_value_holm", "holm_family", "significant", "verdict",
                    "n_runs", "on_timeout_cap", "cap_affected", "method"):
            out[col] = s[col]
        for col in AB_COLUMNS:  # the A/B row of the same two cells (two-factor designs)
            if col in s:
                out[col] = s[col]
        out["df"] = s["df_error"]
        mde = (("mde_ratio_high", "mde_ratio_low") if self.log else
               (f"mde_effect_high{self.metric.suffix}", f"mde_effect_low{self.metric.suffix}"))
        out[mde[0]], out[mde[1]], out["mde_note"] = s["mde_high"], s["mde_low"], s["mde_note"]
        out["detectable_df"] = s["df_error"].where(s["mde_high"].notna())
        out[NOT_ESTIMABLE_COLUMN] = s[NOT_ESTIMABLE_COLUMN]
        out["stalls"] = s["stalls"]
        out["warnings"] = ["; ".join(texts(w)) for w in s["warnings"]]
        if "mechanism" in s and any(s["mechanism"]):
            mech = pd.DataFrame([mechanism_columns(m, "low", "high") for m in s["mechanism"]],
                                index=out.index)
            out = pd.concat([out, mech], axis=1)
        return out.reset_index(drop=True)

    def run_notes_frame(self) -> pd.DataFrame:
        """Tidy: one row per run behind a level's warnings (a status other than ok among its
        cell's peers, a latency on a known cap): the ``per`` columns, then ``run_id, kind,
        detail`` (:func:`perfkit.analysis.core._run_notes.run_notes`)."""
        records = []
        for key, notes in self.level_run_notes.items():
            values = key if isinstance(key, tuple) else (key,)
            head = {c: plain(v) for c, v in zip(self.per, values, strict=False)}
            records += [{"metric": self.metric.name, **head,
                         **dict(zip(("run_id", "kind", "detail"), n, strict=True))}
                        for n in notes]
        return pd.DataFrame.from_records(
            records, columns=["metric", *self.per, "run_id", "kind", "detail"])

    def variation_frame(self) -> pd.DataFrame:
        """The share of the variation of the (log) metric each term explains, one row per
        level and term, with ``in_interaction``: a main effect whose factor is in a significant
        interaction at that level, so its share splits a variation the factors cause together
        (a figure marks it; :meth:`interpretable`)."""
        frame = self.to_frame()
        out = frame[[*self.per, "term", "variation_pct"]].copy()
        out["in_interaction"] = [t not in NON_EFFECT_TERMS and ":" not in t and not alone
                                 for t, alone in zip(frame["term"],
                                                     frame["interpretable_alone"], strict=True)]
        return out

    def to_dict(self) -> dict[str, Any]:
        from perfkit.analysis.core import json_records

        return {"metric": self.metric.name, "factors": list(self.factors),
                "per": list(self.per), "log": self.log, "confidence": self.confidence,
                "block": self.block, "coding": {k: dict(v) for k, v in self.coding.items()},
                "warnings": [w.to_dict() for w in self.warnings],
                "effects": json_records(self.to_frame()),
                "simple_effects": json_records(self.simple_frame())}


def usable_block(rows: RunSet, factors: Sequence[str], per: Sequence[str],
                 block: str | None = "auto") -> tuple[str | None, Warn | None]:
    """The block column to use and, when blocks exist but are not used, why.

    ``auto`` uses ``block`` when every run has one, there are two or more, and every block
    holds every cell of the design (a complete replicate); an explicit column is used as given.
    """
    if block != "auto":
        if block and block not in rows.frame:
            raise UsageError(f"--block: no column {block!r}")
        return (block or None), None
    frame = rows.frame
    if "block" not in frame or frame["block"].isna().all():
        return None, None
    if frame["block"].isna().any() or frame["block"].nunique() < 2:
        return None, Warn(Code.BLOCKS_NOT_USED, incomplete=False)
    keys = [*factors, *per]
    cells = frame[keys].astype(str).drop_duplicates()
    per_block = frame.groupby("block")[keys].apply(lambda g: len(g.astype(str).drop_duplicates()))
    if (per_block != len(cells)).any():
        return None, Warn(Code.BLOCKS_NOT_USED, incomplete=True)
    return "block", None


def factorial_effects(rows: RunSet, factors: Sequence[str], metric: Metric, *,
                      by: Any = "auto", exclude: Sequence[str] = (), block: str | None = "auto",
                      levels: Mapping[str, Sequence[Any]] | None = None, log: bool = True,
                      confidence: float = 0.95, alpha: float = 0.05) -> FactorialResult:
    """The factorial analysis of ``metric`` (see the module docstring)."""
    factors = list(factors)
    missing = [c for c in [*factors, metric.name] if c not in rows.frame]
    if missing:
        raise UsageError(f"no column {missing[0]!r}; factors are manifest factors or "
                         "runs-frame columns")
    rows, unmeasured = measured_rows(rows, metric)
    if not len(rows):
        raise DataError(f"no run measured {metric.name}: "
                        + "; ".join(n["reason"] for n in unmeasured))
    pre_block = None if block == "auto" else block
    per, _ = row_keys([rows], by, [*factors, *exclude, *([pre_block] if pre_block else [])])
    used, why = usable_block(rows, factors, per, block)
    warnings = [why] if why is not None else []
    warnings += unmeasured
    warnings += _saturation_notes(rows, metric, [*factors, *per])
    try:
        table = factorial(rows.frame, factors, metric.name, log=log, confidence=confidence,
                          block=used, by=per or None, levels=levels)
    except ValueError as exc:  # the design cannot be analysed as asked
        if isinstance(exc, PerfkitError):
            raise
        raise UsageError(str(exc)) from exc
    warnings += list(table.attrs.get("warnings", []))
    df = table.attrs["df_error"]
    df_error = df if isinstance(df, dict) else {None: df}
    if "by" not in table:
        table.insert(0, "by", None)
    result = FactorialResult(metric, tuple(factors), tuple(per), log, confidence, alpha, used,
                             dict(table.attrs["coding"]), df_error, len(rows), table,
                             pd.DataFrame(), tuple(warnings))
    # what the attrs held is the result's fields (coding, df_error, warnings); pandas deep-copies
    # a frame's attrs into every frame and row derived from it (issue 33: 10% of effects' run)
    table.attrs = {}
    caps, caps_ms, affected, counts, saturated, notes = {}, {}, {}, {}, {}, {}
    ats: dict[str, RunSet] = {}

    def at_level(key: Any) -> RunSet:  # each level's runs taken once (issue 33: 3 times)
        if key_of(key) not in ats:
            ats[key_of(key)] = rows_at(rows, per, key)
        return ats[key_of(key)]

    for key in (table["by"].drop_duplicates() if per else [None]):
        at = at_level(key)
        counts[key] = len(at)
        statuses = statuses_by_cell(at, metric, [*factors, *per])
        notes[key] = run_notes(at, metric, statuses=statuses)
        saturated[key] = sum(s.status == RunStatus.SATURATED for s in statuses)
        check = cap_check(at, metric)
        if check:
            caps[key] = check.warnings
        if check.caps_ms:
            caps_ms[key] = check.caps_ms
        if check.affected_ms:
            affected[key] = check.affected_ms
    mechanisms = main_mechanisms(rows, per, table["by"].drop_duplicates() if per else [None],
                                 result.coding, key_of, at_level)
    result = dataclasses.replace(result, level_warnings=caps, level_runs=counts,
                                 level_caps_ms=caps_ms, level_affected_ms=affected,
                                 level_saturated=saturated, level_run_notes=notes,
                                 mechanisms=mechanisms)
    warnings_all = list(result.warnings) + [w for ws in caps.values() for w in ws]
    warnings_all += dict.fromkeys(w for m in mechanisms.values() for w in m.warnings)
    simple = simple_effects(rows, result, at_level)
    if len(simple) and log and len(factors) == 2:  # compared run against run, as the A/B rows
        ab = ab_comparisons(rows, factors, metric, by=list(per) or "none", exclude=exclude,
                            alpha=alpha, confidence=confidence)
        simple = same_contrast(simple, ab, per)
    return dataclasses.replace(result, simple_effects=simple, warnings=tuple(warnings_all))


def _saturation_notes(rows: RunSet, metric: Metric, cells: list[str]) -> list[Warn]:
    statuses = statuses_by_cell(rows, metric, cells)
    out = []
    for kind in (RunStatus.SATURATED, RunStatus.SHORT):
        n = sum(s.status == kind for s in statuses)
        if n:
            out.append(Warn(Code.FACTORIAL_KEEPS_RUNS, runs=n, status=kind, metric=metric.name))
    partial = [s.reason for s in statuses if s.status == RunStatus.PARTIAL]
    if partial:
        out.append(Warn(Code.FACTORIAL_KEEPS_PARTIAL, metric=metric.name, reasons=partial))
    return out


def _nan(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def parse_levels(spec: str, frame: pd.DataFrame) -> dict[str, tuple[Any, Any]]:
    """``'a=off:on,b=8:4096'`` -> ``{"a": ("off", "on"), "b": (8, 4096)}``, typed like the
    column (the explicit low:high coding of a factor)."""
    out = {}
    for part in filter(None, (p.strip() for p in spec.split(","))):
        name, _, pair = part.partition("=")
        low, sep, high = pair.partition(":")
        if not sep or name not in frame:
            raise UsageError(f"--levels: expected factor=low:high with a known factor, "
                             f"found {part!r}")
        present = {level_text(v): v for v in frame[name].dropna().unique()}
        if low not in present or high not in present:
            raise UsageError(f"--levels: {name} has levels {sorted(present)}")
        out[name] = (present[low], present[high])
    return out
