"""Speed a user feels (issue 24): five rows, each beside its target and its baseline, one run.

Run: ``nice -n 19 .venv/bin/python benchmarks/bench_speed.py [--before DIR] [--skip-report]``

``--before DIR``: a checkout of the code before (``git worktree add DIR COMMIT``, or ``git
archive COMMIT | tar -x -C DIR``), measured in the same run with the same interpreter (its
``perfkit`` first on ``PYTHONPATH``), so that old and new share the machine's state.

1. **Start-up CPU**: ``perfkit --help``, ``perfkit --version`` (target <= 0.3 s) and ``perfkit
   parse`` of one wrk2 output (<= 0.6 s), each a fresh process, user + system CPU, best of
   ``--repeats``; beside them ``python -c pass``.
2. **Demo report wall time** (target <= 40 s on 2 cores): ``perfkit report -p params/demo.yaml``
   into a new folder, in a fresh process; beside it the same report one notebook at a time
   (``workers=1``: the sequential baseline, same code), the sum of the notebooks' CPU
   (measured one at a time: its kernel, its client thread and its HTML export) and the
   critical path (the parameter file's order on one worker per core, each notebook taking
   its CPU time). The run stores are warm, as on a second build. Wall time is what the
   target is about: on a busy machine it is inflated, the CPU sum and the critical path are
   not (the parent's own start-up, parameter check and index are outside both).
3. **First load / store-less load** (target <= 1.5x) and 4. **store-less / second load**
   (target >= 20x): ``perfkit.load`` of 2,000 varied real wrk2 outputs (``_corpus.py``: every
   distinct wrk2 run directory of tests/fixtures, /work/shared/fixtures and data/, -U,
   non-2xx, calibration, short, saturated and failed runs, copied round-robin), each load a
   fresh process (imports before the clock), CPU time, best of ``--repeats`` trials, each
   trial starting without a store. The first load is measured when it returns its runs (the
   store is then written by a thread of its own) and again once the store is on disk.
5. **Parse MB/s** (target >= 50 MB/s): the store-less loads of row 3 (megabytes of tool output
   per CPU second), and the same on every tool (wrk2, wrk, Locust CSV and --json sets: the
   parsers alone are slower per byte on the small wrk and Locust files), and on Locust's run
   directories alone (``--runs / 4`` of them, with the CPU per run directory).

Rows 4 and 5 each print their floor (:data:`FLOOR`, bare Python loops with no perfkit code,
best of ``--repeats`` fresh processes): the ``stat()`` of every folder and file that a second
load must make (an edit in place changes a file's times, not its folder's), and so the
largest ratio a store checking them could reach; the listing, the reading of every file and
the JSON decoding of the manifests that a store-less load must do before it parses anything,
and so the most MB/s it could reach.

Timings never go in unit tests; this prints PASS or MISSED per row (exit status 0 either way).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _corpus  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PARAMS = ROOT / "params" / "demo.yaml"
WRK2_OUTPUT = (ROOT / "tests" / "fixtures" / "wrk2" / "sweep" / "default_R15000_c16_rep1"
               / "run.stdout")
TARGETS = {"help": 0.3, "parse": 0.6, "report": 40.0, "first": 1.5, "second": 20.0,
           "mb_s": 50.0}
LOAD = """
import json, sys, time
import numpy, hdrh, pandas, pyarrow, pyarrow.parquet  # imported before the clock starts
import perfkit
from perfkit.ingest import loader, wrk, wrk2, locust
try:
    from perfkit.ingest import fastwrk2
    from perfkit.store import runcache, runtable
except ImportError:  # an older perfkit
    runcache = None
c0 = time.process_time()
runs = perfkit.load(sys.argv[1], cache=sys.argv[2] == "1", strict=False)
c1 = time.process_time()
getattr(runcache, "flush", lambda: None)()  # the store on disk (written after the return)
print(json.dumps({"cpu": c1 - c0, "cpu_total": time.process_time() - c0, "runs": len(runs)}))
"""


# What no loader can go below, in bare Python loops with no perfkit code: a second load must
# stat() every folder and file of the tree (an edit in place changes a file's times, not its
# folder's); a store-less load must list every folder, read every file (tool outputs are found
# by their content) and decode every manifest's JSON
FLOOR = """
import json, os, sys, time
root = sys.argv[1]
c0 = time.process_time()
dirs, files, stack = [], [], [root]
while stack:
    d = stack.pop()
    dirs.append(d)
    with os.scandir(d) as it:
        for e in it:
            if e.name.startswith("."):
                continue
            (stack if e.is_dir(follow_symlinks=False) else files).append(e.path)
