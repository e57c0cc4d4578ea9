"""Does the USL's peak claim keep its size, and does the N* interval cover? By simulation.

Run: ``nice -n 19 .venv/bin/python benchmarks/calibration_usl.py [--sims 500] [--nstar 200]``

Size: data sets from Amdahl's law (issue 13's reproducer: N = 1, 2, 4, ..., 64,
X = 100 N / (1 + 0.05 (N - 1)), kappa = 0) with 3% noise that is constant (sd 3% of the mean
throughput), proportional (X (1 + 0.03 z)) or heavy-tailed (proportional, Student t with 3 df
scaled to sd 3%), with 1 and 3 runs per N. Printed: how often a peak N* would be claimed at
alpha 0.05 by the F-test on throughput (perfkit before issue 13) and by the F-test on log
throughput (:func:`perfkit.stats.usl.kappa_test`, used by ``fit_usl``), each with its Monte
Carlo standard error; and the power of both when kappa = 5e-4 (N* = 43.6).

N* coverage (``--nstar`` data sets, 0 to skip): a USL with sigma 0.03, kappa 2e-4, gamma 100
(N* = 69.6) measured at N = 1 ... 128 with 3 runs per N and 3% proportional noise; the share
of ``fit_usl``'s ``n_star_ci`` that holds the true N* (computed whether or not the peak is
claimed), with 400 bootstrap resamples each.

Exit status 1 if the log-scale test's false-claim rate exceeds alpha + 2 MC standard errors.
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np
from scipy import stats as sps

from perfkit.stats._usl_model import best_fit, rss
from perfkit.stats.usl import fit_usl, kappa_test, usl

ALPHA = 0.05
LEVELS = np.array([1, 2, 4, 8, 16, 32, 64], dtype=float)
NOISES = ("constant", "proportional", "heavy-tailed")


def throughput(kind: str, n: np.ndarray, rng: np.random.Generator, kappa: float) -> np.ndarray:
    mean = usl(n, 0.05, kappa, 100.0)
    if kind == "constant":
        return mean + 0.03 * mean.mean() * rng.standard_normal(len(n))
    if kind == "proportional":
        return mean * (1.0 + 0.03 * rng.standard_normal(len(n)))
    return mean * (1.0 + 0.03 * rng.standard_t(3, len(n)) / math.sqrt(3.0))


def linear_f_p(n: np.ndarray, x: np.ndarray) -> float:
    """The F-test on throughput that fit_usl used before issue 13."""
    p_u, _ = best_fit(n, x, np.array([True, True, True]))
    p_a, _ = best_fit(n, x, np.array([True, False, True]))
    rss_u, rss_a = rss(n, x, p_u), rss(n, x, p_a)
    dof = len(x) - 3
    return float(sps.f.sf(max(rss_a - min(rss_u, rss_a), 0.0) / (rss_u / dof), 1, dof))


def claim_rates(kind: str, runs: int, kappa: float, sims: int, seed: int) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    n = np.repeat(LEVELS, runs)
    linear = logged = 0
    for _ in range(sims):
        x = throughput(kind, n, rng, kappa)
        linear += linear_f_p(n, x) < ALPHA
        logged += kappa_test(n, x)[1] < ALPHA
    return linear / sims, logged / sims


def nstar_coverage(sims: int) -> tuple[float, float, float]:
    truth = (0.03, 2e-4, 100.0)
    n_star = math.sqrt((1 - truth[0]) / truth[1])
    n = np.repeat(np.array([1, 2, 4, 8, 16, 32, 64, 128], dtype=float), 3)
    rng = np.random.default_rng(77)
    hits = claimed = 0
    for i in range(sims):
        x = usl(n, *truth) * (1.0 + 0.03 * rng.standard_normal(len(n)))
        fit = fit_usl(n, x, n_resamples=400, seed=i)
        claimed += fit.n_star is not None
        low, high = fit.n_star_interval() if hasattr(fit, "n_star_interval") else fit.n_star_ci
        hits += low <= n_star <= high
    cov = hits / sims
    return cov, math.sqrt(cov * (1 - cov) / sims), claimed / sims


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=500)
    parser.add_argument("--nstar", type=int, default=200)
    args = parser.parse_args(argv)
    se = math.sqrt(ALPHA * (1 - ALPHA) / args.sims)
    print(f"false claims of N* at alpha {ALPHA} under kappa = 0, {args.sims} data sets per row "
          f"(MC se at 0.05: {se:.3f}); power at kappa = 5e-4")
    print(f"{'noise':>14} {'runs/N':>6} | {'F on X':>7} {'F on log X':>10} | "
          f"{'power F on X':>12} {'F on log X':>10}")
    bad = False
    for runs in (1, 3):
        for j, kind in enumerate(NOISES):
            t0 = time.perf_counter()
            lin, log = claim_rates(kind, runs, 0.0, args.sims, 100 * runs + j)
            p_lin, p_log = claim_rates(kind, runs, 5e-4, args.sims, 200 * runs + j)
            bad |= log > ALPHA + 2 * se
            print(f"{kind:>14} {runs:>6} | {lin:7.3f} {log:10.3f} | {p_lin:12.3f} {p_log:10.3f}"
                  f"   [{time.perf_counter() - t0:.0f} s]", flush=True)
    if args.nstar:
        t0 = time.perf_counter()
        cov, cov_se, claimed = nstar_coverage(args.nstar)
        print(f"\nN* interval, nominal 95%: coverage {cov:.3f} (MC se {cov_se:.3f}); peak "
              f"claimed in {claimed:.2f} of {args.nstar} data sets "
              f"[{time.perf_counter() - t0:.0f} s]")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
