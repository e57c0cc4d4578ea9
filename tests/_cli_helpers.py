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
