"""Calibration of perfkit.stats.power: is the stated power the power a design achieves?

Run: ``nice -n 19 .venv/bin/python benchmarks/calibration_power.py [--pilots 400]``

For each scenario (true distribution of log per-run values, runs per side, spread):

1. draw a pilot experiment (the per-run values a comparison would have seen) and state, from
   it alone, (a) the smallest ratio detectable with 80% power (``min_detectable_ratio``),
   (b) the power at a fixed ratio (``power_at_ratio``), (c) the runs per arm for 80% power
   at that ratio (``runs_needed``, a subset of scenarios);
2. measure the power really achieved at (a) and (c) on fresh experiments drawn from the true
   distribution with the shift applied (the same exact Mann-Whitney test), and the true power
   at the fixed ratio of (b), chosen where normal log values give 65% power (heavy tails
   give more);
3. average over pilots. "stated" and "achieved" must agree within 5 points; ± is twice the
   Monte Carlo standard error of the mean over pilots. q10-q90 is the spread of the achieved
   power of single statements: a spread seen in few runs is itself uncertain.

A line "plug-in" repeats (a) without the spread-uncertainty draw (df = inf) to show why the
predictive power is used. Exit status 1 if a predictive row misses the 5-point band by more
than its Monte Carlo error.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable

import numpy as np

from perfkit.stats import power, powersim

Sampler = Callable[[np.random.Generator, tuple[int, ...]], np.ndarray]
TRUTH_SIMS = 4000
BAND = 0.05


def normal(sd: float) -> Sampler:
    return lambda rng, shape: sd * rng.standard_normal(shape)


def student3(sd: float) -> Sampler:
    """Student t with 3 df scaled to standard deviation ``sd`` (heavy tails)."""
    return lambda rng, shape: sd * rng.standard_t(3, shape) / math.sqrt(3.0)


def achieved(sampler: Sampler, n_b: int, n_n: int, shift: float, rng: np.random.Generator,
             sims: int = TRUTH_SIMS) -> float:
    """Rejection rate of the two-sided exact U test on fresh draws from the truth."""
    u_hi = powersim.upper_critical_u(n_n, n_b, 0.05)
    base = sampler(rng, (sims, n_b))
    new = sampler(rng, (sims, n_n)) + shift
    ranks = np.argsort(np.argsort(np.concatenate([new, base], axis=1), axis=1), axis=1) + 1
    u = ranks[:, :n_n].sum(axis=1) - n_n * (n_n + 1) // 2
    return float(np.mean((u >= u_hi) | (u <= n_b * n_n - u_hi)))


def _row(label: str, stated: float, got: np.ndarray) -> tuple[str, bool]:
    mean, err = float(got.mean()), 2 * float(got.std(ddof=1)) / math.sqrt(len(got))
    ok = abs(mean - stated) <= BAND + err
    q10, q90 = np.quantile(got, [0.1, 0.9])
    return (f"{label:<44} stated {stated:5.3f}  achieved {mean:5.3f} ± {err:5.3f}  "
            f"q10-q90 {q10:4.2f}-{q90:4.2f}  {'ok' if ok else 'MISS'}"), ok


def scenario(name: str, sampler: Sampler, n_b: int, n_n: int, sd: float, pilots: int,
             fixed_ratio: float, with_runs: bool, seed: int) -> list[bool]:
    rng = np.random.default_rng(seed)
    true_at_fixed = achieved(sampler, n_b, n_n, math.log(fixed_ratio), rng, 4 * TRUTH_SIMS)
    mde, plug, at_fixed, runs, runs_got, ns = [], [], [], [], [], []
    t0 = time.perf_counter()
    for i in range(pilots):
        base, new = np.exp(sampler(rng, (n_b,))), np.exp(sampler(rng, (n_n,)))
        m = power.min_detectable_ratio(base, new, n_sim=2000, seed=i)
        mde.append(achieved(sampler, n_b, n_n, math.log(m.ratio_high), rng, 1000))
        spread = powersim.spread_from_values(base, new)
        known = power.min_detectable_ratio(n_base=n_b, n_new=n_n, log_sd=spread.log_sd,
                                           n_sim=2000, seed=i)
        plug.append(achieved(sampler, n_b, n_n, math.log(known.ratio_high), rng, 1000))
        at_fixed.append(power.power_at_ratio(fixed_ratio, base, new, n_sim=2000, seed=i).power)
        if with_runs and i < pilots // 4:
            r = power.runs_needed(fixed_ratio, base, new, n_sim=1000, seed=i, max_runs=80)
            if r.runs_per_arm is not None:
                ns.append(r.runs_per_arm)
                runs_got.append(achieved(sampler, r.runs_per_arm, r.runs_per_arm,
                                         math.log(fixed_ratio), rng, 1000))
            runs.append(r.runs_per_arm)
    took = time.perf_counter() - t0
    head = f"{name} sd {sd:g}, {n_b} vs {n_n} runs"
    print(f"\n{head} ({pilots} pilots, {took:.1f} s)")
    lines = [_row("  80% MDE (predictive, the method)", 0.8, np.array(mde)),
             _row("  80% MDE (plug-in spread, for contrast)", 0.8, np.array(plug))]
    stated = float(np.mean(at_fixed))
    err = 2 * float(np.std(at_fixed, ddof=1)) / math.sqrt(len(at_fixed))
    ok_fixed = abs(stated - true_at_fixed) <= BAND + err
    print(lines[0][0])
    print(lines[1][0])
    print(f"  power at ratio {fixed_ratio:<28g} stated {stated:5.3f} ± {err:5.3f}  "
          f"true {true_at_fixed:5.3f}  {'ok' if ok_fixed else 'MISS'}")
    oks = [lines[0][1], ok_fixed]
    if runs_got:
        line, ok = _row(f"  runs_needed({fixed_ratio:g}): median {np.median(ns):g} per arm",
                        0.8, np.array(runs_got))
        print(line + f"  (> 80 runs: {sum(r is None for r in runs)})")
        oks.append(ok)
    return oks


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pilots", type=int, default=400)
    args = parser.parse_args(argv)
    oks: list[bool] = []
    plan = [(4, 4, 0.05), (5, 5, 0.05), (5, 5, 0.10), (8, 8, 0.05), (12, 12, 0.10),
            (5, 10, 0.05)]
    for k, (n_b, n_n, sd) in enumerate(plan):
        # a ratio in the middle of the power curve: 65% power for normal log values
        fixed = power.min_detectable_ratio(n_base=n_b, n_new=n_n, log_sd=sd, power=0.65).ratio_high
        for name, make in (("normal", normal), ("student-t3", student3)):
            oks += scenario(name, make(sd), n_b, n_n, sd, args.pilots, round(fixed, 3),
                            with_runs=n_b == n_n and n_b <= 8, seed=100 * k + len(name))
    print(f"\n{sum(oks)}/{len(oks)} rows within {BAND:.0%} of the stated power (plus MC error)")
    return 0 if all(oks) else 1


if __name__ == "__main__":
    sys.exit(main())
