"""Calibration of the recent-step test (:mod:`perfkit.stats.recent`) beside the change points,
and of a history page's error rate over its metrics (issue 34).

Run: ``nice -n 19 .venv/bin/python benchmarks/calibration_recent.py [--series 1000]``

Histories as in ``calibration_changepoint.py``: L labels of 5 runs, log value = the level of
the label's segment + a label effect N(0, 0.05^2) (normal, or Student t3 scaled to it) + run
noise N(0, 0.05^2). ``sigma`` = sqrt(0.05^2 / 5 + 0.05^2), the noise of a label's mean.

Each row gives the test before and after issue 34's last changes, on the same histories:
``before`` takes Student's p (normal label values: ``tail_df=None``) and tests each metric's
newest labels at alpha; ``after`` takes the t4 reference (the default) and, on a page of
several metrics, Holm over them at the load level (:func:`perfkit.stats.recent.
holm_over_metrics`, as :func:`perfkit.analysis.history.analyse_metrics` applies it). The
change points are the page's in both: Holm over the metrics (issue 34 item 5).

- Flat histories of 8-40 labels: the share with a recent step called (target <= alpha), and
  with anything called on the series (a change point or a recent step).
- Late steps: x3 in the last 2 labels of 8-12 labels (issue 34: never reported by the change
  points), and 3 sigma in the last 1, 2 or 3 labels: the share found by the change points
  alone (a change point within one label of the step) and by the change points or the
  recent-step test (a recent step whose window starts within one label of it).
- A page of two metrics, p99 and throughput, whose label effects and run noise correlate
  (rho = -0.8, what a closed loop makes: throughput is about connections over mean latency),
  flat, 12 and 20 labels, normal or t3 label effects: the share of pages with a false change
  point on either metric, with a false recent step on either, and with either (the page's
  verdict "a change somewhere": two Holm families, bounded by 2 alpha).

± is twice the binomial Monte Carlo standard error. Exit status 1 when a flat rate of the
recent step after exceeds alpha by more than that (one metric, normal or t3; a page's recent
steps), or the x3 step in the last 2 labels is found in fewer than 90% of the histories at
some L.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

from perfkit.analysis.history import first_p, holm_levels
from perfkit.stats.changepoint import change_points
from perfkit.stats.recent import RecentStep, holm_over_metrics, recent_step

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _mc import share_pm  # noqa: E402

ALPHA = 0.05
RUNS, RUN_SD, LABEL_SD = 5, 0.05, 0.05
SIGMA = math.sqrt(RUN_SD ** 2 / RUNS + LABEL_SD ** 2)


def label_effects(rng: np.random.Generator, shape: tuple[int, ...], tails: str) -> np.ndarray:
    """Label effects of log sd ``LABEL_SD``: normal, or Student t3 scaled to that sd."""
    if tails == "t3":
        return LABEL_SD * rng.standard_t(3, shape) / math.sqrt(3.0)
    return LABEL_SD * rng.standard_normal(shape)


def history(rng: np.random.Generator, labels: int, step_at: int | None = None,
            step: float = 0.0, tails: str = "normal") -> list[np.ndarray]:
    """Per-label run values with a log ``step`` from label ``step_at`` on."""
    level = np.zeros(labels)
    if step_at is not None:
        level[step_at:] += step
    level += label_effects(rng, (labels,), tails)
    return list(np.exp(level[:, None] + RUN_SD * rng.standard_normal((labels, RUNS))))


def called(values: list[np.ndarray], seed: int,
           alpha: float = ALPHA) -> tuple[list[int], RecentStep, RecentStep]:
    """(change point indices, recent step before, recent step after) of one series."""
    names = [str(i) for i in range(len(values))]
    cps = change_points(values, names, alpha=alpha, seed=seed)
    where = [c.index for c in cps.change_points]
    return (where, recent_step(values, names, where, alpha=ALPHA, tail_df=None),
            recent_step(values, names, where, alpha=ALPHA))


def _err(p: float, n: int) -> float:
    return 2 * math.sqrt(max(p * (1 - p), 1 / n) / n)


def flat(series: int, labels: int, tails: str) -> bool:
    rng = np.random.default_rng([labels, 1 if tails == "t3" else 0])
    before = after = any_before = any_after = 0
    for i in range(series):
        where, old, new = called(history(rng, labels, tails=tails), i)
        before += old.significant
        after += new.significant
        any_before += old.significant or bool(where)
        any_after += new.significant or bool(where)
    print(f"flat L={labels:<3} {tails:<7} recent step {share_pm(before, series)} -> "
          f"{share_pm(after, series)}   change point or recent step "
          f"{share_pm(any_before, series)} -> {share_pm(any_after, series)}", flush=True)
    return after / series <= ALPHA + _err(ALPHA, series)


def late(series: int, labels: int, last: int, step: float, name: str) -> float:
    """Share of histories whose step in the ``last`` labels is found: by the change points
    alone, and by them or the recent step (before -> after); returns the latter after."""
    rng = np.random.default_rng([labels, last, int(step * 100)])
    at = labels - last
    by_cp = before = after = 0
    for i in range(series):
        where, old, new = called(history(rng, labels, at, step), i)
        cp = any(abs(w - at) <= 1 for w in where)
        by_cp += cp
        before += cp or (old.significant and abs((labels - old.k) - at) <= 1)
        after += cp or (new.significant and abs((labels - new.k) - at) <= 1)
    print(f"{name:<13} L={labels:<3} last {last}: change points {share_pm(by_cp, series)}   "
          f"change points or recent step {share_pm(before, series)} -> "
          f"{share_pm(after, series)}", flush=True)
    return after / series


def _page(values: list[list[np.ndarray]], seed: int) -> tuple[bool, bool, bool]:
    """One flat page of metrics: (a change point, a recent step before, one after)."""
    names = [str(i) for i in range(len(values[0]))]
    first = [change_points(v, names, alpha=ALPHA, seed=seed) for v in values]
    levels = holm_levels([first_p(c) for c in first], ALPHA)
    found = [called(v, seed, level) for v, level in zip(values, levels, strict=True)]
    after = holm_over_metrics([new for _, _, new in found], ALPHA)
    return (any(bool(w) for w, _, _ in found), any(old.significant for _, old, _ in found),
            any(r is not None and r.significant for r in after))


def page(series: int, labels: int, tails: str, rho: float = -0.8) -> bool:
    """Two correlated metrics, flat: pages with a false change point, recent step, either."""
    rng = np.random.default_rng([labels, 2, 1 if tails == "t3" else 0])
    chol = np.linalg.cholesky(np.array([[1.0, rho], [rho, 1.0]]))
    cp = rb = ra = eb = ea = 0
    for i in range(series):
        label = chol @ label_effects(rng, (2, labels), tails)
        run = RUN_SD * np.einsum("ij,jlr->ilr", chol, rng.standard_normal((2, labels, RUNS)))
        values = [list(np.exp(label[m][:, None] + run[m])) for m in range(2)]
        c, before, after = _page(values, i)
        cp += c
        rb += before
        ra += after
        eb += c or before
        ea += c or after
    print(f"page of 2 metrics (rho {rho:g}), flat L={labels:<3} {tails:<7} change points "
          f"{share_pm(cp, series)}; recent steps {share_pm(rb, series)} -> "
          f"{share_pm(ra, series)}; either {share_pm(eb, series)} -> {share_pm(ea, series)}",
          flush=True)
    return ra / series <= ALPHA + _err(ALPHA, series)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--series", type=int, default=1000)
    n = parser.parse_args(argv).series
    started = time.perf_counter()
    print(f"alpha {ALPHA}, {RUNS} runs a label, run sd {RUN_SD}, label sd {LABEL_SD} (sigma "
          f"{SIGMA:.3f}); {n} histories per row; before -> after (module docstring)\n")
    ok = []
    for tails in ("normal", "t3"):
        for labels in (8, 10, 12, 20, 40):
            ok.append(flat(n, labels, tails))
    print()
    for labels in (8, 9, 10, 11, 12):
        ok.append(late(n, labels, 2, math.log(3.0), "x3 step") >= 0.9)
    for last in (1, 2, 3):
        for labels in (8, 10, 12):
            late(n, labels, last, 3 * SIGMA, "3 sigma step")
    print()
    for tails in ("normal", "t3"):
        for labels in (12, 20):
            ok.append(page(n, labels, tails))
    print(f"\n{sum(ok)}/{len(ok)} checks pass; {time.perf_counter() - started:.0f} s")
    return 0 if all(ok) else 1


if __name__ == "__main__":
    sys.exit(main())
