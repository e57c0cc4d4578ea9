"""How cost grows with the work (issue 33 item 4): growth exponents and peak memory at three
sizes 10x apart, CPU as a ratio to F measured in the same run.

Run: ``nice -n 19 .venv/bin/python benchmarks/bench_scale.py [--max N] [--only STEP,...]``

F is the CPU of ``python -c "import numpy, pandas"`` in a fresh process, measured first (the
issue's unit: absolute seconds differ about 2x between machines). Every step at every size
runs in a fresh process; its CPU (user + system, ``time.process_time``) counts the step alone,
after the imports and the setup; its peak is the process's resident memory
(``ru_maxrss``: the interpreter and its imports included, about 200 MB). The growth exponent
between two sizes 10x apart is ``log10(cpu_big / cpu_small)``: 1 is linear, and a step whose
work does not grow (history add) should show about 0. Sizes above ``--max`` (default 10,000)
are skipped, so the default run takes a few minutes; ``--max 100000`` runs all.

Runs are real, never fake tool output: data/demo-aa's 20 run folders (compare, load, history)
and data/demo-wrk-factorial's 72 (effects), replicated either on disk (each run folder's files
hard-linked into a fresh folder, so the loader parses them) or in memory (each parsed
:class:`perfkit.Run` ``dataclasses.replace``-d with a new run id and order).

- load: ``perfkit.load`` of N run folders on disk, first (parse, hash, write the run store)
  and again (from the run store);
- compare: ``runs_frame`` and ``compare_runs`` of arm A against arm B on latency_p99_ms, on N
  runs replicated in memory;
- effects: ``factorial_effects`` on client_keepalive x upstream_keepalive x cache;
- history add: ``perfkit history add`` of a job of 5 runs (5 of demo-aa's run folders, on
  disk) to a store already holding N labels (the work is the same at every N);
- history show: ``perfkit history show --metric latency_p99_ms`` of a store of N labels of 5
  runs each (each label 5 of demo-aa's runs drawn at random);
- change points: ``perfkit.stats.changepoint.change_points`` on N labels of 5 runs (demo-aa's
  p99 values drawn at random, a step of 10% half-way), the defaults (199 permutations).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
AA = ROOT / "data" / "demo-aa"

PRELUDE = r"""
import dataclasses, io, json, resource, sys, time
import numpy as np
import perfkit
from perfkit.frames import runs_frame
from perfkit.analysis.core import RunSet, metric

kind, n, work = sys.argv[1], int(sys.argv[2]), sys.argv[3]

def replicated(folder, n):
    runs = perfkit.load(folder, cache=False)
    return tuple(dataclasses.replace(r, run_id=f"{r.run_id}-x{i}", order=i)
                 for i, r in ((i, runs[i % len(runs)]) for i in range(n)))

def cli(*argv):
    from perfkit.cli import main
    code = main(list(argv), stdout=io.StringIO(), stderr=io.StringIO())
    assert code == 0, (argv, code)
"""

STEPS = {
    "load": r"""
c0 = time.process_time()
runs = perfkit.load(work, cache=True)
assert len(runs) == n, len(runs)
""",
    "compare": r"""
runs = replicated("data/demo-aa", n)
c0 = time.process_time()
frame = runs_frame(runs)
rows = RunSet(frame, runs, "x")
arms = frame["arm"].astype(str).to_numpy()
perfkit.compare_runs(rows.subset(arms == "A"), rows.subset(arms == "B"),
                     metric("latency_p99_ms", list(frame.columns)))
""",
    "effects": r"""
runs = replicated("data/demo-wrk-factorial", n)
factors = ["client_keepalive", "upstream_keepalive", "cache"]
c0 = time.process_time()
frame = runs_frame(runs)
rows = RunSet(frame, runs, "x", tuple(factors))
perfkit.factorial_effects(rows, factors, metric("latency_p99_ms", list(frame.columns)))
""",
    "history add": r"""
import perfkit.commands.history  # the command's imports before the clock
c0 = time.process_time()
cli("history", "add", work + "/job", "--label", f"new-{n}", "--time", "2030-01-01T00:00:00Z",
    "--store", work + "/store")
""",
    "history show": r"""
import perfkit.commands.history
c0 = time.process_time()
cli("history", "show", "--store", work + "/store", "--metric", "latency_p99_ms")
""",
    "change points": r"""
