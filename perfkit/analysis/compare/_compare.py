"""Run-vs-run comparisons of one metric, row by row, with one verdict rule for every front end.

:func:`compare_runs` takes two :class:`RunSet` (BASE and NEW), splits them into rows
(:mod:`perfkit.analysis.core._grouping`), gives every run its status
(:mod:`perfkit.analysis.core._runstatus`), compares each row with :func:`perfkit.stats.compare`
and Holm-adjusts the p-values over the rows (one family per metric). The verdict of a row
(:func:`verdict`) is one of

- ``better`` / ``worse``: the Holm-adjusted p is below alpha (direction from the metric and
  the ratio, or, when values <= 0 leave no ratio, from the ranks: new's mean rank above or
  below base's);
- ``~``: no significant change; the row states the smallest change the design could have
  detected (80% power), or why it cannot (values <= 0 have no ratio);
- ``not testable``: no data of these run counts could reach alpha after the adjustment
  (the smallest attainable p times the family size is not below alpha), so "no change"
  would mean nothing; the row says how many runs per arm would be needed;
- ``no data``: a side has no finished run, or no run that measured the metric: runs whose
  tool never printed it (:func:`perfkit.analysis.core._runstatus.unmeasured_reason`: wrk without
  ``--latency``, wrk's p99.9) are left out of the row, never ranked worst, and a note names
  how many and why (:attr:`ComparisonRow.n_unmeasured`).
"""

from __future__ import annotations

import collections
import dataclasses
import math
from collections.abc import Sequence
from typing import Any, cast

import numpy as np
import pandas as pd

from perfkit.analysis.compare._notes import (
    holm_step_note,
    one_note_per_run,
    order_check,
    ranked_worst,
    sensitivity_note,
    status_notes,
    untestable_note,
)
from perfkit.analysis.context import ArmDriftOnce, RowDrift, confounding_notes, row_drift
from perfkit.analysis.core import COLUMNS as RUN_NOTE_COLUMNS
from perfkit.analysis.core import (
    NOT_ESTIMABLE_COLUMN,
    Mechanism,
    Metric,
    RunSet,
    StallChange,
    affected,
    artefact,
    cap_check,
    cap_check_sides,
    comparison_columns,
    json_records,
    judge_interval,
    match,
    mechanism,
    mechanism_columns,
    not_finite,
    row_keys,
    run_notes,
    run_statuses,
    side_ranks_higher,
    stall_change,
    unmeasured_note,
)
from perfkit.analysis.core import holm as holm_stalls
from perfkit.formatting import level_text, plain
from perfkit.stats import adjust_pvalues, compare
from perfkit.stats.comparison import WELCH, Comparison
from perfkit.stats.mannwhitney import runs_to_reach_alpha
from perfkit.stats.power import MinDetectable, min_detectable_ratio
from perfkit.stats.tpower import DetectableEffect, min_detectable_effect
from perfkit.units import to_float
from perfkit.vocabulary import RunStatus, Verdict
from perfkit.warning import Code, Warn, texts

BETTER, WORSE, NO_CHANGE, NOT_TESTABLE, NO_DATA = (Verdict.BETTER, Verdict.WORSE,
                                                   Verdict.NO_CHANGE, Verdict.NOT_TESTABLE,
                                                   Verdict.NO_DATA)
#: the power at which a "~" row states the smallest change it could have detected, and every
#: run count perfkit states (the gate's, the seeds' repeats)
POWER = 0.8
#: the note of a "~" row whose smallest detectable change cannot be computed
NO_MDE = Warn(Code.NO_MDE)
#: the comparison's ratio columns, where a 0 is no finite size (:func:`not_finite`)
RATIO_COLUMNS = ("ratio", "ratio_ci_low", "ratio_ci_high", "ratio_without_short",
                 "mde_ratio_high", "mde_ratio_low")


def runs_per_arm_needed(alpha: float, family: int = 1, limit: int = 100) -> int | None:
    """Fewest equal runs per arm whose smallest attainable p, times ``family`` (Holm's first
    step), is below ``alpha`` (:func:`perfkit.stats.mannwhitney.runs_to_reach_alpha`)."""
    return runs_to_reach_alpha(alpha, limit, family)


