"""The run store: parsed runs cached per directory in ``DIR/.perfkit/cache/`` (Parquet).

``perfkit.load(DIR)`` reuses the cached runs of a run directory only when every file in it is
the one they were parsed from, and re-parses the rest:

- the key of a run directory is the list of its files with each one's size, mtime, ctime and
  sha256. A file whose size, mtime_ns and ctime_ns are unchanged is taken as unchanged (``touch
  -d`` restoring an mtime still changes the ctime); one whose stat changed is hashed, and only
  a different sha256 re-parses it. As in git's index, a file modified within
  :data:`RACY_NS` of the last cache write could share its timestamps with an edit: it is always
  hashed. An added or removed file changes the list: the directory is re-parsed;
- the walk itself is remembered: a directory whose mtime and ctime are unchanged (and outside
  the racy window) has the listing it had, so one ``stat`` replaces its scan
  (:class:`perfkit.ingest.discover.Listings`); its files are still each checked as above;
- a directory that gave an error is never cached, so its error is reported on every load;
- the cache is one file, ``runs-<sha256 of its bytes>.parquet``, written to a temporary file
  and renamed (a crash leaves the previous cache or none); a file whose bytes do not match its
  name, that Parquet cannot read, or that another version of perfkit wrote is ignored with a
  :class:`CacheWarning` and replaced. It may be deleted at any time;
- it holds the root path as given: loading the same directory under another spelling
  (absolute vs relative) re-parses once, since every Run's ``source`` names the path.

Set ``PERFKIT_CACHE=0`` (or pass ``cache=False``) to read without the cache.
"""

from __future__ import annotations

import functools
import glob
import hashlib
import json
import os
import time
import warnings
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from perfkit import __version__
from perfkit._fsutil import write_bytes_atomic
from perfkit.ingest.discover import scan_names
from perfkit.ingest.store import TABLE_VERSION, runs_to_table, table_to_runs
from perfkit.model import Run

CACHE_DIR = os.path.join(".perfkit", "cache")
#: a file changed less than this before the cache was written is always re-hashed
RACY_NS = 2_000_000_000
#: the layout of the cache file around the run table (its index and listings)
CACHE_LAYOUT = "3"
_VERSION = f"{TABLE_VERSION}/{CACHE_LAYOUT}/{__version__}"

#: (relative path, size, mtime_ns, ctime_ns, sha256) of one file of a run directory
FileKey = list


class CacheWarning(UserWarning):
    """The run store could not be used as it was (ignored and rebuilt)."""


def enabled(cache: bool | None) -> bool:
    if cache is not None:
        return cache
    return os.environ.get("PERFKIT_CACHE", "1").lower() not in ("0", "false", "no", "off")


def sha256_file(path: str) -> str:
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