from perfkit.stats.changepoint import change_points
base = np.array([r.percentiles_ms[99.0] for r in perfkit.load("data/demo-aa", cache=False)])
rng = np.random.default_rng(0)
values = [list(rng.choice(base, 5) * (1.1 if i >= n // 2 else 1.0)) for i in range(n)]
c0 = time.process_time()
change_points(values, [f"v{i}" for i in range(n)])
""",
}

CODA = r"""
cpu = time.process_time() - c0
print(json.dumps({"cpu": cpu, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

SIZES = {"load": (1_000, 10_000, 100_000), "compare": (1_000, 10_000, 100_000),
         "effects": (60, 600, 6_000), "history add": (10, 100, 1_000),
         "history show": (10, 100, 1_000), "change points": (10, 100, 1_000)}

#: a history store of N labels: written through the store's own writer, not timed
STORE = r"""
import random, sys
from pathlib import Path
import pyarrow.parquet as pq
import perfkit
from perfkit.store import history as hs
store, n = Path(sys.argv[1]), int(sys.argv[2])
runs = perfkit.load("data/demo-aa", cache=False)
rng = random.Random(0)
hs.init_store(store)
for i in range(n):
    label = f"v{i:05d}"
    table = hs._table(rng.sample(runs, 5), label, f"2026-01-01T{i // 60 // 60:02d}:"
                      f"{i // 60 % 60:02d}:{i % 60:02d}Z", i + 1, "bench", {})
    pq.write_table(table, store / "labels" / f"{i + 1:06d}-{label}.parquet")
"""


def child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure_f() -> float:
    """CPU of ``python -c "import numpy, pandas"`` in a fresh process (best of 3)."""
    best = math.inf
    for _ in range(3):
        before = child_cpu()
        subprocess.run([sys.executable, "-c", "import numpy, pandas"], check=True)
        best = min(best, child_cpu() - before)
    return best


def run_folders(target: Path, n: int) -> None:
    """``n`` run folders under ``target``: demo-aa's, their files hard-linked (or copied)."""
    sources = sorted(p for p in (AA / "runs").iterdir()
                     if p.is_dir() and not p.name.startswith("."))
    for i in range(n):
        src = sources[i % len(sources)]
        shutil.copytree(src, target / f"{i:06d}-{src.name}", copy_function=_link)


def _link(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def setup(kind: str, n: int, tmp: Path) -> str:
    """The step's input on disk (not timed): a history store, and a job to add to it."""
    work = tmp / f"{kind.replace(' ', '-')}-{n}"
    if kind.startswith("history"):
        work.mkdir()
        subprocess.run([sys.executable, "-c", STORE, str(work / "store"), str(n)], cwd=ROOT,
                       check=True)
        if kind == "history add":
            (work / "job").mkdir()
            run_folders(work / "job", 5)
    return str(work)


def step(kind: str, n: int, work: str = "") -> dict:
    code = PRELUDE + STEPS[kind] + CODA
    proc = subprocess.run([sys.executable, "-c", code, kind, str(n), work], cwd=ROOT,
                          capture_output=True, text=True, check=False)
    if proc.returncode:
        raise SystemExit(f"{kind} at {n}: {proc.stderr[-1500:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


#: why a step grows faster than its work (exponent > 1.1) between two sizes, where it is meant to
WHY_FASTER = {
    ("change points", 100): "E-divisive is quadratic in the labels of a split up to one window "
                            "of 100 labels; beyond, half-overlapping windows of 100: linear",
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max", type=int, default=10_000, help="largest size run (default 10000)")
    ap.add_argument("--only", default="", help="comma-separated steps (default: every one)")
    args = ap.parse_args()
    only = [s.strip() for s in args.only.split(",") if s.strip()] or list(SIZES)
    f_s = measure_f()
    print(f"F = {f_s:.2f} s CPU (python -c 'import numpy, pandas'); CPU below in F\n")
    print(f"{'step':<15}{'size':>9}{'CPU F':>10}{'CPU s':>9}{'exponent':>10}{'peak MB':>9}")
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        for kind in only:
            rows = [(kind, n) for n in SIZES[kind]]
            if kind == "load":
                rows = [(k, n) for n in SIZES[kind] for k in ("load", "load again")]
            last: dict[str, float] = {}
            for name, n in rows:
                if n > args.max:
                    print(f"{name:<15}{n:>9}  skipped (--max {args.max})", flush=True)
                    continue
                if name == "load":  # the first load of a fresh folder, then again
                    work = str(Path(tmp) / f"load-{n}")
                    Path(work, "runs").mkdir(parents=True)
                    run_folders(Path(work, "runs"), n)
                    got = step("load", n, work)
                elif name == "load again":
                    got = step("load", n, str(Path(tmp) / f"load-{n}"))
                else:
                    got = step(kind, n, setup(kind, n, Path(tmp)))
                prev = last.get(name)
                exp = f"{math.log10(got['cpu'] / prev):.2f}" if prev and got["cpu"] > 0 else ""
                why = ""
                if exp and float(exp) > 1.1:
                    why = "  " + WHY_FASTER.get((name, n), "FASTER THAN THE WORK")
                print(f"{name:<15}{n:>9}{got['cpu'] / f_s:>10.2f}{got['cpu']:>9.2f}{exp:>10}"
                      f"{got['rss_mb']:>9.0f}{why}", flush=True)
                last[name] = got["cpu"]


if __name__ == "__main__":
    main()
