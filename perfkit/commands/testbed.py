"""``perfkit testbed up|down|status|config``: the local nginx testbed on 127.0.0.1."""

from __future__ import annotations

import argparse
import textwrap

from perfkit.errors import UsageError

DESCRIPTION = """\
A local nginx (Debian's /usr/sbin/nginx) on 127.0.0.1, configured from a profile, plus a slow
upstream app (python -m perfkit.run.upstream) for the proxy and cache profiles.

  perfkit testbed up --profile keepalive+cache-ram --port 8080   last stdout line: the base URL
  perfkit testbed status                                          exit 3 when nothing runs
  perfkit testbed down                                            stops only what up started
  perfkit testbed config --profile backlog [--check]              print the rendered nginx.conf

Files live in --state-dir (default $PERFKIT_TESTBED_DIR or /tmp/perfkit-testbed-<uid>).
`up` restarts a running testbed with the new profile, fresh processes and an empty cache.
`perfkit run` finds a testbed by its URL's port whatever its --state-dir (or give it:
`perfkit run --state-dir DIR`), and records its counters; a run whose testbed counters
cannot be read says so in its warnings.
"""


def _epilog() -> str:
    from perfkit.run.profiles import PROFILES, VARIABLES

    lines = ["profiles (compose with '+', e.g. keepalive+cache-ram):"]
    for name, values in PROFILES.items():
        sets = ", ".join(f"{k}={v}" for k, v in values.items()) or "(all defaults)"
        lines.append(f"  {name:<13} {sets}")
    lines += ["",
              "  proxy/cache-*: / is proxied to the slow upstream (cache-*: through proxy_cache,",
              "  X-Cache-Status MISS then HIT), so a load test on the base URL measures it;",
              "  /slow (~3 s) and /proxy/...?delay_ms=N reach the upstream uncached.",
              "  netns (root): nginx runs in its own network namespace with its own loopback and",
              "  net.core.somaxconn; run load generators inside it (ip netns exec NAME ...).",
              "  reload: not a config change; runs get a SIGHUP (nginx -s reload) every",
              "  reload_interval_s seconds.",
              "",
              "template variables (--set NAME=VALUE; 'none' for unset):"]
    for v in VARIABLES:
        default = "none" if v.default is None else v.default
        head = f"  {v.name:<19} default {str(default):<7} "
        lines.append(textwrap.fill(v.doc, width=95, initial_indent=head,
                                   subsequent_indent=" " * len(head)))
    return "\n".join(lines)


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "testbed", help="start/stop the local nginx testbed on 127.0.0.1",
        description=DESCRIPTION, epilog=_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("action", choices=("up", "down", "status", "config"))
    parser.add_argument("--profile", default="default",
                        help="profile name(s) joined by '+' (default: default)")
    parser.add_argument("--port", type=int, default=8080, help="port on 127.0.0.1 (8080)")
    parser.add_argument("--set", dest="variables", action="append", default=[],
                        metavar="NAME=VALUE", help="override a template variable (repeatable)")
    parser.add_argument("--state-dir", help="testbed directory (default "
                        "$PERFKIT_TESTBED_DIR or /tmp/perfkit-testbed-<uid>)")
    parser.add_argument("--check", action="store_true",
                        help="config: also run `nginx -t` on the rendered config")
    parser.set_defaults(func=run)


def parse_sets(items: list[str]) -> dict[str, str]:
    """``["backlog=64", "netns=1"]`` -> ``{"backlog": "64", "netns": "1"}``."""
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise UsageError(f"--set: expected NAME=VALUE, found {item!r}")
        out[name.strip()] = value.strip()
    return out


def run(args, out, err) -> int:
    from perfkit.run.profiles import render_config, resolve_variables
    from perfkit.run.testbed import Testbed

    variables = parse_sets(args.variables)
    tb = Testbed(args.state_dir)
    if args.action == "config":
        v = resolve_variables(args.profile, variables, args.port, tb.state_dir)
        out.write(render_config(v, args.port, tb.state_dir, profile_name=args.profile))
        if args.check:
            print(tb.check_config(args.profile, args.port, variables), file=err)
        return 0
    if args.action == "down":
        stopped = tb.down()
        print(f"testbed down: stopped pids {' '.join(map(str, stopped))}" if stopped
              else "testbed: nothing of ours was running", file=out)
        return 0
    if args.action == "status":
        return _status(tb, out)
    info = tb.up(args.profile, args.port, variables)
    _describe(info, out)
    print(info.base_url, file=out)
    return 0


def _describe(info, out) -> None:
    pids = " ".join(f"{k}={v}" for k, v in info.pids.items())
    print(f"profile: {info.profile}", file=out)
    print(f"nginx: {info.nginx_version}, pids {pids}", file=out)
    print(f"config: {info.config_path}", file=out)
    queue = "" if info.accept_queue_max is None else f", accept queue {info.accept_queue_max}"
    print(f"backlog: {info.backlog} (somaxconn {info.somaxconn}{queue})", file=out)
    if info.upstream_backlog is not None:
        queue = ("" if info.upstream_accept_queue_max is None
                 else f", accept queue {info.upstream_accept_queue_max}")
        print(f"upstream: {info.upstream_processes} process(es), backlog "
              f"{info.upstream_backlog}{queue}", file=out)
        for mode, m in ((info.upstream_ceiling or {}).get("modes") or {}).items():
            print(f"upstream ceiling ({mode.replace('_', ' ')}): {m['throughput_rps']:,.0f} "
                  f"req/s at {m['cpu_cores']:g} cores, {m['cpu_us_per_request']:g} us CPU per "
                  f"request (bound: {m['bound']})", file=out)
    if info.netns:
        print(f"netns: {info.netns} (run clients with: ip netns exec {info.netns} ...)", file=out)
    if info.reload_interval_s:
        print(f"reload disturbance: every {info.reload_interval_s:g} s during runs", file=out)


def _status(tb, out) -> int:
    info = tb.status()
    if info is None:
        stale = tb.state_path.exists()
        print(f"testbed: not running{' (stale state file; run down)' if stale else ''} "
              f"[{tb.state_dir}]", file=out)
        return 3
    print(f"url: {info.base_url}", file=out)
    _describe(info, out)
    print(f"started: {info.started_utc}", file=out)
    return 0
