"""The regression gate: did NEW get worse than BASE by more than a stated threshold?

Built on :func:`perfkit.analysis.compare_runs` (one verdict rule for every front end): each
row of the comparison (a metric at one load level) gets a gate status from its verdict and its
ratio new/base with the ratio's ``1 - alpha`` interval (the Moses interval of the test;
``1 - alpha / m``, Bonferroni's, over the ``m`` load levels of a metric), against
the **threshold ratio** in the metric's bad direction: ``1 + max_regression`` for metrics where
lower is better (latency, errors), ``1 - max_regression`` where higher is better (throughput).

- ``regression``: the comparison calls the change significant and worse (Holm-adjusted p below
  alpha) *and* the whole interval lies beyond the threshold;
- ``pass``: the whole interval lies on the good side of the threshold (at or inside it), so a
  change as large as the threshold is ruled out; a significant change inside the threshold is
  reported as "significant, below threshold", a significant change for the better as
  "improvement";
- ``inconclusive``: the runs can never reach alpha ("not testable": too few runs), or the
  interval straddles the threshold (or lies beyond it without a significant test after Holm's
  adjustment); the row gives two numbers of runs per arm at the observed run-to-run spread
  (:func:`perfkit.stats.power.runs_needed`, 80% power), one for each thing the runs may show:
  to **resolve the threshold if nothing changed** (power to detect a change of the threshold's
  size; by the symmetry of the shift model, about the chance that an unchanged service's
  interval then ends inside the threshold: ``runs_per_arm_needed``), and to **decide the row
  if the change is the one observed** (power to detect the distance from the observed ratio to
  the threshold, which the interval must clear to call it a regression, or, inside it, a pass:
  ``runs_per_arm_observed``). That distance is planned from bounds, not from the estimate
  (:func:`perfkit.stats.planning.plan_observed`): the end nearest the threshold of the
  observed ratio's one-sided 80% interval, at the upper 95% bound of the spread
  (``observed_ratio_planned``); when that interval reaches the threshold no count is promised
  (:attr:`Code.CHANGE_COMPATIBLE_WITH_NONE`). A +194% change seen on 2 runs a side is decided
  by a few runs, while resolving +5% at its spread may take 100;
- ``no data``: the runs of a side did not measure the metric (wrk without ``--latency``
  prints no percentiles, wrk never prints p99.9: :attr:`ComparisonRow.unmeasured`); the row
  names how many runs and why;
- ``error``: a side has no run in the row (``no data``): the gate cannot judge it; and every
  row when the arms ran at different load levels (a load column, :data:`LOAD_COLUMNS`, whose
  values in BASE and NEW do not overlap: 16 against 32 connections), which a comparison pools
  as what the arms compare but a gate never judges: no load level has runs on both sides.

The exit status of a gate (:attr:`GateResult.exit_status`): 2 when a row is an error, else 1
when a row is a regression, else 3 when a row is inconclusive or has no data, else 0. A metric
nobody measured is no regression (1), and no error of use or of reading (2): the gate read
valid runs and could not judge what it was asked to, so it cannot pass either; 3 lets the CI
job decide, as for too few runs, and the row's reason says which metric to drop or which
option (``--latency``) to add.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd

from perfkit.analysis.compare._compare import (
    BETTER,
    NO_DATA,
    NOT_TESTABLE,
    POWER,
    WORSE,
    ComparisonRow,
    ComparisonTable,
    cell_runs,
    compare_runs,
    interval_words,
    runs_per_arm_needed,
)
from perfkit.analysis.core import LOAD_COLUMNS, Metric, RunSet
from perfkit.errors import UsageError
from perfkit.formatting import level_text, pct_change, plain
from perfkit.stats import _simcache
from perfkit.stats.planning import PlannedChange, plan_observed
from perfkit.stats.power import RunsNeeded, runs_needed
from perfkit.units import UnitError, fraction, to_float
from perfkit.vocabulary import GateOutcome, GateStatus
from perfkit.warning import Warn, texts

PASS, REGRESSION, INCONCLUSIVE, ERROR = (GateStatus.PASS, GateStatus.REGRESSION,
                                        GateStatus.INCONCLUSIVE, GateStatus.ERROR)
#: a row whose runs did not measure the metric (the verdict word of :mod:`.runstatus`)
NO_DATA_GATE = GateStatus.NO_DATA
#: exit status of a gate by its worst row (ERROR first: the gate could not run as asked)
EXIT_STATUS = {s: s.exit_status for s in GateStatus}


def parse_percent(text: str, option: str = "--max-regression") -> float:
    """``"5%"`` or ``"0.05"`` -> 0.05 (:func:`perfkit.units.fraction`); anything else, and a
    bare number of 1 or more (``5`` is not 5%), raises UsageError."""
    try:
        return fraction(text)
    except UnitError as exc:
        raise UsageError(f"{option}: expected {exc}, found {text!r}") from None


def threshold_ratio(metric: Metric, max_regression: float) -> float:
    """The ratio new/base beyond which ``metric`` has regressed by ``max_regression``."""
    return 1 + max_regression if metric.lower_is_better else 1 - max_regression


@dataclasses.dataclass(frozen=True)
class GateRow:
    """The gate of one comparison row: ``status`` (pass, regression, inconclusive, error), the
    ``outcome`` in words, ``reason`` (why, with the numbers) and, when inconclusive, the runs
    per arm that would resolve the threshold (``needed``; None when the spread is unknown)."""

    metric: Metric
    keys: tuple[str, ...]
    row: ComparisonRow
    threshold_ratio: float
    status: GateStatus
    outcome: GateOutcome
    reason: str
    needed: RunsNeeded | None = None
    needed_to_test: int | None = None
    #: runs per arm that decide the row if the change is the one observed (None: no ratio,
    #: or a change compatible with the threshold), and what they are planned for
    needed_observed: RunsNeeded | None = None
    observed_plan: PlannedChange | None = None

    @property
    def runs_per_arm_needed(self) -> int | None:
        """Runs per arm to resolve the threshold (or, spread unknown, to reach alpha at all)."""
        if self.needed is not None:
            return self.needed.runs_per_arm
        return self.needed_to_test


@dataclasses.dataclass(frozen=True)
class GateResult:
    """Every gated row of every metric, with the comparisons they come from."""

    base: str
    new: str
    max_regression: float
    alpha: float
    tables: tuple[ComparisonTable, ...]
    rows: tuple[GateRow, ...]
    warnings: tuple[Warn, ...] = ()

    @property
    def status(self) -> GateStatus:
        """The worst row status (:data:`EXIT_STATUS` order); ``pass`` without rows."""
        found = {r.status for r in self.rows}
        return next((s for s in EXIT_STATUS if s in found), PASS)

    @property
    def exit_status(self) -> int:
        return EXIT_STATUS[self.status]

    def counts(self) -> dict[str, int]:
        return {s: sum(r.status == s for r in self.rows) for s in (PASS, REGRESSION,
                                                                    INCONCLUSIVE, ERROR,
                                                                    NO_DATA_GATE)}

    def describe(self) -> str:
        """The rule, in a sentence a reader can paste into a paper or a CI log."""
        return (f"A change counts as a regression when the run-vs-run comparison (two-sided "
                f"Mann-Whitney U over per-run values, or Welch's t on their logs where that "
                f"test's smallest p is within a factor of 2 of alpha, Holm-adjusted over the "
                f"load levels of each metric, alpha {self.alpha:g}) calls it significantly "
                f"worse and the whole "
                f"interval of the ratio new/base (Hodges-Lehmann with the Moses interval, at "
                f"{1 - self.alpha:.0%}, or Bonferroni-adjusted over the load levels of a metric "
                f"with several: {self.interval_words()}) lies beyond the threshold of "
                f"{self.max_regression:.1%} in the metric's bad direction; an interval that "
                f"straddles the threshold, too few runs to reach alpha, or arms run apart in "
                f"time whose change without the part the drift over the run order within the "
                f"arms makes straddles it (could be drift: interleave the arms) is "
                f"inconclusive, with the runs per arm that would give {POWER:.0%} power to "
                f"detect a change of the threshold's size at the observed run-to-run spread, "
                f"and those that would decide the change seen, planned for the end nearest the "
                f"threshold of its one-sided 80% interval at the upper 95% bound of the spread "
                f"(none when that interval reaches the threshold).")

    def interval_words(self) -> str:
        """What the ratio intervals are: ``"95% CI"``, or Bonferroni's over the load levels
        of a metric (:meth:`ComparisonTable.interval_words` of the largest family)."""
        family = max((t.family for t in self.tables), default=1)
        return interval_words(self.alpha, family)

    def to_frame(self) -> pd.DataFrame:
        """One row per gated row: key columns, ratio with CI, p-values, verdict, gate."""
        records = []
        for g in self.rows:
            c = g.row.comparison
            rec: dict[str, Any] = {"metric": g.metric.name}
            rec.update({k: plain(v) for k, v in zip(g.keys, g.row.key, strict=True)})
            rec.update({
                "n_base": c.n_base, "n_new": c.n_new, "ratio": c.ratio,
                "ratio_ci_low": c.ratio_ci_low, "ratio_ci_high": c.ratio_ci_high,
                "ratio_ci_level": c.ratio_ci_level,
                "threshold_ratio": g.threshold_ratio, "p_value": c.p_value,
                "p_value_holm": g.row.p_adjusted, "verdict": g.row.verdict,
                "gate": g.status, "outcome": g.outcome, "reason": g.reason,
                "runs_per_arm_needed": g.runs_per_arm_needed,
                "runs_per_arm_observed": (g.needed_observed.runs_per_arm
                                          if g.needed_observed is not None else None),
                "observed_ratio_planned": (g.observed_plan.planned if g.observed_plan
                                           is not None and g.observed_plan.planned is not None
                                           else math.nan),
                "observed_decides_from": (g.observed_plan.decides_from if g.observed_plan
                                          is not None and g.observed_plan.decides_from
                                          is not None else math.nan),
                "power_needed": g.needed.power_stated if g.needed is not None else math.nan,
                "log_sd": g.needed.log_sd if g.needed is not None else math.nan,
                "mde_ratio_high": _mde(g.row, "ratio_high"),
                "mde_ratio_low": _mde(g.row, "ratio_low"),
                "warnings": "; ".join(texts(g.row.warnings)),
            })
            records.append(rec)
        return records_frame(records)

    def to_dict(self) -> dict[str, Any]:
        rows = plain_rows(self.to_frame())
        return {"base": self.base, "new": self.new, "max_regression": self.max_regression,
                "alpha": self.alpha, "status": self.status, "exit_status": self.exit_status,
                "counts": self.counts(), "method": self.describe(),
                "warnings": [w.to_dict() for w in self.warnings],
                "comparison_warnings": {t.metric.name: [w.to_dict() for w in t.warnings]
                                        for t in self.tables},
                "rows": rows}


def _missing(value: Any) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


def records_frame(records: list[dict[str, Any]]) -> pd.DataFrame:
    """Table rows as a frame; ``runs_per_arm_needed`` a nullable integer (missing: ``<NA>``)."""
    frame = pd.DataFrame.from_records(records)
    for col in ("runs_per_arm_needed", "runs_per_arm_observed"):
        if col in frame:
            frame[col] = frame[col].astype("Int64")
    return frame


def plain_rows(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """A frame's rows for JSON: plain Python values, None where missing."""
    return [{k: (None if _missing(v) else plain(v)) for k, v in rec.items()}
            for rec in cast(list[dict[str, Any]], frame.to_dict(orient="records"))]


