"""``perfkit show``: a readable summary of each run, with its warnings."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, TextIO

from perfkit.commands._common import load_paths, no_runs, unread_count
from perfkit.errors import ERROR_STATUS

if TYPE_CHECKING:
    from perfkit.model import Run

HELP = """\
Print a readable summary of each run found under the paths: what was run, the load achieved,
the latency percentiles the tool printed (and the uncorrected ones for wrk2 -U), errors, and
every warning a reader must know before trusting the numbers (error ratio, closed-loop
latency, Locust's rounding, wrk2 saturation, a histogram covering part of the run), and
whether fewer connections got in than the generator asked for (partial: the server's counts
say so). Control
characters in names (ESC, BEL, tabs, line breaks) are printed as escapes (\x1b), never obeyed.

examples:
  perfkit show run.stdout
  perfkit show data/demo-wrk-factorial/runs/0007-keepalive-c64-r2
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("show", help="readable summary of runs, with warnings",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="a tool's output file, a run directory or an experiment directory")
    p.set_defaults(func=run)


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    result = load_paths(args.paths, err)
    if not result.runs and not result.errors:
        raise no_runs(args.paths)
    for i, r in enumerate(result.runs):
        if i:
            out.write("\n")
        out.write(summary(r))
    if result.errors and result.runs:  # each named on stderr; counted below the others
        out.write("\n" + unread_count(len(result.runs), len(result.errors)) + "\n")
    return ERROR_STATUS if result.errors else 0


def _pcts(values: dict[float, float]) -> str:
    from perfkit.formatting import fmt_num
    from perfkit.model import percentile_label

    return "  ".join(f"p{percentile_label(q).replace('_', '.')} {fmt_num(v)}"
                     for q, v in sorted(values.items()))


def _counted(r: Run) -> str:
    """What nginx and the kernel counted (- where not recorded), with the kernel's scope."""
    from perfkit.counters import columns
    from perfkit.formatting import fmt_num

    section = r.manifest.get("counters") or {}
    scope = ((section.get("sources") or {}).get("kernel") or {}).get("scope")
    parts = [f"{name} {fmt_num(value)}"
             for name, value in columns(r.counters, r.connections).items()]
    return ", ".join(parts) + (f" (kernel counters: {scope})" if scope else "")


def summary(r: Run) -> str:
    """The multi-line text ``perfkit show`` prints for one run."""
    from perfkit.formatting import fmt_num, is_missing
    from perfkit.model import LATENCY_SOURCES
    from perfkit.safetext import terminal

    lines = [r.source + (f"  [{r.endpoint}]" if r.endpoint else "")]
    ident = [r.tool + (f" ({r.tool_version})" if r.tool_version else "")]
    if r.url:
        ident.append(r.url)
    load = []
    if r.threads is not None:
        load.append(f"{r.threads} threads")
    if r.connections is not None:
        load.append(f"{r.connections} connections")
    if r.users is not None:
        load.append(f"{r.users} users")
    if load:
        ident.append(", ".join(load))
    if r.target_rate_rps is not None:
        ident.append(f"target {fmt_num(r.target_rate_rps)} req/s")
    lines.append("  " + " | ".join(ident))
    if r.factors:
        lines.append("  factors: " + ", ".join(f"{k}={v}" for k, v in r.factors.items()))
    achieved = [f"duration {fmt_num(r.duration_s)} s", f"{fmt_num(r.requests)} requests",
                f"{fmt_num(r.throughput_rps)} req/s"]
    if (rate := r.transfer_bytes_per_s) is not None and not is_missing(rate):
        achieved.append(f"{fmt_num(rate / 1024 ** 2)} MiB/s")
    lines.append("  " + " | ".join(achieved))
    hist = ("no histogram" if r.histogram is None
            else f"histogram of {r.histogram_count} requests")
    lines.append(f"  latency [ms] ({r.latency_source}: {LATENCY_SOURCES[r.latency_source]}; "
                 f"{hist})")
    lines.append(f"    mean {fmt_num(r.latency_mean_ms)}  stdev {fmt_num(r.latency_stdev_ms)}  "
                 f"max {fmt_num(r.latency_max_ms)}")
    if r.percentiles_ms:
        lines.append("    " + _pcts(dict(r.percentiles_ms)))
    if r.uncorrected_percentiles_ms:
        lines.append("    uncorrected: " + _pcts(dict(r.uncorrected_percentiles_ms)))
    errs = []
    for name in ("connect", "read", "write", "timeout"):
        v = getattr(r, f"errors_{name}")
        if v is not None:
            errs.append(f"{name} {v}")
    if r.non_2xx_3xx is not None:
        errs.append(f"non-2xx/3xx {r.non_2xx_3xx}")
    if r.failures is not None:
        errs.append(f"failures {r.failures}")
    ratio = r.error_ratio
    if errs or ratio is not None:
        share = "" if ratio is None else f" ({ratio:.2%} of requests)"
        lines.append("  errors: " + (", ".join(errs) or "-") + share)
    if r.counters_recorded:
        lines.append("  counted over the run: " + _counted(r))
    from perfkit.analysis.core import survivorship

    if partial := survivorship(r):  # the run status partial, said where the counts are
        lines.append(f"  partial: {partial}")
    warnings = r.warnings
    if warnings:
        lines.append("  warnings:")
        lines.extend(f"    {i}. {w}" for i, w in enumerate(warnings, 1))
    # a name (a Locust request, a factor level, a path) is shown, never obeyed by the terminal
    return "\n".join(terminal(line) for line in lines) + "\n"
