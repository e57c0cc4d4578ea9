"""The run store: parsed runs cached per directory in ``DIR/.perfkit/cache/`` (Parquet).

``perfkit.load(DIR)`` reuses the cached runs of a run directory only when every file in it is
the one they were parsed from, and re-parses the rest:

- the key of a run directory is the list of its files with each one's size, mtime and ctime.
  A file whose size, mtime_ns and ctime_ns are unchanged is taken as unchanged (``touch -d``
  restoring an mtime still changes the ctime); one whose stat changed re-parses its directory.
  As in git's index, a file modified within :data:`RACY_NS` of the cache's write could share
  its timestamps with a later edit: such a file alone is hashed when written (sha256), and
  checked by its hash on every load while it is racy (a changed stat with the same hash then
  reuses the runs too). Hashing no other file is what keeps the first load, which writes the
  store, close to a load without one. An added or removed file changes the list: the
  directory is re-parsed;
- the walk itself is remembered: a directory whose mtime and ctime are unchanged (and outside
  the racy window) has the listing it had, so one ``stat`` replaces its scan
  (:class:`perfkit.store.discover.Listings`); its files are still each checked as above;
- a directory that gave an error is never cached: it is recorded as such (its place in the
  walk, its files), so that an unchanged tree still loads without a walk, and it is parsed
  again on every load, which reports its error every time;
- the cache is one file, ``runs-<sha256 of its bytes>.parquet``, written to a temporary file
  and renamed (a crash leaves the previous cache or none), by a thread of its own once the
  load has returned its runs (:meth:`RunCache.save`): the next load of the same root in this
  process waits for it, as does :func:`flush` (the ``perfkit`` command calls it before it
  exits, so the write is done while the interpreter is whole) and the interpreter before it
  exits. A file whose bytes do not match its name, that Parquet cannot read, or that another
  version of perfkit wrote is ignored and replaced. It may be deleted at any time. The bytes
  read are kept with the runs: their histograms, manifests and extra maps are read from them
  on first use (:class:`perfkit.store.runtable.ParquetTable`), never from the file again;
- the store never prints and never fails a load: what went wrong with it (a damaged file
  ignored, a write that failed) and every write skipped on purpose is recorded with its
  reason, for :func:`notes` to tell. No store is written in a folder that is read-only (no
  write permission in its mode, or a read-only file system), that belongs to another user,
  or that is itself one run (a manifest in it: the store would add a folder to the run's own
  files); ``.perfkit/cache/`` is created only to write a store into it, and removed again
  when the write fails;
- the sha256 digests (of racy files, and of the cache file in its name) detect damage: a file
  changed by an edit within the racy window, a cache cut short. They are no guard against
  tampering and authenticate nothing: whoever can write ``DIR`` can write a cache that matches
  it;
- it holds the root path as given: loading the same directory under another spelling
  (absolute vs relative) re-parses once, since every Run's ``source`` names the path.

Set ``PERFKIT_CACHE=0`` (or pass ``cache=False``) to read without the cache.
"""

from __future__ import annotations

import collections
import functools
import glob
import hashlib
import os
import stat
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import cast

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from perfkit import __version__
from perfkit._fsutil import write_bytes_atomic
from perfkit.model import Run
from perfkit.store.discover import scan_names
from perfkit.store.manifest import MANIFEST_NAMES
from perfkit.store.runtable import (
    CHECKS_DIGEST,
    DEFERRED_COLUMNS,
    TABLE_VERSION,
    ParquetTable,
    runs_to_table,
    table_to_runs,
)

CACHE_DIR = os.path.join(".perfkit", "cache")
#: a file changed less than this before the cache was written is always re-hashed
RACY_NS = 2_000_000_000
#: the layout of the cache file around the run table (its index and listings); bumped too when
#: the parsers read an input differently, so that no run parsed the old way is reused (5: issue
#: 22, Unicode digits, percentile headers, zeros where nothing was measured; 6: issue 24, the
#: hashes of racy files only, directories with errors recorded; 7: issue 30, a run folder
#: whose output cannot be read is an error, no longer a folder without runs, and values that
#: contradict the run are kept out of it)
CACHE_LAYOUT = "7"
_VERSION = f"{TABLE_VERSION}/{CACHE_LAYOUT}/{__version__}/{CHECKS_DIGEST}"

#: (relative path, size, mtime_ns, ctime_ns, sha256 digest or None) of one file of a run
#: directory (the digest only of a file racy when the cache was written)
FileKey = list

