"""The ``perfkit`` command: one ``main(argv, stdout, stderr) -> int`` for every subcommand.

Each subcommand lives in :mod:`perfkit.commands` as a module with ``register(subparsers)``, which
adds its parser and sets ``func(args, out, err) -> int``. Errors perfkit raises on purpose print
as one line, ``perfkit: error: ...``, and exit 2 for usage errors, 1 for data errors
(:attr:`perfkit.errors.PerfkitError.exit_status`); ``--debug`` shows the traceback too.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import pkgutil
import sys
import traceback
from typing import TextIO

from perfkit import __version__
from perfkit.errors import PerfkitError

#: the order ``perfkit --help`` lists subcommands in; any other module in perfkit.commands follows
ORDER = ("parse", "show", "compare", "gate", "effects", "scaling", "plan", "history", "run",
         "sweep", "testbed", "report", "export")


def command_names() -> list[str]:
    """Every subcommand module in :mod:`perfkit.commands`, in help order."""
    import perfkit.commands as pkg

    found = [m.name for m in pkgutil.iter_modules(pkg.__path__) if not m.name.startswith("_")]
    rank = {name: i for i, name in enumerate(ORDER)}
    return sorted(found, key=lambda n: (rank.get(n, len(ORDER)), n))

DESCRIPTION = """\
Turn wrk, wrk2 and Locust load tests into trustworthy, publishable answers.

typical use:
  perfkit testbed up --profile cache-ram        local nginx on 127.0.0.1 (prints its URL)
  perfkit sweep experiment.yaml                 a designed, resumable experiment
  perfkit parse data/demo-wrk-factorial         one row per run (per endpoint for Locust)
  perfkit show data/demo-aa/runs/RUN_ID         a readable summary with its warnings
  perfkit effects EXPERIMENT --factors a,b      factorial tuning effects with CIs
  perfkit report -p params/demo.yaml -o reports/demo
                                                the HTML report of the notebooks

Run 'perfkit COMMAND --help' for a command's options and examples.
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="perfkit",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"perfkit {__version__}")
    parser.add_argument("--debug", action="store_true",
                        help="show the full traceback when something fails")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in command_names():
        importlib.import_module(f"perfkit.commands.{name}").register(sub)
    return parser


def main(argv: list[str] | None = None, stdout: TextIO | None = None,
         stderr: TextIO | None = None) -> int:
    """Run perfkit with ``argv`` (without the program name); return the exit status."""
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    parser = build_parser()
    try:
        # argparse prints --help and usage errors itself: send them to our streams
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits on --help and on usage errors
        return int(exc.code or 0)
    if not getattr(args, "func", None):
        parser.print_help(out)
        return 2
    try:
        return int(args.func(args, out, err) or 0)
    except PerfkitError as exc:
        if args.debug:
            traceback.print_exc(file=err)
        print(f"perfkit: error: {exc}", file=err)
        return exc.exit_status
    except KeyboardInterrupt:
        print("perfkit: interrupted", file=err)
        return 130
    except BrokenPipeError:
        return 0


def entry_point() -> None:
    sys.exit(main(sys.argv[1:]))
