"""The error rate of simple effects reported after a significant interaction, by simulation
(issue 34 item 5).

Run: ``nice -n 19 .venv/bin/python benchmarks/calibration_simple_effects.py [--reps 1000]``

The procedure has two stages: :func:`perfkit.analysis.effects.factorial_effects` tests each
two-factor interaction (Holm over the load levels); where one is significant its simple effects
are reported, each factor's at the two levels of the other (Holm over those two). A simple
effect is a false discovery when its verdict is better or worse while its true effect is 0.

Design: the 72 runs of ``data/demo-wrk-factorial`` (client keepalive x cache, 6 runs per cell
in randomized complete blocks, upstream keepalive left out of the model and of the simulated
values, at 16, 64 and 256 connections), or with ``--runs-per-cell 3`` its 36 runs with upstream
keepalive off (where 3 vs 3 runs sit at the rank test's floor: no simple effect is ever
significant, so the error is 0 and so is the power), their p99 set to
``exp(mu + log-effects + block + sd z)``, per-run log sd 0.15, block effects N(0, 0.05);
every other field as measured. Truths (log ratios, high over low):

- ``null``: no effect at all (every simple effect 0);
- ``main only``: client keepalive x0.7 at every level of cache, cache 0, no interaction (the
  simple effects of cache are 0, those of keepalive are not);
- ``one cell``: x0.5 only where both factors are high (the simple effects of each factor at
  the other's low level are 0, at its high level not; the interaction is real).

Printed per truth: the share of data sets where an interaction is significant at some load
level, and the family-wise error: the share of data sets with a false discovery among the
simple effects (of a family: one factor at one load level; of a page: anywhere), each with
twice its binomial Monte Carlo standard error, and the power: the share of the simple effects
that are not 0 found significant. Exit status 1 if a family-wise error per family
exceeds alpha = 0.05 by more than that.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

from perfkit.analysis import load_experiment, metric
from perfkit.analysis.core import RunSet, match
from perfkit.analysis.effects import factorial_effects

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _mc import share_pm  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
P99 = metric("latency_p99_ms")
FACTORS = ["client_keepalive", "cache"]
HIGH = {"client_keepalive": "off", "cache": "ram"}
ALPHA = 0.05
#: (name, log effect of keepalive alone, of cache alone, of both high together beyond them)
TRUTHS = (("null", 0.0, 0.0, 0.0),
          ("main only", math.log(0.7), 0.0, 0.0),
          ("one cell", 0.0, 0.0, math.log(0.5)))


def template(runs_per_cell: int = 3) -> RunSet:
    """The design: 3 runs per cell (upstream keepalive off), or 6 (both upstream keepalive
    levels as replicates, the simulated values ignoring it)."""
    rows = load_experiment(REPO / "data" / "demo-wrk-factorial").rows()
    if runs_per_cell == 6:
        return rows
    return rows.subset(match(rows.frame["upstream_keepalive"], ["off"]))


def values(rows: RunSet, truth: tuple[float, float, float], sd: float,
           rng: np.random.Generator) -> np.ndarray:
    """One data set's p99 (ms) for the template's runs."""
    f = rows.frame
    a = (f["client_keepalive"].astype(str) == HIGH["client_keepalive"]).to_numpy(float)
    b = (f["cache"].astype(str) == HIGH["cache"]).to_numpy(float)
    blocks = f["block"].astype(int).to_numpy()
    block_effect = rng.normal(0.0, 0.05, blocks.max() + 1)[blocks]
    logs = (math.log(5.0) + truth[0] * a + truth[1] * b + truth[2] * a * b + block_effect
            + sd * rng.standard_normal(len(f)))
    return np.exp(logs)


def true_zero(factor: str, at_level: str, truth: tuple[float, float, float]) -> bool:
    """Is the simple effect of ``factor`` at the other factor's ``at_level`` 0 in ``truth``?"""
    own = truth[0] if factor == "client_keepalive" else truth[1]
    other = "cache" if factor == "client_keepalive" else "client_keepalive"
    return own + truth[2] * (at_level == HIGH[other]) == 0.0


def one(rows: RunSet, truth: tuple[float, float, float], sd: float,
        rng: np.random.Generator) -> tuple[bool, int, int, int, int]:
    """(an interaction significant somewhere, families with a true-null simple effect, those
    with a false discovery, a false discovery anywhere on the page, simple effects that are
    not 0 found significant)."""
    frame = rows.frame.assign(**{P99.name: values(rows, truth, sd, rng)})
    result = factorial_effects(RunSet(frame, rows.runs, "sim", factors=rows.factors), FACTORS,
                               P99, by=["connections"])
    simple = result.simple_frame()
    if not len(simple):
        return False, 0, 0, 0, 0
    families = wrong = found = 0
    for _, fam in simple.groupby(["connections", "factor"]):
        nulls = np.array([true_zero(f, str(lv), truth) for f, lv in
                          zip(fam["factor"], fam["at_level"], strict=True)])
        called = fam["verdict"].astype(str).str.match(r"(better|worse)").to_numpy()
        found += int((called & ~nulls).sum())
        if not nulls.any():
            continue
        families += 1
        wrong += bool((called & nulls).any())
    return True, families, wrong, int(wrong > 0), found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=34)
    parser.add_argument("--sd", type=float, default=0.15)
    parser.add_argument("--runs-per-cell", type=int, choices=(3, 6), default=6)
    parser.add_argument("--only", default="", help="one truth's name")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    rows = template(args.runs_per_cell)
    print(f"client_keepalive x cache, {args.runs_per_cell} runs per cell at 3 load levels, "
          f"p99 log sd {args.sd}, {args.reps} data sets per truth (seed {args.seed}); "
          "+- twice the MC se\n")
    print(f"{'truth':<10} {'interaction found':>18} {'FWE per family':>16} "
          f"{'FWE per page':>14} {'power':>14}")
    ok = True
    for name, *effects in TRUTHS:
        if args.only and name != args.only:
            continue
        truth = (effects[0], effects[1], effects[2])
        rng = np.random.default_rng(args.seed)
        found = families = wrong = pages = real = 0
        for _ in range(args.reps):
            f, fam, w, page, hits = one(rows, truth, args.sd, rng)
            found += f
            real += hits
            families += fam
            wrong += w
            pages += page
        # a family's error: over the families with a true-null simple effect that the data
        # sets would report if the interaction were significant (each data set has 3 levels
        # x the factors with a null), so the denominator counts them whether reported or not
        nulls_per_set = 3 * sum(any(true_zero(f, lv, truth) for lv in levels)
                                for f, levels in (("client_keepalive", ("none", "ram")),
                                                  ("cache", ("on", "off"))))
        total = args.reps * nulls_per_set
        null_effects = 3 * sum(true_zero(f, lv, truth) for f, levels in
                               (("client_keepalive", ("none", "ram")), ("cache", ("on", "off")))
                               for lv in levels)
        effects = args.reps * (12 - null_effects)  # 12 simple effects a data set
        print(f"{name:<10} {share_pm(found, args.reps):>18} {share_pm(wrong, total):>16} "
              f"{share_pm(pages, args.reps):>14} {share_pm(real, effects) if effects else '-':>14}")
        p = wrong / total if total else 0.0
        ok = ok and p - 2 * math.sqrt(max(p * (1 - p), 1 / total) / total) <= ALPHA
        sys.stdout.flush()
    print(f"\n{time.perf_counter() - started:.0f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