def verdict(comparison: Comparison, p_adjusted: float, metric: Metric, family: int = 1,
            new_ranks_higher: bool | None = None) -> Verdict:
    """The one verdict rule (see the module docstring). ``new_ranks_higher`` (from
    :func:`ranks_higher`) gives the direction of a significant change without a ratio."""
    if comparison.significant is None and math.isnan(comparison.p_value):
        return NO_DATA
    if not comparison.min_attainable_p * family < comparison.alpha:
        return NOT_TESTABLE
    if p_adjusted < comparison.alpha:
        if not math.isnan(comparison.ratio):
            return metric.verdict(comparison.ratio)
        if new_ranks_higher is not None:
            return metric.verdict(2.0 if new_ranks_higher else 0.5)
    return NO_CHANGE


@dataclasses.dataclass(frozen=True)
class ComparisonRow:
    """One row: its key values, the comparison, the adjusted p and the verdict; ``sensitivity``
    repeats the comparison without the runs in doubt (``short``) when there are any."""

    key: tuple[Any, ...]
    comparison: Comparison
    p_adjusted: float
    verdict: str
    n_short_base: int = 0
    n_short_new: int = 0
    sensitivity: Comparison | None = None
    sensitivity_verdict: str | None = None
    warnings: tuple[Warn, ...] = ()
    labels: tuple[tuple[str, str | None], ...] = ()
    #: for a "~" row: the smallest changes the design could have detected at 80% power (a
    #: row decided by Welch's t: that t's, :class:`perfkit.stats.tpower.DetectableEffect`)
    mde: MinDetectable | DetectableEffect | None = None
    #: per run of each side (in :func:`cell_runs` order): ranked worst (:func:`ranked_worst`)
    worst_base: tuple[bool, ...] = ()
    worst_new: tuple[bool, ...] = ()
    #: the known timeout caps (ms) whose artefact the row's values are, either side: its
    #: change is an artefact of the cap (:mod:`perfkit.analysis.core._caps`), not a measured ratio
    caps_ms: tuple[float, ...] = ()
    #: the cap warnings of both sides together (:func:`perfkit.analysis.core._caps.cap_check`)
    cap_warnings: tuple[Warn, ...] = ()
    #: the known caps that throttle the row's metric, not a latency (runs whose requests
    #: waited for a timeout): its change is measured and carries :attr:`cap_warnings`
    cap_affected_ms: tuple[float, ...] = ()
    #: the result without the runs in doubt, as one note (empty without such runs;
    #: :func:`perfkit.analysis.compare._notes.sensitivity_note`)
    sensitivity_note: str = ""
    #: per side, the runs left out because their tool never measured the metric ("no data"
    #: for this metric, not failed: :func:`perfkit.analysis.core._runstatus.unmeasured_reason`)
    n_unmeasured: tuple[int, int] = (0, 0)
    #: why they did not, once each (``"wrk prints p50-p99 only"``)
    unmeasured_reasons: tuple[str, ...] = ()
    #: what the server and the kernel counted on each side (:mod:`perfkit.analysis.
    #: mechanism`; empty when no run recorded counters)
    mechanism: Mechanism = Mechanism()
    #: per known cap some run of the row stalled on: the stalled runs of each side compared
    #: (:mod:`perfkit.analysis.core._stalls`): the result an artefact's ratio cannot give
    stalls: tuple[StallChange, ...] = ()
    #: the runs behind the row's warnings, one per record: ``(side, run_id, kind, detail)``
    #: (:func:`perfkit.analysis.core._run_notes.run_notes`)
    run_notes: tuple[tuple[str, str, str, str], ...] = ()
    #: the drift over the run order within the arms, over this row's distance between them
    #: (:func:`perfkit.analysis.context.row_drift`; :func:`compare_runs` only, None without
    #: run positions): what the gate takes off the change before judging it
    drift: RowDrift | None = None

    def not_estimable(self) -> dict[str, str]:
        """Per interval of the row (``median_base``, ``median_new``, ``ratio``): why it may
        not be printed (:func:`perfkit.analysis.core.judge_interval`: ends more than 100x apart,
        unless the ratio's interval lies wholly on one side of 1, as for every effect ratio;
        failed and saturated runs are ranked worst, which leaves no finite end), else ``""``."""
        c = self.comparison
        return {"median_base": judge_interval(c.median_base_ci_low, c.median_base_ci_high),
                "median_new": judge_interval(c.median_new_ci_low, c.median_new_ci_high),
                "ratio": judge_interval(c.ratio_ci_low, c.ratio_ci_high, side_of=1.0)}

    @property
    def unmeasured(self) -> bool:
        """Whether the row is ``no data`` because its runs did not measure the metric: each
        side has runs, and a side without a value has only runs that did not measure it (not
        a row where a side has no run at all, nor one whose runs all failed)."""
        c = self.comparison
        sides = ((c.n_base, c.n_failed_base, self.n_unmeasured[0]),
                 (c.n_new, c.n_failed_new, self.n_unmeasured[1]))
        return (self.verdict == NO_DATA and any(self.n_unmeasured)
                and all(n + k > 0 for n, _, k in sides)
                and all(k > 0 for n, failed, k in sides if n == failed))

    @property
    def reported_verdict(self) -> str:
        """The verdict as tables and answers report it: :attr:`verdict`, except that a result
        (``better``/``worse``/``~``) computed from values on a known timeout cap is an artefact
        of the cap (``"artefact of the 1000 ms cap"``, :func:`perfkit.analysis.core._caps.
        artefact`), as in the factorial analysis. :attr:`verdict` keeps the test's outcome
        (the contract ``perfkit gate`` reads)."""
        if self.caps_ms and self.verdict in (BETTER, WORSE, NO_CHANGE):
            return artefact(self.caps_ms)
        return affected(self.verdict, self.cap_affected_ms)


