"""Why a file or a folder gives no run, in words that name the lines looked at.

A file named explicitly that is no tool's output is refused with the first lines perfkit looked
at and what each tool's output starts with (:func:`not_an_output`); a folder without a run names
the files it saw and why each is not one (:func:`folder_without_runs`).
"""

from __future__ import annotations

import os

from perfkit._fsutil import read_bytes
from perfkit.ingest.discover import walk
from perfkit.ingest.manifest import MANIFEST_NAMES

#: what each tool's output starts with, as a refusal says it
TOOL_STARTS = (
    "wrk or wrk2 (a report whose first line is 'Running <duration> test @ <url>', after any "
    "prompt or command line), Locust (a CSV header naming 'Name' with 'Request Count', "
    "'# requests' before 0.9, or 'Timestamp' and 'User Count'; --json starts with '['), or an "
    "HdrHistogram log ('#[...]' header lines or 'start,length,max,HISTF...' intervals)")
#: lines a refusal looks at and names
LOOKED_AT = 5
#: files a folder's explanation names (the rest are counted)
NAMED_FILES = 12


def first_lines(text: str, n: int = LOOKED_AT) -> list[tuple[int, str]]:
    """The first ``n`` non-blank lines of ``text`` with their 1-based numbers."""
    out = []
    for number, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            out.append((number, line.rstrip("\r")))
            if len(out) == n:
                break
    return out


def _short(line: str, width: int = 60) -> str:
    return line if len(line) <= width else line[:width - 3] + "..."


def not_an_output(path: str, text: str) -> str:
    """``path:line: not the output of ...: expected ..., found ...`` for a text no tool wrote."""
    lines = first_lines(text)
    if not lines:
        return f"{path}:1: not the output of any tool: expected {TOOL_STARTS}, found an empty file"
    number, line = lines[0]
    more = ""
    if len(lines) > 1:
        rest = ", ".join(f"{n}: {_short(s)!r}" for n, s in lines[1:])
        more = f"; the next lines looked at start none either ({rest})"
    return (f"{path}:{number}: not the output of wrk, wrk2, Locust (CSV or --json) or an "
            f"HdrHistogram log: expected {TOOL_STARTS}, found {_short(line, 80)!r}{more}")


def why_not(path: str) -> str:
    """Why the file at ``path`` is not a run, in a few words."""
    name = os.path.basename(path)
    if name in MANIFEST_NAMES:
        return "a run manifest"
    try:
        data = read_bytes(path)
    except OSError as exc:
        return f"unreadable ({exc.strerror or exc})"
    if not data.strip():
        return "empty"
    if b"\x00" in data[:16384]:
        return "binary (NUL bytes)"
    text = data[:16384].decode("utf-8", "replace")
    lines = first_lines(text, 1)
    return f"line {lines[0][0]} is {_short(lines[0][1], 50)!r}: no tool's output starts so"


def folder_without_runs(root: str) -> str:
    """The files seen under ``root`` and why each is not a run (at most NAMED_FILES named)."""
    seen: list[str] = []
    for _, entries, _ in walk(root, None, with_stat=False):
        seen.extend(path for path, _ in entries)
    if not seen:
        return "it holds no file (hidden files and folders are not read)"
    named = [f"{os.path.relpath(p, root)} ({why_not(p)})" for p in sorted(seen)[:NAMED_FILES]]
    rest = len(seen) - len(named)
    tail = f" and {rest} more" if rest > 0 else ""
    return f"files seen: {'; '.join(named)}{tail}"