# The index and the listings: three tables, each an Arrow IPC stream (LZ4) in the Parquet
# file's metadata, read with a few column conversions (no JSON to parse). Each directory and
# file is named by its path as stat-ed (the root, or the root joined with its relative path:
# a cache is only read under the root's spelling it was written with):
#: every directory of the walk: its times and its listing
_LISTINGS = pa.schema([("path", pa.string()), ("mtime", pa.int64()), ("ctime", pa.int64()),
                       ("files", pa.list_(pa.string())), ("subdirs", pa.list_(pa.string()))])
#: every run directory, in walk order, with the number of its cached runs (the run table holds
#: them in the same order); ``reparse``: it gave an error, so it has none and is parsed again
_INDEX = pa.schema([("path", pa.string()), ("runs", pa.int64()), ("reparse", pa.bool_())])
#: every file of a cached run directory (``dir``: its row of the index)
_FILES = pa.schema([("dir", pa.int32()), ("path", pa.string()), ("size", pa.int64()),
                    ("mtime", pa.int64()), ("ctime", pa.int64()), ("sha", pa.binary(32))])
_STATE = {"listings": _LISTINGS, "index": _INDEX, "files": _FILES}
_BATCH = 1024


#: the run stores being written, by cache folder (:meth:`RunCache.save`)
_WRITERS: dict[str, threading.Thread] = {}
_WRITERS_LOCK = threading.Lock()
#: what happened to the stores of this process that a load does not show (see :func:`notes`)
_NOTES: collections.deque[str] = collections.deque(maxlen=100)


def notes() -> list[str]:
    """What happened to the run stores of this process, oldest first (the last 100): a store
    ignored (damaged, another version's), a write that failed, a write skipped on purpose,
    each with its folder and its reason. The store never prints: this is where it tells."""
    return list(_NOTES)


def _note(text: str) -> None:
    _NOTES.append(text)


def skip_reason(root: str) -> str | None:
    """Why no store is written in the folder ``root`` (None: one may be).

    A store is a cache beside the user's files: it is never written where the user did not
    mean perfkit to write (a folder whose mode grants no write permission, or one of another
    user), nor inside one run (a folder holding its manifest: the store would become one of
    the run's files)."""
    try:
        st = os.stat(root)
    except OSError as exc:
        return f"cannot stat it ({exc.strerror})"
    if not stat.S_IMODE(st.st_mode) & 0o222 or not os.access(root, os.W_OK | os.X_OK):
        return "the folder is read-only"
    if st.st_uid != os.geteuid():
        return f"the folder belongs to another user (uid {st.st_uid})"
    if any(os.path.isfile(os.path.join(root, name)) for name in MANIFEST_NAMES):
        return "the folder is one run (it holds its manifest): read as it is"
    return None


def power_dir(folder: str | os.PathLike) -> str | None:
    """``FOLDER/.perfkit/cache/power``, where the power simulations of an analysis of the runs
    under ``folder`` are kept (:mod:`perfkit.stats._simcache`: keyed by their inputs, so any
    folder's is right); None for a file, or where no run store is written
    (:func:`skip_reason`, ``PERFKIT_CACHE=0``)."""
    folder = os.fspath(folder)
    if not os.path.isdir(folder) or not enabled(None) or skip_reason(folder):
        return None
    return os.path.join(folder, CACHE_DIR, "power")


def flush(directory: str | None = None) -> None:
    """Wait until the run stores this process is writing are on disk (only the one of the
    cache folder ``directory``, if given)."""
    with _WRITERS_LOCK:
        writers = [t for d, t in _WRITERS.items() if directory is None or d == directory]
    for writer in writers:
        writer.join()


def enabled(cache: bool | None) -> bool:
    if cache is not None:
        return cache
    return os.environ.get("PERFKIT_CACHE", "1").lower() not in ("0", "false", "no", "off")


def sha256_file(path: str) -> bytes:
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").digest()


