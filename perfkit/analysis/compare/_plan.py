"""Planning a comparison: how many runs per arm detect a change of a stated size, and what the
current design can detect, from the run-to-run spread observed in existing runs.

:func:`plan_runs` takes one or two :class:`RunSet` (a pilot, or the BASE and NEW of an earlier
comparison) and splits them into the rows a comparison would have (load levels, as
:func:`perfkit.analysis.compare_runs` splits them). For each row, from the pooled log residuals
of its runs (:mod:`perfkit.stats.powersim`):

- :func:`perfkit.stats.power.runs_needed`: the fewest equal runs per arm that detect the
  change ``detect`` in the metric's bad direction (``1 + detect`` for latencies, ``1 - detect``
  for throughput) with the stated power at alpha, Holm-adjusted over the rows as compare and
  gate adjust them (Holm's first step: alpha / rows);
- for the current design (the runs per arm observed: n vs n for one set of runs, n_base vs
  n_new for two): the minimum detectable ratios each way
  (:func:`perfkit.stats.power.min_detectable_ratio`) and the power at ``detect``
  (:func:`perfkit.stats.power.power_at_ratio`);
- with two sets of runs, the change they show (the Hodges-Lehmann ratio new/base of
  :func:`perfkit.stats.compare`) and the runs per arm that decide it
  (``runs_per_arm_observed``, :func:`perfkit.stats.planning.plan_observed`): planned not for
  the change seen but for the end nearest 1 of its one-sided 80% interval
  (``observed_ratio_planned``), at the upper 95% bound of the spread, since a change seen in
  few runs is as often overstated as not and the runs needed grow as 1 / change²; a change
  whose interval reaches 1 gets no count (:attr:`Code.CHANGE_COMPATIBLE_WITH_NONE`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from perfkit.analysis.compare._compare import cell_runs, row_labels
from perfkit.analysis.compare._gate import plain_rows, records_frame, threshold_ratio
from perfkit.analysis.core import Metric, RunSet, row_keys, unmeasured, unmeasured_note
from perfkit.errors import DataError, UsageError
from perfkit.formatting import plain
from perfkit.stats import compare
from perfkit.stats import power as pw
from perfkit.stats.planning import PlannedChange, plan_observed
from perfkit.stats.power import RunsNeeded as RunsNeeded
from perfkit.units import to_float
from perfkit.warning import Warn, texts


@dataclasses.dataclass(frozen=True)
class PowerPlanRow:
    """One row: the observed runs per arm, the answers of the power engine, and warnings."""

    key: tuple[Any, ...]
    n_base: int
    n_new: int
    needed: pw.RunsNeeded
    current: pw.MinDetectable
    power_now: pw.PowerAtRatio
    warnings: tuple[Warn, ...]
    #: the change new/base the two sets of runs show, and the runs per arm that decide it
    #: (None: one set of runs, no ratio, or a change compatible with none)
    observed_ratio: float = math.nan
    needed_observed: pw.RunsNeeded | None = None
    #: what ``needed_observed`` is planned for (None: one set of runs)
    observed_plan: PlannedChange | None = None

    @property
    def observed_ratio_planned(self) -> float:
        """The change the runs per arm for the observed change are planned for (NaN: none)."""
        plan = self.observed_plan
        return math.nan if plan is None or plan.planned is None else plan.planned

    @property
    def observed_decides_from(self) -> float:
        """The smallest true change for which the runs for the observed change were measured
        to decide it >= 75% of the time (:attr:`PlannedChange.decides_from`; NaN: none)."""
        plan = self.observed_plan
        return math.nan if plan is None or plan.decides_from is None else plan.decides_from


@dataclasses.dataclass(frozen=True)
class PowerPlan:
    """The plan for detecting ``detect`` (a fraction) on ``metric``, row by row."""

    metric: Metric
    sources: tuple[str, ...]
    keys: tuple[str, ...]
    detect: float
    ratio: float
    alpha: float
    power: float
    family: int
    rows: tuple[PowerPlanRow, ...]
    warnings: tuple[Warn, ...] = ()

    def describe(self) -> str:
        holm = f", Holm over {self.family} rows (alpha / {self.family})" if self.family > 1 else ""
        method = self.rows[0].needed.method if self.rows else ""
        seen = (" The runs for the change two sets of runs show are planned for the end "
                "nearest 1 of its one-sided 80% interval (Student t on the log ratio), at the "
                "upper 95% bound of the spread (chi-square), and not given when that interval "
                "reaches 1: planned for the change seen itself, pilots of 3-5 runs a side "
                "decided it far less often than stated (benchmarks/calibration_runs_needed.py). "
                "Planned so, it decided a true change >= 75% of the time from 0.9-1.5 "
                "standard errors of the pilot's change (3-20 runs a side; the column 'holds "
                "from'); nearer 1 a pilot of that size cannot vouch for the count."
                if len(self.sources) == 2 else "")
        return (f"Runs per arm to detect a change of {self.detect:.1%} in {self.metric.label} "
                f"(ratio new/base {self.ratio:g}) with {self.power:.0%} power at alpha "
                f"{self.alpha:g}{holm}, from the run-to-run spread of the runs given: "
                f"{method}.{seen}")

    def to_frame(self) -> pd.DataFrame:
        records = []
        for r in self.rows:
            rec: dict[str, Any] = {"metric": self.metric.name}
            rec.update({k: plain(v) for k, v in zip(self.keys, r.key, strict=True)})
            rec.update({
                "n_base": r.n_base, "n_new": r.n_new, "log_sd": r.needed.log_sd,
                "spread_source": r.needed.spread_source, "detect_ratio": self.ratio,
                "runs_per_arm_needed": r.needed.runs_per_arm,
                "power_stated": r.needed.power_stated,
                "observed_ratio": r.observed_ratio,
                "runs_per_arm_observed": (r.needed_observed.runs_per_arm
                                          if r.needed_observed is not None else None),
                "observed_ratio_planned": r.observed_ratio_planned,
                "observed_decides_from": r.observed_decides_from,
                "noether_runs_per_arm": r.needed.noether_runs_per_arm,
                "power_now": r.power_now.power, "mde_ratio_high": to_float(r.current.ratio_high),
                "mde_ratio_low": to_float(r.current.ratio_low),
                "alpha_adjusted": r.needed.alpha_adjusted,
                "warnings": "; ".join(texts(r.warnings)),
            })
            records.append(rec)
        return records_frame(records)

    def to_dict(self) -> dict[str, Any]:
        rows = plain_rows(self.to_frame())
        return {"metric": self.metric.name, "sources": list(self.sources),
                "keys": list(self.keys), "detect": self.detect, "ratio": self.ratio,
                "alpha": self.alpha, "power": self.power, "family": self.family,
                "method": self.describe(), "warnings": [w.to_dict() for w in self.warnings],
                "rows": rows}



def plan_runs(sides: Sequence[RunSet], metric: Metric, detect: float, *, alpha: float = 0.05,
              power: float = 0.8, by: Any = "auto", exclude: Sequence[str] = (),
              family: int | None = None, n_sim: int = 4000, seed: int = 0) -> PowerPlan:
    """Runs per arm needed to detect ``detect`` (a fraction, 0.03 for 3%), row by row (see the
    module docstring). ``family``: the Holm family size (default: the number of rows)."""
    if len(sides) not in (1, 2):
        raise UsageError(f"--from: expected one or two selections, found {len(sides)}")
    if not 0 < detect < 1:
        raise UsageError(f"detect must be in (0, 1), got {detect!r}")
    keys, notes = row_keys(list(sides), by, exclude)
    labels = row_labels(sides, keys)
    family = family or len(labels)
    ratio = threshold_ratio(metric, detect)
    rows = []
    for key in labels:
        cells = [cell_runs(s, keys, key) for s in sides]
        left_out = [unmeasured(c, metric) for c in cells]
        values = [_positive(c.values(metric.name)) for c in cells]
        rows.append(_row(key, values, metric, ratio, alpha, power, family, n_sim, seed,
                         [r for side in left_out for r in side]))
    return PowerPlan(metric, tuple(s.label for s in sides), tuple(keys), detect, ratio, alpha,
                     power, family, tuple(rows), tuple(notes))


def _positive(values: np.ndarray) -> np.ndarray:
    return values[np.isfinite(values) & (values > 0)]


def _row(key: tuple, values: list[np.ndarray], metric: Metric, ratio: float, alpha: float,
         power: float, family: int, n_sim: int, seed: int,
         unmeasured: Sequence[str] = ()) -> PowerPlanRow:
    base = values[0]
    new = values[1] if len(values) == 2 else np.array([], dtype=float)
    where = f"row {', '.join(map(str, key))}" if key else "the runs"
    notes = unmeasured_note("", unmeasured, metric)
    if notes and min(len(v) for v in values) == 0:
        side = " on a side" if len(values) == 2 else ""
        raise DataError(f"{where}: no run measured {metric.name}{side} ("
                        + "; ".join(dict.fromkeys(r for r in unmeasured if r)) + ")")
    if len(values) == 2 and min(len(base), len(new)) == 0:
        raise DataError(f"{where}: a side has no run with a positive {metric.name}")
    if max(len(base), len(new)) < 2:
        raise DataError(f"{where}: the run-to-run spread needs >= 2 runs with a positive "
                        f"{metric.name} on one side, found {len(base)} and {len(new)}")
    n_b = len(base)
    n_n = len(new) if len(values) == 2 else n_b
    common: dict[str, Any] = {"alpha": alpha, "family_size": family, "n_sim": n_sim,
                              "seed": seed}
    needed = pw.runs_needed(ratio, base, new, power=power, **common)
    current = pw.min_detectable_ratio(base, new, n_base=n_b, n_new=n_n, power=power,
                                   lower_is_better=metric.lower_is_better, **common)
    now = pw.power_at_ratio(ratio, base, new, n_base=n_b, n_new=n_n, **common)
    ratio_seen, plan = math.nan, None
    if len(values) == 2 and min(len(base), len(new)) >= 1:
        ratio_seen = compare(base, new, alpha, lower_is_better=metric.lower_is_better).ratio
        if 0 < ratio_seen < math.inf:
            plan = plan_observed(base, new, ratio=ratio_seen, power=power, **common)
    warnings = tuple(dict.fromkeys([*notes, *needed.warnings, *current.warnings,
                                    *(plan.warnings if plan is not None else ())]))
    return PowerPlanRow(key, n_b, n_n, needed, current, now, warnings, ratio_seen,
                        plan.needed if plan is not None else None, plan)
