"""Find run directories and their files with one ``os.scandir`` per directory.

:func:`walk` yields ``(directory, files)``: a directory holding a manifest (``manifest.json``
or ``meta.json``) is one run and takes every file below it (Locust's CSVs may sit in a
subdirectory); other directories give their own files and are searched further, in sorted
order. Hidden files and directories (``.perfkit/``, ``runs/.aborted/``) are never listed.
Each file comes with its ``os.stat_result`` (from the same scan), which the run store uses as
its first check that a file has not changed.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from perfkit.ingest.manifest import MANIFEST_NAMES

#: (path, stat) of one file
Entry = tuple[str, os.stat_result]


def _scan(directory: str) -> tuple[list[os.DirEntry], list[os.DirEntry]]:
    """Visible files and subdirectories of ``directory`` (unreadable: none)."""
    files, dirs = [], []
    try:
        with os.scandir(directory) as it:
            for entry in it:
                if entry.name.startswith("."):
                    continue
                try:
                    if not entry.is_dir():
                        files.append(entry)
                    elif not entry.is_symlink():  # as os.walk: linked directories not entered
                        dirs.append(entry)
                except OSError:
                    continue
    except OSError:
        pass
    return files, dirs


def _stat(entry: os.DirEntry) -> os.stat_result | None:
    try:
        return entry.stat()
    except OSError:  # a broken symlink, a file removed meanwhile
        return None


def _entries(files: list[os.DirEntry]) -> list[Entry]:
    out = []
    for e in files:
        st = _stat(e)
        if st is not None:
            out.append((e.path, st))
    return out


def _all_below(directory: str, files: list[os.DirEntry], dirs: list[os.DirEntry]) -> list[Entry]:
    found = _entries(files)
    for sub in sorted(d.path for d in dirs):
        sub_files, sub_dirs = _scan(sub)
        found.extend(_all_below(sub, sub_files, sub_dirs))
    return found


def walk(root: str) -> Iterator[tuple[str, list[Entry], str | None]]:
    """Run directories under ``root`` with their files and their manifest's path (or None)."""
    files, dirs = _scan(root)
    names = {e.name for e in files if e.name in MANIFEST_NAMES and e.is_file()}
    if names:
        manifest = next(n for n in MANIFEST_NAMES if n in names)
        yield root, _all_below(root, files, dirs), os.path.join(root, manifest)
        return
    yield root, _entries(files), None
    for sub in sorted(d.path for d in dirs):
        yield from walk(sub)
