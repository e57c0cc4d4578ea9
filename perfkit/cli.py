"""The ``perfkit`` command: one ``main(argv, stdout, stderr) -> int`` for every subcommand.

Each subcommand lives in :mod:`perfkit.commands` as a module with ``register(subparsers)``, which
adds its parser and sets ``func(args, out, err) -> int``.

The exit contract (:data:`EXIT_CONTRACT`, printed by ``perfkit --help``): 0, 1 and 3 come only
from an analysis; every error exits 2 (:data:`perfkit.errors.ERROR_STATUS`) with one line on
stderr, ``perfkit: error: ...`` (``perfkit COMMAND: error: ...`` for a command line argparse
cannot read), and no usage block (``--help`` shows it). The one exception to "one line": input
that holds several errors (unreadable files under a path, problems in a parameter file) gets
one line per error. A traceback is printed only with ``--debug``; an exception perfkit did not
raise on purpose is a bug, reported as ``internal error``.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib
import os
import pkgutil
import re
import sys
import traceback
from collections.abc import Iterator
from typing import NoReturn, TextIO

from perfkit import __version__
from perfkit.errors import ERROR_STATUS, PerfkitError
from perfkit.units import ascii_number

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

EXIT_CONTRACT = """\
exit status (every command):
  0  done (gate: no regression)
  1  gate only: a regression
  3  gate only: inconclusive, and no regression; testbed status: not running
  2  an error: a usage error, an unreadable or unusable input, a run or notebook that failed,
     or a bug. stderr then holds one line 'perfkit: error: ...' (one per file or problem when
     several inputs are bad); --debug adds the traceback. 1 and 3 never mean an error.
"""

#: a negative number or percentage (``-5%``, ``-0.05``): a value, never an option
_NEGATIVE_VALUE = re.compile(r"-(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?%?")


class CommandLineError(Exception):
    """argparse could not read the command line: ``prog: error: message``, exit status 2."""

    def __init__(self, prog: str, message: str):
        self.prog = prog
        super().__init__(" ".join(message.split()))


class _StoreOnce(argparse._StoreAction):
    """argparse's ``store``, refusing an option given twice (argparse keeps the last one)."""

    def __call__(self, parser, namespace, values, option_string=None):
        given = namespace.__dict__.setdefault("_given_options", set())
        if option_string and self.dest in given:
            several = (" (several values go in one, comma-separated: --by a,b)"
                       if self.dest in ("by", "factors") else "")
            parser.error(f"argument {'/'.join(self.option_strings)}: given more than once; "
                         f"give it once{several}")
        given.add(self.dest)
        super().__call__(parser, namespace, values, option_string)


class ArgumentParser(argparse.ArgumentParser):
    """argparse with perfkit's error contract: an error is one line and exit status 2 (the usage
    block is left to ``--help``); an option given twice is an error; ``-5%`` is a value; a
    number is written in ASCII digits. Every
    subparser is of this class too (argparse makes them with the parent's class)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.register("action", None, _StoreOnce)
        self.register("action", "store", _StoreOnce)
        # type=float and type=int read ASCII digits only (float("\u0665") is 5.0): argparse
        # looks each type up here, and names it by the type given ("invalid float value")
        self.register("type", float, functools.partial(ascii_number, kind=float))
        self.register("type", int, functools.partial(ascii_number, kind=int))

    def error(self, message: str) -> NoReturn:
        raise CommandLineError(self.prog, message)

    def _parse_optional(self, arg_string):
        if _NEGATIVE_VALUE.fullmatch(arg_string):
            return None  # a value such as --max-regression -5%, for the option to judge
        return super()._parse_optional(arg_string)


def _subparsers(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                yield sub
                yield from _subparsers(sub)


UNIT_HELP = ("the unit of the values in HdrHistogram logs read, where the log does not say it "
             "(or says it wrong): ns, us, ms or s; default: the log's #[ValueUnit] line, else "
             "the evidence of its Interval_Max column, else us (the run says 'unit assumed')")


def command_in(argv: list[str]) -> str | None:
    """The subcommand ``argv`` names before any help option (None: none, or not one of
    :func:`command_names`), skipping the global options and ``--unit``'s value."""
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in ("-h", "--help") or arg == "--version":
            return None
        if arg == "--unit":
            i += 2
            continue
        if not arg.startswith("-"):
            return arg if arg in command_names() else None
        i += 1
    return None


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser of every subcommand, or of ``only`` (the one a command line names: the
    others' modules are not imported, nor their arguments built)."""
    parser = ArgumentParser(
        prog="perfkit",
        description=DESCRIPTION,
        epilog=EXIT_CONTRACT,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"perfkit {__version__}")
    parser.add_argument("--debug", action="store_true",
                        help="show the full traceback when something fails")
    parser.add_argument("--unit", choices=("ns", "us", "ms", "s"), default=None,
                        help=UNIT_HELP)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in [only] if only else command_names():
        importlib.import_module(f"perfkit.commands.{name}").register(sub)
    for p in _subparsers(parser):  # --debug after the command works too
        p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                       help=argparse.SUPPRESS)
        p.add_argument("--unit", choices=("ns", "us", "ms", "s"), default=argparse.SUPPRESS,
                       help=UNIT_HELP)
    return parser


