"""Calibration of the recent-step test (:mod:`perfkit.stats.recent`) beside the change points,
and of a history page's error rate over its metrics (issue 34).

Run: ``nice -n 19 .venv/bin/python benchmarks/calibration_recent.py [--series 400]``

Histories as in ``calibration_changepoint.py``: L labels of 5 runs, log value = the level of
the label's segment + a label effect N(0, 0.05^2) (normal, or Student t3 scaled to it) + run
noise N(0, 0.05^2). ``sigma`` = sqrt(0.05^2 / 5 + 0.05^2), the noise of a label's mean.

- Flat histories of 8-40 labels: the share with a recent step called (target <= alpha), and
  with anything called on the series (a change point or a recent step).
- Late steps: x3 in the last 2 labels of 8-12 labels (issue 34: never reported by the change
  points), and 3 sigma in the last 1, 2 or 3 labels: the share found by the change points
  alone (a change point within one label of the step) and by the change points or the
  recent-step test (a recent step whose window starts within one label of it).
- A page of two metrics, p99 and throughput, whose label effects and run noise correlate
  (rho = -0.8, what a closed loop makes: throughput is about connections over mean latency),
  flat, 20 labels: the share of pages with a false change point (or recent step) on either
  metric, each tested at alpha without adjustment across metrics (perfkit's rule, issue 28):
  between alpha and 2 alpha by the union bound.

± is twice the binomial Monte Carlo standard error. Exit status 1 when a flat rate of the
recent step exceeds alpha by more than that, or the x3 step in the last 2 labels is found in
fewer than 90% of the histories at some L.
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np

from perfkit.stats.changepoint import change_points
from perfkit.stats.recent import recent_step

ALPHA = 0.05
RUNS, RUN_SD, LABEL_SD = 5, 0.05, 0.05
SIGMA = math.sqrt(RUN_SD ** 2 / RUNS + LABEL_SD ** 2)


def history(rng: np.random.Generator, labels: int, step_at: int | None = None,
            step: float = 0.0, tails: str = "normal") -> list[np.ndarray]:
    """Per-label run values with a log ``step`` from label ``step_at`` on."""
    level = np.zeros(labels)
    if step_at is not None:
        level[step_at:] += step
    if tails == "t3":
        level += LABEL_SD * rng.standard_t(3, labels) / math.sqrt(3.0)
    else:
        level += LABEL_SD * rng.standard_normal(labels)
    return list(np.exp(level[:, None] + RUN_SD * rng.standard_normal((labels, RUNS))))


def called(values: list[np.ndarray], seed: int) -> tuple[list[int], object]:
    """(change point indices, recent step) of one series, as perfkit's history finds them."""
    names = [str(i) for i in range(len(values))]
    cps = change_points(values, names, alpha=ALPHA, seed=seed)
    where = [c.index for c in cps.change_points]
    return where, recent_step(values, names, where, alpha=ALPHA)


def _err(p: float, n: int) -> float:
    return 2 * math.sqrt(max(p * (1 - p), 1 / n) / n)


def _pm(k: int, n: int) -> str:
    return f"{k / n:5.3f} ± {_err(k / n, n):5.3f}"


def flat(series: int, labels: int, tails: str) -> bool:
    rng = np.random.default_rng([labels, 1 if tails == "t3" else 0])
    recent = anything = 0
    for i in range(series):
        where, r = called(history(rng, labels, tails=tails), i)
        recent += r.significant
        anything += r.significant or bool(where)
    print(f"flat L={labels:<3} {tails:<7} recent step {_pm(recent, series)}   "
          f"change point or recent step {_pm(anything, series)}", flush=True)
    return recent / series <= ALPHA + _err(ALPHA, series)


def late(series: int, labels: int, last: int, step: float, name: str) -> float:
    """Share of histories whose step in the ``last`` labels is found: by the change points
    alone, and by them or the recent step; returns the latter."""
    rng = np.random.default_rng([labels, last, int(step * 100)])
    at = labels - last
    by_cp = by_either = 0
    for i in range(series):
        where, r = called(history(rng, labels, at, step), i)
        cp = any(abs(w - at) <= 1 for w in where)
        recent = r.significant and abs((labels - r.k) - at) <= 1
        by_cp += cp
        by_either += cp or recent
    print(f"{name:<16} L={labels:<3} last {last}: change points {_pm(by_cp, series)}   "
          f"change points or recent step {_pm(by_either, series)}", flush=True)
    return by_either / series


def page(series: int, labels: int = 20, rho: float = -0.8) -> None:
    """Two correlated metrics, flat: pages with a false call on either, per rule."""
    rng = np.random.default_rng([labels, 2])
    cov = np.array([[1.0, rho], [rho, 1.0]])
    chol = np.linalg.cholesky(cov)
    cp_only = either = single = 0
    for i in range(series):
        label = LABEL_SD * (chol @ rng.standard_normal((2, labels)))
        run = RUN_SD * np.einsum("ij,jlr->ilr", chol, rng.standard_normal((2, labels, RUNS)))
        calls = []
        for m in range(2):
            values = list(np.exp(label[m][:, None] + run[m]))
            calls.append(called(values, i))
        single += bool(calls[0][0])
        cp_only += any(bool(w) for w, _ in calls)
        either += any(bool(w) or r.significant for w, r in calls)
    print(f"page of 2 metrics (rho {rho:g}), flat L={labels}: one metric's change points "
          f"{_pm(single, series)}; either metric's {_pm(cp_only, series)}; with the recent "
          f"steps {_pm(either, series)}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--series", type=int, default=400)
    n = parser.parse_args(argv).series
    started = time.perf_counter()
    print(f"alpha {ALPHA}, {RUNS} runs a label, run sd {RUN_SD}, label sd {LABEL_SD} (sigma "
          f"{SIGMA:.3f}); {n} histories per row\n")
    ok = []
    for labels in (8, 10, 12, 20, 40):
        ok.append(flat(n, labels, "normal"))
    ok.append(flat(n, 20, "t3"))
    print()
    for labels in (8, 9, 10, 11, 12):
        ok.append(late(n, labels, 2, math.log(3.0), "x3 step") >= 0.9)
    for last in (1, 2, 3):
        for labels in (8, 10, 12):
            late(n, labels, last, 3 * SIGMA, "3 sigma step")
    print()
    page(n)
    print(f"\n{sum(ok)}/{len(ok)} checks pass; {time.perf_counter() - started:.0f} s")
    return 0 if all(ok) else 1


if __name__ == "__main__":
    sys.exit(main())
