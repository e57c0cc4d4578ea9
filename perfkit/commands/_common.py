"""Helpers the subcommands share: loading with error reporting, and the output formats.

Analysis decisions live in :mod:`perfkit.analysis`; this module only reads paths (reporting
unreadable files on stderr) and writes what the analysis returns as a text table, CSV, JSON or
Markdown.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from perfkit.errors import ERROR_STATUS, SKIP_UNREADABLE, DataError, UnreadableError, UsageError

if TYPE_CHECKING:
    import pandas as pd

    from perfkit.analysis import Experiment, RunSet, Selection
    from perfkit.ingest.loader import LoadResult
    from perfkit.present.tables import Table

__all__ = ["Loader", "load_paths"]

# Every command module is imported to build ``perfkit --help``: this module and the commands
# import pandas, scipy, the analysis and the parsers inside the functions that use them, so
# that ``perfkit --help`` and ``perfkit --version`` import none of them (tests/test_startup.py).

FORMATS = ("table", "csv", "json", "markdown", "latex")


def power_store(spec: str) -> Path | None:
    """``DIR/.perfkit/cache/power`` beside the run store of the selection ``spec``'s folder;
    None for a file, or where no run store is written (:func:`perfkit.store.runcache.skip_reason`,
    ``PERFKIT_CACHE=0``)."""
    from perfkit.store import runcache

    folder = runcache.power_dir(spec.split("::", 1)[0])
    return None if folder is None else Path(folder)


def remember_in_store(spec: str) -> None:
    """Keep the power simulations and the t tests' noncentralities (their inputs a few
    numbers) beside the run store of ``spec``'s folder (:func:`power_store`), so that a second
    command on the same runs computes none of them again (issue 33)."""
    from perfkit.analysis.compare import remember_simulations_in

    remember_simulations_in(power_store(spec))


def load_paths(paths: Sequence[str], err: TextIO) -> LoadResult:
    """Load every run under ``paths``; print each error as ``perfkit: error: ...`` on ``err``."""
    from perfkit.ingest.loader import scan_many

    result = scan_many(paths)
    for error in result.errors:
        print(f"perfkit: error: {error}", file=err)
    return result


def unread_count(n_runs: int, n_errors: int) -> str:
    """``20 runs read; 1 file could not be read (named on stderr)``: what a listing counts."""
    text = f"{n_runs} run{'s' if n_runs != 1 else ''} read"
    if n_errors:
        text += (f"; {n_errors} file{'s' if n_errors != 1 else ''} could not be read (named "
                 "on stderr, exit status 2)")
    return text


SKIP_HELP = ("leave out the runs that cannot be read (a run folder whose output is damaged, "
             "emptied or missing; a malformed file), each named in the output, instead of "
             "refusing the whole input (exit 2)")


def add_skip_unreadable_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument(SKIP_UNREADABLE, action="store_true", help=SKIP_HELP)


#: the levels every analysis command defaults to, declared once
ALPHA = 0.05
CONFIDENCE = 0.95
#: the column compare, effects, plan and history analyse unless told
METRIC = "latency_p99_ms"
EXCLUDE_FAILED_HELP = ("drop failed runs instead of ranking them; REASON is your reason in "
                       "words (e.g. 'known network outage'), echoed in the notes")
BY_HELP = ("comma-separated columns that make rows; 'auto' (default): every load column and "
           "factor that varies (not those confounded with the arms); 'none': pool all runs "
           "into one row")
BY_ROWS_HELP = "columns that make rows (as in compare; default: load levels)"


def add_alpha_argument(p: argparse.ArgumentParser, what: str = "significance level") -> None:
    """``--alpha``: ``what`` says what it is the level of in this command."""
    p.add_argument("--alpha", type=float, default=ALPHA, help=f"{what} (default {ALPHA:g})")


def add_confidence_argument(p: argparse.ArgumentParser,
                            what: str = "level of the median CIs") -> None:
    """``--confidence``: ``what`` says what it is the level of in this command."""
    p.add_argument("--confidence", type=float, default=CONFIDENCE,
                   help=f"{what} (default {CONFIDENCE:g})")


def add_exclude_failed_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--exclude-failed", metavar="REASON", help=EXCLUDE_FAILED_HELP)


def add_metric_argument(p: argparse.ArgumentParser, what: str = "per-run column",
                        default: str = METRIC) -> None:
    """``--metric``, one column (``perfkit gate`` takes several: its own option)."""
    p.add_argument("--metric", default=default, help=f"{what} (default {default})")


def add_by_argument(p: argparse.ArgumentParser, what: str = BY_HELP) -> None:
    """``--by``, the columns that make rows (``auto`` unless told)."""
    p.add_argument("--by", default="auto", metavar="COLS", help=what)


class Loader:
    """Loads each path once. Runs that cannot be read refuse the whole input
    (:class:`~perfkit.errors.UnreadableError`: one line each, exit 2), unless the command was
    given ``--skip-unreadable``: then each is named on stderr, kept in :attr:`left_out`, and
    named in the output again (:meth:`note_left_out`, and ``left_out`` in JSON)."""

    def __init__(self, err: TextIO, skip_unreadable: bool = False,
                 refused: str = "nothing analysed") -> None:
        self.err = err
        self.experiments: dict[str, Experiment] = {}
        self.had_errors = False
        self.skip_unreadable = skip_unreadable
        self.refused = refused
        #: the errors of the runs left out (``path:line: reason``), in load order
        self.left_out: list[str] = []

    def experiment(self, path: str) -> Experiment:
        if path not in self.experiments:
            from perfkit.analysis import load_experiment

            exp = load_experiment(path)
            self.judge(path, exp.errors)
            self.experiments[path] = exp
        return self.experiments[path]

    def judge(self, path: str, errors: Sequence[Any]) -> None:
        """Refuse the runs under ``path`` for their ``errors``, or leave those out (see the
        class docstring)."""
        if not errors:
            return
        if not self.skip_unreadable:
            raise UnreadableError(list(errors), path, self.refused)
        for error in errors:
            print(f"perfkit: warning: left out ({SKIP_UNREADABLE}): {error}", file=self.err)
        self.left_out.extend(str(e) for e in errors)

    def select(self, text: str, per_endpoint: bool = False) -> tuple[RunSet, Selection]:
        from perfkit.analysis import Selection

        selection = Selection.parse(text)
        rows = selection.apply(self.experiment(selection.path), per_endpoint)
        if per_endpoint and not has_endpoints(rows.frame):
            tools = ", ".join(sorted(map(str, rows.frame["tool"].dropna().unique())))
            raise UsageError(f"--by endpoint: the runs of {text!r} have no endpoints ({tools}); "
                             "endpoints are Locust's, one row per request name")
        return rows, selection

    @property
    def status(self) -> int:
        """2 (:data:`~perfkit.errors.ERROR_STATUS`) when some input could not be read (its
        errors printed above the answer), else 0."""
        return ERROR_STATUS if self.had_errors else 0

    def with_left_out(self, data: Callable[[], Any]) -> Callable[[], Any]:
        """``data`` (a result's dict for JSON) with ``left_out``: the runs left out, named
        (only when some were)."""
        if not self.left_out:
            return data
        return lambda: {**data(), "left_out": list(self.left_out)}

    def note_left_out(self, fmt: str, out: TextIO) -> None:
        """Name the runs left out below a table (text or Markdown; CSV is data only, and its
        stderr names them)."""
        if not self.left_out or fmt not in ("table", "markdown", "latex"):
            return
        head = (f"left out ({SKIP_UNREADABLE}): {len(self.left_out)} file(s) that could not "
                "be read")
        if fmt == "latex":
            out.write(f"% {head}\n" + "".join(f"% {e}\n" for e in self.left_out))
            return
        bullet = "- " if fmt == "markdown" else "  "
        out.write(f"\n{head}:\n" + "".join(f"{bullet}{e}\n" for e in self.left_out))


def has_endpoints(frame: pd.DataFrame) -> bool:
    """Whether some row of a runs frame names an endpoint (a Locust request name)."""
    return "endpoint" in frame and bool(frame["endpoint"].notna().any())


def check_table_option(args: argparse.Namespace, default: str | None) -> None:
    """``--table`` picks the one table ``--format csv`` prints; other formats print them all."""
    if args.table not in (None, default) and args.format != "csv":
        raise UsageError(f"--table {args.table}: picks the table --format csv prints; "
                         f"--format {args.format} prints every table (add --format csv)")


def note_nothing_excluded(tables: Sequence[Any], reason: str | None, err: TextIO) -> None:
    """Warn when ``--exclude-failed`` was given but no run of ``tables`` (comparison tables)
    had failed: the option changed nothing."""
    if reason is None:
        return
    failed = sum(r.comparison.n_failed_base + r.comparison.n_failed_new
                 for t in tables for r in t.rows)
    if not failed:
        print(f"perfkit: warning: --exclude-failed {reason!r}: no run failed, so none was "
              "dropped", file=err)


def add_format_argument(p: argparse.ArgumentParser, extra: Sequence[str] = ()) -> None:
    choices = (*FORMATS, *extra)
    p.add_argument("--format", choices=choices, default="table",
                   help="table (default): for reading; csv/json: exactly the columns of the "
                        "report's table for the same analysis; markdown: a GitHub table for a "
                        "CI job summary; latex: a booktabs table for a paper"
                        + ("; " + ", ".join(extra) if extra else ""))


def check_alpha(alpha: float, name: str = "--alpha") -> float:
    if not 0.0 < alpha < 1.0:
        raise UsageError(f"{name} must be in (0, 1), got {alpha:g}")
    return alpha


def check_confidence(confidence: float) -> float:
    return check_alpha(confidence, "--confidence")


def check_levels(args: argparse.Namespace) -> None:
    """``--alpha`` and ``--confidence`` of a command, each in (0, 1)."""
    check_alpha(args.alpha)
    check_confidence(args.confidence)


def emit(fmt: str, out: TextIO, frame: Callable[[], pd.DataFrame], data: Callable[[], Any],
         tables: Callable[[], Sequence[Table]]) -> None:
    """Write a result in the chosen ``--format``: ``csv`` the tidy frame (as the report's
    tables), ``json`` its dict, else its paper-ready tables (text, Markdown or LaTeX). Each is
    built only when asked for."""
    if fmt == "csv":
        write_frame(frame(), out)
    elif fmt == "json":
        write_json(data(), out)
    else:
        write_tables(tables(), fmt, out)


def write_tables(tables: Sequence[Table], fmt: str, out: TextIO) -> None:
    """Paper-ready tables as text (``table``), Markdown or LaTeX."""
    from perfkit.present.tables import render_all

    out.write(render_all(tables, {"table": "text"}.get(fmt, fmt)))


def write_frame(frame: pd.DataFrame, out: TextIO) -> None:
    """CSV exactly as the report writes its tables (:func:`perfkit.present.tables.csv_text`)."""
    from perfkit.present.tables import csv_text

    out.write(csv_text(frame))


def write_json(data: Any, out: TextIO) -> None:
    out.write(json.dumps(jsonable(data), indent=2, allow_nan=False) + "\n")


def jsonable(value: Any) -> Any:
    """NaN and infinities as null; numpy scalars as Python ones; tuples as lists."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, str):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    pandas = sys.modules.get("pandas")  # pd.NA can only come from pandas, if it is loaded
    if pandas is not None and value is pandas.NA:
        return None
    return value


def no_runs(paths: Sequence[str]) -> DataError:
    """No run under ``paths``: for each folder, the files seen and why each is not a run."""
    import os

    from perfkit.ingest.refusal import folder_without_runs

    why = [f"{p}: {folder_without_runs(p)}" for p in paths if os.path.isdir(p)]
    return DataError("no runs found under " + ", ".join(paths) + (f" ({'; '.join(why)})"
                                                                    if why else ""))
