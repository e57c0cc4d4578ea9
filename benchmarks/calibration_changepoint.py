"""Calibration of perfkit.stats.changepoint on synthetic histories with known change points.

Run: ``nice -n 19 .venv/bin/python benchmarks/calibration_changepoint.py [--series 400]``

Each history has L labels with ``runs`` runs each; log value = level of the label's segment
+ optional label effect N(0, label_sd^2) shared by the label's runs + run noise (normal, or
Student t3 scaled to the same sd). Run-to-run log sd 0.05-0.1 is what our testbed shows.
The statistic (exponent 1, log values) is scale-equivariant, so only a step's size relative to
the noise matters: rows with run_sd 0.05 and 0.1 are independent replicates of one design.

- Flat histories: the false-positive rate is the share with any change point (must be
  <= alpha = 0.05 up to Monte Carlo error). With a label effect, the first permutation test
  is also run shuffling single runs instead of labels, to show why perfkit shuffles labels.
- Steps of k x sigma_label, sigma_label = sqrt(run_sd^2 / runs + label_sd^2) the noise of a
  label's mean: recall is the share of true change points with a detection within 0 / 1 / 2
  labels; "extra" counts detections farther than 1 label from any true change per history;
  coverage is the share of exactly placed detections whose 95% ratio interval holds the true
  ratio (a post-selection interval: the data chose the split).

± is twice the binomial Monte Carlo standard error. Exit status 1 when a flat false-positive
rate exceeds alpha by more than that, or a 3-sigma single step's recall (within 1) is < 0.9.
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np

from perfkit.stats import edivisive
from perfkit.stats.changepoint import change_points

ALPHA = 0.05


def history(rng: np.random.Generator, labels: int, runs: int, run_sd: float,
            steps: dict[int, float], label_sd: float = 0.0, tails: str = "normal"
            ) -> list[np.ndarray]:
    """Per-label run values (positive, around 1) with log steps at the given label indices."""
    level = np.zeros(labels)
    for at, step in steps.items():
        level[at:] += step
    level += label_sd * rng.standard_normal(labels)
    if tails == "t3":
        noise = run_sd * rng.standard_t(3, (labels, runs)) / math.sqrt(3.0)
    else:
        noise = run_sd * rng.standard_normal((labels, runs))
    return list(np.exp(level[:, None] + noise))


def _err(p: float, n: int) -> float:
    return 2 * math.sqrt(max(p * (1 - p), 1 / n) / n)


def flat(series: int, labels: int, runs: int, run_sd: float, label_sd: float = 0.0,
         tails: str = "normal", contrast: bool = False) -> bool:
    rng = np.random.default_rng([labels, runs, int(run_sd * 1000), int(label_sd * 1000)])
    hits, run_hits, took = 0, 0, []
    for i in range(series):
        values = history(rng, labels, runs, run_sd, {}, label_sd, tails)
        t0 = time.perf_counter()
        hits += bool(change_points(values, seed=i).change_points)
        took.append(time.perf_counter() - t0)
        if contrast:
            run_hits += _first_test_by_runs(values, i) <= ALPHA
    fpr = hits / series
    ok = fpr <= ALPHA + _err(ALPHA, series)
    what = f"flat L={labels} runs={runs} run_sd={run_sd:g} label_sd={label_sd:g} {tails}"
    line = (f"{what:<52} false positives {fpr:5.3f} ± {_err(fpr, series):5.3f}  "
            f"{np.median(took) * 1e3:6.1f} ms  {'ok' if ok else 'MISS'}")
    if contrast:
        rate = run_hits / series
        line += f"\n{'':<52} shuffling runs instead: {rate:5.3f} ± {_err(rate, series):5.3f}"
    print(line, flush=True)
    return ok


def _first_test_by_runs(values: list[np.ndarray], seed: int) -> float:
    """p of the first E-divisive test when single runs are shuffled (the invalid scheme)."""
    counts = np.array([len(v) for v in values])
    z = np.log(np.concatenate(values))
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    p, c = edivisive.prefix(edivisive.block_sums(z, starts, 1.0), counts)
    q_obs = float(edivisive.best_split(p, c, 0, len(counts), 2)[0])
    null = edivisive.permuted_run_maxima(z, starts, counts, [(0, len(counts))], 2, 1.0, 199,
                                         np.random.default_rng(seed))
    return (1 + int(np.count_nonzero(null >= q_obs - 1e-12 * abs(q_obs)))) / 200


def stepped(series: int, name: str, labels: int, runs: int, run_sd: float,
            steps: dict[int, float], label_sd: float = 0.0, tails: str = "normal"
            ) -> float:
    """Prints recall within 0/1/2 labels, extras and CI coverage; returns recall within 1."""
    rng = np.random.default_rng([labels, runs, int(run_sd * 1000), len(steps),
                                 int(10 * sum(steps.values())), int(label_sd * 1000)])
    sigma = math.sqrt(run_sd ** 2 / runs + label_sd ** 2)
    within = np.zeros(3)
    extra = covered = placed = 0
    for i in range(series):
        log_steps = {at: k * sigma for at, k in steps.items()}
        found = change_points(history(rng, labels, runs, run_sd, log_steps, label_sd, tails),
                              seed=i).change_points
        where = [cp.index for cp in found]
        for at in steps:
            dist = min((abs(w - at) for w in where), default=math.inf)
            within += [dist <= 0, dist <= 1, dist <= 2]
        extra += sum(min(abs(w - at) for at in steps) > 1 for w in where)
        for cp in found:
            if cp.index in log_steps and math.isfinite(cp.ratio_ci_low):
                placed += 1
                covered += cp.ratio_ci_low <= math.exp(log_steps[cp.index]) <= cp.ratio_ci_high
    recall = within / (series * len(steps))
    what = (f"{name} L={labels} runs={runs} run_sd={run_sd:g}"
            + (f" label_sd={label_sd:g}" if label_sd else "") + (f" {tails}" if tails != "normal"
                                                                  else ""))
    steps_txt = "+".join(f"{k:g}" for k in steps.values())
    cover = f"{covered / placed:5.3f} (n={placed})" if placed else "  n/a"
    print(f"{what:<46} steps {steps_txt:>6} sigma: recall {recall[0]:4.2f} / {recall[1]:4.2f} / "
          f"{recall[2]:4.2f} ± {_err(recall[1], series * len(steps)):5.3f}  extra "
          f"{extra / series:4.2f}  CI coverage {cover}", flush=True)
    return float(recall[1])


def timings() -> None:
    rng = np.random.default_rng(3)
    for labels in (20, 50, 100, 200):
        values = history(rng, labels, 3, 0.07, {labels // 2: 0.2})
        t0 = time.perf_counter()
        found = change_points(values)
        took = time.perf_counter() - t0
        print(f"timing: {labels} labels x 3 runs, 199 permutations: {took:6.2f} s "
              f"({len(found.change_points)} change point(s))", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--series", type=int, default=400)
    n = parser.parse_args(argv).series
    ok = []
    print(f"alpha {ALPHA}, 199 permutations, min 2 labels a side; {n} histories per row\n")
    for runs in (1, 3):
        for sd in (0.05, 0.1):
            ok.append(flat(n, 20, runs, sd))
    ok.append(flat(n, 40, 3, 0.07))
    ok.append(flat(n, 20, 3, 0.07, tails="t3"))
    ok.append(flat(n, 20, 3, 0.05, label_sd=0.05, contrast=True))
    print("\nrecall within 0 / 1 / 2 labels (± for within 1)")
    for runs in (1, 3):
        for sd in (0.05, 0.1):
            for k in (2.0, 3.0, 4.0):
                recall = stepped(n, "step@10", 20, runs, sd, {10: k})
                if k == 3.0:
                    ok.append(recall >= 0.9)
    stepped(n, "late step@16", 20, 3, 0.07, {16: 3.0})
    stepped(n, "late step@16", 20, 3, 0.07, {16: 4.0})
    stepped(n, "step@10", 20, 3, 0.07, {10: 3.0}, tails="t3")
    stepped(n, "step@10", 20, 3, 0.05, {10: 3.0}, label_sd=0.05)
    for k in (3.0, 4.0):
        stepped(n, "bump@10,20", 30, 3, 0.07, {10: k, 20: -k})
        stepped(n, "stairs@10,20", 30, 3, 0.07, {10: k, 20: k})
        stepped(n, "bump@10,20", 30, 1, 0.07, {10: k, 20: -k})
    print()
    timings()
    print(f"\n{sum(ok)}/{len(ok)} checks pass")
    return 0 if all(ok) else 1


if __name__ == "__main__":
    sys.exit(main())
