"""Does reading Locust's cells in bulk earn its lines (issue 32, item 5)?

A user feels a first, store-less load of many Locust run folders. This loads ``--runs`` of them
(``_corpus.py``: every distinct real Locust run directory of the fixtures, copied round-robin)
with ``perfkit.load(cache=False)``, each trial a fresh process (imports before the clock), CPU
time, best of ``--repeats``:

- **this checkout**: one reader, every CSV cell and ``--json`` key read one by one;
- **--before DIR**: another checkout (``git worktree add DIR COMMIT``; its ``perfkit`` first on
  ``PYTHONPATH``), e.g. one with the bulk reader (cells converted a column at a time, the
  cell-by-cell reader only for the exact error of a bad cell), in the same run;
- beside them, as the unit a user knows, ``python -c "import numpy, pandas"`` in a fresh process.

    nice -n 19 .venv/bin/python benchmarks/bench_locust_readers.py [--before DIR] [--runs 500]

The decision it was written for (500 folders of the fixtures' Locust runs; f227e60's bulk
reader as ``--before``): the bulk reader 0.72-0.94 s CPU, cell by cell 1.13-1.25 s, the unit
0.41-0.51 s; cell by cell with a memo of the cells converted (Locust repeats most) 1.06 s
against the bulk reader's 0.94 s in the same run: 0.12 s, a quarter of the unit, once, on a
first load only (the run store serves the next). Not worth 300 lines: one reader stays.

Timings never go in unit tests; this prints the rows (exit status 0).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _corpus  # noqa: E402

CHILD = r"""
import sys, time
import perfkit
start = time.process_time()
runs = perfkit.load(sys.argv[1], cache=False)
print(time.process_time() - start, len(runs))
"""


def _cpu_of(argv: list[str], env: dict | None = None) -> tuple[float, str]:
    """Children's CPU seconds (user + system) of one fresh process, and its stdout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(argv, capture_output=True, text=True, check=True, env=env,
                         cwd=tempfile.gettempdir()).stdout  # not this checkout first
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--before", type=Path, help="another checkout, measured beside this")
    args = parser.parse_args()
    envs = {"this checkout": None}
    if args.before is not None:
        envs["before"] = dict(os.environ, PYTHONPATH=str(args.before.resolve()))
    with tempfile.TemporaryDirectory() as tmp:
        corpus = _corpus.build(Path(tmp) / "locust", args.runs, tools=("locust",))
        load: dict[str, list[float]] = {name: [] for name in envs}
        counts = set()
        for _ in range(args.repeats):
            for name, env in envs.items():
                _, out = _cpu_of([sys.executable, "-c", CHILD, str(corpus.root)], env)
                seconds, runs = out.split()
                load[name].append(float(seconds))
                counts.add(int(runs))
        unit = min(_cpu_of([sys.executable, "-c", "import numpy, pandas"])[0]
                   for _ in range(args.repeats))
    print(f"Locust: {_corpus.describe(corpus)}; runs loaded: {sorted(counts)}")
    for name, times in load.items():
        best = min(times)
        print(f"  first store-less load, {name}: {best:.3f} s CPU "
              f"({best / corpus.runs * 1e3:.2f} ms per folder; {best / unit:.2f} x the unit)")
    print(f"  unit: 'python -c \"import numpy, pandas\"', {unit:.3f} s CPU (fresh process)")
    print(f"  (best of {args.repeats}; max RSS of the children "
          f"{resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.0f} MB)")


if __name__ == "__main__":
    main()
