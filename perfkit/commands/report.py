"""``perfkit report``: execute the report notebooks and write a self-contained HTML report."""

from __future__ import annotations

import argparse
from typing import TextIO

from perfkit.commands import _checks as checks
from perfkit.commands._common import Loader, add_skip_unreadable_argument
from perfkit.errors import ERROR_STATUS
from perfkit.vocabulary import RunStatus

HELP = """\
Execute the parameterized notebooks named in a parameter file (papermill), and write an HTML
report: one self-contained page per notebook (no code, images inline, works offline), an
index.html with the headline findings, every figure as SVG and PNG, every result table as CSV,
and the executed notebooks to reopen in JupyterLab.

The parameter file is checked against each notebook's parameters cell before anything runs;
every problem is reported on its own line as FILE:LINE: KEY: expected ..., found ....
Thresholds take 5% or 0.05 alike; experiment names stay under the data folder (the file's
'data:', default data/). The output folder is checked before anything runs too.
A notebook that fails is reported with its cell and exception; the others still run, and the
exit status is 2, as for every error. Each page is told on stderr as it ends, with the pages
done and planned and the time left (above a bar on a terminal, one line each in a log;
PERFKIT_NO_PROGRESS=1 turns them off).

examples:
  perfkit report -p params/demo.yaml -o reports/demo
  perfkit report -p params/template.yaml -o reports/mine --check   # only check the parameters
  papermill --help-notebook notebooks/latency.ipynb                 # what a notebook takes
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="execute the notebooks into an HTML report",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-p", "--params", required=True, metavar="FILE",
                   help="parameter file (YAML), e.g. params/demo.yaml")
    p.add_argument("-o", "--out", default=None, metavar="DIR",
                   help="output folder (default: reports/<parameter file name>)")
    p.add_argument("--check", action="store_true",
                   help="check the parameter file and stop (nothing is executed)")
    add_skip_unreadable_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from pathlib import Path

    from perfkit.report import build_report, load_params
    from perfkit.report.build import warm_stores

    out_dir = Path(args.out) if args.out else Path("reports") / Path(args.params).stem
    if not args.check:
        checks.output_dir(str(out_dir), "-o/--out")
    params = load_params(args.params)  # raises ParamsError before anything executes
    if args.check:
        names = ", ".join(n.name for n in params.notebooks)
        print(f"{args.params}: ok ({names})", file=out)
        return 0
    unread = warm_stores(params)  # refused before a page is made, or each named as left out
    Loader(err, args.skip_unreadable, "no report built").judge(
        ", ".join(map(str, unread)), [e for errors in unread.values() for e in errors])
    result = build_report(params, out_dir, stream=err)
    for e in result.executions:
        status = RunStatus.FAILED if e.error else RunStatus.OK  # the notebook's run
        print(f"{e.name:<16} {e.seconds:6.1f} s  {status}", file=out)
    for error in result.errors:
        print(f"perfkit: error: {error}", file=err)
    print(f"report: {result.index}", file=out)
    return ERROR_STATUS if result.errors else 0