class RunCache:
    """The cached runs of one root directory, and the new cache being assembled."""

    def __init__(self, root: str):
        self.root = root
        self.directory = os.path.join(root, CACHE_DIR)
        flush(self.directory)  # this root's store still being written: read that one
        self._prefix = os.path.join(root, "")
        self.started_ns = time.time_ns()
        self.state: dict[str, pa.Table] = {}  # as read (see _STATE): index, listings, runs
        self.was_complete = False  # as read
        self._runs: list[Run] = []  # every cached run, in the index's order
        self.written_ns = 0
        self.new_index: dict[str, list[FileKey]] = {}
        self.new_runs: dict[str, list[Run]] = {}
        self.new_reparse: set[str] = set()  # directories that gave an error
        self.new_listings: dict[str, list] = {}
        self._times: dict[str, tuple[int, int]] = {}
        self._walked: list[str] = []  # run directories in walk order (see lookup)
        self.complete = True  # every directory of the walk cached (none gave an error)
        self.changed = False
        self._read()
        #: why no store is written here (None: one may be), and the folders made for it
        self.skip = skip_reason(root)
        self._made: list[str] = []
        if self.skip is None:
            # before the walk lists the root, so that creating .perfkit/ does not move the
            # root's times after they were read; removed again if no store is written
            self._made = self._make_directory()

    @functools.cached_property
    def index(self) -> dict[str, list[FileKey]]:
        """Relative run directory -> [relative path, size, mtime_ns, ctime_ns, sha256] of its
        files, as last written."""
        if not self.state:
            return {}
        dirs = list(map(self._rel, self.state["index"].column("path").to_pylist()))
        out: dict[str, list[FileKey]] = {d: [] for d in dirs}
        files = self.state["files"]
        for i, path, *key in zip(*(files.column(name).to_pylist() for name in _FILES.names),
                                 strict=True):
            out[dirs[i]].append([self._rel(path), *key])
        return out

    @functools.cached_property
    def listings(self) -> dict[str, list]:
        """Relative directory -> [mtime_ns, ctime_ns, file names, subdirectory names]."""
        if not self.state:
            return {}
        paths, *rest = (self.state["listings"].column(name).to_pylist()
                        for name in _LISTINGS.names)
        return {self._rel(p): list(values) for p, *values in zip(paths, *rest, strict=True)}

    @functools.cached_property
    def runs(self) -> dict[str, list[Run] | None]:
        """Relative run directory -> its cached runs, or None for one to parse again (it gave
        an error); the index's directories, in order."""
        if not self.state:
            return {}
        index = self.state["index"]
        counts = index.column("runs").to_numpy()
        ends = np.cumsum(counts).tolist()
        reparse = index.column("reparse").to_pylist()
        return {d: None if again else self._runs[end - count:end]
                for d, count, end, again in zip(self.index, counts.tolist(), ends, reparse,
                                                strict=True)}

    # -- reading --------------------------------------------------------------------------
    def _newest(self) -> tuple[str, bytes] | None:
        """The newest store file and its bytes, or None. Another process may replace it while
        this one looks (a writer removes the older file once its own is in place): then the
        folder is listed again."""
        for _ in range(3):
            found = []
            for path in glob.glob(os.path.join(glob.escape(self.directory), "runs-*.parquet")):
                try:
                    found.append((os.path.getmtime(path), path))
                except OSError:
                    continue
            if not found:
                return None
            path = max(found)[1]
            try:
                with open(path, "rb") as fh:
                    return path, fh.read()
            except FileNotFoundError:
                continue
        return None

    def _read(self) -> None:
        path = self.directory
        try:
            newest = self._newest()
            if newest is None:
                return
            path, data = newest
            if hashlib.sha256(data).hexdigest() != os.path.basename(path)[5:-8]:
                raise ValueError("its bytes do not match its name (a damaged file)")
            # one file: ParquetFile reads it without the dataset layer (read_table imports
            # pyarrow.dataset on first use, most of a warm load's time); its histograms,
            # manifests and extra maps are read from these bytes on first use
            table = ParquetTable(data)
            meta = table.metadata
            if meta.get(b"perfkit.cache_version", b"").decode() != _VERSION:
                raise ValueError(f"written by another version "
                                 f"({meta.get(b'perfkit.cache_version', b'?').decode()})")
            if meta.get(b"perfkit.root", b"").decode() != self.root:
                return  # the same data under another path spelling: parse once, rewrite
            state = {name: _read_ipc(meta[f"perfkit.{name}".encode()], schema)
                     for name, schema in _STATE.items()}
            complete = {b"1": True, b"0": False}[meta[b"perfkit.complete"]]
            written_ns = int(meta[b"perfkit.written_ns"])
            runs = table_to_runs(table)
            if (pc.sum(state["index"].column("runs")).as_py() or 0) != len(runs):
                raise ValueError("its index does not count its runs")
        except Exception as exc:  # noqa: BLE001 - any damage: never trust it
            _note(f"{path}: run store ignored and rebuilt: {exc}")
            self.changed = True
            return
        self.state, self.was_complete, self.written_ns = state, complete, written_ns
        self._runs = runs

    def unchanged(self) -> list[tuple[str, list[Run] | list[str]]] | None:
        """Every run directory in walk order, if no directory and no file below the root
        changed since the cache was written, else None: then the walk and :meth:`lookup`
        decide directory by directory. Each is ``(directory, runs)``, or for a directory that
        gave an error (parsed again on every load) ``(directory, its files' paths)`` with
        :attr:`reparse` naming it.

        Each directory and file is ``stat``-ed. One whose times fall in the racy window (see
        the module docstring; typically the root, which gained ``.perfkit/`` after it was
        listed) is checked by content: a directory listed again, a file hashed again."""
        if not self.state or not self.was_complete:
            return None
        listings, files = self.state["listings"], self.state["files"]
        racy_after = self.written_ns - RACY_NS
        try:
            dirs, paths = listings.column("path"), files.column("path")
            if not (_same_dir_times(listings) and _same_file_stats(files)):
                return None
            for i in _racy(listings, racy_after):
                now_files, now_dirs = scan_names(dirs[i].as_py())
                if (sorted(now_files) != sorted(listings.column("files")[i].as_py())
                        or now_dirs != listings.column("subdirs")[i].as_py()):
                    return None
            shas = files.column("sha")
            for i in _racy(files, racy_after):
                sha = shas[i].as_py()
                if sha is None or sha256_file(paths[i].as_py()) != sha:
                    return None
        except OSError:
            return None
        index = self.state["index"]
        directories = index.column("path").to_pylist()  # as stat-ed: the walk's spelling
        ends = np.cumsum(index.column("runs").to_numpy()).tolist()
        parts: list = list(map(self._runs.__getitem__, map(slice, [0, *ends[:-1]], ends)))
        again = np.flatnonzero(index.column("reparse").to_numpy(zero_copy_only=False))
        if len(again):  # directories with an error: their files, to parse them again
            files = self.state["files"]
            picked = files.filter(pc.is_in(files.column("dir"),
                                           value_set=pa.array(again, type=pa.int32())))
            for i in again.tolist():
                parts[i] = []
                self.reparse.add(directories[i])
            for i, path in zip(picked.column("dir").to_pylist(),
                               picked.column("path").to_pylist(), strict=True):
                parts[i].append(path)
        return list(zip(directories, parts, strict=True))

    def unchanged_runs(self) -> list[Run] | None:
        """Every cached run in walk order, if nothing changed and no directory gave an error
        (see :meth:`unchanged`), else None."""
        parts = self.unchanged()
        if parts is None or self.reparse:
            return None
        # nothing to parse again: each part holds its directory's runs
        return [r for _, runs in parts for r in cast(list[Run], runs)]

    @functools.cached_property
    def reparse(self) -> set[str]:
        """The directories :meth:`unchanged` gave to parse again."""
        return set()

    def _path(self, rel: str) -> str:
        """The path of ``rel`` (relative to the root; "." the root itself) as the walk has it."""
        return self.root if rel == "." else self._prefix + rel

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
        if cached is None or self.runs[rel] is None:  # unknown, or gave an error
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
                if sha is None:  # not racy when written: a changed stat means a change
                    return None
                try:
                    if sha256_file(path) != sha:
                        return None
                except OSError:
                    return None
                self.changed = True  # refresh its stat (and the racy window) on disk
            keys.append([key[0], st.st_size, st.st_mtime_ns, st.st_ctime_ns, sha])
        runs = cast(list[Run], self.runs.get(rel, []))  # not None: an error returned above
        self.new_index[rel] = keys
        self.new_runs[rel] = runs
        return runs

    # -- writing --------------------------------------------------------------------------
    def put(self, directory: str, entries: Sequence[tuple[str, os.stat_result]],
            runs: list[Run] | None) -> None:
        """Remember the freshly parsed runs of ``directory`` (None: it gave an error, parse it
        again next time), hashing those of its files that are racy now."""
        keys = []
        racy_after = self.started_ns - RACY_NS
        for path, st in entries:
            sha = None
            if st.st_mtime_ns >= racy_after or st.st_ctime_ns >= racy_after:
                try:
                    sha = sha256_file(path)
                    now = os.stat(path)
                except OSError:  # a file vanished while loading: do not cache this directory
                    self.complete = False
                    return
                if (now.st_size, now.st_mtime_ns, now.st_ctime_ns) != (
                        st.st_size, st.st_mtime_ns, st.st_ctime_ns):
                    self.complete = False  # changed while loading: what was parsed is unknown
                    return
            keys.append([self._rel(path), st.st_size, st.st_mtime_ns, st.st_ctime_ns, sha])
        rel = self._rel(directory)
        self.new_index[rel] = keys
        self.new_runs[rel] = [] if runs is None else runs
        if runs is None:
            self.new_reparse.add(rel)
        self.changed = True

    def save(self, background: bool = True) -> None:
        """Write the new cache atomically if anything changed; skip it, with its reason in
        :func:`notes`, where no store belongs (:func:`skip_reason`).

        ``background``: in a thread of its own, so that the load returns its runs first
        (building the table and writing it is a third of a first load); the runs are
        immutable, and nothing else here changes once the load is done."""
        if (not self.changed and self.complete == self.was_complete
                and self.new_index.keys() == self.index.keys()
                and self.new_listings.keys() == self.listings.keys()):
            self.abandon()
            return
        if self.skip is not None:
            _note(f"{self.directory}: no run store written: {self.skip}")
            return
        if not background:
            self._write_or_note()
            return
        # The writer imports pandas (pyarrow does, to tell an array-like from a list), which
        # imports concurrent.futures.thread, whose import registers an exit hook: refused
        # once the interpreter is shutting down. Imported here, the writer imports it never.
        import concurrent.futures.thread  # noqa: F401
        writer = threading.Thread(target=self._write_or_note, name="perfkit-run-store")
        with _WRITERS_LOCK:
            _WRITERS[self.directory] = writer
            writer.start()

    def _write_or_note(self) -> None:
        try:
            self._write()
        except Exception as exc:  # noqa: BLE001 - a cache: its failure never fails a load
            self.abandon()
            _note(f"{self.directory}: run store not written: {type(exc).__name__}: {exc}")
        finally:
            with _WRITERS_LOCK:
                if _WRITERS.get(self.directory) is threading.current_thread():
                    del _WRITERS[self.directory]

    def _write(self) -> None:
        # in walk order: the directories found in the cache (lookup) and those parsed (put)
        # interleave, and the next load returns the runs in this order
        order = list(dict.fromkeys(d for d in self._walked if d in self.new_index))
        order += sorted(self.new_index.keys() - set(order))  # none: each is looked up first
        new_index = {d: self.new_index[d] for d in order}
        runs = [r for d in order for r in self.new_runs[d]]
        table = runs_to_table(runs)
        reparse = [d in self.new_reparse for d in order]
        meta = {b"perfkit.cache_version": _VERSION.encode(),
                b"perfkit.root": self.root.encode(),
                b"perfkit.written_ns": str(self.started_ns).encode(),
                b"perfkit.complete": b"1" if self.complete else b"0",
                **_state(new_index, [len(self.new_runs[d]) for d in order], reparse,
                         self.new_listings, self._path)}
        sink = pa.BufferOutputStream()
        # the cache's entries in the file's key-value metadata alone: in the table's schema
        # Arrow would keep them twice (raw, and base64 in its serialized schema) and decode
        # both on every read
        with pq.ParquetWriter(sink, table.schema, compression=_compression(table)) as writer:
            writer.write_table(table)
            writer.add_key_value_metadata(meta)
        data = sink.getvalue().to_pybytes()
        name = f"runs-{hashlib.sha256(data).hexdigest()}.parquet"
        os.makedirs(self.directory, exist_ok=True)  # removed since: remade
        write_bytes_atomic(os.path.join(self.directory, name), data, durable=True)
        self._made = []  # written: the folders hold it
        for old in glob.glob(os.path.join(glob.escape(self.directory), "runs-*.parquet")):
            if os.path.basename(old) != name:
                try:
                    os.unlink(old)
                except OSError:
                    pass

    def _make_directory(self) -> list[str]:
        """Create the cache folder; return the folders created, outermost first ([] when it
        cannot be: then no store is written, :attr:`skip` says why)."""
        top = os.path.join(self.root, os.path.dirname(CACHE_DIR))  # ROOT/.perfkit
        made = [f for f in (top, self.directory) if not os.path.isdir(f)]
        try:
            os.makedirs(self.directory, exist_ok=True)
        except OSError as exc:
            self.skip = f"cannot create {self.directory} ({exc.strerror})"
            self._made = made
            self.abandon()
            return []
        return made

    def abandon(self) -> None:
        """Remove the folders made for a store that was not written (an empty one only)."""
        for folder in reversed(self._made):
            try:
                os.rmdir(folder)
            except OSError:
                break
        self._made = []


