"""Running ``perfkit`` in-process and checking its output against golden files."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from perfkit.cli import main


def run_cli(*argv: str, cwd: Path | None = None) -> tuple[int, str, str]:
    """``perfkit ARGV`` in this process: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.chdir(cwd) if cwd is not None else contextlib.nullcontext():
        code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def check_golden(path: Path, text: str) -> None:
    """Fail unless ``text`` equals the golden file; on a mismatch write ``<path>.got`` beside it."""
    got = path.with_name(path.name + ".got")
    if not path.exists() or text != path.read_text():
        got.write_text(text)
        pytest.fail(f"output differs from {path} (see {got})")
    got.unlink(missing_ok=True)


# -- names a reader's tools misread: real Locust runs (tests/fixtures/names/README.md) ----------
#: a real experiment whose request names and factor levels begin with = + - @, a tab or a CR,
#: hold ESC and BEL, ``\|``, or begin with a non-Latin character
HOSTILE = Path(__file__).resolve().parent / "fixtures" / "names" / "hostile_names"
#: its two arms as selections (the levels of its factor ``arm``)
HOSTILE_ARMS = (f"{HOSTILE}::arm==1+1", f"{HOSTILE}::arm=-2\x1b]0;pwned\x07")
#: the first characters OWASP names: a spreadsheet runs a cell that begins with one
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def formula_cells(csv_text: str) -> list[str]:
    """The cells of ``csv_text`` (read by the csv module) a spreadsheet would run as a formula:
    those beginning with one of :data:`FORMULA_STARTS` that are no plain number."""
    import csv
    import re

    number = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")
    return [cell for row in csv.reader(io.StringIO(csv_text, newline="")) for cell in row
            if cell.startswith(FORMULA_STARTS) and not number.fullmatch(cell)]


def hostile_names() -> list[str]:
    """The request names of the runs of :data:`HOSTILE`, as Locust wrote them in its own CSV,
    and the design's factor levels, as the manifests hold them."""
    import csv
    import json

    runs = sorted((HOSTILE / "runs").iterdir())
    with open(runs[0] / "locust_stats.csv", encoding="utf-8", newline="") as fh:
        names = [row["Name"] for row in csv.DictReader(fh) if row["Type"]]
    levels = {json.loads((d / "manifest.json").read_text())["factors"]["arm"] for d in runs}
    return names + sorted(levels)