@dataclasses.dataclass(frozen=True)
class ComparisonTable:
    """Every row of a comparison of ``metric`` between ``base`` and ``new``."""

    metric: Metric
    base: str
    new: str
    keys: tuple[str, ...]
    rows: tuple[ComparisonRow, ...]
    alpha: float
    confidence: float
    n_base_runs: int
    n_new_runs: int
    correction: str = "holm"
    warnings: tuple[Warn, ...] = ()

    @property
    def family(self) -> int:
        return len(self.rows)

    def verdict_counts(self) -> dict[str, int]:
        """How many rows got each verdict, most frequent first."""
        return dict(collections.Counter(r.verdict for r in self.rows).most_common())

    def reported_counts(self) -> dict[str, int]:
        """How many rows got each reported verdict (:attr:`ComparisonRow.reported_verdict`:
        artefacts of a cap apart, never counted as better or worse), most frequent first."""
        return dict(collections.Counter(r.reported_verdict for r in self.rows).most_common())

    def cap_affected_rows(self) -> list[ComparisonRow]:
        """The rows whose metric (not a latency) is throttled by a known timeout cap
        (:attr:`ComparisonRow.cap_affected_ms`)."""
        return [r for r in self.rows if r.cap_affected_ms]

    def row_sizes(self) -> list[tuple[int, int]]:
        """The distinct (base, new) run counts of the rows, in row order."""
        return list(dict.fromkeys((r.comparison.n_base, r.comparison.n_new) for r in self.rows))

    def not_testable_note(self) -> str | None:
        """Why rows are ``not testable`` and how many runs per arm would make them testable
        (Holm over the table); None when no row is."""
        rows = [r for r in self.rows if r.verdict == NOT_TESTABLE]
        if not rows:
            return None
        need = runs_per_arm_needed(self.alpha, self.family)
        sizes = ", ".join(dict.fromkeys(f"{r.comparison.n_base} vs {r.comparison.n_new}"
                                        for r in rows))
        holm = f" after Holm over {self.family} comparisons" if self.family > 1 else ""
        more = f">= {need} runs per arm would" if need else "many more runs would"
        return (f"{len(rows)} of {self.family} comparisons not testable: {sizes} runs cannot "
                f"reach p < {self.alpha:g}{holm}; {more}")

    def interval_words(self) -> str:
        """What the ratio intervals are: ``"95% CI"`` for one row; over a family, ``"99.2%
        CIs (Bonferroni over 6 rows: 95% together)"``, the adjustment the verdicts carry."""
        return interval_words(self.alpha, self.family)

    def describe(self) -> str:
        """The method, in a sentence a reader can paste into a paper."""
        holm = (f", the p-values Holm-adjusted over the {self.family} comparisons of the table "
                f"and the intervals Bonferroni-adjusted over them (each at "
                f"{_level(self.alpha / self.family)}, so that they hold together at "
                f"{1 - self.alpha:.0%} and an interval excludes 1 only where the verdict is "
                "significant)" if self.family > 1 else "")
        welch = ("; where the rank test's smallest attainable p (times the family) came within a "
                 "factor of 2 of alpha, Welch's t on the log values (Welch 1947) with the ratio "
                 "of geometric means and its t interval, at 4 or more runs a side"
                 if any(r.comparison.p_method == WELCH for r in self.rows) else "")
        return (f"{self.metric.label.capitalize()} was compared run against run (one value per "
                f"run): the two-sided Mann-Whitney U test (exact, tie-aware, up to 25 runs per "
                f"side), the change as the Hodges-Lehmann ratio new/base with its Moses "
                f"interval{holm}{welch}, at alpha {self.alpha:g}; medians of runs with "
                f"distribution-free order-statistic {self.confidence:.0%} intervals.")

    def block_treatment(self) -> tuple[str, str, bool]:
        """How this result treats an experiment's blocks: what it is, of what, and
        whether it models them (:func:`perfkit.analysis.context._validity.block_treatment`)."""
        return "the Mann-Whitney comparisons", self.metric.label, False

    def to_frame(self) -> pd.DataFrame:
        """Tidy: one row per comparison row, every number in its own unit-suffixed column.

        ``verdict`` is :attr:`ComparisonRow.reported_verdict` (one verdict column: an artefact of
        a cap says so, a change a cap affects says that too). No cell holds +-inf: a median
        that is a failed run (ranked worst), an unbounded median
        interval, and a ratio of 0 or infinity (failed runs ranked worst: no size) are written
        as missing, and the row's ``warnings`` say which and why (:func:`not_finite`)."""
        u = self.metric.suffix
        reasons = comparison_columns(u)
        records = []
        mechanisms = any(r.mechanism for r in self.rows)
        for row in self.rows:
            c, s = row.comparison, row.sensitivity
            rec: dict[str, Any] = {"metric": self.metric.name}
            rec.update({k: plain(v) for k, v in zip(self.keys, row.key, strict=True)})
            rec.update(dict(row.labels))
            rec.update({
                "n_base": c.n_base, "n_new": c.n_new,
                "n_failed_base": c.n_failed_base, "n_failed_new": c.n_failed_new,
                "n_short_base": row.n_short_base, "n_short_new": row.n_short_new,
                f"median_base{u}": c.median_base, f"median_base_ci_low{u}": c.median_base_ci_low,
                f"median_base_ci_high{u}": c.median_base_ci_high,
                f"median_new{u}": c.median_new, f"median_new_ci_low{u}": c.median_new_ci_low,
                f"median_new_ci_high{u}": c.median_new_ci_high,
                "ratio": c.ratio, "ratio_ci_low": c.ratio_ci_low,
                "ratio_ci_high": c.ratio_ci_high, "ratio_ci_level": c.ratio_ci_level,
                "p_value": c.p_value, "p_method": c.p_method,
                f"p_value_{self.correction}": row.p_adjusted,
                "min_attainable_p": c.min_attainable_p,
                # one verdict column: the reported one (an artefact of a cap is never
                # 'better'); the test's own outcome stays ComparisonRow.verdict (the gate's)
                "verdict": row.reported_verdict,
                "mde_ratio_high": _mde(row.mde, "ratio_high"),
                "mde_ratio_low": _mde(row.mde, "ratio_low"),
                "detectable_df": detectable_df(row.mde),
                "ratio_without_short": s.ratio if s else math.nan,
                "p_value_without_short": s.p_value if s else math.nan,
                # one verdict column per table: whether leaving the short runs out keeps it
                # (empty without short runs; the verdict itself is the row's)
                "same_verdict_without_short": (row.sensitivity_verdict == row.verdict
                                               if row.sensitivity_verdict else pd.NA),
                "on_timeout_cap": bool(row.caps_ms),
                "cap_affected": bool(row.cap_affected_ms),
                "stalled_runs_base": _one(row.stalls, "stalled_base"),
                "stalled_runs_new": _one(row.stalls, "stalled_new"),
                "stall_p_value_holm": _one(row.stalls, "p_adjusted"),
                "stalls": "; ".join(x.text() for x in row.stalls),
            })
            if mechanisms:  # only where some run recorded counters: other tables unchanged
                rec.update(mechanism_columns(row.mechanism))
            why = row.not_estimable()
            for name, reason in why.items():
                if reason:
                    lo, hi = ((f"{name}_ci_low", f"{name}_ci_high") if name == "ratio" else
                              (f"{name}_ci_low{u}", f"{name}_ci_high{u}"))
                    rec[lo] = rec[hi] = math.nan
            rec[NOT_ESTIMABLE_COLUMN] = "; ".join(f"{k}: {v}" for k, v in why.items() if v)
            rec["warnings"] = "; ".join(texts([*row.warnings,
                                               *not_finite(rec, reasons, RATIO_COLUMNS)]))
            records.append(rec)
        return pd.DataFrame.from_records(records)

    def run_notes_frame(self) -> pd.DataFrame:
        """Tidy: one row per run behind a row's warnings (a status other than ok, a value on
        a known cap): the row's keys, then ``side, run_id, kind, detail``."""
        records = [{"metric": self.metric.name,
                    **{k: plain(v) for k, v in zip(self.keys, row.key, strict=True)},
                    **dict(zip(RUN_NOTE_COLUMNS, note, strict=True))}
                   for row in self.rows for note in row.run_notes]
        return pd.DataFrame.from_records(
            records, columns=["metric", *self.keys, *RUN_NOTE_COLUMNS])

    def to_dict(self) -> dict[str, Any]:
        return {**self.metric.to_dict(), "base": self.base, "new": self.new,
                "keys": list(self.keys), "alpha": self.alpha, "confidence": self.confidence,
                "correction": self.correction,
                "warnings": [w.to_dict() for w in self.warnings],
                "rows": json_records(self.to_frame())}


