"""Why a file or a folder gives no run, in words that name the lines looked at.

A file named explicitly that is no tool's output is refused with the first lines perfkit looked
at and what each tool's output starts with (:func:`not_an_output`); a folder without a run names
the files it saw and why each is not one (:func:`folder_without_runs`); a run folder whose
manifest records a run that none of its files gives (an output overwritten, emptied, deleted)
is an error at the file that should hold it (:func:`unreadable_run`), never a run that
vanishes.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from perfkit._fsutil import read_bytes
from perfkit.errors import ParseError
from perfkit.store.discover import walk
from perfkit.store.manifest import MANIFEST_NAMES

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


#: files of a run folder that hold no tool output (perfkit's own, and the tool's stderr)
_SIDE_FILES = frozenset({*MANIFEST_NAMES, "cpu.csv", "stderr.txt", "run.stderr",
                         "server-error.log"})


def _expected_output(directory: str, paths: Sequence[str], manifest: Mapping[str, Any]
                     ) -> str | None:
    """The file of a run folder that should hold the tool's output: the one the manifest names
    (``stdout_file``), else its ``stdout``, else the largest file the manifest records that is
    not a side file (Locust's CSVs), else None."""
    named = manifest.get("stdout_file")
    if isinstance(named, str) and named:
        return os.path.join(directory, named)
    for path in sorted(paths):
        if "stdout" in os.path.basename(path):
            return path
    files = manifest.get("files")
    if isinstance(files, Mapping):
        sizes = {name: record.get("bytes") if isinstance(record, Mapping) else None
                 for name, record in files.items()}
        recorded = [n for n in sizes if isinstance(n, str) and os.path.basename(n)
                    not in _SIDE_FILES and not n.startswith("counters")]
        if recorded:
            largest = max(recorded, key=lambda n: (isinstance(sizes[n], int), sizes[n] or 0, n))
            return os.path.join(directory, largest)
    return None


def _recorded(manifest: Mapping[str, Any], directory: str, path: str) -> str:
    """`` (417 bytes, sha256 d3daccf20a48...)``: what the manifest records of ``path``."""
    files = manifest.get("files")
    record = files.get(os.path.relpath(path, directory)) if isinstance(files, Mapping) else None
    if not isinstance(record, Mapping):
        return ""
    parts = []
    if isinstance(record.get("bytes"), int):
        parts.append(f"{record['bytes']:,} bytes")
    if isinstance(record.get("sha256"), str):
        parts.append(f"sha256 {record['sha256'][:12]}...")
    return f" ({', '.join(parts)})" if parts else ""


def unreadable_run(directory: str, paths: Sequence[str], manifest: Mapping[str, Any],
                   manifest_path: str) -> ParseError:
    """The error of a run folder whose manifest records a run (not a failed one) that none of
    its files gives: at the file that should hold the output, what the manifest records of it
    and what the file holds now (its first line, an empty or binary file, no file)."""
    tool = manifest.get("tool") if isinstance(manifest.get("tool"), str) else "tool"
    status = manifest.get("status")
    said = f"a {status} run" if isinstance(status, str) and status else "a run"
    name = os.path.basename(manifest_path)
    path = _expected_output(directory, paths, manifest)
    if path is None:
        return ParseError(directory, None, f"the {tool} output of {said}, as its {name} "
                          "records", "no file that holds one")
    expected = f"the {tool} output of {said}{_recorded(manifest, directory, path)}, as {name} " \
               "records"
    try:
        data = read_bytes(path)
    except OSError as exc:
        return ParseError(path, None, expected, (exc.strerror or str(exc)).lower())
    if not data.strip():
        return ParseError(path, 1, expected, "an empty file" if not data else
                          f"only blank space ({len(data):,} bytes)")
    if b"\x00" in data[:16384]:
        return ParseError(path, None, expected, f"binary data ({len(data):,} bytes)")
    number, line = (first_lines(data[:16384].decode("utf-8", "replace"), 1) or [(1, "")])[0]
    return ParseError(path, number, expected, _short(line, 60))