def error_lines(exc: BaseException) -> list[str]:
    """The stderr lines of an error: one, or one per problem of an error that lists several
    (:attr:`PerfkitError.problems`)."""
    problems = getattr(exc, "problems", None)
    if isinstance(exc, PerfkitError) and problems:
        return [" ".join(str(p).split()) for p in problems]
    if isinstance(exc, PerfkitError):
        return [" ".join(str(exc).split())]
    if isinstance(exc, OSError) and exc.strerror:
        where = f"{exc.filename}: " if exc.filename else ""
        return [f"{where}{exc.strerror}"]
    text = " ".join(str(exc).split())
    return [f"internal error: {type(exc).__name__}: {text} (run with --debug for the traceback)"]


def main(argv: list[str] | None = None, stdout: TextIO | None = None,
         stderr: TextIO | None = None) -> int:
    """Run perfkit with ``argv`` (without the program name); return the exit status."""
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        parser = build_parser(command_in(argv))
        # argparse prints --help and --version itself: send them to our streams
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version
        return int(exc.code or 0)
    except CommandLineError as exc:
        print(f"{exc.prog}: error: {exc}", file=err)
        return ERROR_STATUS
    if not getattr(args, "func", None):
        print(f"perfkit: error: expected a command ({', '.join(command_names())}); "
              "'perfkit --help' describes each", file=err)
        return ERROR_STATUS
    unit = getattr(args, "unit", None)
    if unit is not None:  # the loader (and numpy) imported only when it is needed: a bad
        from perfkit.ingest.loader import VALUE_UNIT  # option is refused before either

        token = VALUE_UNIT.set(unit)
    try:
        return int(args.func(args, out, err) or 0)
    except KeyboardInterrupt:
        print("perfkit: interrupted", file=err)
        return 130
    except BrokenPipeError:
        return 0
    except CommandLineError as exc:
        print(f"{exc.prog}: error: {exc}", file=err)
        return ERROR_STATUS
    except Exception as exc:  # noqa: BLE001 - every error is one line and exit status 2
        if getattr(args, "debug", False):
            traceback.print_exc(file=err)
        for line in error_lines(exc):
            print(f"perfkit: error: {line}", file=err)
        return ERROR_STATUS
    finally:
        if unit is not None:
            VALUE_UNIT.reset(token)
        _flush_stores()


def _flush_stores() -> None:
    """Wait for the run stores being written (:mod:`perfkit.store.runcache`), so that each is
    on disk before the interpreter begins to exit: a write left to the exit would import
    modules after the interpreter allows it."""
    store = sys.modules.get("perfkit.store.runcache")
    if store is not None:
        store.flush()


#: the variables that size BLAS's thread pool (OpenBLAS reads the first it finds set, MKL its own)
BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def one_blas_thread() -> None:
    """BLAS on one thread unless the user sized its pool; set before numpy loads BLAS.

    perfkit's matrices are small (a factorial's runs by its terms; the 256 Gauss-Legendre nodes
    of :mod:`perfkit.stats.tpower`): threads gain nothing there, and OpenBLAS's spin after each
    call waiting for more work. That spin cost ``perfkit compare`` up to 0.5 s of CPU (the
    nodes' eigenvalues: 0.01 s on one thread) on a busy machine. The report's kernels inherit
    the setting."""
    if not any(os.environ.get(name) for name in BLAS_THREADS):
        os.environ.update(dict.fromkeys(BLAS_THREADS, "1"))


def entry_point() -> None:
    one_blas_thread()
    sys.exit(main(sys.argv[1:]))