def _level(alpha: float) -> str:
    """``0.05 / 6`` -> ``"99.2%"``: a coverage of 1 - ``alpha``, to three digits."""
    return f"{(1 - alpha) * 100:.3g}%"


def interval_words(alpha: float, family: int, what: str = "rows") -> str:
    """What a family's intervals are (:meth:`ComparisonTable.interval_words`): ``"95% CI"``,
    or ``"99.2% CIs (Bonferroni over 6 rows: 95% together)"``."""
    if family < 2:
        return f"{_level(alpha)} CI"
    return (f"{_level(alpha / family)} CIs (Bonferroni over {family} {what}: "
            f"{_level(alpha)} together)")


def _one(stalls: tuple[StallChange, ...], name: str) -> float:
    """A number of the row's one stall comparison (NaN without one, or with several caps:
    :attr:`ComparisonRow.stalls` then says each in the ``stalls`` text)."""
    return float(getattr(stalls[0], name)) if len(stalls) == 1 else math.nan


def detectable_df(mde: MinDetectable | DetectableEffect | None) -> float:
    """The degrees of freedom the smallest detectable change rests on (NaN without one): a t
    test's error df (:class:`perfkit.stats.tpower.DetectableEffect`: the factorial's, or
    Welch's), else the pooled log spread of both arms' runs, n_base + n_new - 2
    (:func:`perfkit.stats.power.min_detectable_ratio`). At 2 df the spread, and so the
    detectable size, lies between 0.16 and 1.9 times the truth in 95% of designs: a page says
    "estimate" with these df (issue 34)."""
    if mde is None or not mde.testable:
        return math.nan
    if isinstance(mde, DetectableEffect):
        return float(mde.df) if mde.df is not None else math.nan
    return float(mde.n_base + mde.n_new - 2)