class RunCache:
    """The cached runs of one root directory, and the new cache being assembled."""

    def __init__(self, root: str):
        self.root = root
        self.directory = os.path.join(root, CACHE_DIR)
        self._prefix = os.path.join(root, "")
        self.started_ns = time.time_ns()
        self.state: dict[str, list] = {}  # as read (see _state); index and listings from it
        self.runs: dict[str, list[Run]] = {}
        self.written_ns = 0
        self.new_index: dict[str, list[FileKey]] = {}
        self.new_runs: dict[str, list[Run]] = {}
        self.new_listings: dict[str, list] = {}
        self._times: dict[str, tuple[int, int]] = {}
        self._walked: list[str] = []  # run directories in walk order (see lookup)
        self.complete = True  # every directory of the walk cached (none gave an error)
        self.changed = False
        self._read()
        try:  # before the walk lists the root, so that creating it does not move the root
            os.makedirs(self.directory, exist_ok=True)
        except OSError:
            pass

    @functools.cached_property
    def index(self) -> dict[str, list[FileKey]]:
        """Relative run directory -> [relative path, size, mtime_ns, ctime_ns, sha256] of its
        files, as last written."""
        s = self.state
        if not s:
            return {}
        out: dict[str, list[FileKey]] = {d: [] for d in s["index_dirs"]}
        keys = s["index_dirs"]
        for i, *key in zip(s["file_dir"], s["file_rel"], s["file_size"], s["file_mtime"],
                           s["file_ctime"], s["file_sha"], strict=True):
            out[keys[i]].append(key)
        return out

    @functools.cached_property
    def listings(self) -> dict[str, list]:
        """Relative directory -> [mtime_ns, ctime_ns, file names, subdirectory names]."""
        s = self.state
        if not s:
            return {}
        return {d: [m, c, f, sub] for d, m, c, f, sub in zip(
            s["dirs"], s["dir_mtime"], s["dir_ctime"], s["dir_files"], s["dir_subdirs"],
            strict=True)}

    # -- reading --------------------------------------------------------------------------
    def _read(self) -> None:
        found = sorted(glob.glob(os.path.join(glob.escape(self.directory), "runs-*.parquet")),
                       key=os.path.getmtime)
        if not found:
            return
        path = found[-1]
        try:
            with open(path, "rb") as fh:
                data = fh.read()
            if hashlib.sha256(data).hexdigest() != os.path.basename(path)[5:-8]:
                raise ValueError("its bytes do not match its name (a damaged file)")
            # one file: ParquetFile reads it without the dataset layer (read_table imports
            # pyarrow.dataset on first use, most of a warm load's time)
            table = pq.ParquetFile(pa.BufferReader(data)).read(use_threads=False)
            meta = table.schema.metadata or {}
            if meta.get(b"perfkit.cache_version", b"").decode() != _VERSION:
                raise ValueError(f"written by another version "
                                 f"({meta.get(b'perfkit.cache_version', b'?').decode()})")
            if meta.get(b"perfkit.root", b"").decode() != self.root:
                return  # the same data under another path spelling: parse once, rewrite
            state = json.loads(pa.decompress(
                meta[b"perfkit.state"], int(meta[b"perfkit.state_size"]), codec="zstd",
                asbytes=True))
            if set(state) != set(_STATE_KEYS):
                raise ValueError("its index is not perfkit's")
            written_ns = int(meta[b"perfkit.written_ns"])
            dirs = table.column("_dir").to_pylist()
            runs = table_to_runs(table.drop_columns(["_dir"]))
        except Exception as exc:  # noqa: BLE001 - any damage: never trust it
            warnings.warn(f"{path}: run cache ignored and rebuilt: {exc}", CacheWarning,
                          stacklevel=4)
            self.changed = True
            return
        self.state, self.written_ns = state, written_ns
        for d, run in zip(dirs, runs, strict=True):
            self.runs.setdefault(d, []).append(run)

    def unchanged_runs(self) -> list[Run] | None:
        """Every cached run, in walk order, if no directory and no file below the root changed
        since the cache was written, else None: then the walk and :meth:`lookup` decide
        directory by directory.

        Each directory and file is ``stat``-ed. One whose times fall in the racy window (see
        the module docstring; typically the root, which gained ``.perfkit/`` after it was
        listed) is checked by content: a directory listed again, a file hashed again."""
        s = self.state
        if not s or not s["complete"]:
            return None
        racy_after = self.written_ns - RACY_NS
        stat, prefix, root = os.stat, self._prefix, self.root
        try:
            for rel, mtime, ctime, files, subdirs in zip(
                    s["dirs"], s["dir_mtime"], s["dir_ctime"], s["dir_files"], s["dir_subdirs"],
                    strict=True):
                path = root if rel == "." else prefix + rel
                st = stat(path)
                if st.st_mtime_ns != mtime or st.st_ctime_ns != ctime:
                    return None
                if mtime >= racy_after or ctime >= racy_after:
                    now_files, now_dirs = scan_names(path)
                    if sorted(now_files) != sorted(files) or now_dirs != subdirs:
                        return None
            for rel, size, mtime, ctime, sha in zip(s["file_rel"], s["file_size"],
                                                    s["file_mtime"], s["file_ctime"],
                                                    s["file_sha"], strict=True):
                st = stat(prefix + rel)
                if st.st_size != size or st.st_mtime_ns != mtime or st.st_ctime_ns != ctime:
                    return None
                if (mtime >= racy_after or ctime >= racy_after) and (
                        sha256_file(prefix + rel) != sha):
                    return None
        except OSError:
            return None
        runs = self.runs
        return [r for d in s["index_dirs"] for r in runs.get(d, ())]

    def _rel(self, path: str) -> str:
        """``path`` relative to the root (paths from the walk all start with it)."""
        if path.startswith(self._prefix):
            return path[len(self._prefix):]
        return "." if path == self.root else os.path.relpath(path, self.root)

    def listing(self, directory: str) -> tuple[list[str], list[str]] | None:
        """The remembered listing of ``directory`` if its times are unchanged, else None (and
        the times just read are kept for :meth:`remember`: taken before the scan, so an entry
        added during it moves the directory past them and is seen on the next load)."""
        try:
            st = os.stat(directory)
        except OSError:
            return None
        rel = self._rel(directory)
        known = self.listings.get(rel)
        racy_after = self.written_ns - RACY_NS
        if (known is None or known[0] != st.st_mtime_ns or known[1] != st.st_ctime_ns
                or st.st_mtime_ns >= racy_after or st.st_ctime_ns >= racy_after):
            self._times[rel] = (st.st_mtime_ns, st.st_ctime_ns)
            return None
        self.new_listings[rel] = known
        return known[2], known[3]

    def remember(self, directory: str, files: list[str], dirs: list[str]) -> None:
        """Keep the fresh listing of ``directory`` with the times read before its scan."""
        rel = self._rel(directory)
        times = self._times.pop(rel, None)
        if times is None:
            return
        known = self.listings.get(rel)
        self.new_listings[rel] = [*times, files, dirs]
        # new entries rewrite the cache; new times alone (the root gaining .perfkit/, a
        # directory touched) do not: they are kept when the cache is next written, and until
        # then that directory is scanned again
        if known is None or known[2:] != [files, dirs]:
            self.changed = True

    def lookup(self, directory: str, entries: Sequence[tuple[str, os.stat_result]]
               ) -> list[Run] | None:
        """The cached runs of ``directory`` if none of its files changed, else None.

        Called for every run directory in walk order: the cache is written in that order."""
        rel = self._rel(directory)
        self._walked.append(rel)
        cached = self.index.get(rel)
        if cached is None:
            return None
        by_name = {key[0]: key for key in cached}
        if len(by_name) != len(entries):
            return None
        keys = []
        racy_after = self.written_ns - RACY_NS
        for path, st in entries:
            key = by_name.get(self._rel(path))
            if key is None:
                return None
            _, size, mtime, ctime, sha = key
            same_stat = (size == st.st_size and mtime == st.st_mtime_ns
                         and ctime == st.st_ctime_ns)
            if not same_stat or mtime >= racy_after or ctime >= racy_after:
                try:
                    if sha256_file(path) != sha:
                        return None
                except OSError:
                    return None
                self.changed = True  # refresh its stat (and the racy window) on disk
            keys.append([key[0], st.st_size, st.st_mtime_ns, st.st_ctime_ns, sha])
        runs = self.runs.get(rel, [])
        self.new_index[rel] = keys
        self.new_runs[rel] = runs
        return runs

    # -- writing --------------------------------------------------------------------------
    def put(self, directory: str, entries: Sequence[tuple[str, os.stat_result]],
            runs: list[Run]) -> None:
        """Remember the freshly parsed runs of ``directory`` (hashing its files now)."""
        keys = []
        for path, st in entries:
            try:
                keys.append([self._rel(path), st.st_size, st.st_mtime_ns, st.st_ctime_ns,
                             sha256_file(path)])
            except OSError:  # a file vanished while loading: do not cache this directory
                self.complete = False
                return
        rel = self._rel(directory)
        self.new_index[rel] = keys
        self.new_runs[rel] = runs
        self.changed = True

    def save(self) -> None:
        """Write the new cache atomically if anything changed (silently not, if read-only)."""
        if (not self.changed and self.complete == bool(self.state.get("complete"))
                and self.new_index.keys() == self.index.keys()
                and self.new_listings.keys() == self.listings.keys()):
            return
        # in walk order: the directories found in the cache (lookup) and those parsed (put)
        # interleave, and the next load returns the runs in this order
        order = list(dict.fromkeys(d for d in self._walked if d in self.new_index))
        order += sorted(self.new_index.keys() - set(order))  # none: each is looked up first
        new_index = {d: self.new_index[d] for d in order}
        dirs = [d for d in order for _ in self.new_runs[d]]
        runs = [r for d in order for r in self.new_runs[d]]
        table = runs_to_table(runs).append_column("_dir", pa.array(dirs, type=pa.string()))
        meta = dict(table.schema.metadata or {})
        # the index and the listings, compressed: Arrow keeps schema metadata twice in the
        # file (raw and in its serialized schema), and every read parses both
        raw = json.dumps(_state(new_index, self.new_listings, self.complete),
                         separators=(",", ":")).encode()
        state, size = pa.compress(raw, codec="zstd", asbytes=True), len(raw)
        meta.update({b"perfkit.cache_version": _VERSION.encode(),
                     b"perfkit.root": self.root.encode(),
                     b"perfkit.written_ns": str(self.started_ns).encode(),
                     b"perfkit.state": state, b"perfkit.state_size": str(size).encode()})
        table = table.replace_schema_metadata(meta)
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink, compression="zstd")
        data = sink.getvalue().to_pybytes()
        name = f"runs-{hashlib.sha256(data).hexdigest()}.parquet"
        try:
            os.makedirs(self.directory, exist_ok=True)  # removed since __init__: remade
            write_bytes_atomic(os.path.join(self.directory, name), data, durable=True)
        except OSError:
            return
        for old in glob.glob(os.path.join(glob.escape(self.directory), "runs-*.parquet")):
            if os.path.basename(old) != name:
                try:
                    os.unlink(old)
                except OSError:
                    pass


