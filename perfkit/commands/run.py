"""``perfkit run wrk|wrk2|locust``: one run, kept verbatim with its manifest."""

from __future__ import annotations

import argparse
import math
from typing import TextIO, cast

from perfkit.commands import _checks as checks
from perfkit.errors import ERROR_STATUS, UsageError
from perfkit.units import UnitError, parse_duration_arg
from perfkit.vocabulary import ManifestStatus

HELP = """\
Run one load test and keep everything: the tool's stdout and stderr byte for byte (and Locust's
CSV and --json output), CPU samples of the generator and the server, and manifest.json (argv,
tool version, load levels, start/end UTC, exit status, host, sysctls, server profile and its
rendered config when the URL is the local testbed's, sha256 of every file), and what the
server and the kernel counted from just before the tool started to just after it exited
(nginx's stub_status, the kernel's listen overflows and SYN retransmissions, the error-log
lines, cache hits: raw snapshots in counters/, deltas in the manifest, each with its scope).

The run is written to OUT/.tmp-RUN_ID/ and renamed to OUT/RUN_ID/ when it ends, whatever its
status (complete, failed or killed). The last line of stdout is that directory. A run that
did not complete (the tool exited non-zero, e.g. wrk could not connect, or Locust saw a failed
request: its --exit-code-on-error) is kept with its status and exit code in the manifest, and
perfkit exits 2 with the reason in the tool's own words on stderr.
Every run is bounded: after duration + --grace seconds the process group is killed.
Only loopback URLs are loaded unless --allow-remote is given.

examples:
  perfkit run wrk --url http://127.0.0.1:8080/ --connections 64 --threads 2 --duration 10s \\
      --out runs/
  perfkit run wrk2 --url http://127.0.0.1:8080/ -c 64 -t 2 -d 30s --rate 20000 --out runs/
  perfkit run locust --url http://127.0.0.1:8080 --locustfile tests/locust/locustfile.py \\
      --user-class PageUser --users 20 --spawn-rate 10 --duration 20s --processes 2 --out runs/
  perfkit run wrk --url http://127.0.0.1:8080/ -c 64 -t 1 -d 10s --clients 2 --out runs/
"""