def _mde(mde: MinDetectable | DetectableEffect | None, name: str) -> float:
    return to_float(getattr(mde, name) if mde is not None else None)


@dataclasses.dataclass(frozen=True)
class Cell:
    """One row to compare: its key values, its two sides, and labels shown beside the key
    (e.g. ``base``/``new`` when each row compares different levels)."""

    key: tuple[Any, ...]
    base: RunSet
    new: RunSet
    labels: tuple[tuple[str, str | None], ...] = ()


def compare_runs(base: RunSet, new: RunSet, metric: Metric, *, by: Any = "auto",
                 exclude: Sequence[str] = (), alpha: float = 0.05, confidence: float = 0.95,
                 exclude_failed: str | None = None) -> ComparisonTable:
    """Compare ``metric`` between ``base`` and ``new``, row by row (see the module docstring).

    ``exclude`` lists columns never to split rows on (e.g. those a selection pins). A row
    whose significant change a drift over the run order could have made (the arms not
    interleaved) gets a note in the table's warnings
    (:func:`perfkit.analysis.context._confounding.confounding_notes`).
    """
    keys, notes = row_keys([base, new], by, exclude)
    found = ArmDriftOnce(base, new, metric, keys, confidence)
    notes += order_check(base, new, found)
    cells = [Cell(label, _part(base, keys, label), _part(new, keys, label))
             for label in _labels([base, new], keys)]
    table = compare_cells(cells, metric, keys, base.label, new.label, alpha=alpha,
                          confidence=confidence, exclude_failed=exclude_failed, notes=notes,
                          n_runs=(len(base), len(new)))
    drifted = confounding_notes([r for r in table.rows if r.verdict in (BETTER, WORSE)], keys,
                                found)
    rows = tuple(dataclasses.replace(r, drift=row_drift(found, keys, r.key)) for r in table.rows)
    return dataclasses.replace(table, rows=rows, warnings=(*table.warnings, *drifted))