_STATE_KEYS = ("complete", "dirs", "dir_mtime", "dir_ctime", "dir_files", "dir_subdirs",
               "index_dirs", "file_dir", "file_rel", "file_size", "file_mtime", "file_ctime",
               "file_sha")


def _state(index: dict[str, list[FileKey]], listings: dict[str, list],
           complete: bool) -> dict[str, Any]:
    """The index and the listings as flat columns (what :meth:`RunCache.unchanged_runs` reads
    in one pass; JSON parses lists of numbers faster than nested objects)."""
    out: dict[str, Any] = {k: [] for k in _STATE_KEYS}
    out["complete"] = complete
    for d, (mtime, ctime, files, subdirs) in listings.items():
        out["dirs"].append(d)
        out["dir_mtime"].append(mtime)
        out["dir_ctime"].append(ctime)
        out["dir_files"].append(files)
        out["dir_subdirs"].append(subdirs)
    for i, (d, keys) in enumerate(index.items()):
        out["index_dirs"].append(d)
        for rel, size, mtime, ctime, sha in keys:
            out["file_dir"].append(i)
            out["file_rel"].append(rel)
            out["file_size"].append(size)
            out["file_mtime"].append(mtime)
            out["file_ctime"].append(ctime)
            out["file_sha"].append(sha)
    return out
