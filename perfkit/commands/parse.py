"""``perfkit parse``: one record per run (per endpoint for Locust) as a table, CSV or JSON Lines."""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import os
from typing import TYPE_CHECKING, Any, TextIO

from perfkit.commands._common import load_paths, no_runs, unread_count
from perfkit.errors import ERROR_STATUS

if TYPE_CHECKING:
    from perfkit.model import Run

HELP = """\
Read the raw output of wrk, wrk2 or Locust (files, run directories, whole experiments) and print
one record per run; for Locust one per endpoint, plus its Aggregated row (is_aggregate=true).

Formats:
  table  a readable summary of the main columns (default)
  csv    every column, one row per record (contract columns first); a name that begins
         with = + - @, a tab or a CR begins with ' so a spreadsheet reads it as text
  json   JSON Lines: one object per record, NaN written as null; each warning an object
         {"code", "text", "fields"} (csv: the words)

Columns carry their unit (latency_p99_ms, throughput_rps, transfer_bytes_per_s). A number the
tool printed comes out as printed; a "no data" placeholder (wrk's 0.00us when every request
timed out, wrk2's -nan) becomes missing, with a warning.

A malformed file is reported as PATH:LINE: expected ..., found ... (one line per file); the
good files are still printed and the exit status is 2, as for every error.

examples:
  perfkit parse run.stdout
  perfkit parse data/demo-wrk-factorial --format csv > runs.csv
  perfkit parse tests/fixtures/locust/clean_u20 --format json | jq .latency_p99_ms
"""

TABLE_COLUMNS = (
    ("run", "run"), ("tool", "tool"), ("endpoint", "endpoint"), ("conns", "connections"),
    ("users", "users"), ("rate_rps", "target_rate_rps"), ("requests", "requests"),
    ("throughput_rps", "throughput_rps"), ("p50_ms", "latency_p50_ms"),
    ("p99_ms", "latency_p99_ms"), ("p99.9_ms", "latency_p99_9_ms"), ("errors", "error_ratio"),
    ("warn", "warnings"),
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("parse", help="print one record per run (table, csv or json)",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="a tool's output file, a run directory or an experiment directory")
    p.add_argument("--format", choices=("table", "csv", "json"), default="table",
                   help="output format (default: table)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    result = load_paths(args.paths, err)
    if not result.runs and not result.errors:
        raise no_runs(args.paths)
    records = [r.to_record() for r in result.runs]
    if args.format == "json":  # each warning as its code, words and fields
        write_jsonl([{**rec, "warnings": [w.to_dict() for w in r.warnings]}
                     for r, rec in zip(result.runs, records, strict=True)], out)
    elif args.format == "csv":
        write_csv(records, out)
    else:
        write_table(result.runs, records, out)
        if result.errors and result.runs:  # each named on stderr; counted below the others
            out.write(unread_count(len(result.runs), len(result.errors)) + "\n")
    return ERROR_STATUS if result.errors else 0


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, float) and math.isinf(value):
        return None
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if hasattr(value, "item"):  # numpy scalars
        return _jsonable(value.item())
    return value


def write_jsonl(records: list[dict], out: TextIO) -> None:
    for rec in records:
        out.write(json.dumps(_jsonable(rec), allow_nan=False, default=str) + "\n")


def all_columns(records: list[dict]) -> list[str]:
    from perfkit.model import RECORD_COLUMNS

    columns = list(RECORD_COLUMNS)
    seen = set(columns)
    for rec in records:
        for key in rec:
            if key not in seen:
                seen.add(key)
                columns.append(key)
    return columns


def write_csv(records: list[dict], out: TextIO) -> None:
    """Every column, one row per record; a text cell a spreadsheet would run as a formula
    begins with ``'`` and a cell holding a line break is quoted (:mod:`perfkit.safetext`)."""
    from perfkit.safetext import csv_cell, csv_lines

    columns = all_columns(records)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\r\n",
                            extrasaction="ignore")
    writer.writeheader()
    for rec in records:
        row = {}
        for key in columns:
            value = rec.get(key)
            if isinstance(value, (list, tuple)):
                value = " | ".join(str(v) for v in value)
            elif value is None or (isinstance(value, float) and math.isnan(value)):
                value = ""
            row[key] = csv_cell(value)
        writer.writerow(row)
    out.write(csv_lines(buffer.getvalue()))


def short_run_name(run: Run) -> str:
    if run.run_id:
        return run.run_id
    parent = os.path.basename(os.path.dirname(run.source))
    name = os.path.basename(run.source)
    return f"{parent}/{name}" if parent else name


def write_table(runs: list[Run], records: list[dict], out: TextIO) -> None:
    from perfkit.formatting import fmt_num
    from perfkit.present.tables import Column, Table, render

    if not records:
        return
    rows = []
    for run, rec in zip(runs, records, strict=True):
        cells = []
        for _, key in TABLE_COLUMNS:
            if key == "run":
                cells.append(short_run_name(run))
            elif key == "endpoint":
                name = rec["endpoint"] or "-"
                cells.append(f"{name} *" if run.is_aggregate else name)
            elif key == "warnings":
                cells.append(str(len(rec["warnings"])))
            elif key == "error_ratio":
                v = rec[key]
                cells.append("-" if v is None or v != v else f"{v:.2%}")
            else:
                cells.append(fmt_num(rec[key]))
        rows.append(cells)
    columns = tuple(Column(h, right=k not in ("run", "tool", "endpoint")) for h, k in TABLE_COLUMNS)
    out.write(render(Table(columns, tuple(tuple(r) for r in rows)), "text"))
    if any(r.is_aggregate for r in runs):
        out.write("* Locust's Aggregated row (all endpoints together)\n")
    out.write("warn = number of warnings; `perfkit show PATH` prints them\n")
