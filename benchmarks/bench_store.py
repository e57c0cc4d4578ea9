"""The run store: loading 10,000 runs a second time (from .perfkit/cache) vs the first time.

Run: ``nice -n 19 .venv/bin/python benchmarks/bench_store.py [--copies 209]``

Imports (pandas, pyarrow, perfkit's modules) happen before each clock starts: pyarrow imports
pandas on its first conversion, which would otherwise be charged to the first load only.

The 48 wrk2 sweep outputs of ``tests/fixtures/wrk2/sweep`` (each with its ``meta.json``) are
copied ``--copies`` times into a temporary directory (default 209 x 48 = 10,032 runs), which then
rests 2.5 s (outside the store's racy window, as data on disk normally is). Each load runs in a
fresh process (cold: imports not counted) and reports its CPU and wall time:

1. first load: walk, read, parse every file, hash every file, write the Parquet cache;
2. second load: read the cache, stat every directory and file against it (no directory is
   listed, no file read), build the Runs (their histograms decoded on first use);
3. the same as 2, then every histogram decoded and checked (what a caller reading all the
   histograms pays on top).

Each row is the best (least CPU time) of ``--repeats`` trials, each trial starting without a
cache; the median is printed beside it. The box is shared, and a single cold process varies by
tens of percent: on this 2-core VM the same second load took from 0.134 to 0.221 s within one
minute, so that five trials could all miss its floor (a run printed 0.175 s as the best of 5,
the others 0.134 and 0.137). Nine trials make that unlikely; both loads get the same number.

Target (issue 10): the second load >= 20x faster than the first (CPU time). Exit status 1 if
missed.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SWEEP = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "wrk2" / "sweep"
TARGET_RATIO = 20.0
CHILD = """
import json, sys, time
import pandas, pyarrow, pyarrow.parquet  # imported before the clock starts, for both loads
import perfkit
from perfkit.ingest import fastwrk2
from perfkit.store import runcache as cache
from perfkit.store import runtable as store
from perfkit.store.runtable import check_histograms
c0, w0 = time.process_time(), time.perf_counter()
runs = perfkit.load(sys.argv[1], cache=True)
if sys.argv[2] == "decode":
    check_histograms(runs)
print(json.dumps({"cpu": time.process_time() - c0, "wall": time.perf_counter() - w0,
                  "runs": len(runs)}))
"""


def make_tree(root: Path, copies: int) -> int:
    n = 0
    for k in range(copies):
        for run_dir in sorted(p for p in SWEEP.iterdir() if p.is_dir()):
            target = root / f"copy{k:03d}" / run_dir.name
            target.mkdir(parents=True)
            for name in ("run.stdout", "meta.json"):
                shutil.copy(run_dir / name, target / name)
            n += 1
    return n


def child(root: Path, mode: str) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, str(root), mode], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=209)
    parser.add_argument("--repeats", type=int, default=9,
                        help="trials; each row is the trial with the least CPU time")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="perfkit-bench-store-") as tmp:
        root = Path(tmp) / "runs"
        n = make_tree(root, args.copies)
        time.sleep(2.5)
        trials = []
        for _ in range(args.repeats):  # each: no cache, then a first and two second loads
            shutil.rmtree(root / ".perfkit", ignore_errors=True)
            trials.append((child(root, "plain"), child(root, "plain"), child(root, "decode")))
        cache = next((root / ".perfkit" / "cache").glob("runs-*.parquet"))
        size_mb = cache.stat().st_size / 1e6
    first, second, decoded = (min((t[i] for t in trials), key=lambda r: r["cpu"])
                              for i in range(3))
    medians = [statistics.median(t[i]["cpu"] for t in trials) for i in range(3)]
    assert first["runs"] == second["runs"] == decoded["runs"] == n
    print(f"{n} wrk2 runs (histograms included); cache {size_mb:.1f} MB of Parquet; "
          f"best of {args.repeats} trials")
    print(f"{'load':<40}{'CPU s':>8}{'median':>8}{'wall s':>8}{'ratio (CPU)':>13}")
    rows = [("first (parse, hash, write the cache)", first),
            ("second (from the cache)", second),
            ("second, then every histogram decoded", decoded)]
    for (name, r), median in zip(rows, medians, strict=True):
        print(f"{name:<40}{r['cpu']:>8.3f}{median:>8.3f}{r['wall']:>8.3f}"
              f"{first['cpu'] / r['cpu']:>12.1f}x")
    ratio = first["cpu"] / second["cpu"]
    ok = ratio >= TARGET_RATIO
    print(f"second load {ratio:.1f}x faster than the first (CPU time; target >= "
          f"{TARGET_RATIO:.0f}x) {'ok' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
