"""``perfkit export DIR --to runs.parquet|runs.csv``: the tidy runs frame, for other tools."""

from __future__ import annotations

import argparse
import os
from typing import TextIO

from perfkit._fsutil import replacing
from perfkit.commands import _checks as checks
from perfkit.commands._common import load_paths, no_runs
from perfkit.errors import ERROR_STATUS, UsageError

HELP = """\
Write every run under PATH as one tidy table (one row per run; per endpoint for Locust, with
the Aggregated row marked), the columns of `perfkit parse --format csv`: units in every name
(latency_p99_ms, throughput_rps), missing values empty (never 0), warnings kept.

The format follows the file name:
  .parquet  Apache Parquet (DuckDB, Polars, pandas, Spark read it); warnings as a list column
  .csv      CSV; warnings joined with " | "; a name that begins with = + - @, a tab or a
            CR begins with ' so a spreadsheet reads it as text (Parquet keeps it as it is)

The file is written atomically (a temporary file renamed into place). A malformed input file
is reported as PATH:LINE: expected ...; the other runs are still written and the exit status
is 2, as for every error (no runs at all: nothing is written). Loading uses the run store of
each directory (.perfkit/cache, see perfkit.load).

examples:
  perfkit export data/demo-wrk2-sweep --to runs.parquet
  perfkit export runs/ --to runs.csv
  duckdb -c "select tool, avg(latency_p99_ms) from 'runs.parquet' group by tool"
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("export", help="write the tidy runs frame to Parquet or CSV",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="a run directory, an experiment directory or a tool's output file")
    p.add_argument("--to", required=True, metavar="FILE",
                   help="the output file: *.parquet or *.csv")
    p.set_defaults(func=run)


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    kind = os.path.splitext(args.to)[1].lower()
    if kind not in (".parquet", ".csv"):
        raise UsageError(f"--to: expected a file name ending in .parquet or .csv, "
                         f"found {args.to!r}")
    checks.output_file(args.to, "--to")
    from perfkit.frames import runs_frame
    from perfkit.safetext import csv_frame, csv_lines

    result = load_paths(args.paths, err)
    if not result.runs:
        if result.errors:  # each has its line above
            return ERROR_STATUS
        raise no_runs(args.paths)
    frame = runs_frame(result.runs)
    if kind == ".csv":
        frame["warnings"] = [" | ".join(w) for w in frame["warnings"]]
    with replacing(args.to, suffix=kind) as tmp:
        if kind == ".parquet":
            frame.to_parquet(tmp, index=False)
        else:  # text a spreadsheet would run as a formula begins with ', as parse's CSV
            text = csv_frame(frame).to_csv(index=False, lineterminator="\r\n")
            with open(tmp, "w", encoding="utf-8", newline="") as fh:
                fh.write(csv_lines(text))
    unread = (f"; {len(result.errors)} file(s) could not be read (named on stderr, exit "
              "status 2)" if result.errors else "")
    print(f"{len(frame)} runs, {len(frame.columns)} columns -> {args.to}{unread}", file=out)
    return ERROR_STATUS if result.errors else 0