def register(subparsers) -> None:
    p = subparsers.add_parser("run", help="run wrk, wrk2 or Locust once and keep its raw output",
                              description=HELP,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("tool", choices=("wrk", "wrk2", "locust"))
    p.add_argument("--url", required=True, help="target (Locust: the --host base URL)")
    p.add_argument("--out", default="runs", help="parent directory of the run (default: runs)")
    p.add_argument("-d", "--duration", default="10s",
                   help="measured duration, e.g. 10s (Locust: after every user has spawned)")
    p.add_argument("-c", "--connections", type=int, help="wrk/wrk2: open connections")
    p.add_argument("-t", "--threads", type=int, help="wrk/wrk2: threads")
    p.add_argument("-R", "--rate", type=float, help="wrk2: target requests/s (-R)")
    p.add_argument("--no-latency", action="store_true", help="wrk/wrk2: omit --latency")
    p.add_argument("-U", "--uncorrected", action="store_true",
                   help="wrk2: also print the uncorrected latency distribution")
    p.add_argument("--timeout", help="wrk/wrk2: socket/request timeout, e.g. 2s")
    p.add_argument("-H", "--header", action="append", default=[], help="wrk/wrk2: header")
    p.add_argument("-s", "--script", help="wrk/wrk2: Lua script")
    p.add_argument("--wrk2", metavar="PATH", help="the wrk2 binary (default: wrk2 on PATH)")
    p.add_argument("-u", "--users", type=int, help="Locust: users")
    p.add_argument("-r", "--spawn-rate", type=float, help="Locust: users/s (default: all at once)")
    p.add_argument("--processes", type=int, help="Locust: --processes N (N worker processes)")
    p.add_argument("-f", "--locustfile", help="Locust: the locustfile")
    p.add_argument("--user-class", action="append", default=[],
                   help="Locust: a user class of the locustfile (repeatable; default: every "
                        "class in it, e.g. both PageUser and MixedUser, which requests a 404)")
    p.add_argument("--no-reset-stats", action="store_true",
                   help="Locust: keep the ramp-up in the statistics (default: reset when spawned)")
    p.add_argument("--arg", action="append", default=[], metavar="ARG",
                   help="one more argument passed to the tool verbatim (repeatable)")
    p.add_argument("--factor", action="append", default=[], metavar="NAME=LEVEL",
                   help="a factor level recorded in the manifest (repeatable)")
    p.add_argument("--taskset", metavar="GEN[:SERVER]",
                   help="pin the generator (and the server) to CPUs, e.g. 0:1")
    p.add_argument("--clients", type=int, default=1,
                   help="wrk/wrk2: N concurrent generator processes (see docs/distributed.md)")
    p.add_argument("--grace", type=float, default=20.0,
                   help="seconds past the duration before the run is killed (default 20)")
    p.add_argument("--allow-remote", action="store_true",
                   help="allow a non-loopback URL (load a remote machine on purpose)")
    p.add_argument("--run-id", help="directory name of the run (default: UTC time-tool-random)")
    p.add_argument("--stub-status", metavar="URL",
                   help="nginx's stub_status page of a server that is not the testbed (the "
                        "testbed's own is read without it): its connection and request counts "
                        "over the run are recorded")
    p.add_argument("--state-dir", metavar="DIR",
                   help="the state folder of the testbed that serves --url, as given to "
                        "'perfkit testbed up --state-dir' (default: found by itself: the "
                        "default folder's testbed, else any running testbed on the URL's "
                        "port)")
    p.set_defaults(func=main)


def _seconds(text: str | None, what: str) -> float | None:
    if text is None:
        return None
    try:
        seconds = parse_duration_arg(text)
    except UnitError:
        seconds = math.nan
    if not (math.isfinite(seconds) and seconds > 0):
        raise UsageError(f"{what}: expected a duration such as 10s, found {text!r}")
    return seconds


def _factors(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items:
        name, sep, level = item.partition("=")
        if not sep or not name.strip():
            raise UsageError(f"--factor: expected NAME=LEVEL, found {item!r}")
        if name in out:
            raise UsageError(f"--factor: {name!r} given twice")
        out[name] = level
    return out


def check_numbers(args: argparse.Namespace) -> None:
    """Counts and rates: refused before anything starts."""
    for option, value in (("--connections", args.connections), ("--threads", args.threads),
                          ("--users", args.users), ("--processes", args.processes),
                          ("--clients", args.clients)):
        checks.at_least(value, 1, option)
    for option, value in (("--rate", args.rate), ("--spawn-rate", args.spawn_rate),
                          ("--grace", args.grace)):
        checks.positive(value, option)


def spec_from_args(args: argparse.Namespace):
    from perfkit.run.spec import RunSpec, check_url

    check_numbers(args)
    check_url(args.url, args.allow_remote)
    return RunSpec(
        tool=args.tool, url=args.url,
        duration_s=cast(float, _seconds(args.duration, "--duration")),  # default 10s
        connections=args.connections, threads=args.threads, rate_rps=args.rate,
        latency=not args.no_latency, uncorrected=args.uncorrected,
        request_timeout_s=_seconds(args.timeout, "--timeout"), headers=tuple(args.header),
        script=args.script, users=args.users, spawn_rate=args.spawn_rate,
        processes=args.processes, locustfile=args.locustfile,
        user_classes=tuple(args.user_class), reset_stats=not args.no_reset_stats,
        extra_args=tuple(args.arg), wrk2_path=args.wrk2, taskset=args.taskset,
        allow_remote=args.allow_remote, grace_s=args.grace, run_id=args.run_id,
        stub_status_url=args.stub_status,
        factors=_factors(args.factor))


def main(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from perfkit.run.procs import sigterm_as_interrupt

    with sigterm_as_interrupt():
        return _run(args, out, err)


def server_of(url: str, state_dir: str | None):
    """The server of ``url``: the testbed of ``state_dir`` (refused when it does not serve
    ``url``), else found (:meth:`perfkit.run.server.ServerContext.for_url`)."""
    from perfkit.run.server import ServerContext

    if state_dir is None:
        return ServerContext.for_url(url)
    from perfkit.run.testbed import Testbed

    testbed = Testbed(state_dir)
    server = ServerContext.for_url(url, testbed)
    if server.info is None:
        info = testbed.status()
        found = ("no testbed runs there" if info is None
                 else f"its testbed serves {info.base_url}")
        raise UsageError(f"--state-dir {state_dir}: expected the testbed that serves {url}, "
                         f"found {found}")
    return server


def _run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    spec = spec_from_args(args)
    checks.output_dir(args.out, "--out")
    server = server_of(spec.url, args.state_dir)
    if args.clients > 1:
        from perfkit.run.distributed import run_clients

        group = run_clients(spec, args.clients, args.out, err=err, server=server)
        for outcome in group.outcomes:
            print(f"{outcome.run_id}  {outcome.status}", file=out)
        print(group.path, file=out)
        failed = [o for o in group.outcomes if o.status != ManifestStatus.COMPLETE]
        if failed:
            print(f"perfkit: error: {len(failed)} of {len(group.outcomes)} clients did not "
                  f"complete ({failed[0].run_id}: {failed[0].status}); every output is kept in "
                  f"{group.path}", file=err)
            return ERROR_STATUS
        return 0
    from perfkit.run.runner import execute

    outcome = execute(spec, args.out, server=server, err=err, report_status=False)
    print(f"{outcome.status}  exit code {outcome.exit_code}", file=out)
    print(outcome.path, file=out)
    if outcome.status != ManifestStatus.COMPLETE:
        reason = outcome.manifest.get("status_reason") or outcome.status
        print(f"perfkit: error: run {outcome.status}: {reason}; its output is kept in "
              f"{outcome.path}", file=err)
        return ERROR_STATUS
    return 0