def compare_cells(cells: Sequence[Cell], metric: Metric, keys: Sequence[str], base: str,
                  new: str, *, alpha: float = 0.05, confidence: float = 0.95,
                  exclude_failed: str | None = None, notes: Sequence[Warn] = (),
                  n_runs: tuple[int, int] | None = None) -> ComparisonTable:
    """Compare every cell, Holm-adjust over all of them (one family), give each its verdict."""
    family = len(cells)
    raw = [_compare_cell(c.base, c.new, metric, alpha, confidence, exclude_failed, family)
           for c in cells]
    adjusted = adjust_pvalues(np.array([r[0].p_value for r in raw], dtype=float), "holm")
    rows = []
    for cell, (c, short, sens, notes_row, worst, up, unmeasured), p_adj in zip(
            cells, raw, adjusted, strict=True):
        v = verdict(c, p_adj, metric, family, up[0])
        sv = verdict(sens, sens.p_value, metric, family, up[1]) if sens is not None else None
        mde = _detectable(cell, metric, alpha, family, c) if v == NO_CHANGE else None
        no_mde = (NO_MDE,) if v == NO_CHANGE and mde is None else ()
        without = (sensitivity_note(level_text(", ".join(map(str, cell.key))), sens, cast(str, sv),
                                    sv == NOT_TESTABLE, family)
                   if sens is not None and any(short) else "")
        notes_all = (tuple(notes_row) + c.warnings
                     + untestable_note(c, v == NOT_TESTABLE, family) + no_mde
                     + _step_note(c, v, float(p_adj), family))
        rows.append(ComparisonRow(cell.key, c, float(p_adj), v, short[0], short[1], sens, sv,
                                  notes_all, cell.labels, mde,
                                  tuple(map(bool, worst[0])), tuple(map(bool, worst[1])),
                                  *_caps(cell, metric),
                                  without, unmeasured[0], unmeasured[1],
                                  mechanism(cell.base, cell.new)))
    rows = _with_stalls(rows, cells, alpha)
    rows = [dataclasses.replace(r, run_notes=tuple(
        (side, *note) for side, part in (("base", c.base), ("new", c.new))
        for note in run_notes(part, metric))) for r, c in zip(rows, cells, strict=True)]
    if n_runs is None:  # distinct runs: cells may share a side (A/B tables share the base)
        n_runs = (len({id(r) for c in cells for r in c.base.runs}),
                  len({id(r) for c in cells for r in c.new.runs}))
    said = tuple(dict.fromkeys(w for r in rows for w in r.mechanism.warnings))
    return ComparisonTable(metric, base, new, tuple(keys), tuple(rows), alpha, confidence,
                           n_runs[0], n_runs[1], warnings=tuple(notes) + said)


