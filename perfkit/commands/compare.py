"""``perfkit compare BASE NEW``: run-vs-run comparison, one benchstat-like row per group.

Formatting only: the comparison, its rows and verdicts come from
:func:`perfkit.analysis.compare_runs`.
"""

from __future__ import annotations

import argparse
from typing import TextIO

from perfkit.commands import _checks as checks
from perfkit.commands._common import (
    Loader,
    add_alpha_argument,
    add_by_argument,
    add_confidence_argument,
    add_exclude_failed_argument,
    add_format_argument,
    add_metric_argument,
    add_skip_unreadable_argument,
    check_levels,
    emit,
    note_nothing_excluded,
    remember_in_store,
)

HELP = """\
Compare two sets of runs metric-wise, as benchstat does: the run is the unit. Each row holds
the median of the runs with an order-statistic CI on both sides, the change new/base with its
CI (Hodges-Lehmann on logs), and the Mann-Whitney U p-value, Holm-adjusted across rows. `~`
means no significant change; `not testable` that these run counts could not reach alpha
after the adjustment (a footnote says how many runs would); a footnote says why for each.

BASE and NEW are selections: PATH, or PATH::column=value[,column=value...] to keep the runs
whose column (a factor from the manifest, or a runs-frame column such as connections) has
that value; `value1|value2` accepts either. Rows are grouped by whatever else varies (load
levels such as connections or target_rate_rps, other factors); a column whose values differ
between BASE and NEW (each arm on its own port, say) is part of the arms, not a row. --by
names the row columns instead (`--by endpoint` compares Locust endpoints one by one), and
--by none pools every run into one row.

Failed runs (non-zero exit, every response failed, no value) rank worse than every finished
run, as do wrk2 runs that did not sustain their offered rate on latency metrics. A wrk2 run
that fell only slightly short of its target with an unchanged latency (or whose generator was
busy) is in doubt: it keeps its value, is footnoted, and the row is repeated without it
(*_without_short columns in csv/json). --exclude-failed REASON drops failed runs instead.

examples:
  perfkit compare data/sweep::profile=default data/sweep::profile=tuned
  perfkit compare data/sweep::profile=default data/sweep::profile=tuned --metric throughput_rps
  perfkit compare runs/before runs/after --metric latency_p99_9_ms --alpha 0.01
  perfkit compare data/demo-aa::arm=A data/demo-aa::arm=B --format csv > aa.csv
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("compare", help="compare two sets of runs (benchstat-like)",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("base", metavar="BASE", help="PATH or PATH::column=value,... (the baseline)")
    p.add_argument("new", metavar="NEW", help="PATH or PATH::column=value,... (the candidate)")
    add_metric_argument(p, "per-run column to compare")
    add_alpha_argument(p)
    add_confidence_argument(p)
    add_exclude_failed_argument(p)
    add_by_argument(p)
    add_format_argument(p)
    add_skip_unreadable_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    check_levels(args)  # every option before the analysis is imported
    checks.reason(args.exclude_failed, "--exclude-failed")
    from perfkit.analysis import compare_runs, metric
    from perfkit.analysis.core import per_endpoint
    from perfkit.present import compare as present_compare

    loader = Loader(err, args.skip_unreadable, "nothing compared")
    by_endpoint = per_endpoint(args.by)
    base, base_sel = loader.select(args.base, by_endpoint)
    new, new_sel = loader.select(args.new, by_endpoint)
    remember_in_store(args.base)
    m = metric(args.metric, [*base.frame.columns, *new.frame.columns])
    table = compare_runs(base, new, m, by=args.by, exclude=[*base_sel.pinned, *new_sel.pinned],
                         alpha=args.alpha, confidence=args.confidence,
                         exclude_failed=args.exclude_failed)
    emit(args.format, out, table.to_frame, loader.with_left_out(table.to_dict),
         lambda: [present_compare.comparison(table, [*base.runs, *new.runs])])
    loader.note_left_out(args.format, out)
    note_nothing_excluded([table], args.exclude_failed, err)
    return loader.status
