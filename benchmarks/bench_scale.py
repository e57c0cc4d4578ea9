"""How cost grows with the work (issue 33): growth exponents and peak memory at three sizes.

Run: ``nice -n 19 .venv/bin/python benchmarks/bench_scale.py [--max N]``

Runs are real: the parsed runs of data/demo-aa (compare) and data/demo-wrk-factorial
(effects) replicated through the public model (``dataclasses.replace`` of each
:class:`perfkit.Run` with a new run id and order), never fake tool output. Each size runs in a
fresh process: CPU (user + system, ``time.process_time``) of the step alone, and the peak
resident memory of the process (``ru_maxrss``, the interpreter and its imports included).
The growth exponent between two sizes 10x apart is ``log10(cpu_big / cpu_small)``: 1 is
linear. Sizes above ``--max`` (default 10,000 runs) are skipped.

- compare: ``load_experiment``'s frame (``runs_frame``) and ``compare_runs`` of arm A
  against arm B on latency_p99_ms, 10^3, 10^4, 10^5 runs;
- effects: ``factorial_effects`` on keepalive x cache, 60, 600, 6,000 runs;
- change points: ``perfkit.stats.changepoint.change_points`` (E-divisive, 199 permutations)
  on 10, 100, 1,000 labels of 5 runs (demo-aa's p99 values, one step of 10% half-way).
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

STEP = r"""
import dataclasses, json, resource, sys, time
import numpy as np
import perfkit
from perfkit.frames import runs_frame
from perfkit.analysis.core import RunSet, metric

kind, n = sys.argv[1], int(sys.argv[2])

def replicated(folder, n):
    runs = perfkit.load(folder, cache=True)
    return tuple(dataclasses.replace(r, run_id=f"{r.run_id}-x{i}", order=i)
                 for i, r in ((i, runs[i % len(runs)]) for i in range(n)))

if kind == "compare":
    runs = replicated("data/demo-aa", n)
    c0 = time.process_time()
    frame = runs_frame(runs)
    rows = RunSet(frame, runs, "x")
    arms = frame["arm"].astype(str).to_numpy()
    perfkit.compare_runs(rows.subset(arms == "A"), rows.subset(arms == "B"),
                         metric("latency_p99_ms", list(frame.columns)))
elif kind == "effects":
    runs = replicated("data/demo-wrk-factorial", n)
    c0 = time.process_time()
    frame = runs_frame(runs)
    rows = RunSet(frame, runs, "x", ("keepalive", "cache"))
    perfkit.factorial_effects(rows, ["keepalive", "cache"],
                              metric("latency_p99_ms", list(frame.columns)))
else:
    from perfkit.stats.changepoint import change_points
    base = np.array([r.percentiles_ms[99.0] for r in perfkit.load("data/demo-aa")])
    rng = np.random.default_rng(0)
    values = [list(rng.choice(base, 5) * (1.1 if i >= n // 2 else 1.0)) for i in range(n)]
    c0 = time.process_time()
    change_points(values, [f"v{i}" for i in range(n)])
cpu = time.process_time() - c0
print(json.dumps({"cpu": cpu, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

SIZES = {"compare": (1_000, 10_000, 100_000), "effects": (60, 600, 6_000),
         "change points": (10, 100, 1_000)}


def step(kind: str, n: int) -> dict:
    proc = subprocess.run([sys.executable, "-c", STEP, kind.split()[0], str(n)], cwd=ROOT,
                          capture_output=True, text=True, check=False)
    if proc.returncode:
        raise SystemExit(f"{kind} at {n}: {proc.stderr[-800:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max", type=int, default=10_000, help="largest size run (default 10000)")
    args = ap.parse_args()
    print(f"{'step':<15}{'size':>9}{'CPU s':>9}{'exponent':>10}{'peak RSS MB':>13}")
    for kind, sizes in SIZES.items():
        last = None
        for n in sizes:
            if n > args.max:
                print(f"{kind:<15}{n:>9}  skipped (--max {args.max})")
                continue
            got = step(kind, n)
            exp = (f"{math.log10(got['cpu'] / last):.2f}" if last and got["cpu"] > 0 else "")
            print(f"{kind:<15}{n:>9}{got['cpu']:>9.2f}{exp:>10}{got['rss_mb']:>13.0f}",
                  flush=True)
            last = got["cpu"]


if __name__ == "__main__":
    main()
