"""``perfkit history add|show``: record CI jobs in a history store, show a metric's series with
its change points.

Formatting only: the store is :mod:`perfkit.store.history`, the series and change
points come from :func:`perfkit.analysis.history._history.analyse`, the gates from
:func:`perfkit.analysis.history._history.gates`.
"""

from __future__ import annotations

import argparse
from typing import TextIO, cast

from perfkit.commands import _checks as checks
from perfkit.commands._common import (
    Loader,
    add_alpha_argument,
    add_by_argument,
    add_confidence_argument,
    add_metric_argument,
    add_skip_unreadable_argument,
    check_levels,
    emit,
)
from perfkit.errors import ERROR_STATUS, DataError, UsageError
from perfkit.paths import HISTORY_STORE

HELP = """\
A performance history: the runs of every CI job, one label (commit or version) per job.

  perfkit history add DIR[::column=value] --label COMMIT_OR_VERSION [--time T] [--store PATH]
  perfkit history show [--metric M] [--store PATH] [--max-regression 5%]

The store is a folder (default .perfkit/history/ under the current directory): HISTORY.json
and labels/NNNNNN-LABEL.parquet, one Parquet file per label with one row per run (the tidy
per-run columns, label, time_utc, and every field of the run). It only grows: a label added
twice is refused unless --replace, and every file is written atomically.

show prints, per load level, every label's runs and median with its interval, and the change
points (E-divisive means with permutation tests that shuffle whole labels: the method of
MongoDB's CI and Hunter): position, label, the ratio after/before with its CI, and p-values.
With --max-regression it also gates each label against the labels before it in its segment.
--store also takes a folder of jobs with labels.csv (label,time_utc,job_dir), and a selection:
--store .perfkit/history::connections=64. The gates of show are shown, not acted on: its exit
status is 0, or 2 on an error; `perfkit gate` is the gate a CI job acts on (0/1/3).

examples:
  perfkit history add runs/ --label "$GITHUB_SHA" --time "$(git show -s --format=%cI)"
  perfkit history show --metric latency_p99_ms
  perfkit history show --store data/demo-history --metric throughput_rps --max-regression 5%
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("history", help="record CI jobs in a history; series and change points",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    a = actions.add_parser("add", help="add the runs of a CI job under a label",
                           description="Add the runs under DIR (or the runs a selection "
                                       "DIR::column=value,... keeps) to the history as LABEL.")
    a.add_argument("dir", metavar="DIR", help="the runs of one CI job (a sweep's folder), or "
                                              "DIR::column=value,... to keep some of them")
    a.add_argument("--label", required=True, help="commit or version of the job")
    a.add_argument("--time", metavar="T",
                   help="the label's time, ISO 8601 (default: the first run's start)")
    a.add_argument("--store", default=str(HISTORY_STORE), metavar="PATH",
                   help=f"the history folder (default {HISTORY_STORE})")
    a.add_argument("--replace", action="store_true",
                   help="replace the runs of a label already stored")
    add_skip_unreadable_argument(a)
    a.set_defaults(func=run_add)
    s = actions.add_parser("show", help="a metric's series and change points",
                           description="Show the series of a metric and its change points.")
    add_metric_argument(s)
    s.add_argument("--store", default=str(HISTORY_STORE), metavar="PATH",
                   help="a history store (default .perfkit/history) or a folder of jobs with "
                        "labels.csv; PATH::column=value,... keeps those runs")
    add_by_argument(s, "columns that split the series (default: load columns that vary)")
    add_alpha_argument(s, "level of the change-point tests")
    add_confidence_argument(s, "coverage of the medians' and ratios' intervals")
    s.add_argument("--permutations", type=int, default=199,
                   help="permutations per change-point test (default 199)")
    s.add_argument("--seed", type=int, default=0, help="seed of the permutations (default 0)")
    s.add_argument("--max-regression", metavar="PCT",
                   help="also gate each label against the labels before it, e.g. 5%%")
    s.add_argument("--format", choices=("table", "markdown", "json", "csv"), default="table",
                   help="output format (csv: the series, one row per label)")
    s.set_defaults(func=run_show)


def run_add(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    checks.iso_time(args.time)  # every option before the analysis is imported
    if not args.label.strip():
        raise UsageError("--label: expected a commit or version, found an empty label")
    from perfkit.analysis import Selection, load_experiment
    from perfkit.analysis.core import select_mask
    from perfkit.store import history as store

    when = store.utc_text(args.time) if args.time else None
    selection = Selection.parse(args.dir)
    exp = load_experiment(selection.path)
    loader = Loader(err, args.skip_unreadable, "nothing added, as a history point from part "
                                               "of a job would mislead")
    loader.judge(selection.path, exp.errors)  # refused, or each named as left out
    mask = select_mask(exp.frame, selection.where)
    runs = [r for r, keep in zip(exp.runs, mask, strict=True) if keep]
    if not runs:
        raise DataError(f"selection {args.dir!r} matches no run")
    written = store.add_label(args.store, runs, args.label, when, job=str(args.dir),
                              replace=args.replace, design=exp.design,
                              left_out=loader.left_out)
    files, _ = store.label_files(args.store)
    left = (f"; {len(loader.left_out)} unreadable file(s) left out, named in the label"
            if loader.left_out else "")
    print(f"added {args.label!r}: {written.n_runs} runs at {written.time_utc} -> "
          f"{written.path} ({len(files)} labels in {args.store}{left})", file=out)
    loader.note_left_out("table", out)
    return 0


def run_show(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    check_levels(args)  # every option before the analysis is imported
    if args.permutations < 1:
        raise UsageError(f"--permutations must be >= 1, got {args.permutations}")
    threshold = checks.percent(args.max_regression) if args.max_regression else None
    from perfkit.analysis import Selection, metric
    from perfkit.analysis import history as hist
    from perfkit.present import history as present_history

    selection = Selection.parse(args.store)
    history = hist.load_history(selection.path)
    for error in history.errors:
        print(f"perfkit: error: {error}", file=err)
    for note in history.design["history"].get("warnings", []):  # e.g. files a label left out
        print(f"perfkit: warning: {note}", file=err)
    where = selection.where
    for key in where:
        if key not in history.frame:
            raise UsageError(f"--store {args.store!r}: no column {key!r}")
    m = metric(args.metric, history.frame.columns)
    analysis = hist.analyse(history, m, by=args.by, where=where, alpha=args.alpha,
                            confidence=args.confidence, permutations=args.permutations,
                            seed=args.seed)
    gates = []
    if threshold is not None:
        gates = hist.gates(history, analysis, threshold, where=where, seed=args.seed)

    def data() -> dict:
        found = analysis.to_dict()
        if gates:
            found["gates"] = hist.gates_frame(gates, analysis.keys).to_dict(orient="records")
        return found

    def tables() -> list:
        found = present_history.series(analysis)
        if gates:
            found.append(present_history.history_gates(  # gates: a threshold was given
                gates, analysis.keys, cast(float, threshold), analysis.load))
        return found

    emit(args.format, out, analysis.to_frame, data, tables)
    return ERROR_STATUS if history.errors else 0
