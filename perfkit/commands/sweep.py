"""``perfkit sweep experiment.yaml``: a designed experiment in randomized complete blocks."""

from __future__ import annotations

import argparse
from typing import TextIO

from perfkit.commands import _checks as checks
from perfkit.errors import ERROR_STATUS, UsageError
from perfkit.vocabulary import ManifestStatus

HELP = """\
Run every cell of an experiment (factor levels x load levels) once per block, in a seeded
random order within each block, on the local testbed (restarted when the profile changes) or
on a given URL. Each run is kept as runs/RUN_ID/ with its raw output and manifest.

Interrupted (Ctrl-C, kill -9, power loss)? Run the same command again: it refuses if
experiment.yaml changed, kills what the dead sweep left running, moves the half-written run to
runs/.aborted/, skips the runs already done and redoes the rest.

The layout is OUT/experiment.yaml, OUT/plan.json, OUT/runs/RUN_ID/. OUT is --out, else the
YAML's directory when the file is named experiment.yaml, else ./NAME (the file's stem).

The sweep starts, restarts and stops its own testbed; it refuses to touch one it did not start
(`perfkit testbed up`): give it another --state-dir and --port to run beside it. A run that
does not complete is kept with its reason, the sweep goes on, and perfkit exits 2 at the end.
Each run is told on stderr as it ends, with the runs done and planned and the time left (above
a bar on a terminal, one line each in a log; PERFKIT_NO_PROGRESS=1 turns them off). See
examples/*.yaml for annotated designs.

examples:
  perfkit sweep examples/keepalive-cache.yaml --dry-run
  perfkit sweep examples/keepalive-cache.yaml --out data/my-experiment
  perfkit parse data/my-experiment
"""


def register(subparsers) -> None:
    p = subparsers.add_parser("sweep", help="run a designed experiment (randomized blocks, "
                              "resumable)", description=HELP,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("experiment", help="experiment.yaml")
    p.add_argument("--out", help="experiment directory (see above)")
    p.add_argument("--dry-run", action="store_true", help="print the plan; run nothing")
    p.add_argument("--retry-failed", action="store_true",
                   help="redo runs that ended failed or killed (moved to runs/.failed/)")
    p.add_argument("--port", type=int, metavar="N",
                   help="the testbed's port on 127.0.0.1 (default: the design's "
                        "target.testbed.port)")
    p.add_argument("--upstream-port", type=int, metavar="N",
                   help="the port of the testbed's upstream app (default: port + 1000)")
    p.add_argument("--state-dir", metavar="DIR",
                   help="the testbed's folder (default $PERFKIT_TESTBED_DIR or "
                        "/tmp/perfkit-testbed-<uid>): with --port, a sweep beside a running "
                        "testbed")
    p.set_defaults(func=main)


def _fmt_s(seconds: float) -> str:
    minutes, sec = divmod(round(seconds), 60)
    return f"{minutes} min {sec:02d} s" if minutes else f"{sec} s"


def print_plan(sweep, out: TextIO) -> None:
    from perfkit.run.plan import restarts_in
    from perfkit.run.sweep import estimate_s

    s, plan = sweep.spec, sweep.plan
    done = sweep.completed() if sweep.runs_dir.is_dir() else {}
    print(f"experiment {s['name']}: {s['tool']}, {len(plan['cells'])} cells x "
          f"{s['repetitions']} blocks = {len(plan['runs'])} runs of {s['duration_s']:g} s, "
          f"seed {s['seed']}", file=out)
    print(f"directory  {sweep.dir}  ({len(done)} runs already done)", file=out)
    restarts = restarts_in(plan, s["restart"])
    if restarts:
        print(f"testbed    {restarts} (re)starts ({s['restart']}; ~1 s each, the server "
              "starts cold each time)", file=out)
    print(f"warm-up    {_warmup_text(s['warmup'])}", file=out)
    print(f"estimate   {_fmt_s(estimate_s(sweep))}", file=out)
    header = ("seq", "block", "pos", "run_id", "profile", "load", "done")
    print("  ".join(header), file=out)
    for r in plan["runs"]:
        load = " ".join(f"{k}={v:g}" for k, v in r["load"].items())
        print(f"{r['seq']:>4}  {r['block']:>5}  {r['position_in_block']:>3}  {r['run_id']}  "
              f"{r['profile'] or '-'}  {load}  {done.get(r['run_id'], '')}", file=out)


def _warmup_text(w: dict) -> str:
    if w["kind"] == "time":
        return f"{w['seconds']:g} s of the same load before every run (discarded)"
    if w["kind"] == "runs":
        return f"{w['runs']} discarded run(s) at the start of each block"
    return "none"


def main(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from perfkit.run.sweep import Sweep, TestbedPlace

    for option, port in (("--port", args.port), ("--upstream-port", args.upstream_port)):
        if port is not None and not 1 <= port <= 65535:
            raise UsageError(f"{option}: expected a TCP port in 1..65535, found {port}")
    if args.out:
        checks.output_dir(args.out, "--out")
    sweep = Sweep(args.experiment, args.out, err=err,
                  testbed=TestbedPlace(args.port, args.upstream_port, args.state_dir))
    if args.dry_run:
        sweep.check_plan()
        print_plan(sweep, out)
        return 0
    from perfkit.run.procs import sigterm_as_interrupt

    with sigterm_as_interrupt():
        result = sweep.run(retry_failed=args.retry_failed)
    counts = ", ".join(f"{n} {k}" for k, n in sorted(result.statuses.items())) or "nothing"
    print(f"{result.ran} runs this time ({counts}); {result.done_before} were already done; "
          f"{result.total} planned", file=out)
    if result.stale_killed or result.aborted_moved:
        print(f"resumed: {result.stale_killed} stale process group(s) killed, "
              f"{len(result.aborted_moved)} interrupted run(s) moved to runs/.aborted/",
              file=out)
    print(f"testbed (re)starts: {result.restarts}; wall time {_fmt_s(result.wall_s)}", file=out)
    print(result.path, file=out)
    undone = {k: n for k, n in result.statuses.items() if k != ManifestStatus.COMPLETE}
    if undone:
        what = ", ".join(f"{n} {k}" for k, n in sorted(undone.items()))
        print(f"perfkit: error: {sum(undone.values())} of {result.ran} runs did not complete "
              f"({what}; each kept with its reason in its manifest.json): perfkit sweep "
              f"{args.experiment} --retry-failed redoes them", file=err)
        return ERROR_STATUS
    return 0