def _mde(row: ComparisonRow, name: str) -> float:
    return to_float(getattr(row.mde, name, None) if row.mde is not None else None)


def gate_runs(base: RunSet, new: RunSet, metrics: Sequence[Metric], max_regression: float,
              *, alpha: float = 0.05, by: Any = "auto", exclude: Sequence[str] = (),
              confidence: float = 0.95, exclude_failed: str | None = None,
              n_sim: int = 4000, seed: int = 0) -> GateResult:
    """Gate ``new`` against ``base`` on every metric (see the module docstring).

    Parameters
    ----------
    base, new : RunSet
        The runs of the baseline and of the candidate (e.g. two selections).
    metrics : sequence of Metric
        Each is compared with :func:`perfkit.analysis.compare_runs` (its own Holm family).
    max_regression : float
        The practical threshold as a fraction (0.05 for 5%).
    alpha, by, exclude, confidence, exclude_failed :
        As for :func:`perfkit.analysis.compare_runs`.
    n_sim, seed : int
        Simulations and seed of :func:`perfkit.stats.power.runs_needed` for inconclusive rows.
    """
    if not 0 < max_regression < 1:
        raise UsageError(f"max_regression must be in (0, 1), got {max_regression!r}")
    apart = load_apart(base, new)
    tables, rows = [], []
    for m in metrics:
        table = compare_runs(base, new, m, by=by, exclude=exclude, alpha=alpha,
                             confidence=confidence, exclude_failed=exclude_failed)
        tables.append(table)
        for row in table.rows:
            if apart is not None:  # no load level on both sides: nothing to judge
                rows.append(GateRow(m, table.keys, row, threshold_ratio(m, max_regression),
                                    ERROR, GateOutcome.DIFFERENT_LOAD, apart))
                continue
            rows.append(gate_row(table, row, base, new, max_regression, n_sim, seed))
    return GateResult(base.label, new.label, max_regression, alpha, tuple(tables), tuple(rows))


