"""``perfkit effects EXPERIMENT --factors a,b``: the 2^k r factorial table of a tuning sweep.

Formatting only: the analysis is :func:`perfkit.analysis.effects._effects.factorial_effects` (and
:func:`~perfkit.analysis.effects._ab.ab_comparisons` with ``--ab``).
"""

from __future__ import annotations

import argparse
import difflib
from typing import TextIO

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
    remember_in_store,
)
from perfkit.errors import UsageError

HELP = """\
Effects of two-level factors on a per-run metric, as in Jain's 2^k r design: each effect with
its t-based CI and p-value, the share of the variation it explains, and the unexplained
(error) share. By default the metric is analysed on the log scale, so an effect is a ratio:
the geometric mean at the factor's high level over the one at its low level (--linear gives
Jain's additive q instead). When an interaction is significant, the main effects of its
factors are not interpretable alone: the simple effects (each factor at each level of the
other) are printed below the table.

Low and high: numbers, smaller is low; False is low; labels such as off/no/default/disabled
are low; otherwise natural sort order (backlog8 < backlog4096). --levels states it explicitly.
The mapping is printed. Load levels and other factors that vary (connections 16/64/256, the
offered rate, ...) are analysed per level, with Holm's correction across levels. Randomized
complete blocks recorded in the manifests enter as a nuisance term (--block auto) when every
block holds the whole design.

--ab prints instead each factor's high level against its low level (the other factors at
their low level) at each load level, run against run (as `perfkit compare`).

EXPERIMENT is a path, or PATH::column=value,... as in `perfkit compare`.

examples:
  perfkit effects data/demo-wrk-factorial --factors keepalive,cache --metric latency_p99_ms
  perfkit effects data/tuning --factors backlog,keepalive,cache --metric throughput_rps
  perfkit effects data/demo-wrk-factorial --factors keepalive,cache --ab --format csv
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("effects", help="factorial effects of a tuning sweep (Jain's 2^k r)",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("experiment", metavar="EXPERIMENT", help="PATH or PATH::column=value,...")
    p.add_argument("--factors", required=True, help="comma-separated two-level factor columns")
    add_metric_argument(p, "per-run response column")
    p.add_argument("--block", default="auto",
                   help="blocking column (a nuisance term); 'auto' (default): the recorded "
                        "block when every block holds the whole design; 'none': no blocks")
    p.add_argument("--linear", action="store_true",
                   help="additive effects on the raw metric instead of ratios on the log scale")
    add_confidence_argument(p, "CI level")
    add_alpha_argument(p, "level at which an interaction calls for simple effects")
    p.add_argument("--levels", default="",
                   help="explicit coding, e.g. 'cache=off:on,backlog=8:4096' (low:high)")
    p.add_argument("--ab", action="store_true",
                   help="A/B comparisons (high vs low per factor) instead of the factorial")
    p.add_argument("--table", choices=("effects", "simple"), default="effects",
                   help="which table --format csv prints: the effects (default) or the simple "
                        "effects of significant interactions (each factor at each level of "
                        "the other)")
    add_by_argument(p)
    add_format_argument(p)
    add_skip_unreadable_argument(p)
    p.set_defaults(func=run)


def check_ab_options(args: argparse.Namespace) -> None:
    """--ab prints comparisons: the factorial's own options do not apply to it."""
    if not args.ab:
        return
    for option, given, default in (("--table", args.table, "effects"),
                                   ("--block", args.block, "auto"),
                                   ("--levels", args.levels, ""),
                                   ("--linear", args.linear, False)):
        if given != default:
            raise UsageError(f"{option} is an option of the factorial table; --ab prints the "
                             "A/B comparisons instead (leave out one of the two)")


def check_factors(factors: list[str], rows) -> None:
    """Each factor a column of the runs; an unknown one names the design's factors."""
    for name in factors:
        if name not in rows.frame:
            known = list(rows.factors)
            close = difflib.get_close_matches(name, [*known, *map(str, rows.frame.columns)], 1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise UsageError(f"--factors: no column {name!r}{hint}; the factors of these runs: "
                             f"{', '.join(known) or 'none recorded'} (or any runs-frame "
                             "column with two values)")


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    check_levels(args)  # every option before the analysis is imported
    check_ab_options(args)
    check_table_option(args, "effects")
    factors = [f.strip() for f in args.factors.split(",") if f.strip()]
    if not factors:
        raise UsageError("--factors: name at least one factor")
    from perfkit.analysis import metric
    from perfkit.analysis.core import per_endpoint
    from perfkit.analysis.effects import ab_comparisons, factorial_effects, parse_levels
    from perfkit.present import compare as present_compare
    from perfkit.present import effects as present_effects

    loader = Loader(err, args.skip_unreadable, "no effects computed")
    rows, selection = loader.select(args.experiment, per_endpoint(args.by))
    check_factors(factors, rows)
    remember_in_store(args.experiment)
    m = metric(args.metric, rows.frame.columns)
    if args.ab:
        table = ab_comparisons(rows, factors, m, by=args.by, exclude=selection.pinned,
                               alpha=args.alpha, confidence=args.confidence)
        emit(args.format, out, table.to_frame, loader.with_left_out(table.to_dict),
             lambda: [present_compare.comparison(table, list(rows.runs))])
        loader.note_left_out(args.format, out)
        return loader.status
    block = None if args.block.lower() == "none" else args.block
    result = factorial_effects(rows, factors, m, by=args.by, exclude=selection.pinned,
                               block=block, levels=parse_levels(args.levels, rows.frame),
                               log=not args.linear, confidence=args.confidence,
                               alpha=args.alpha)
    emit(args.format, out,
         result.simple_frame if args.table == "simple" else result.to_frame,
         loader.with_left_out(result.to_dict), lambda: present_effects.factorial(result))
    loader.note_left_out(args.format, out)
    return loader.status