def _step_note(c: Comparison, v: Verdict, p_adjusted: float, family: int) -> tuple[Warn, ...]:
    """A significant row whose Bonferroni interval holds 1 says why
    (:func:`perfkit.analysis.compare._notes.holm_step_note`)."""
    if v not in (BETTER, WORSE) or not c.ratio_ci_low <= 1 <= c.ratio_ci_high:
        return ()
    return (holm_step_note(p_adjusted, family, c.ratio_ci_level),)


def _with_stalls(rows: list[ComparisonRow], cells: Sequence[Cell],
                 alpha: float) -> list[ComparisonRow]:
    """The rows whose values sit on a cap, or that a cap affects, with their stalled runs
    compared (:func:`perfkit.analysis.core._stalls.stall_change`), Holm over those rows."""
    found = [stall_change(c.base, c.new, alpha) if (r.caps_ms or r.cap_affected_ms) else ()
             for r, c in zip(rows, cells, strict=True)]
    return [dataclasses.replace(r, stalls=s) if s else r
            for r, s in zip(rows, holm_stalls(found), strict=True)]


def _caps(cell: Cell, metric: Metric) -> tuple[tuple[float, ...], tuple[Warn, ...],
                                              tuple[float, ...]]:
    """The cap check of the cell's runs, both sides together, each run judged among its own
    side's peers (:func:`cap_check_sides`)."""
    check = cap_check_sides((cell.base, cell.new), metric)
    return check.caps_ms, check.warnings, check.affected_ms


def _detectable(cell: Cell, metric: Metric, alpha: float, family: int,
                c: Comparison) -> MinDetectable | DetectableEffect | None:
    """The minimum detectable ratio of a row with no significant change, from its runs'
    spread (:func:`perfkit.stats.power.min_detectable_ratio`, 80% power, Holm's first step);
    for a row Welch's t decided (:data:`perfkit.stats.comparison.WELCH`), that t's own
    (:func:`perfkit.stats.tpower.min_detectable_effect` on its interval and df)."""
    if c.p_method == WELCH:
        return min_detectable_effect(c.ratio_ci_low, c.ratio_ci_high, c.df,
                                     confidence=c.ratio_ci_level, alpha=alpha,
                                     family_size=family, power=POWER)
    values = [side.values(metric.name) for side in (cell.base, cell.new)]
    values = [v[np.isfinite(v) & (v > 0)] for v in values]
    if min(len(v) for v in values) < 2:
        return None
    return min_detectable_ratio(values[0], values[1], alpha=alpha, power=POWER,
                                lower_is_better=metric.lower_is_better, family_size=family)


