"""``perfkit scaling``: USL fit and Little's-law check over concurrency, or the SLO bracket over
offered rates, one terse table per configuration with numbered warning footnotes.

Formatting only: the analysis is :func:`perfkit.analysis.scaling._scaling.scaling_fits` and
:func:`~perfkit.analysis.scaling._scaling.slo_brackets`.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, TextIO

from perfkit.commands import _checks as checks
from perfkit.commands._common import (
    Loader,
    add_alpha_argument,
    add_by_argument,
    add_confidence_argument,
    add_format_argument,
    add_metric_argument,
    add_skip_unreadable_argument,
    check_levels,
    check_table_option,
    emit,
)
from perfkit.errors import UsageError

if TYPE_CHECKING:
    from perfkit.analysis.scaling import ScalingTable, SloTable

HELP = """\
Over concurrency (--x connections for wrk, --x users for Locust): fit the Universal
Scalability Law to every run (not to means), with bootstrap CIs, when there are four or more
concurrency levels (Amdahl's law with three); claim a peak N* only when an F-test rejects
Amdahl's law; check Little's law N = X (R + Z) per concurrency level.

Over offered rates (--x target_rate_rps, wrk2 -R): judge each rate against --slo-ms on the
across-runs CI of the percentile, and print the bracket [last pass, first fail]. Runs at
different connection counts are different configurations, so connections is always a group.

Configurations: --by auto (default) groups by every design factor that varies; --by none
pools all runs; or name the columns. --format csv prints the models table (or with --table
littles the Little's-law table; over rates: brackets, or --table verdicts), exactly as the
report writes it; json carries both.

examples:
  perfkit scaling data/demo-wrk-connections --x connections
  perfkit scaling data/demo-wrk2-sweep --x target_rate_rps --slo-ms 5 --percentile 99
  perfkit scaling data/demo-wrk2-sweep --x target_rate_rps --slo-ms 5 --format csv --table verdicts
"""

TABLES = {"concurrency": ("models", "littles"), "rates": ("brackets", "verdicts")}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("scaling", help="USL fit over concurrency, or SLO bracket over rates",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("paths", metavar="EXPERIMENT",
                   help="experiment or run directory (or PATH::column=value,...)")
    p.add_argument("--x", required=True, choices=("connections", "users", "target_rate_rps"),
                   help="the load axis: a concurrency, or the offered rate (wrk2 -R)")
    add_metric_argument(p, "throughput column for the USL fit", "throughput_rps")
    p.add_argument("--slo-ms", type=float, help="latency objective in ms (needed for rates)")
    p.add_argument("--percentile", type=float, default=99.0,
                   help="percentile judged against the SLO, 0-100 (default 99)")
    p.add_argument("--think-time-ms", type=float,
                   help="Locust: configured mean wait between tasks, to check Little's law")
    add_by_argument(p, "columns that make a configuration (default auto: the factors that vary)")
    add_confidence_argument(p, "CI level")
    add_alpha_argument(p, "level of the F-test USL vs Amdahl that gates N*")
    p.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument("--table", choices=("models", "littles", "brackets", "verdicts"),
                   help="which table --format csv prints (default models / brackets)")
    add_format_argument(p)
    add_skip_unreadable_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    check_levels(args)  # every option before the analysis is imported
    if args.resamples < 1:
        raise UsageError(f"--resamples must be >= 1, got {args.resamples}")
    checks.positive(args.slo_ms, "--slo-ms")
    checks.non_negative(args.think_time_ms, "--think-time-ms")
    checks.percentile(args.percentile)
    kind = "rates" if args.x == "target_rate_rps" else "concurrency"
    if args.table and args.table not in TABLES[kind]:
        raise UsageError(f"--table {args.table} is for the other axis; over {kind}: "
                         f"{' or '.join(TABLES[kind])}")
    check_table_option(args, None)
    if kind == "rates" and args.slo_ms is None:
        raise UsageError("--x target_rate_rps needs --slo-ms (the latency objective)")
    if kind == "rates" and args.think_time_ms is not None:
        raise UsageError("--think-time-ms is for Little's law over concurrency (--x users); "
                         "over offered rates it does not apply")
    if kind == "concurrency" and args.slo_ms is not None:
        raise UsageError(f"--slo-ms is judged over offered rates (--x target_rate_rps); over "
                         f"--x {args.x} it does not apply")
    from perfkit.analysis import metric
    from perfkit.analysis.scaling import scaling_fits, slo_brackets
    from perfkit.present import scaling as present_scaling

    loader = Loader(err, args.skip_unreadable, "no fit made")
    rows, _ = loader.select(args.paths)
    result: SloTable | ScalingTable
    if kind == "rates":
        brackets = slo_brackets(rows, args.slo_ms, percentile=args.percentile, by=args.by,
                                confidence=args.confidence, seed=args.seed,
                                n_resamples=args.resamples)
        frames = {"brackets": brackets.to_frame, "verdicts": brackets.verdicts_frame}
        result, table = brackets, lambda: present_scaling.slo(brackets)
    else:
        fits = scaling_fits(rows, metric(args.metric, rows.frame.columns), x=args.x,
                            by=args.by, confidence=args.confidence, alpha=args.alpha,
                            n_resamples=args.resamples, seed=args.seed,
                            think_time_ms=args.think_time_ms)
        frames = {"models": fits.to_frame, "littles": fits.littles_frame}
        result, table = fits, lambda: present_scaling.scaling(fits)
    emit(args.format, out, frames[args.table or TABLES[kind][0]],
         loader.with_left_out(result.to_dict), table)
    loader.note_left_out(args.format, out)
    return loader.status