def load_apart(base: RunSet, new: RunSet) -> str | None:
    """Why BASE and NEW ran at different load levels, or None: a load column (connections,
    users, threads, offered rate, endpoint) recorded on both sides whose values do not overlap.
    A comparison takes such a column as part of what the arms compare; a gate asks whether NEW
    got worse than BASE under the same load, which no run here answers."""
    for col in LOAD_COLUMNS:
        sides = [{level_text(v) for v in rows.frame[col].dropna()} if col in rows.frame
                 else set() for rows in (base, new)]
        if all(sides) and not sides[0] & sides[1]:
            a, b = (", ".join(sorted(s, key=_natural)) for s in sides)
            return (f"the arms ran at different load levels ({col}: base {a}, new {b}): a "
                    f"gate compares NEW with BASE under the same load, and no {col} has runs "
                    "on both sides")
    return None


def _natural(text: str) -> tuple:
    return (0, float(text), text) if text.replace(".", "", 1).isdigit() else (1, 0.0, text)


def gate_row(table: ComparisonTable, row: ComparisonRow, base: RunSet, new: RunSet,
             max_regression: float, n_sim: int = 4000, seed: int = 0) -> GateRow:
    """The gate of one row of ``table`` (``base``/``new``: the runs the table compared)."""
    m = table.metric
    limit = threshold_ratio(m, max_regression)
    status, outcome, reason = classify(row, m, limit, table.family)
    out = GateRow(m, table.keys, row, limit, status, outcome, reason)
    if status != INCONCLUSIVE:
        return out
    values = [cell_runs(side, table.keys, row.key).values(m.name) for side in (base, new)]
    values = [v[np.isfinite(v) & (v > 0)] for v in values]
    if max(len(v) for v in values) < 2:
        need = runs_per_arm_needed(table.alpha, table.family)
        return dataclasses.replace(out, needed_to_test=need, reason=reason + (
            f"; the run-to-run spread is unknown (a side needs >= 2 runs): >= {need} runs per "
            "arm reach alpha at all" if need else ""))
    common: dict[str, Any] = {"alpha": table.alpha, "power": POWER,
                              "family_size": table.family, "n_sim": n_sim, "seed": seed}
    needed = runs_needed(limit, values[0], values[1], **common)
    ratio = row.comparison.ratio
    plan = None
    if 0 < ratio < math.inf and min(len(v) for v in values) >= 1:
        plan = plan_observed(values[0], values[1], ratio=ratio, reference=limit, **common)
    parts = [_runs_text(needed, f"would resolve {pct_change(limit)} if nothing changed")]
    if plan is not None:
        parts.append(_observed_text(plan, ratio))
    spread = f"{POWER:.0%} power at the observed spread, log sd {needed.log_sd:.3f}"
    return dataclasses.replace(out, needed=needed, observed_plan=plan,
                               needed_observed=plan.needed if plan is not None else None,
                               reason=f"{reason}; {spread}: {', '.join(parts)}")