def _compression(table: pa.Table) -> dict[str, str]:
    """The codec of each Parquet column (named by its leaf path, as Parquet names a nested
    column's values): zstd for the columns a load reads only on first use (histograms,
    manifests, extra maps: most of the bytes), none for the rest, which every load decodes
    (2,000 wrk2 runs: the file 1.3 MB rather than 1.0, checked and its runs read in 16.7 ms
    rather than 17.7)."""
    return {path: "zstd" if field.name in DEFERRED_COLUMNS else "none"
            for field in table.schema for path in _leaf_paths(field.name, field.type)}


def _leaf_paths(name: str, kind: pa.DataType) -> list[str]:
    """The Parquet leaf columns of an Arrow field (pyarrow's names for nested types)."""
    if pa.types.is_map(kind):
        return [f"{name}.key_value.key", f"{name}.key_value.value"]
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        return _leaf_paths(f"{name}.list.element", kind.value_type)
    if pa.types.is_struct(kind):
        return [p for f in kind for p in _leaf_paths(f"{name}.{f.name}", f.type)]
    return [name]


def _batches(table: pa.Table, names: tuple[str, ...]) -> Iterator[tuple[list, ...]]:
    """The columns ``names`` of ``table`` as Python lists, 1,024 rows at a time: 30,000 paths
    (or stat results) at once would be megabytes of fresh memory, slower to fault in than to
    fill."""
    for batch in table.select(list(names)).to_batches(max_chunksize=_BATCH):
        yield tuple(column.to_numpy(zero_copy_only=False).tolist()
                    if pa.types.is_integer(column.type) else column.to_pylist()
                    for column in batch.columns)


