"""Calibration of ``perfkit gate`` against a drift that runs with the arms (issues 22, 34).

Run: ``nice -n 19 .venv/bin/python benchmarks/calibration_drift_gate.py [--reps 1000]``

Each replication: twenty runs of one configuration whose p99 is
``median x exp(drift x position / 19 + sd x z)``, ``z`` standard normal (log-normal per-run
noise), at positions 0..19 of the run order; NEW's runs times ``1 + change``. The runs are
the bundled A/A experiment's (``data/demo-aa``, wrk); only each run's p99, order and start
time are set. The scenarios (:data:`SCENARIOS`):

- ``base then new`` with +20% drift (from the first run to the last), no change: the first
  ten runs are BASE, the last ten NEW (a CI job that measured the baseline, then the
  candidate); the change new/base is drift only, about +10% between the arms' centres;
- ``interleaved``, no drift, no change: the arms alternate (B A B A ...); the note's false
  alarms;
- ``base then new``, no drift: without a change (the note on a chance significance), and with
  a real +10% change (how often the note doubts a real change: the price of the check);
- a real +20% change, interleaved and base then new, no drift: the gate's power (exit 1), which
  the drift rule of issue 34 must not cost interleaved arms.

Since issue 34 a row whose change, without the drift's part, has an interval that straddles
the threshold is inconclusive (exit 3, outcome ``could be drift``), not a regression: the
exit-1 rate of the drift scenario is the figure CI reads (target <= 0.05).

:func:`perfkit.analysis.compare._gate.gate_runs` gates NEW against BASE at ``--max-regression 5%``
(its defaults otherwise; the runs-needed simulation cut to 100 draws, which no exit status
reads). A gate carries the drift note when its comparison's warnings hold the note of
:mod:`perfkit.analysis.context._confounding` (the change could be drift). Printed per scenario and
spread: the exit-1 rate; the share of exit-1 gates with the note (target >= 0.9 with drift);
the note's rate over all gates; and the share of exit-1 gates whose drift check under the old
rule (residuals centred within each arm, every pair of runs) called a drift. Spreads: 0.05
(the demo A/A's throughput: 0.041 and 0.059 by arm) and 0.12 (its p99: 0.142 and 0.106).
± is twice the binomial Monte Carlo standard error.

Printed per scenario and spread besides: the exit-0 rate and the share of gates made
inconclusive by the drift (``could be drift``).

Exit status 1 when the drift scenario exits 1 in more than 5% + the error of its gates, gives
the note with fewer than 90% of its exit-1 gates, or interleaved A/A gates carry it more often
than 5% + the error.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from perfkit.analysis import load_experiment, metric
from perfkit.analysis.compare import gate_runs
from perfkit.analysis.context import _drift as drift
from perfkit.analysis.core import RunSet
from perfkit.frames import runs_frame
from perfkit.warning import Code

REPO = Path(__file__).resolve().parents[1]
P99 = metric("latency_p99_ms")
DESIGNS = ("base then new", "interleaved")
#: +20% from the first run to the last
DRIFT = math.log(1.2)
#: (design, drift from the first run to the last, real change of NEW), in log units
SCENARIOS = (("base then new", DRIFT, 0.0), ("interleaved", 0.0, 0.0),
             ("base then new", 0.0, 0.0), ("base then new", 0.0, math.log(1.1)),
             ("interleaved", 0.0, math.log(1.2)), ("base then new", 0.0, math.log(1.2)))
#: the outcome of a row the drift made inconclusive (GateOutcome.DRIFT, issue 34; absent before)
COULD_BE_DRIFT = "could be drift"


@dataclasses.dataclass(frozen=True)
class Outcome:
    """Counts over the replications of one design and spread."""

    reps: int
    exit_1: int
    exit_1_with_note: int
    note: int
    old_drift_called: int
    exit_0: int = 0
    drift_inconclusive: int = 0

    @property
    def share_with_note(self) -> float:
        return self.exit_1_with_note / self.exit_1 if self.exit_1 else math.nan


def template(n_runs: int = 20) -> RunSet:
    """The bundled A/A experiment's first runs, each given its position in the run order
    (``order`` and a start time a second apart); their other fields stay as measured."""
    runs = load_experiment(REPO / "data" / "demo-aa").rows().runs[:n_runs]
    runs = tuple(r.replace(order=i + 1, start_utc=f"2026-01-01T00:{i // 60:02d}:"
                                                  f"{i % 60:02d}.000Z")
                 for i, r in enumerate(runs))
    return RunSet(runs_frame(runs), runs, "template")


def arms(runs: RunSet, values: np.ndarray, design: str,
         change_log: float = 0.0) -> tuple[RunSet, RunSet]:
    """BASE and NEW of one replication: the p99 column of the runs' frame (what every
    analysis reads of a run's value) set to ``values``, NEW's times ``exp(change_log)``."""
    n = len(runs)
    is_new = (np.arange(n) >= n // 2) if design == DESIGNS[0] else (np.arange(n) % 2 == 1)
    frame = runs.frame.assign(**{P99.name: values * np.exp(change_log * is_new)})
    rows = RunSet(frame, runs.runs)
    return rows.subset(~is_new, "base"), rows.subset(is_new, "new")


def old_rule_called(base: RunSet, new: RunSet) -> bool:
    """The drift check before issue 22: residuals centred within each arm, every pair."""
    both = RunSet(pd.concat([base.frame.assign(_arm="base"), new.frame.assign(_arm="new")],
                            ignore_index=True), (*base.runs, *new.runs))
    found = drift.residual_trend(drift.drift_residuals(both, P99.name, ["_arm"]))
    return found is not None and found.verdict == drift.DRIFT


def simulate(design: str, sd: float, drift_log: float, reps: int, seed: int,
             runs: RunSet | None = None, change_log: float = 0.0) -> Outcome:
    """``reps`` seeded replications of one design (module docstring); ``change_log``: a
    real change of NEW (log units), 0 for an A/A."""
    runs = template() if runs is None else runs
    n = len(runs)
    rng = np.random.default_rng(seed)
    slope = drift_log * np.arange(n) / (n - 1)
    exit_1 = with_note = notes = old = exit_0 = drifted = 0
    for _ in range(reps):
        values = 4.0 * np.exp(slope + sd * rng.standard_normal(n))
        base, new = arms(runs, values, design, change_log)
        result = gate_runs(base, new, [P99], 0.05, by="none", n_sim=100)
        found = [w for t in result.tables for w in t.warnings
                 if w.code is Code.DRIFT_MAY_MAKE_CHANGE]
        notes += bool(found)
        exit_0 += result.exit_status == 0
        drifted += any(str(r.outcome) == COULD_BE_DRIFT for r in result.rows)
        if result.exit_status == 1:
            exit_1 += 1
            with_note += bool(found)
            old += old_rule_called(base, new)
    return Outcome(reps, exit_1, with_note, notes, old, exit_0, drifted)


def _err(p: float, n: int) -> float:
    return 2 * math.sqrt(max(p * (1 - p), 1 / n) / n) if n else math.nan


def _share(k: int, n: int) -> float:
    return k / n if n else math.nan


def _pm(p: float, n: int) -> str:
    """``0.358±0.030``; below 20 cases the count, ``1 of 2``, which an error bar would not
    describe."""
    if not n:
        return f"{'-':>13}"
    return f"{p:>6.3f}±{_err(p, n):.3f}" if n >= 20 else f"{f'{round(p * n)} of {n}':>13}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=22)
    args = parser.parse_args(argv)
    runs = template()
    started = time.perf_counter()
    print(f"perfkit gate, A/A of 20 runs, --max-regression 5%, {args.reps} replications a row "
          f"(seed {args.seed})\n")
    print(f"{'design':<15} {'drift':>6} {'change':>6} {'log sd':>6} {'exit 1':>13} "
          f"{'note | exit 1':>13} {'note (all)':>13} "
          f"{'old check | exit 1':>18} {'exit 0':>13} {'could be drift':>14}")
    ok = True
    for design, drift_log, change_log in SCENARIOS:
        for sd in (0.05, 0.12):
            o = simulate(design, sd, drift_log, args.reps, args.seed, runs, change_log)
            rate, note = o.exit_1 / o.reps, o.note / o.reps
            share = o.share_with_note
            old = _share(o.old_drift_called, o.exit_1)
            print(f"{design:<15} {math.expm1(drift_log):>+6.0%} {math.expm1(change_log):>+6.0%} "
                  f"{sd:>6.2f} {_pm(rate, o.reps)} {_pm(share, o.exit_1)} "
                  f"{_pm(note, o.reps)} {_pm(old, o.exit_1):>18} "
                  f"{_pm(o.exit_0 / o.reps, o.reps)} {_pm(o.drift_inconclusive / o.reps, o.reps)}")
            if drift_log and not change_log and (
                    rate > 0.05 + _err(rate, o.reps) or o.exit_1 >= 20 and share < 0.9):
                ok = False
            if design == DESIGNS[1] and note > 0.05 + _err(note, o.reps):
                ok = False
    print(f"\n{time.perf_counter() - started:.0f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
