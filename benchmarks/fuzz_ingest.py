"""Fuzz every parser and ``perfkit.load`` with >= 10**5 mutated real outputs; print the outcomes.

Run: ``nice -n 19 .venv/bin/python benchmarks/fuzz_ingest.py [--inputs 100000] [--seed 1]``

The engine is ``tests/_fuzz.py`` (the test suite runs a few thousand inputs of it). Seeds: every
real output under tests/fixtures and data/ (wrk, wrk2, Locust CSV and --json), an hdrh-written
interval log, every Locust run directory as a whole (stats, history, failures, exceptions and
--json merged by ``locust.parse_files``), and real counter snapshots (nginx's stub_status,
/proc/net/netstat and snmp, read by ``perfkit.ingest.counters``). Each input is a seed damaged
by one to three mutations (``tests/_fuzz_mutations.py``: truncation, line edits, byte flips,
numbers replaced by huge/negative/NaN/inf/empty values, unit swaps, CRLF/CR, UTF-16/UTF-16-BE
with a BOM/UTF-32/latin-1, non-ASCII digits and spaces, binary, NUL, lines up to 1 MB; CSV
columns dropped, renamed and swapped; JSON keys deleted, renamed and retyped). Every 5th input
goes through ``perfkit.load`` from a run directory with its manifest (mutated one time in five),
and, with the run store on, again from the store. Every successful parse has its values checked
(``tests/_fuzz_checks.py``), and every input is given to the fast wrk2 path, whose Runs must
equal ``wrk2.parse``'s. Every Run a parser gives goes through ``perfkit.consistency.kept_out``
(the loader's step) and must then contradict itself nowhere, each value removed named in a note;
every Run ``perfkit.load`` gives must already be so. A counter snapshot read must hold counts in
ASCII digits, none negative but MaxConn.

Outcomes: ``runs``, ``parse_error`` (ParseError with a line inside the input), ``perfkit_error``
(another PerfkitError); failures: ``crash``, ``hang`` (> 1 s), ``bad_error``, ``bad_value``,
``fast_mismatch``, ``cache_mismatch``, ``swap_mismatch``, ``kept_in`` (a contradiction left in a
run), ``unnamed`` (a value kept out without a note). Exit status 1 on any failure.
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
    dirs = sum(s.kind == "locust_dir" for s in seeds)
    data = sum(s.name.startswith("data/") and s.kind != "locust_dir" for s in seeds)
    start, cpu = time.perf_counter(), time.process_time()
    report = run_fuzz(args.inputs, seed=args.seed, seeds=seeds,
                      progress=lambda i: print(f"  ... {i} inputs", file=sys.stderr))
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    print(f"{report.counts['inputs']} mutated inputs (seed {args.seed}) from "
          f"{len(seeds) - dirs} real outputs ({data} of them under data/) and {dirs} Locust "
          f"run directories; {wall:.0f} s wall, {cpu:.0f} s CPU; slowest input "
          f"{report.slowest_s * 1000:.0f} ms of CPU (hang: > {HANG_S:g} s)")
    for outcome in ("runs", "parse_error", "perfkit_error", *FAILURES):
        print(f"  {outcome:<15}{report.counts[outcome]:>8}")
    print(f"  (values checked on {report.counts['values_checked']} successful parses; the "
          f"fast wrk2 path took {report.counts['fast_taken']} inputs, each equal to "
          "wrk2.parse's Run unless counted as fast_mismatch)")
    print(f"  (contradictions checked on {report.counts['contradictions_checked']} results, "
          f"values kept out of {report.counts['kept_out']} runs; {report.counts['counter_inputs']}"
          f" counter snapshots, {report.counts['counters_checked']} of them read and checked)")
    for outcome in FAILURES:
        for example in report.examples.get(outcome, []):
            print(f"{outcome}: {example}")
    print(f"{report.counts['crash']} crashes, {report.counts['hang']} hangs, "
          f"{report.counts['bad_error']} errors without a valid line, "
          f"{report.failures - sum(report.counts[k] for k in ('crash', 'hang', 'bad_error'))}"
          " other failures")
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