# Two loops, spelled out: a shared one over named fields (attrgetter, a tuple per row) took
# 2 ms more of the 75 ms a cached load spends on its 30,000 stats.
def _same_dir_times(listings: pa.Table) -> bool:
    """Each directory's ``stat`` gives its row's mtime and ctime."""
    stat = os.stat
    for paths, mtimes, ctimes in _batches(listings, ("path", "mtime", "ctime")):
        for path, mtime, ctime in zip(paths, mtimes, ctimes, strict=True):
            st = stat(path)
            if st.st_mtime_ns != mtime or st.st_ctime_ns != ctime:
                return False
    return True


def _same_file_stats(files: pa.Table) -> bool:
    """Each file's ``stat`` gives its row's size, mtime and ctime."""
    stat = os.stat
    for paths, sizes, mtimes, ctimes in _batches(files, ("path", "size", "mtime", "ctime")):
        for path, size, mtime, ctime in zip(paths, sizes, mtimes, ctimes, strict=True):
            st = stat(path)
            if st.st_size != size or st.st_mtime_ns != mtime or st.st_ctime_ns != ctime:
                return False
    return True


def _racy(table: pa.Table, after: int) -> list[int]:
    """The rows whose mtime or ctime is ``after`` or later."""
    late = np.greater_equal(table.column("mtime").to_numpy(), after)
    late |= np.greater_equal(table.column("ctime").to_numpy(), after)
    return np.flatnonzero(late).tolist()