c1 = time.process_time()
for p in dirs + files:
    os.stat(p)
c2 = time.process_time()
texts = []
for p in files:
    fd = os.open(p, os.O_RDONLY)
    try:
        data = os.read(fd, 1 << 16)
        while more := os.read(fd, 1 << 20):
            data += more
    finally:
        os.close(fd)
    if p.endswith(("/manifest.json", "/meta.json")):
        texts.append(data)
c3 = time.process_time()
for text in texts:
    json.loads(text)
c4 = time.process_time()
print(json.dumps({"paths": len(dirs) + len(files), "files": len(files), "list": c1 - c0,
                  "stat": c2 - c1, "read": c3 - c2, "json": c4 - c3}))
"""


def env_for(src: Path | None) -> dict[str, str]:
    """A child's environment: the checkout's perfkit first on ``PYTHONPATH`` (its notebook
    kernels too, which start in notebooks/), and this checkout's data for every version (the
    same paths in the tables)."""
    env = {**os.environ, "PERFKIT_NO_PROGRESS": "1", "PERFKIT_DATA": str(ROOT / "data")}
    env["PYTHONPATH"] = os.pathsep.join([str(src or ROOT), env.get("PYTHONPATH", "")]).rstrip(
        os.pathsep)
    return env


def cwd_for(src: Path | None) -> Path:
    """The working directory of a child: its checkout (``python -m`` and ``-c`` put the
    working directory first on ``sys.path``, before ``PYTHONPATH``)."""
    return ROOT if src is None else src


def child_cpu(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    """User + system CPU seconds of one child process (getrusage: microseconds)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, env=env, cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def best(fn, repeats: int) -> float:
    return min(fn() for _ in range(repeats))


# -- 1. start-up ---------------------------------------------------------------------------
def startup(src: Path | None, repeats: int) -> dict[str, float]:
    env, cwd = env_for(src), cwd_for(src)
    py = [sys.executable]
    return {
        "pass": best(lambda: child_cpu([*py, "-c", "pass"], env, cwd), repeats),
        "help": best(lambda: child_cpu([*py, "-m", "perfkit", "--help"], env, cwd), repeats),
        "version": best(lambda: child_cpu([*py, "-m", "perfkit", "--version"], env, cwd),
                        repeats),
        "parse": best(lambda: child_cpu([*py, "-m", "perfkit", "parse", str(WRK2_OUTPUT)],
                                        env, cwd), repeats),
    }