def _observed_text(plan: PlannedChange, ratio: float) -> str:
    """The runs that decide the change seen, planned for the bound nearest the threshold; or
    why none are promised (the change is compatible with the threshold)."""
    if plan.needed is None or plan.planned is None:
        return str(plan.warnings[0])
    bound = f"{pct_change(plan.planned)} ({plan.confidence:.0%} bound of the {pct_change(ratio)}"
    holds = ("" if plan.decides_from is None else "; measured to decide >= 75% of the time "
             f"when the true change is {pct_change(plan.decides_from)} or further from the "
             "threshold")
    return _runs_text(plan.needed, f"would decide it if the change is {bound} observed, at "
                                   f"log sd <= {plan.log_sd_planned:.3f}{holds})")


def _runs_text(needed: RunsNeeded, what: str) -> str:
    """``"14 runs per arm would ..."``, or more than the most searched."""
    if needed.runs_per_arm is not None:
        return f"{needed.runs_per_arm} runs per arm {what}"
    return f"more than {needed.max_runs} runs per arm {what}"


def classify(row: ComparisonRow, metric: Metric, limit: float, family: int = 1
             ) -> tuple[GateStatus, GateOutcome, str]:
    """(status, outcome, reason) of a comparison row against the threshold ratio ``limit``; the
    reason refers to the row's ratio interval ("the CI straddles +5.0%")."""
    c = row.comparison
    lo, hi = c.ratio_ci_low, c.ratio_ci_high
    bound = pct_change(limit)
    if row.unmeasured:
        sides = [side for side, n in zip(("base", "new"), (c.n_base, c.n_new), strict=True)
                 if not n]
        return (NO_DATA_GATE, GateOutcome.NO_DATA,
                f"no {' and no '.join(sides)} run measured {metric.name} "
                f"({'; '.join(row.unmeasured_reasons)}): not gated")
    if row.verdict == NO_DATA:
        return ERROR, GateOutcome.NO_DATA, f"{c.n_base} vs {c.n_new} runs: a side has no run here"
    if row.verdict == NOT_TESTABLE:
        holm = f" after Holm over {family} rows" if family > 1 else ""
        need = runs_per_arm_needed(c.alpha, family)
        can = f"; >= {need} runs per arm can" if need else ""
        return (INCONCLUSIVE, GateOutcome.NOT_TESTABLE,
                f"{c.n_base} vs {c.n_new} runs can never reach p < {c.alpha:g}{holm} "
                f"(smallest p {c.min_attainable_p:.2g}{can})")
    if math.isnan(lo) or math.isnan(hi):
        return (INCONCLUSIVE, GateOutcome.NO_INTERVAL,
                f"no ratio interval ({'; '.join(texts(c.warnings))})")
    up = metric.lower_is_better
    beyond = lo > limit if up else hi < limit
    inside = hi <= limit if up else lo >= limit
    if row.verdict == WORSE and beyond:
        drift = _drift_reason(row, metric, limit, REGRESSION)
        if drift:
            return INCONCLUSIVE, GateOutcome.DRIFT, drift
        return REGRESSION, GateOutcome.REGRESSION, f"the CI lies beyond {bound}"
    if inside:
        drift = _drift_reason(row, metric, limit, PASS)
        if drift:
            return INCONCLUSIVE, GateOutcome.DRIFT, drift
        outcomes: dict[str, GateOutcome] = {WORSE: GateOutcome.BELOW_THRESHOLD,
                                            BETTER: GateOutcome.IMPROVEMENT}
        outcome = outcomes.get(row.verdict, GateOutcome.NO_REGRESSION)
        return PASS, outcome, f"the CI stays {'below' if up else 'above'} {bound}"
    if beyond:
        return (INCONCLUSIVE, GateOutcome.BEYOND_NOT_SIGNIFICANT,
                f"the CI lies beyond {bound} but p Holm {row.p_adjusted:.2g} is not below "
                f"{c.alpha:g}")
    return INCONCLUSIVE, GateOutcome.STRADDLES, f"the CI straddles {bound}"


