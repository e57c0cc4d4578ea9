"""``perfkit plan``: runs per arm needed to detect a stated change, from existing runs' spread.

Formatting only: the answers come from :func:`perfkit.analysis.compare._plan.plan_runs` (the power
engine of :mod:`perfkit.stats.power`).
"""

from __future__ import annotations

import argparse
from typing import TextIO

from perfkit.commands import _checks as checks
from perfkit.commands._common import (
    BY_ROWS_HELP,
    add_alpha_argument,
    add_by_argument,
    add_metric_argument,
    add_skip_unreadable_argument,
    check_alpha,
    write_frame,
    write_json,
    write_tables,
)
from perfkit.commands.gate import HistoryLoader
from perfkit.errors import UsageError

HELP = """\
How many runs per arm does a comparison need to detect a change of --detect (e.g. 3%)?

From the run-to-run spread of existing runs (--from: a pilot, or last night's CI job; give
--from twice for the two arms of an earlier comparison), per load level as compare splits
rows: the fewest equal runs per arm that detect the change in the metric's bad direction
(+3% for latencies, -3% for throughput) with --power (default 80%) at --alpha, Holm-adjusted
over the rows as compare and gate adjust them (--family overrides the family size); and for
the current design (the runs per arm you have), the power at that change and the smallest
changes it detects. The power is simulated from the observed spread with its uncertainty
(perfkit.stats.power: a predictive power, calibrated within a few points of the achieved
power); Noether's normal-theory formula is in the csv/json output as a check.

--from takes the selections of compare: PATH or PATH::column=value,..., and histories
(a store or a folder of jobs with labels.csv): '.perfkit/history::labels_ago=0'.

examples:
  perfkit plan --metric latency_p99_ms --detect 3% --from runs/nightly
  perfkit plan --metric throughput_rps --detect 5% --from data/sweep::profile=default
  perfkit plan --metric latency_p99_ms --detect 5% --from base/ --from new/ --power 0.9
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("plan", help="runs per arm needed to detect a change (power)",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_metric_argument(p)
    p.add_argument("--detect", required=True, metavar="PCT",
                   help="the change to detect, e.g. 3%%")
    p.add_argument("--from", dest="sources", action="append", required=True, metavar="SEL",
                   help="runs whose spread to use: PATH or PATH::column=value (once or twice)")
    add_alpha_argument(p)
    p.add_argument("--power", type=float, default=0.8, help="target power (default 0.8)")
    add_by_argument(p, BY_ROWS_HELP)
    p.add_argument("--family", type=int, metavar="N",
                   help="Holm family size (default: the number of rows)")
    p.add_argument("--seed", type=int, default=0, help="seed of the simulation (default 0)")
    p.add_argument("--format", choices=("table", "markdown", "latex", "json", "csv"),
                   default="table", help="output format")
    add_skip_unreadable_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    check_alpha(args.alpha)  # every option before the analysis is imported
    check_alpha(args.power, "--power")
    detect = checks.percent(args.detect, "--detect")
    if len(args.sources) > 2:
        raise UsageError(f"--from: expected one or two selections, found {len(args.sources)}")
    if args.family is not None and args.family < 1:
        raise UsageError(f"--family must be >= 1, got {args.family}")
    from perfkit.analysis import metric
    from perfkit.analysis.compare import plan_runs
    from perfkit.analysis.core import per_endpoint
    from perfkit.present import plan as present_plan

    loader = HistoryLoader(err, args.skip_unreadable, "no plan made")
    by_endpoint = per_endpoint(args.by)
    picked = [loader.select(s, by_endpoint) for s in args.sources]
    sides = [rows for rows, _ in picked]
    columns = [c for rows in sides for c in rows.frame.columns]
    m = metric(args.metric, columns)
    plan = plan_runs(sides, m, detect, alpha=args.alpha, power=args.power, by=args.by,
                     exclude=[k for _, sel in picked for k in sel.pinned],
                     family=args.family, seed=args.seed)
    if args.format == "csv":
        write_frame(plan.to_frame(), out)
    elif args.format == "json":
        write_json(loader.with_left_out(plan.to_dict)(), out)
    else:
        write_tables([present_plan.plan(plan)], args.format, out)
        loader.note_left_out(args.format, out)
    return loader.status