# -- 3, 4, 5. the run store and parsing ------------------------------------------------------
def load(root: Path, cache: bool, env: dict[str, str], cwd: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", LOAD, str(root), "1" if cache else "0"],
                         env=env, cwd=cwd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def storeless(root: Path, src: Path | None, repeats: int) -> dict:
    """The best of ``repeats`` store-less loads (each a fresh process)."""
    env, cwd = env_for(src), cwd_for(src)
    return min((load(root, False, env, cwd) for _ in range(repeats)), key=lambda r: r["cpu"])


def loads(root: Path, src: Path | None, repeats: int) -> dict[str, dict]:
    """Per trial: no store; a store-less load, the first load (writes it), the second; and
    the floor (:data:`FLOOR`, each part's best), beside them on the machine as it is."""
    env, cwd = env_for(src), cwd_for(src)
    trials = []
    for _ in range(repeats):
        shutil.rmtree(root / ".perfkit", ignore_errors=True)
        trials.append({"storeless": load(root, False, env, cwd),
                       "first": load(root, True, env, cwd),
                       "second": load(root, True, env, cwd),
                       "floor": json.loads(subprocess.run(
                           [sys.executable, "-c", FLOOR, str(root)], check=True,
                           capture_output=True, text=True).stdout)})
    shutil.rmtree(root / ".perfkit", ignore_errors=True)
    out = {kind: min((t[kind] for t in trials), key=lambda r: r["cpu"])
           for kind in ("storeless", "first", "second")}
    out["floor"] = {key: min(t["floor"][key] for t in trials) for key in trials[0]["floor"]}
    return out


# -- 2. the demo report ----------------------------------------------------------------------
REPORT_ONE = """
import inspect, json, os, sys, threading, time
from pathlib import Path
from perfkit.report import build
from perfkit.report.params import load_params
params = load_params(sys.argv[1])
per = {}  # notebook -> CPU: its kernel (reaped when it ends) and this process's thread
real_execute, real_entry = build.execute_notebook, build._entry

def execute_notebook(source, *args, **kwargs):
    t0, c0 = os.times(), time.thread_time()
    result = real_execute(source, *args, **kwargs)
    t1 = os.times()
    per[source.stem] = (t1.children_user - t0.children_user + t1.children_system
                        - t0.children_system + time.thread_time() - c0)
    return result

def _entry(execution, out_dir, *args):
    c0 = time.thread_time()
    entry = real_entry(execution, out_dir, *args)
    per[execution.name] += time.thread_time() - c0
    return entry

build.execute_notebook, build._entry = execute_notebook, _entry
# a perfkit that takes no ``workers`` builds one notebook at a time (the code before issue 24)
takes = "workers" in inspect.signature(build.build_report).parameters
kwargs = {"workers": int(sys.argv[3])} if takes else {}
w0, t0 = time.perf_counter(), os.times()
result = build.build_report(params, Path(sys.argv[2]), **kwargs)
t1 = os.times()
cpu = (t1.user - t0.user + t1.system - t0.system + t1.children_user - t0.children_user
       + t1.children_system - t0.children_system)
print(json.dumps({"wall": time.perf_counter() - w0, "cpu": cpu, "per": per,
                  "errors": [str(e) for e in result.errors]}))
"""
WARM = """
import sys
import perfkit
for d in sys.argv[1:]:
    perfkit.load(d, strict=False)
"""


def report(src: Path | None, tmp: Path, workers: int) -> dict:
    """One build_report in a fresh process: wall time, CPU (its kernels included) and each
    notebook's CPU (kernel, client thread, HTML export: valid one notebook at a time, when
    no other kernel is reaped within its span). ``workers`` is ignored by a perfkit that
    takes none (the code before issue 24, which builds one notebook at a time)."""
    out = tmp / f"report-{len(list(tmp.iterdir()))}"
    w0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", REPORT_ONE, str(PARAMS), str(out),
                           str(workers)], env=env_for(src), cwd=cwd_for(src), capture_output=True,
                          text=True, check=False)
    wall = time.perf_counter() - w0
    if proc.returncode != 0:
        raise SystemExit(f"report failed:\n{proc.stderr[-3000:]}")
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    if found["errors"]:
        raise SystemExit(f"report notebooks failed: {found['errors']}")
    return {"wall": wall, "cpu": found["cpu"], "per": found["per"], "out": out}


def critical_path(cpus: list[float], workers: int) -> float:
    """The pool's finish time when the notebooks start in order on ``workers`` workers and
    each takes its CPU time."""
    free = [0.0] * workers
    for cpu in cpus:
        free[free.index(min(free))] += cpu
    return max(free)


def report_rows(src: Path | None, tmp: Path, workers: int) -> dict:
    sys.path.insert(0, str(ROOT))
    from perfkit.report.build import experiment_dirs
    from perfkit.report.params import load_params

    params = load_params(PARAMS)
    # the run stores warm, in the format of the code measured (as on a second build)
    subprocess.run([sys.executable, "-c", WARM, *map(str, experiment_dirs(params))],
                   env=env_for(src), cwd=cwd_for(src), check=True, capture_output=True)
    parallel = report(src, tmp, workers)
    sequential = report(src, tmp, 1)
    per = {r.name: sequential["per"][r.name] for r in params.notebooks}
    return {"parallel": parallel, "sequential": sequential, "per": per,
            "critical": critical_path(list(per.values()), workers),
            "tables": parallel["out"] / "tables"}


