"""``perfkit gate BASE NEW``: the regression gate for CI, with an exit status CI can act on.

Formatting only: the gate of each row comes from :func:`perfkit.analysis.compare._gate.gate_runs`,
which builds on :func:`perfkit.analysis.compare_runs`.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from perfkit._fsutil import write_bytes_atomic
from perfkit.commands import _checks as checks
from perfkit.commands._common import (
    BY_ROWS_HELP,
    Loader,
    add_alpha_argument,
    add_by_argument,
    add_confidence_argument,
    add_exclude_failed_argument,
    add_skip_unreadable_argument,
    check_alpha,
    check_confidence,
    note_nothing_excluded,
    remember_in_store,
    write_frame,
    write_json,
    write_tables,
)

if TYPE_CHECKING:
    from perfkit.analysis import Experiment
    from perfkit.analysis.compare import GateResult

FORMATS = ("table", "markdown", "json", "junit", "csv")

HELP = """\
Gate NEW against BASE for CI: is NEW worse than BASE by more than --max-regression?

Each metric is compared as `perfkit compare` compares it (runs as the unit, Mann-Whitney U,
the change new/base as a Hodges-Lehmann ratio with its 1-alpha CI, Holm over the load levels
of each metric). A row is a REGRESSION when the change is significantly worse AND its whole CI
lies beyond the threshold (+5% for latencies, -5% for throughput at --max-regression 5%); it
passes when the whole CI lies within the threshold (a significant change inside it is
"significant, below threshold"); it is INCONCLUSIVE when the runs can never reach alpha or the
CI straddles the threshold, and then says how many runs per arm would resolve the threshold at
the observed run-to-run spread (80% power).

exit status: 0 no regression; 1 a regression; 3 inconclusive (and no regression), so CI may
fail on 3 too; 2 an error, never a result (a usage error, a selection without runs, unreadable
files, a load level with no run on one side, an output file that cannot be written), with one
line 'perfkit: error: ...' on stderr. 2 wins over 1, 1 over 3.

BASE and NEW are selections as in compare: PATH or PATH::column=value,... A history (a
`perfkit history` store, or a folder of jobs with labels.csv) is a selection too, with the
columns label, label_index and labels_ago (0 = the newest label):
  perfkit gate '.perfkit/history::labels_ago=0|1|2' runs/new      (the last three labels)

--format: table (default), markdown (for $GITHUB_STEP_SUMMARY), json, junit (JUnit XML: one
test case per metric and load level; a regression is a failure, inconclusive is skipped, no
data is an error), csv. --junit PATH writes the JUnit XML to PATH as well. The run-order check
of compare (arms not interleaved in time, and the drift over the run order) is printed as a
note.

examples:
  perfkit gate baseline/ candidate/ --metric latency_p99_ms --metric throughput_rps
  perfkit gate data/demo-history::label=v07 data/demo-history::label=v08 --max-regression 5%
  perfkit gate base/ new/ --format markdown --junit gate.xml >> "$GITHUB_STEP_SUMMARY"
"""


class HistoryLoader(Loader):
    """A :class:`Loader` that also reads histories (a store, or jobs with labels.csv)."""

    def experiment(self, path: str) -> Experiment:
        from perfkit.analysis.history import is_history, load_history

        if path not in self.experiments and is_history(path):
            exp = load_history(path)
            self.judge(path, exp.errors)
            for note in exp.design["history"].get("warnings", []):
                print(f"perfkit: warning: {note}", file=self.err)
            self.experiments[path] = exp
        return super().experiment(path)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("gate", help="regression gate for CI (exit 0/1/3, 2 on errors)",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("base", metavar="BASE", help="PATH or PATH::column=value,... (the baseline)")
    p.add_argument("new", metavar="NEW", help="PATH or PATH::column=value,... (the candidate)")
    p.add_argument("--metric", action="append", metavar="M",
                   help="per-run column to gate on; repeat for several (default "
                        "latency_p99_ms)")
    p.add_argument("--max-regression", default="5%", metavar="PCT",
                   help="the practical threshold, e.g. 5%% (default 5%%)")
    add_alpha_argument(p)
    add_confidence_argument(p)
    add_exclude_failed_argument(p)
    add_by_argument(p, BY_ROWS_HELP)
    p.add_argument("--format", choices=FORMATS, default="table", help="output format")
    p.add_argument("--junit", metavar="PATH", help="also write the JUnit XML to PATH")
    add_skip_unreadable_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    check_alpha(args.alpha)  # every option before the analysis is imported
    check_confidence(args.confidence)
    threshold = checks.percent(args.max_regression)
    checks.reason(args.exclude_failed, "--exclude-failed")
    if args.junit:
        checks.output_file(args.junit, "--junit")
    from perfkit.analysis import metric
    from perfkit.analysis.compare import ERROR, gate_runs
    from perfkit.analysis.core import per_endpoint
    from perfkit.formatting import plain
    from perfkit.present import gate as present_gate

    loader = HistoryLoader(err, args.skip_unreadable, "nothing gated")
    by_endpoint = per_endpoint(args.by)
    base, base_sel = loader.select(args.base, by_endpoint)
    new, new_sel = loader.select(args.new, by_endpoint)
    columns = [*base.frame.columns, *new.frame.columns]
    remember_in_store(args.base)
    metrics = [metric(m, columns) for m in dict.fromkeys(args.metric or ["latency_p99_ms"])]
    result = gate_runs(base, new, metrics, threshold, alpha=args.alpha, by=args.by,
                       exclude=[*base_sel.pinned, *new_sel.pinned],
                       confidence=args.confidence, exclude_failed=args.exclude_failed)
    write(result, args.format, out, loader.left_out)
    loader.note_left_out(args.format, out)
    note_nothing_excluded(result.tables, args.exclude_failed, err)
    if args.junit:
        write_bytes_atomic(args.junit, present_gate.junit(result, loader.left_out).encode())
    errors = [r for r in result.rows if r.status == ERROR]
    if errors:  # exit 2 is an error: it says why on stderr, as every error does
        where = ", ".join(f"{k}={plain(v)}" for k, v in zip(errors[0].keys, errors[0].row.key,
                                                             strict=False))
        print(f"perfkit: error: the gate could not judge {len(errors)} of {len(result.rows)} "
              f"rows ({errors[0].metric.name}{' at ' + where if where else ''}: "
              f"{errors[0].reason}); the table above shows each", file=err)
    return result.exit_status


def write(result: GateResult, fmt: str, out: TextIO, left_out: Sequence[str] = ()) -> None:
    """The gate in ``fmt``; ``left_out``: the unreadable runs --skip-unreadable left out
    (named in JSON and JUnit; the command names them below a table)."""
    from perfkit.present import gate as present_gate

    if fmt == "json":
        write_json({**result.to_dict(), **({"left_out": list(left_out)} if left_out else {})},
                   out)
    elif fmt == "csv":
        write_frame(result.to_frame(), out)
    elif fmt == "junit":
        out.write(present_gate.junit(result, left_out))
    else:
        write_tables([present_gate.gate(result)], fmt, out)
        if fmt == "markdown":
            out.write(f"\n{result.describe()}\n")
