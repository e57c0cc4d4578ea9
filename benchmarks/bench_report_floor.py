"""A report beside its notebooks' floor (issue 33): wall time as a ratio, before and after.

Run: ``nice -n 19 .venv/bin/python benchmarks/bench_report_floor.py [--before REV]``

The floor is what any report of five notebooks pays before its first result: five notebooks
that only start a kernel, import perfkit, pandas, ``scipy.stats`` and matplotlib and save one
figure, executed two at a time (this machine's cores) by perfkit's own papermill call
(:func:`perfkit.report.execute.execute_notebook`), in a fresh process. Measured in the same run,
each a fresh process, wall time (a report's user waits for the wall; on a busy machine both
sides are inflated alike, so only the ratios are compared):

- ``perfkit report -p params/demo.yaml`` into a new folder (its five notebooks): target <= 1.5x
  the floor;
- a report on a 12-run experiment: the tuning-effects notebook alone on a 2x2 factorial with
  3 repetitions (upstream_keepalive x cache of data/demo-wrk-factorial at 64 connections with
  the client's keepalive on, its 12 runs): target <= 1.5x the same floor.

Each report runs once untimed first (its run stores written, as on a second build), then is
timed ``--repeats`` times (the best kept). ``--before REV`` checks REV out into a throwaway
``git worktree`` and runs the same reports with its ``perfkit`` first on ``PYTHONPATH`` (the
same interpreter and data), printed beside. Timings never go in unit tests; this prints PASS
or MISSED per row (exit status 0 either way).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from _revisions import revisions  # noqa: E402

TWELVE_RUNS = """\
title: "a 2x2 factorial, 3 repetitions (12 runs)"
notebooks:
  tuning-effects:
    experiment: demo-wrk-factorial
    factors: [upstream_keepalive, cache]
    select: {client_keepalive: "on", connections: 64}
    metrics: [latency_p99_ms]
    also: {}
    aa_experiment: ""
"""
#: the floor's notebook: a parameters cell, then the imports and one saved figure
FLOOR_CELL = """\
import perfkit, pandas, scipy.stats, matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
fig, ax = plt.subplots()
ax.plot([0, 1], [0, 1])
fig.savefig(output_dir + "/figure.png")
"""
#: run in a fresh interpreter: the five floor notebooks, two at a time
FLOOR_PROBE = """\
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from perfkit.report.execute import execute_notebook
source, out = Path(sys.argv[1]), Path(sys.argv[2])
def one(i):
    (out / str(i)).mkdir(parents=True, exist_ok=True)
    result = execute_notebook(source, out / f"{i}.ipynb", {"output_dir": str(out / str(i))})
    if result.error:
        raise SystemExit(str(result.error))
with ThreadPoolExecutor(2) as pool:
    list(pool.map(one, range(5)))
"""


def floor_notebook(path: Path) -> Path:
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    nb = new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    params = new_code_cell('output_dir: str = ""  # where the figure goes')
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, new_code_cell(FLOOR_CELL)]
    nbformat.write(nb, str(path))
    return path


def wall_of(argv: list[str], tree: Path) -> float:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPATH=str(tree), PERFKIT_NO_PROGRESS="1")
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, *argv], capture_output=True, text=True, env=env,
                          cwd=tree, check=False)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)}: exit {proc.returncode}: {proc.stderr[-800:]}")
    return seconds


def measure(tree: Path, tmp: Path, repeats: int) -> dict[str, float]:
    source = floor_notebook(tmp / "floor.ipynb")
    twelve = tmp / "twelve.yaml"
    twelve.write_text(TWELVE_RUNS)
    reports = {"demo report": ["-m", "perfkit", "report", "-p", str(tree / "params" / "demo.yaml")],
               "12-run report": ["-m", "perfkit", "report", "-p", str(twelve)]}
    out = {}
    floors = []
    for i in range(repeats):
        floors.append(wall_of(["-c", FLOOR_PROBE, str(source), str(tmp / f"floor{i}")], tree))
    out["floor"] = min(floors)
    for name, argv in reports.items():
        wall_of([*argv, "-o", str(tmp / f"{name}-warm")], tree)  # the run stores written
        out[name] = min(wall_of([*argv, "-o", str(tmp / f"{name}-{i}")], tree)
                        for i in range(repeats))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", metavar="REV", help="also measure this revision")
    ap.add_argument("--repeats", type=int, default=1)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-report-floor-") as name:
        tmp = Path(name)
        with revisions(args.before, tmp) as trees:
            results = {}
            for key, tree in trees.items():
                (tmp / f"work-{key}").mkdir()
                results[key] = measure(tree, tmp / f"work-{key}", args.repeats)
    print(f"cores: {os.cpu_count()}, load average now: {os.getloadavg()[0]:.1f}")
    print("floor (5 notebooks: kernel, imports, one figure; 2 at a time), wall: "
          + ", ".join(f"{k} {r['floor']:.1f} s" for k, r in results.items()))
    head = "".join(f"{k:>16}" for k in results)
    print(f"{'report (wall / floor, best of ' + str(args.repeats) + ')':<36}{head}"
          f"{'target':>9}  verdict (after)")
    for name in ("demo report", "12-run report"):
        cells = "".join(f"{r[name] / r['floor']:>7.2f}x ({r[name]:5.1f} s)"
                        for r in results.values())
        last = list(results.values())[-1]
        ratio = last[name] / last["floor"]
        print(f"{name:<36}{cells}{'<= 1.5x':>9}  {'PASS' if ratio <= 1.5 else 'MISSED'}")


if __name__ == "__main__":
    main()
