"""Fuzz every parser and ``perfkit.load`` with >= 10**5 mutated real outputs; print the outcomes.

Run: ``nice -n 19 .venv/bin/python benchmarks/fuzz_ingest.py [--inputs 100000] [--seed 1]``

The engine is ``tests/_fuzz.py`` (the test suite runs 3,000 inputs of it): each input is a real
fixture (wrk, wrk2, Locust CSV and --json, an hdrh-written interval log) damaged by one to three
mutations (truncation at lines and bytes, line deletion/duplication/swap, byte flips, numbers
replaced by huge/negative/NaN/inf/empty values, unit swaps, CRLF/CR, UTF-16, BOM, binary, NUL,
very long lines). Every 5th input goes through ``perfkit.load`` from a run directory with its
manifest (mutated one time in five). Outcomes: ``runs``, ``parse_error`` (ParseError with a line
inside the input), ``perfkit_error`` (another PerfkitError); failures: ``crash``, ``hang``
(> 1 s), ``bad_error``. Exit status 1 on any failure.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from _fuzz import FAILURES, HANG_S, load_seeds, run_fuzz  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    seeds = load_seeds()
    start = time.perf_counter()
    report = run_fuzz(args.inputs, seed=args.seed, seeds=seeds,
                      progress=lambda i: print(f"  ... {i} inputs", file=sys.stderr))
    wall = time.perf_counter() - start
    total = sum(report.counts.values())
    print(f"{total} mutated inputs from {len(seeds)} real outputs (seed {args.seed}), "
          f"{wall:.0f} s, slowest input {report.slowest_s * 1000:.0f} ms of CPU "
          f"(hang: > {HANG_S:g} s)")
    for outcome in ("runs", "parse_error", "perfkit_error", *FAILURES):
        print(f"  {outcome:<14}{report.counts[outcome]:>8}")
    for outcome in FAILURES:
        for example in report.examples.get(outcome, []):
            print(f"{outcome}: {example}")
    print(f"{report.counts['crash']} crashes, {report.counts['hang']} hangs, "
          f"{report.counts['bad_error']} errors without a valid line")
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
