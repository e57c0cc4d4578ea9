"""Answers in a second (issue 33): each command's CPU as a ratio to F, before and after.

Run: ``nice -n 19 .venv/bin/python benchmarks/bench_commands.py [--before REV] [--repeats N]``

F is the CPU (user + system) of ``python -c "import numpy, pandas"``, measured in the same run,
so that the ratios hold from one machine to another. Each command runs in a fresh process
(``python -m perfkit``), best of ``--repeats`` (the revisions interleaved), its run stores
warm (one untimed call first, as a user's second command), and its modules' bytecode cached,
as an installed package's is (``PYTHONDONTWRITEBYTECODE`` is dropped for the commands, which
otherwise compile every module of perfkit from source each time):

- ``compare`` and ``gate --max-regression 5%`` on data/demo-aa (arm A against B), ``effects``
  on data/demo-wrk-factorial: target <= 1.5 F each;
- a second ``compare`` of 1,000 runs (data/demo-aa copied 50 times into a temporary folder,
  arm A against B): target <= 2 F.

``--before REV`` checks REV out into a throwaway ``git worktree`` and runs the same commands
with its ``perfkit`` first on ``PYTHONPATH`` (same interpreter, the same data), printed beside.
Each revision reads its own copy of the data: the run store is kept in the data's folder, and
two revisions whose stores differ in version would otherwise each rebuild the other's on every
call (every file parsed again: no second command).
Timings never go in unit tests; this prints PASS or MISSED per row (exit status 0 either way).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from _revisions import revisions  # noqa: E402

COPIES = 50


def cpu_of(argv: list[str], pythonpath: Path) -> float:
    """User + system CPU of one fresh process (its exit status 0, 1 or 3)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(pythonpath)
    proc = subprocess.run([sys.executable, *argv], capture_output=True, text=True, env=env,
                          cwd=pythonpath, check=False)
    if proc.returncode not in (0, 1, 3):
        raise SystemExit(f"{' '.join(argv)}: exit {proc.returncode}: {proc.stderr[-500:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def commands(data: Path, many: Path) -> dict[str, tuple[list[str], float]]:
    aa = [f"{data}/demo-aa::arm=A", f"{data}/demo-aa::arm=B"]
    return {
        "compare demo-aa": (["-m", "perfkit", "compare", *aa], 1.5),
        "gate demo-aa --max-regression 5%": (["-m", "perfkit", "gate", *aa,
                                              "--max-regression", "5%"], 1.5),
        "effects demo-wrk-factorial": (["-m", "perfkit", "effects",
                                        f"{data}/demo-wrk-factorial",
                                        "--factors",
                                        "client_keepalive,upstream_keepalive,cache"], 1.5),
        "second compare, 1,000 runs": (["-m", "perfkit", "compare", f"{many}::arm=A",
                                        f"{many}::arm=B"], 2.0),
    }


def thousand_runs(into: Path) -> Path:
    """data/demo-aa copied 50 times (its runs' manifests name their arm)."""
    many = into / "aa-x50"
    for i in range(COPIES):
        shutil.copytree(ROOT / "data" / "demo-aa", many / f"copy{i:02d}",
                        ignore=shutil.ignore_patterns(".perfkit"))
    return many


def copy_data(into: Path) -> tuple[Path, Path]:
    """The demo experiments and the 1,000 runs, copied into ``into`` without run stores."""
    data = into / "data"
    for name in ("demo-aa", "demo-wrk-factorial"):
        shutil.copytree(ROOT / "data" / name, data / name,
                        ignore=shutil.ignore_patterns(".perfkit"))
    return data, thousand_runs(into)


def measure(trees: dict[str, Path], tmp: Path, repeats: int) -> dict[str, dict[str, float]]:
    """Each tree's F and its commands' CPU / F: best of ``repeats``, the trees interleaved
    command by command (a load that comes and goes then weighs on both alike), each tree on its
    own copy of the data."""
    argvs = {k: {"F": ["-c", "import numpy, pandas"],
                 **{name: argv for name, (argv, _) in commands(*copy_data(tmp / k)).items()}}
             for k in trees}
    for k, tree in trees.items():
        for name, argv in argvs[k].items():
            if name != "F":
                cpu_of(argv, tree)  # the run stores (and remembered simulations) written
    best = {k: dict.fromkeys(argvs[k], float("inf")) for k in trees}
    for _ in range(repeats):
        for name in argvs["after"]:
            for k, tree in trees.items():
                best[k][name] = min(best[k][name], cpu_of(argvs[k][name], tree))
    return {k: {"F": b["F"], **{n: v / b["F"] for n, v in b.items() if n != "F"}}
            for k, b in best.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", metavar="REV", help="also measure this revision")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-commands-") as tmp:
        tmpdir = Path(tmp)
        with revisions(args.before, tmpdir) as trees:
            results = measure(trees, tmpdir / "copies", args.repeats)
        data, many = Path("data"), Path("aa-x50")  # the rows' names
    print("F = CPU of `python -c 'import numpy, pandas'`: "
          + ", ".join(f"{k} {r['F']:.2f} s" for k, r in results.items()))
    head = "".join(f"{k:>9}" for k in results)
    print(f"{'command (CPU / F, fresh process, best of ' + str(args.repeats) + ')':<48}"
          f"{head}{'target':>9}  verdict (after)")
    for name, (_, target) in commands(data, many).items():
        cells = "".join(f"{r[name]:>8.2f}F" for r in results.values())
        last = list(results.values())[-1][name]
        print(f"{name:<48}{cells}{'<= ' + format(target, 'g') + 'F':>9}  "
              f"{'PASS' if last <= target else 'MISSED'}")


if __name__ == "__main__":
    main()
