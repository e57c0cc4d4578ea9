"""Checks of command-line values, made before any work starts: each raises a
:class:`~perfkit.errors.UsageError` naming the option, what it expects and what it found.

One function per kind of value, so that ``--slo-ms nan`` and ``--think-time-ms -5`` are refused
the same way by every command, and an output path is checked before the analysis runs (nothing
half-written, no traceback).
"""

from __future__ import annotations

import math
import os
from pathlib import Path

from perfkit.errors import UsageError
from perfkit.units import UnitError, fraction


def _shown(value: float | int | str) -> str:
    return f"{value:g}" if isinstance(value, float) else repr(value)


def positive(value: float | None, option: str) -> float | None:
    """A finite number > 0 (None passes: the option was not given)."""
    if value is not None and not (math.isfinite(value) and value > 0):
        raise UsageError(f"{option}: expected a positive number, found {_shown(value)}")
    return value


def non_negative(value: float | None, option: str) -> float | None:
    """A finite number >= 0 (None passes)."""
    if value is not None and not (math.isfinite(value) and value >= 0):
        raise UsageError(f"{option}: expected a number >= 0, found {_shown(value)}")
    return value


def at_least(value: int | None, low: int, option: str) -> int | None:
    """An integer >= ``low`` (None passes)."""
    if value is not None and value < low:
        raise UsageError(f"{option}: expected an integer >= {low}, found {value}")
    return value


def percentile(value: float, option: str = "--percentile") -> float:
    """A percentile in (0, 100]: 99 for p99, 100 for the maximum."""
    if not 0.0 < value <= 100.0:
        raise UsageError(f"{option}: expected a percentile in (0, 100] such as 99, found "
                         f"{_shown(value)}")
    return value


def percent(text: str, option: str = "--max-regression") -> float:
    """A threshold as ``5%`` or ``0.05`` (:func:`perfkit.units.fraction`: ASCII digits, and a
    bare number of 1 or more refused, ``5`` is not 5%), as the analysis's ``parse_percent``
    reads it, checked before the analysis is imported."""
    try:
        return fraction(text)
    except UnitError as exc:
        raise UsageError(f"{option}: expected {exc}, found {text!r}") from None


def iso_time(text: str | None, option: str = "--time") -> str | None:
    """An ISO 8601 time such as 2026-11-22T22:03:12Z, in ASCII digits (None passes)."""
    import datetime

    if text is None:
        return None
    try:
        datetime.datetime.fromisoformat(text)  # 3.11: any ISO 8601 form, Z included
    except ValueError:
        raise UsageError(f"{option}: expected an ISO 8601 time such as 2026-11-22T22:03:12Z, "
                         f"found {text!r}") from None
    return text


def reason(text: str | None, option: str) -> str | None:
    """A stated reason (free text): not empty."""
    if text is not None and not text.strip():
        raise UsageError(f"{option}: expected a reason in words, found an empty one")
    return text


def _nearest_existing(path: Path) -> Path:
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def output_file(path: str, option: str) -> str:
    """A file perfkit may write: not a folder, in an existing, writable folder."""
    target = Path(path)
    if not path or target.is_dir():
        raise UsageError(f"{option}: expected a file name, found the folder {path!r}")
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise UsageError(f"{option}: cannot write {path}: no folder {str(folder)!r}")
    if not os.access(folder, os.W_OK | os.X_OK) or (target.exists()
                                                     and not os.access(target, os.W_OK)):
        raise UsageError(f"{option}: cannot write {path}: permission denied")
    return path


def output_dir(path: str, option: str) -> str:
    """A folder perfkit may create or write into (its nearest existing ancestor a writable
    folder)."""
    target = Path(path)
    if target.exists() and not target.is_dir():
        raise UsageError(f"{option}: expected a folder, found the file {path!r}")
    found = _nearest_existing(target.absolute())
    if not found.is_dir():
        raise UsageError(f"{option}: cannot create {path}: {found} is a file")
    if not os.access(found, os.W_OK | os.X_OK):
        raise UsageError(f"{option}: cannot write in {found}: permission denied")
    return path