def _compare_cell(b: RunSet, n: RunSet, metric: Metric, alpha: float, confidence: float,
                  exclude_failed: str | None, family: int = 1) -> tuple:
    """The comparison of one cell: runs that did not measure the metric left out (and
    noted), the others compared with their statuses; the flags of runs ranked worst are
    aligned with every run of each side."""
    sides, measured, why = [], [], []
    notes: list[Warn] = []
    for label, rows in (("base", b), ("new", n)):
        statuses = run_statuses(rows, metric)
        values = rows.values(metric.name) if metric.name in rows.frame else np.full(
            len(rows), np.nan)
        keep = np.array([s.status != RunStatus.NO_DATA for s in statuses], dtype=bool)
        reasons = [s.reason for s in statuses if s.status == RunStatus.NO_DATA]
        notes.extend(unmeasured_note(label, reasons, metric))
        why.extend(reasons)
        sides.append((values[keep], [s for s, k in zip(statuses, keep, strict=True) if k]))
        measured.append(keep)
    notes = [w for side, rows in (("base", b), ("new", n))
             for w in cap_check(rows, metric, side).warnings] + notes
    failed = []
    for label, (_, statuses) in zip(("base", "new"), sides, strict=True):
        failed.append(ranked_worst(statuses, metric))
        notes.extend(status_notes(label, statuses))
    c = compare(sides[0][0], sides[1][0], alpha, confidence=confidence,
                lower_is_better=metric.lower_is_better, failed_base=failed[0],
                failed_new=failed[1], exclude_failed=exclude_failed, family=family)
    c = one_note_per_run(c, [st for _, st in sides], failed, metric)
    unmeasured = tuple(int((~k).sum()) for k in measured)
    if all(u > 0 for u, (v, _) in zip(unmeasured, sides, strict=True) if not len(v)):
        c = _measured_only(c, metric)
    up = [side_ranks_higher(sides, failed, metric, exclude_failed)]
    short = [np.array([s.status == RunStatus.SHORT for s in st], dtype=bool) for _, st in sides]
    sens = None
    if any(m.any() for m in short):
        sure = [~m for m in short]
        sens = compare(sides[0][0][sure[0]], sides[1][0][sure[1]], alpha, confidence=confidence,
                       lower_is_better=metric.lower_is_better, failed_base=failed[0][sure[0]],
                       failed_new=failed[1][sure[1]], exclude_failed=exclude_failed,
                       family=family)
        up.append(side_ranks_higher([(v[k], None) for (v, _), k in zip(sides, sure, strict=True)],
                                [f[k] for f, k in zip(failed, sure, strict=True)], metric,
                                exclude_failed))
    worst = [_aligned(f, k) for f, k in zip(failed, measured, strict=True)]
    return (c, (int(short[0].sum()), int(short[1].sum())), sens, notes, worst,
            (*up, None)[:2], (unmeasured, tuple(dict.fromkeys(why))))


def _aligned(flags: np.ndarray, measured: np.ndarray) -> np.ndarray:
    """``flags`` of the measured runs, spread over every run (False where unmeasured)."""
    out = np.zeros(len(measured), dtype=bool)
    out[measured] = flags
    return out


def _measured_only(c: Comparison, metric: Metric) -> Comparison:
    """``c`` whose "a side has no runs" says what it means here: no run that measured
    ``metric`` (the runs that did not are noted on the row)."""
    return dataclasses.replace(c, warnings=tuple(
        Warn(Code.NOTHING_TO_COMPARE, metric=metric.name) if w == Warn(Code.NOTHING_TO_COMPARE)
        else w for w in c.warnings))


def _labels(sides: Sequence[RunSet], keys: list[str]) -> list[tuple]:
    if not keys:
        return [()]
    # a column one side does not record is missing there (``--by`` may name it)
    both = pd.concat([s.frame.reindex(columns=keys) for s in sides],
                     ignore_index=True).drop_duplicates()
    both = both.sort_values(keys, key=_sort_key, ignore_index=True)
    return [tuple(plain(v) for v in r) for r in both.itertuples(index=False)]


def _sort_key(column: pd.Series) -> pd.Series:
    numeric = pd.to_numeric(column, errors="coerce")
    return numeric if numeric.notna().all() else column.astype(str)


def row_labels(sides: Sequence[RunSet], keys: Sequence[str]) -> list[tuple]:
    """The rows' key values over ``sides``, in the order :func:`compare_runs` lists them."""
    return _labels(list(sides), list(keys))


def cell_runs(rows: RunSet, keys: Sequence[str], key: Sequence[Any]) -> RunSet:
    """The runs of ``rows`` in the comparison row whose ``keys`` columns have the values
    ``key`` (a :attr:`ComparisonRow.key` of a table over ``keys``)."""
    return _part(rows, list(keys), tuple(key))


def _part(rows: RunSet, keys: list[str], label: tuple) -> RunSet:
    mask = np.ones(len(rows), dtype=bool)
    for key, value in zip(keys, label, strict=True):
        column = rows.frame[key] if key in rows.frame else pd.Series(
            [math.nan] * len(rows), dtype=float)
        mask &= match(column, [level_text(value)]) if not _isnan(value) else \
            column.isna().to_numpy()
    return rows.subset(mask)


def _isnan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)
