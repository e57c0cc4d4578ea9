"""A report beside its notebooks' floor (issue 33): wall time as a ratio, before and after.

Run: ``nice -n 19 .venv/bin/python benchmarks/bench_report_floor.py [--before REV]``

Each report is measured against a floor of its own: what any report of as many pages pays
before its first result. The floor is a ``perfkit report`` (:func:`perfkit.report.build.
build_report`, in a fresh process) whose N notebooks, N the number the report executes, do only
what every page must: start a kernel, import perfkit, pandas, ``scipy.stats`` and matplotlib,
and save one figure. Built by perfkit's own ``build_report``, it runs them with the same
parallelism as the report (one kernel per core, at most N: :func:`perfkit.report.build.
workers_default`) and pays what every report pays besides: each page converted to HTML by
nbconvert (:mod:`perfkit.report.export`), the index and the Methods page. What the report
takes beyond its floor is its own work: loading and analysing its runs, its figures beyond the
first, its tables and files. A floor of five notebooks for a one-page report (as this script
first measured) made that report look faster than its floor.

Measured in the same run, each a fresh process, wall time (a report's user waits for the wall;
on a busy machine both sides are inflated alike, so only the ratios are compared):

- ``perfkit report -p params/demo.yaml`` into a new folder (five notebooks, two at a time on
  two cores), against a floor of five: target <= 1.5x;
- a report on a 12-run experiment: the tuning-effects notebook alone on a 2x2 factorial with
  3 repetitions (upstream_keepalive x cache of data/demo-wrk-factorial at 64 connections with
  the client's keepalive on, its 12 runs), against a floor of one: target <= 1.5x.

Each report runs once untimed first (its run stores written, as on a second build), then is
timed ``--repeats`` times (the best kept), as is each floor. ``--before REV`` checks REV out into
a throwaway ``git worktree`` and runs the same reports and floors with its ``perfkit`` first on
``PYTHONPATH`` (the same interpreter and data), printed beside; each command of the two
revisions runs back to back, so that a load that drifts over minutes weighs on both. Timings
never go in unit tests; this prints PASS or MISSED per row (exit status 0 either way).
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
#: run in a fresh interpreter: ``perfkit report`` of the floor's N notebooks (argv: their
#: parameter file, their folder, the report's folder)
FLOOR_PROBE = """\
import io, sys
from pathlib import Path
from perfkit.report.build import build_report
from perfkit.report.params import load_params
params = load_params(sys.argv[1], notebooks_dir=Path(sys.argv[2]))
result = build_report(params, Path(sys.argv[3]), io.StringIO())
if result.errors:
    raise SystemExit(str(result.errors[0]))
"""


def floor_report(folder: Path, pages: int) -> Path:
    """``folder/floor.yaml``: a report of ``pages`` floor notebooks (``folder/floor-<i>.ipynb``)."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    folder.mkdir(parents=True, exist_ok=True)
    names = [f"floor-{i}" for i in range(1, pages + 1)]
    for name in names:
        nb = new_notebook()
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                     "language": "python"}
        params = new_code_cell('output_dir: str = ""  # where the figure goes')
        params.metadata["tags"] = ["parameters"]
        nb.cells = [new_markdown_cell(f"# {name}"), params, new_code_cell(FLOOR_CELL)]
        nbformat.write(nb, str(folder / f"{name}.ipynb"))
    path = folder / "floor.yaml"
    path.write_text("title: floor\nnotebooks:\n" + "".join(f"  {n}: {{}}\n" for n in names))
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


#: each report measured: its parameter file (None: params/demo.yaml) and its notebooks
REPORTS = {"demo report": (None, 5), "12-run report": (TWELVE_RUNS, 1)}


def commands(tree: Path, tmp: Path) -> dict[str, list[str]]:
    """``{report: argv, "<report> floor": argv}`` for each of :data:`REPORTS`, run with
    ``tree``'s perfkit (each argv ends with the option or argument naming its output folder,
    which :func:`measure` appends)."""
    out = {}
    for name, (text, pages) in REPORTS.items():
        slug = name.replace(" ", "-")
        params = tree / "params" / "demo.yaml"
        if text is not None:
            params = tmp / f"{slug}.yaml"
            params.write_text(text)
        floor = floor_report(tmp / f"{slug}-floor", pages)
        out[f"{name} floor"] = ["-c", FLOOR_PROBE, str(floor), str(floor.parent)]
        out[name] = ["-m", "perfkit", "report", "-p", str(params), "-o"]
    return out


def measure(trees: dict[str, Path], tmp: Path, repeats: int) -> dict[str, dict[str, float]]:
    """``{revision: {command: wall}}``, the best of ``repeats``: each command runs once untimed
    (the run stores written), then in rounds, every revision's turn back to back with the
    others' (the load of a shared machine drifts over minutes: side by side, both see it)."""
    argvs = {}
    for key, tree in trees.items():
        (tmp / f"work-{key}").mkdir()  # tmp/before is the worktree
        argvs[key] = commands(tree, tmp / f"work-{key}")
    walls: dict[str, dict[str, list[float]]] = {key: {} for key in trees}
    for i in ["warm", *range(repeats)]:
        for command in argvs[next(iter(trees))]:
            for key, tree in trees.items():
                out = tmp / f"work-{key}" / f"{command.replace(' ', '-')}-{i}"
                seconds = wall_of([*argvs[key][command], str(out)], tree)
                if i != "warm":
                    walls[key].setdefault(command, []).append(seconds)
    return {key: {c: min(w) for c, w in byc.items()} for key, byc in walls.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", metavar="REV", help="also measure this revision")
    ap.add_argument("--repeats", type=int, default=1)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-report-floor-") as name:
        tmp = Path(name)
        with revisions(args.before, tmp) as trees:
            results = measure(trees, tmp, args.repeats)
    print(f"cores: {os.cpu_count()}, load average now: {os.getloadavg()[0]:.1f}")
    print("floor: perfkit report of as many notebooks as the report (kernel, imports, one "
          "figure, its HTML page), as many at a time")
    head = "".join(f"{k:>28}" for k in results)
    print(f"{'report (wall / its floor, best of ' + str(args.repeats) + ')':<36}{head}"
          f"{'target':>9}  verdict (after)")
    for name, (_, pages) in REPORTS.items():
        cells = "".join(f"{r[name] / r[name + ' floor']:>7.2f}x ({r[name]:5.1f} s /"
                        f"{r[name + ' floor']:5.1f} s)" for r in results.values())
        last = list(results.values())[-1]
        ratio = last[name] / last[name + " floor"]
        name = f"{name} ({pages} page{'s' if pages > 1 else ''})"
        print(f"{name:<36}{cells}{'<= 1.5x':>9}  {'PASS' if ratio <= 1.5 else 'MISSED'}")


if __name__ == "__main__":
    main()
