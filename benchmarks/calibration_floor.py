"""Does Welch's t on log values keep its size where it stands in for the rank test at its
floor? By simulation, through :func:`perfkit.stats.compare` itself (issue 34).

Run: ``nice -n 19 .venv/bin/python benchmarks/calibration_floor.py [--reps 4000]``

``compare`` uses Welch's t on log values (:mod:`perfkit.stats.welch`) where the exact rank
test's smallest attainable p, times the Holm family, is within a factor of 2 of alpha or not
below it, with at least 4 runs a side (5 vs 5 in a family of 4-7, 4 vs 4 alone or in pairs, 6
vs 6 from 12). Each design below is such a case; under "no change" the runs of both sides
come from one distribution of per-run values (log scale):

- ``log-normal``: normal, sd 0.1;
- ``heavy tails``: Student t3 scaled to sd 0.1;
- ``slow runs``: normal sd 0.05, and one run in ten 3 times slower (a neighbour, a cold cache);
- ``unequal spread``: sd 0.05 on one side, 0.2 on the other, and ``unequal 8:1``: 0.025 and
  0.2 (the same geometric mean: the Behrens-Fisher problem, where Welch-Satterthwaite's df are
  liberal at few runs and small levels; :mod:`perfkit.stats.welch` takes its df toward Hsu's);
- ``skewed``: log-gamma with shape 2 (right-skewed log values), sd 0.1.

Printed per design and distribution: the rate at which the row's test rejects at its Holm
first step (p < alpha / m, the level its Bonferroni interval inverts) over alpha / m (1 is
exact; above 1 + twice the Monte Carlo error is a liberal test), and the family-wise rate of
m such rows under "no change" with Holm's adjustment (target <= alpha). For comparison, the
rank test's power beside Welch's at a real change of x1.2 (sd 0.1): the share of rows each
calls significant after Holm over the family (the other m - 1 rows without a change).

Exit status 1 if a size ratio exceeds 1.2 + twice its Monte Carlo error, or a family-wise rate
exceeds 0.05 by more than twice its error.
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np

from perfkit.stats import adjust_pvalues, compare
from perfkit.stats.mannwhitney import mann_whitney

ALPHA = 0.05
#: (runs a side, family size m)
DESIGNS = ((4, 1), (4, 2), (5, 4), (5, 6), (5, 7), (6, 12))
DISTRIBUTIONS = ("log-normal", "heavy tails", "slow runs", "unequal spread", "unequal 8:1",
                 "skewed")


def draw(kind: str, rng: np.random.Generator, n: int, side: int) -> np.ndarray:
    """``n`` per-run values of one side (``side`` 0 or 1) under ``kind``."""
    if kind == "log-normal":
        logs = 0.1 * rng.standard_normal(n)
    elif kind == "heavy tails":
        logs = 0.1 * rng.standard_t(3, n) / math.sqrt(3.0)
    elif kind == "slow runs":
        logs = 0.05 * rng.standard_normal(n) + math.log(3.0) * (rng.random(n) < 0.1)
    elif kind == "unequal spread":
        logs = (0.05 if side == 0 else 0.2) * rng.standard_normal(n)
    elif kind == "unequal 8:1":
        logs = (0.025 if side == 0 else 0.2) * rng.standard_normal(n)
    else:
        logs = 0.1 * (rng.gamma(2.0, 1.0, n) - 2.0) / math.sqrt(2.0)
    return 10.0 * np.exp(logs)


def size(kind: str, n: int, m: int, reps: int, seed: int) -> tuple[float, float, str]:
    """(rate of p < alpha / m over alpha / m, family-wise rate of m null rows, the method)."""
    rng = np.random.default_rng(seed)
    first = fwer = 0
    method = ""
    for _ in range(reps):
        ps = []
        for _ in range(m):
            c = compare(draw(kind, rng, n, 0), draw(kind, rng, n, 1), ALPHA, family=m)
            ps.append(c.p_value)
            method = c.p_method or method
        first += ps[0] < ALPHA / m
        fwer += bool((adjust_pvalues(ps, "holm") < ALPHA).any())
    return first / reps / (ALPHA / m), fwer / reps, method


def power(n: int, m: int, reps: int, seed: int, ratio: float = 1.2) -> tuple[float, float]:
    """(Welch's, the rank test's) share of changed rows called significant after Holm over m
    rows (the other m - 1 without a change), log-normal sd 0.1."""
    rng = np.random.default_rng(seed)
    hits = [0, 0]
    for _ in range(reps):
        sides = [(draw("log-normal", rng, n, 0), draw("log-normal", rng, n, 1))
                 for _ in range(m)]
        sides[0] = (sides[0][0], sides[0][1] * ratio)
        welch = [compare(b, x, ALPHA, family=m).p_value for b, x in sides]
        rank = [mann_whitney(x, b)[0].p_value for b, x in sides]
        hits[0] += adjust_pvalues(welch, "holm")[0] < ALPHA
        hits[1] += adjust_pvalues(rank, "holm")[0] < ALPHA
    return hits[0] / reps, hits[1] / reps


def _err(p: float, n: int) -> float:
    return 2 * math.sqrt(max(p * (1 - p), 1 / n) / n)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--reps", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=34)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    print(f"compare() under no change, alpha {ALPHA}, {args.reps} replications a cell "
          f"(seed {args.seed})\n")
    print(f"{'design':<14} {'distribution':<15} {'test':<10} {'size / (alpha/m)':>17} "
          f"{'Holm family-wise':>17}")
    ok = True
    for n, m in DESIGNS:
        for kind in DISTRIBUTIONS:
            ratio, fwer, method = size(kind, n, m, args.reps, args.seed)
            err = _err(ratio * ALPHA / m, args.reps) / (ALPHA / m)
            print(f"{f'{n} vs {n}, m={m}':<14} {kind:<15} {method:<10} "
                  f"{ratio:>10.2f}±{err:.2f} {fwer:>11.3f}±{_err(fwer, args.reps):.3f}")
            if ratio > 1.2 + err or fwer > ALPHA + _err(fwer, args.reps):
                ok = False
        sys.stdout.flush()
    print("\npower at x1.2 (log sd 0.1), one changed row in a Holm family of m: Welch's t vs "
          "the rank test")
    for n, m in DESIGNS:
        welch, rank = power(n, m, args.reps // 4, args.seed)
        print(f"  {n} vs {n}, m={m}: {welch:.3f} vs {rank:.3f}")
    print(f"\n{time.perf_counter() - started:.0f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