def _drift_reason(row: ComparisonRow, metric: Metric, limit: float,
                  status: GateStatus) -> str:
    """Why a row the interval alone would call a ``regression`` (or a ``pass``) is
    inconclusive: the arms ran apart in time, and the change without the part the drift within
    the arms makes over the distance between them (:class:`perfkit.analysis.context.RowDrift`:
    the seasonal Kendall slope of Hirsch, Slack and Smith 1982, Sen's interval, half-widths in
    quadrature) has an interval that no longer lies beyond (within) the threshold. A
    regression must survive the drift's whole interval, since exit 1 fails a build; a pass
    is doubted only by a drift the seasonal Kendall test shows (at alpha), else every gate
    against a stored baseline would be inconclusive. Empty when the drift does not change the
    row's status (or is unknown). ``benchmarks/calibration_drift_gate.py`` measures it."""
    c, drift = row.comparison, row.drift
    ends = (c.ratio, c.ratio_ci_low, c.ratio_ci_high)
    if drift is None or not all(0 < v < math.inf for v in ends):
        return ""
    if status == PASS and not drift.significant(c.alpha):
        return ""
    change = (math.log(ends[0]), math.log(ends[1]), math.log(ends[2]))
    _, low, high = drift.corrected(change)
    edge = math.log(limit)
    up = metric.lower_is_better
    if status == REGRESSION:
        holds = low > edge if up else high < edge
    else:
        holds = high <= edge if up else low >= edge
    if holds:
        return ""
    what = "regression" if status == REGRESSION else "pass"
    return str(drift.note((), change, straddles=limit, what=what))


def remember_simulations_in(folder: str | Path | None) -> None:
    """Keep the power simulations of :func:`gate_runs` in ``folder`` (beside the run store),
    keyed by their inputs, so that a second gate on the same spread simulates nothing."""
    _simcache.use_directory(folder)