def _read_ipc(data: bytes, schema: pa.Schema) -> pa.Table:
    table = pa.ipc.open_stream(pa.py_buffer(data)).read_all()
    if not table.schema.equals(schema):
        raise ValueError("its index is not perfkit's")
    return table


def _ipc(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    options = pa.ipc.IpcWriteOptions(compression="lz4")  # faster to read than zstd
    with pa.ipc.new_stream(sink, table.schema, options=options) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def _state(index: dict[str, list[FileKey]], counts: list[int], reparse: list[bool],
           listings: dict[str, list], path: Callable[[str], str]) -> dict[bytes, bytes]:
    """The index and the listings as the metadata entries of :data:`_STATE`'s tables (each
    relative path made a path by ``path``)."""
    rows = {
        "listings": [[path(d), *listing] for d, listing in listings.items()],
        "index": [[path(d), count, again]
                  for d, count, again in zip(index, counts, reparse, strict=True)],
        "files": [[i, path(rel), *key] for i, keys in enumerate(index.values())
                  for rel, *key in keys],
    }
    out = {}
    for name, schema in _STATE.items():
        columns = list(zip(*rows[name], strict=True)) or [()] * len(schema)
        table = pa.table([pa.array(values, type=field.type)
                          for values, field in zip(columns, schema, strict=True)], schema=schema)
        out[f"perfkit.{name}".encode()] = _ipc(table)
    return out