# -- printing ------------------------------------------------------------------------------
def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISSED"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="a checkout of the code before")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--runs", type=int, default=2000, help="run directories per corpus")
    parser.add_argument("--skip-report", action="store_true")
    args = parser.parse_args(argv)
    workers = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
    versions = [("after", None)] + ([("before", args.before.resolve())] if args.before else [])
    print(f"{workers} cores, load average {os.getloadavg()[0]:.1f}; best of {args.repeats}; "
          "CPU = user + system")
    rows: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="perfkit-bench-speed-") as name:
        tmp = Path(name)
        wrk2_corpus = _corpus.build(tmp / "wrk2", args.runs, tools=("wrk2",))
        every = _corpus.build(tmp / "every", args.runs)
        locust = _corpus.build(tmp / "locust", max(1, args.runs // 4), tools=("locust",))
        time.sleep(2.5)  # out of the racy window, as data at rest is
        for label, src in versions:
            rows[label] = {"startup": startup(src, args.repeats),
                           "wrk2": loads(wrk2_corpus.root, src, args.repeats),
                           "every": loads(every.root, src, max(1, args.repeats // 2)),
                           "locust": storeless(locust.root, src, args.repeats)}
            if not args.skip_report:
                reports = tmp / f"reports-{label}"
                reports.mkdir()
                rows[label]["report"] = report_rows(src, reports, workers)
        if "before" in rows and not args.skip_report:
            same = subprocess.run(["diff", "-r", str(rows["before"]["report"]["tables"]),
                                   str(rows["after"]["report"]["tables"])],
                                  capture_output=True, text=True)
            rows["tables_identical"] = same.returncode == 0
        print(f"\ncorpus: {_corpus.describe(wrk2_corpus)}\n"
              f"every tool: {_corpus.describe(every)}\n"
              f"Locust: {_corpus.describe(locust)}\n")
        show(rows, versions, args, workers, wrk2_corpus, every, locust)
    return 0


def show(rows: dict, versions: list, args, workers: int, wrk2_corpus, every, locust
         ) -> None:
    labels = [label for label, _ in versions]
    head = f"{'row':<44}" + "".join(f"{label:>12}" for label in labels)
    print(head + f"{'target':>12}  verdict (after)")
    print("-" * len(head) + "-" * 28)

    def row(name: str, values: list[str], target: str, ok: bool | None) -> None:
        print(f"{name:<44}" + "".join(f"{v:>12}" for v in values) + f"{target:>12}  "
              + ("" if ok is None else verdict(ok)))

    s = {label: rows[label]["startup"] for label in labels}
    after = s["after"]
    row("1. start-up CPU: python -c pass (bare)", [f"{s[x]['pass']:.3f} s" for x in labels],
        "", None)
    row("   perfkit --help", [f"{s[x]['help']:.3f} s" for x in labels],
        f"<= {TARGETS['help']} s", after["help"] <= TARGETS["help"])
    row("   perfkit --version", [f"{s[x]['version']:.3f} s" for x in labels],
        f"<= {TARGETS['help']} s", after["version"] <= TARGETS["help"])
    row("   perfkit parse (one wrk2 output)", [f"{s[x]['parse']:.3f} s" for x in labels],
        f"<= {TARGETS['parse']} s", after["parse"] <= TARGETS["parse"])
    if not args.skip_report:
        r = {label: rows[label]["report"] for label in labels}
        row("2. demo report, wall", [f"{r[x]['parallel']['wall']:.1f} s" for x in labels],
            f"<= {TARGETS['report']:.0f} s",
            r["after"]["parallel"]["wall"] <= TARGETS["report"])
        row("   one notebook at a time (baseline), wall",
            [f"{r[x]['sequential']['wall']:.1f} s" for x in labels], "", None)
        row("   sum of the notebooks' CPU",
            [f"{sum(r[x]['per'].values()):.1f} s" for x in labels], "", None)
        row(f"   critical path on {workers} workers (CPU)",
            [f"{r[x]['critical']:.1f} s" for x in labels],
            f"<= {TARGETS['report']:.0f} s", r["after"]["critical"] <= TARGETS["report"])
        for x in labels:
            print(f"   {x}, CPU per notebook: " + "; ".join(
                f"{n} {c:.1f} s" for n, c in r[x]["per"].items()))
        if "tables_identical" in rows:
            print(f"   tables before vs after: "
                  f"{'byte-identical (diff -r)' if rows['tables_identical'] else 'DIFFER'}")
    w = {label: rows[label]["wrk2"] for label in labels}
    mb = wrk2_corpus.output_bytes / 1e6
    row("3. first load / store-less, at its return",
        [f"{w[x]['first']['cpu'] / w[x]['storeless']['cpu']:.2f}x" for x in labels],
        f"<= {TARGETS['first']}x",
        w["after"]["first"]["cpu"] / w["after"]["storeless"]["cpu"] <= TARGETS["first"])
    row("   the same, the store written",
        [f"{w[x]['first']['cpu_total'] / w[x]['storeless']['cpu']:.2f}x" for x in labels],
        "", None)
    row("   store-less load (baseline), CPU",
        [f"{w[x]['storeless']['cpu']:.3f} s" for x in labels], "", None)
    row("4. store-less / second load",
        [f"{w[x]['storeless']['cpu'] / w[x]['second']['cpu']:.1f}x" for x in labels],
        f">= {TARGETS['second']:.0f}x",
        w["after"]["storeless"]["cpu"] / w["after"]["second"]["cpu"] >= TARGETS["second"])
    row("   second load, CPU", [f"{w[x]['second']['cpu'] * 1e3:.1f} ms" for x in labels],
        "", None)
    f = {x: w[x]["floor"] for x in labels}
    row(f"   floor: stat() of its {f['after']['paths']:,} paths, bare",
        [f"{f[x]['stat'] * 1e3:.1f} ms" for x in labels], "", None)
    row("   so at most (store-less / floor)",
        [f"{w[x]['storeless']['cpu'] / f[x]['stat']:.1f}x" for x in labels], "", None)
    row(f"5. parse: store-less load, wrk2 ({mb:.1f} MB)",
        [f"{mb / w[x]['storeless']['cpu']:.1f} MB/s" for x in labels],
        f">= {TARGETS['mb_s']:.0f} MB/s",
        mb / w["after"]["storeless"]["cpu"] >= TARGETS["mb_s"])
    floor_rows(f, mb, labels, row)
    e = {label: rows[label]["every"] for label in labels}
    mb_all = every.output_bytes / 1e6
    row(f"   every tool ({mb_all:.1f} MB)",
        [f"{mb_all / e[x]['storeless']['cpu']:.1f} MB/s" for x in labels],
        f">= {TARGETS['mb_s']:.0f} MB/s", mb_all / e["after"]["storeless"]["cpu"]
        >= TARGETS["mb_s"])
    floor_rows({x: e[x]["floor"] for x in labels}, mb_all, labels, row)
    lo = {label: rows[label]["locust"]["cpu"] for label in labels}
    mb_locust = locust.output_bytes / 1e6
    row(f"   Locust run directories ({mb_locust:.1f} MB)",
        [f"{mb_locust / lo[x]:.1f} MB/s" for x in labels], "", None)
    row(f"     CPU per run directory ({locust.runs})",
        [f"{lo[x] / locust.runs * 1e3:.2f} ms" for x in labels], "", None)
    print(f"\n{wrk2_corpus.runs} run directories per corpus, a fresh process per load; "
          "every ratio from CPU times of this one run")


def floor_rows(f: dict, megabytes: float, labels: list[str], row) -> None:
    """What a store-less load must do before it parses anything (:data:`FLOOR`)."""
    bare = {x: f[x]["list"] + f[x]["read"] + f[x]["json"] for x in labels}
    row(f"   floor: list, read {f['after']['files']:,} files, JSON",
        [f"{bare[x] * 1e3:.0f} ms" for x in labels], "", None)
    row("     of which list / read / JSON", ["/".join(f"{f[x][k] * 1e3:.0f}" for k in (
        "list", "read", "json")) for x in labels], "", None)
    row("   so at most, before any parsing", [f"{megabytes / bare[x]:.1f} MB/s" for x in labels],
        "", None)


if __name__ == "__main__":
    sys.exit(main())
