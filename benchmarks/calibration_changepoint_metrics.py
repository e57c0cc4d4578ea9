"""A false change point anywhere on a history page, across its metrics, by simulation (issue 34
item 5).

Run: ``nice -n 19 .venv/bin/python benchmarks/calibration_changepoint_metrics.py [--series 1000]``

The history page finds the change points of each metric (p99 and throughput by default) at
each load level; the question is the chance that a flat history (no change at all) shows a
change point in some metric. Each history: L labels of ``runs`` runs; per run the two metrics'
log values are bivariate normal with correlation rho (run-to-run log sd 0.05 each), plus a
label effect (log sd ``label_sd``) with the same correlation, shared by the label's runs. A
closed-loop history has throughput about connections over mean latency, so the metrics move
together (rho near -1 between p99 and throughput; the energy statistic is blind to the sign).

Each metric's series goes to :func:`perfkit.stats.changepoint.change_points` exactly as the
page calls it (alpha 0.05, 199 permutations, seed 0 for every metric, as
:func:`perfkit.analysis.history.analyse` does). Printed per rho: the share of histories with a
change point in metric 1, and in either metric (the page's family-wise error) with each metric
at alpha (perfkit before issue 34) and with Holm over the metrics (the page now), each with
twice its binomial Monte Carlo standard error. Exit status 1 when the page's rate with Holm
exceeds alpha by more than that.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _mc import share_pm  # noqa: E402

ALPHA = 0.05
RHOS = (0.0, 0.5, 0.8, 0.95)


def history(rng: np.random.Generator, labels: int, runs: int, rho: float, run_sd: float,
            label_sd: float) -> list[list[list[float]]]:
    """Two metrics' per-label run values (positive, around 1) of one flat history."""
    cov = np.array([[1.0, rho], [rho, 1.0]])
    chol = np.linalg.cholesky(cov)
    label = label_sd * rng.standard_normal((labels, 2)) @ chol.T
    noise = run_sd * rng.standard_normal((labels, runs, 2)) @ chol.T
    logs = label[:, None, :] + noise
    return [[list(np.exp(logs[i, :, m])) for i in range(labels)] for m in range(2)]


def page(series: list[list[list[float]]], alpha: float, seed: int, holm: bool) -> list[bool]:
    """Per metric: has it a change point? Each at alpha (perfkit before issue 34), or with Holm
    over the metrics (:func:`perfkit.analysis.history.analyse_metrics`' rule)."""
    first = [change_points(s, alpha=alpha, seed=seed) for s in series]
    if holm:
        levels = holm_levels([first_p(c) for c in first], alpha)
        first = [c if level == alpha else change_points(s, alpha=level, seed=seed)
                 for c, s, level in zip(first, series, levels, strict=True)]
    return [bool(c.change_points) for c in first]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--series", type=int, default=1000)
    parser.add_argument("--labels", type=int, default=12)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--label-sd", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=34)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    print(f"flat histories of {args.labels} labels x {args.runs} runs, run log sd 0.05, label "
          f"log sd {args.label_sd}, {args.series} histories per rho (seed {args.seed}); alpha "
          f"{ALPHA}; +- twice the MC se\n")
    print(f"{'rho':>5} {'metric 1':>14} {'either, each at alpha':>22} "
          f"{'either, Holm (page)':>20}")
    ok = True
    for rho in RHOS:
        rng = np.random.default_rng(args.seed)
        one = either = holm = 0
        for _ in range(args.series):
            series = history(rng, args.labels, args.runs, rho, 0.05, args.label_sd)
            found = page(series, ALPHA, seed=0, holm=False)
            one += found[0]
            either += any(found)
            holm += any(page(series, ALPHA, seed=0, holm=True))
        print(f"{rho:>5.2f} {share_pm(one, args.series):>14} {share_pm(either, args.series):>22} "
              f"{share_pm(holm, args.series):>20}")
        p = holm / args.series
        ok = ok and p - 2 * math.sqrt(max(p * (1 - p), 1 / args.series) / args.series) <= ALPHA
        sys.stdout.flush()
    print(f"\n{time.perf_counter() - started:.0f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
