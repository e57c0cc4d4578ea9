"""Find run directories and their files.

:func:`walk` yields ``(directory, files, manifest)``: a directory holding a manifest
(``manifest.json`` or ``meta.json``) is one run and takes every file below it (Locust's CSVs
may sit in a subdirectory); other directories give their own files and are searched further,
in sorted order. Hidden files and directories (``.perfkit/``, ``runs/.aborted/``) are never
listed, nor are FIFOs, sockets and devices (no tool writes one; reading one could block). Each
file comes with its ``os.stat_result``, which the run store uses as its first check that a file
has not changed.

A directory is listed with one ``os.scandir``, unless a :class:`Listings` memo (the run store's)
still holds its listing: a directory whose mtime and ctime are unchanged has the same entries
(creating, removing or renaming an entry updates them), so one ``stat`` of the directory
replaces the scan. Its files are still each ``stat``-ed: an edit in place changes a file's
times, not its directory's.
"""

from __future__ import annotations

import os
import stat as stat_module
from collections.abc import Iterator
from typing import Protocol

from perfkit.store.manifest import MANIFEST_NAMES

#: (path, stat) of one file (stat None when the walk was asked for none)
Entry = tuple[str, os.stat_result | None]


class Listings(Protocol):
    """A memo of directory listings (see the module docstring)."""

    def listing(self, directory: str) -> tuple[list[str], list[str]] | None:
        """(file names, subdirectory names) if ``directory`` is known unchanged, else None."""

    def remember(self, directory: str, files: list[str], dirs: list[str]) -> None:
        """Record a fresh listing of ``directory``."""


def _scan(directory: str, memo: Listings | None) -> tuple[list[str], list[str]]:
    """Visible file and subdirectory names of ``directory`` (unreadable: none)."""
    if memo is not None:
        known = memo.listing(directory)
        if known is not None:
            return known
    files, dirs = [], []
    try:
        with os.scandir(directory) as it:
            for entry in it:
                name = entry.name
                if name.startswith("."):
                    continue
                try:
                    # a regular file (or a link to one) is known from the listing itself; a
                    # FIFO, socket or device is never a tool output, and reading it could block
                    if entry.is_file():
                        files.append(name)
                    elif entry.is_dir() and not entry.is_symlink():  # as os.walk: linked
                        dirs.append(name)  # directories are not entered
                except OSError:
                    continue
    except OSError:
        return [], []
    dirs.sort()
    if memo is not None:
        memo.remember(directory, files, dirs)
    return files, dirs


def scan_names(directory: str) -> tuple[list[str], list[str]]:
    """(file names, sorted subdirectory names) of ``directory``, as listed now."""
    return _scan(directory, None)


def _join(directory: str) -> str:
    """``directory`` ready for a name to be appended: ``os.path.join`` for thousands of names
    (names from a listing are never absolute)."""
    return directory if not directory or directory.endswith(os.sep) else directory + os.sep


def _entries(directory: str, names: list[str], with_stat: bool = True) -> list[Entry]:
    prefix = _join(directory)
    if not with_stat:
        return [(prefix + name, None) for name in names]
    out: list[Entry] = []
    stat = os.stat  # follows symlinks, as DirEntry.stat() did
    for name in names:
        path = prefix + name
        try:
            out.append((path, stat(path)))
        except OSError:  # a broken symlink, a file removed meanwhile
            continue
    return out


def _all_below(directory: str, entries: list[Entry], dirs: list[str],
               memo: Listings | None, with_stat: bool) -> list[Entry]:
    prefix = _join(directory)
    for name in dirs:
        sub = prefix + name
        files, subdirs = _scan(sub, memo)
        entries.extend(_all_below(sub, _entries(sub, files, with_stat), subdirs, memo,
                                  with_stat))
    return entries


def _manifest(directory: str, files: list[str], entries: list[Entry]) -> str | None:
    """The manifest's path among ``files`` (names listed as regular files: without a stat,
    the listing's word is taken), ``entries`` their paths and stats."""
    for name in MANIFEST_NAMES:
        if name in files:
            path = _join(directory) + name
            for p, st in entries:  # a few: a run directory's files
                if p == path:
                    if st is None or stat_module.S_ISREG(st.st_mode):
                        return path
                    break
    return None


def walk(root: str, memo: Listings | None = None, with_stat: bool = True
         ) -> Iterator[tuple[str, list[Entry], str | None]]:
    """Run directories under ``root`` with their files and their manifest's path (or None).

    ``with_stat=False`` gives None for each file's stat (a load without the run store reads
    the files anyway and needs no stat of them)."""
    files, dirs = _scan(root, memo)
    entries = _entries(root, files, with_stat)
    manifest = _manifest(root, files, entries)
    if manifest is not None:
        yield root, _all_below(root, entries, dirs, memo, with_stat), manifest
        return
    yield root, entries, None
    prefix = _join(root)
    for name in dirs:
        yield from walk(prefix + name, memo, with_stat)
