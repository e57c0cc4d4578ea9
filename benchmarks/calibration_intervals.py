"""Do a row's interval and its verdict agree? By simulation on the demo factorial's design
(issue 34).

Run: ``nice -n 19 .venv/bin/python benchmarks/calibration_intervals.py [--reps 400]``

Each replication: the 60 runs of the demo factorial as first recorded
(``tests/fixtures/stalls/factorial-upstream-backlog100``: keepalive x cache, 5 randomized
complete blocks, at 16, 64 and 256 connections; the design the figures of issue 34 were
measured on, kept when the demo was re-recorded as a 2x2x2) with their p99 set to
``exp(mu + a x_ka + b x_cache + ab x_ka x_cache + block + sd z)`` (per-run log sd ``sd`` = 0.15,
block effects N(0, 0.05)); only that column changes, every other field stays as measured.
Then the analyses the tuning-effects page runs, as it runs them:
:func:`perfkit.analysis.effects.factorial_effects` (each term Holm over the 3 load levels), its
simple effects (Holm over the 2 levels of the other factor, where an interaction is
significant) and :func:`perfkit.analysis.effects.ab_comparisons` (Holm over the 6 rows).

Counted per family (a term over the load levels; a factor's simple effects at one level; the
A/B table), over the rows of every family: the share of families with a row that pairs ``~``
with an interval excluding 1 (the mismatch of issue 34: before, a per-comparison interval
beside a Holm verdict), and with a row whose verdict is significant while its interval holds
1 (Holm's later steps test at larger levels than Bonferroni's intervals: such a row says so).
Scenarios: ``null`` (no effect at all) and ``real`` (keepalive x0.85, cache x0.6, their
interaction x1.1, as log ratios of high over low). ± is twice the binomial Monte Carlo
standard error.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from perfkit.analysis import load_experiment, metric
from perfkit.analysis.core import RunSet
from perfkit.analysis.effects import ab_comparisons, factorial_effects

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _mc import share_pm  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
P99 = metric("latency_p99_ms")
FACTORS = ["keepalive", "cache"]
#: (name, log ratio high/low of keepalive, of cache, of their interaction)
SCENARIOS = (("null", 0.0, 0.0, 0.0),
             ("real", math.log(0.85), math.log(0.6), math.log(1.1)))


def template() -> RunSet:
    return load_experiment(REPO / "tests" / "fixtures" / "stalls"
                           / "factorial-upstream-backlog100").rows()


def values(rows: RunSet, effects: tuple[float, float, float], sd: float,
           rng: np.random.Generator) -> np.ndarray:
    """One replication's p99 (ms) for the template's runs."""
    f = rows.frame
    ka = np.where(f["keepalive"].astype(str) == "none", -0.5, 0.5)
    cache = np.where(f["cache"].astype(str) == "none", -0.5, 0.5)
    blocks = f["block"].astype(int).to_numpy()
    block_effect = rng.normal(0.0, 0.05, blocks.max() + 1)[blocks]
    logs = (math.log(5.0) + effects[0] * ka + effects[1] * cache + effects[2] * 4 * ka * cache
            / 2 + block_effect + sd * rng.standard_normal(len(f)))
    return np.exp(logs)


def families(result, ab) -> list[pd.DataFrame]:
    """Every Holm family's rows as (verdict, low, high): the factorial's terms over the load
    levels, its simple effects per factor and load level, and the A/B table."""
    out = []
    effects = result.to_frame()
    effects = effects[~effects["term"].isin(["error", "block"])]
    for _, rows in effects.groupby("term"):
        out.append(rows[["verdict", "ratio_ci_low", "ratio_ci_high"]])
    if len(result.simple_effects):
        simple = result.simple_frame()
        for _, rows in simple.groupby(["connections", "factor"]):
            out.append(rows[["verdict", "ratio_ci_low", "ratio_ci_high"]])
    out.append(ab.to_frame()[["verdict", "ratio_ci_low", "ratio_ci_high"]])
    return out


def mismatches(rows: pd.DataFrame) -> tuple[bool, bool]:
    """(a ``~`` beside an interval excluding 1, a significant verdict beside one holding 1)."""
    lo, hi = rows["ratio_ci_low"].astype(float), rows["ratio_ci_high"].astype(float)
    known = lo.notna() & hi.notna()
    excludes = known & ((lo > 1) | (hi < 1))
    holds = known & (lo <= 1) & (hi >= 1)
    verdict = rows["verdict"].astype(str)
    return (bool(((verdict == "~") & excludes).any()),
            bool((verdict.str.match(r"(better|worse)") & holds).any()))


def simulate(effects: tuple[float, float, float], sd: float, reps: int,
             seed: int) -> dict[str, int]:
    rows = template()
    rng = np.random.default_rng(seed)
    counts = {"families": 0, "tilde_excluding": 0, "significant_holding": 0}
    for _ in range(reps):
        frame = rows.frame.assign(**{P99.name: values(rows, effects, sd, rng)})
        sim = RunSet(frame, rows.runs, "sim", factors=rows.factors)
        result = factorial_effects(sim, FACTORS, P99, by=["connections"])
        ab = ab_comparisons(sim, FACTORS, P99, by=["connections"])
        for family in families(result, ab):
            tilde, significant = mismatches(family)
            counts["families"] += 1
            counts["tilde_excluding"] += tilde
            counts["significant_holding"] += significant
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--reps", type=int, default=400)
    parser.add_argument("--seed", type=int, default=34)
    parser.add_argument("--sd", type=float, default=0.15)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    print(f"the first demo factorial's design (keepalive x cache), p99 log sd {args.sd}, "
          f"{args.reps} replications a row (seed {args.seed}); per Holm family\n")
    print(f"{'scenario':<9} {'families':>9} {'~ beside an excluding CI':>25} "
          f"{'significant beside a CI holding 1':>34}")
    ok = True
    for name, *effects in SCENARIOS:
        c = simulate((effects[0], effects[1], effects[2]), args.sd, args.reps, args.seed)
        print(f"{name:<9} {c['families']:>9} {share_pm(c['tilde_excluding'], c['families']):>25} "
              f"{share_pm(c['significant_holding'], c['families']):>34}")
        ok = ok and c["tilde_excluding"] == 0
    print(f"\n{time.perf_counter() - started:.0f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
