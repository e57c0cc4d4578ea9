"""Find tool outputs under a path, parse them, and merge in their run manifests.

Rules:

- A file named explicitly must be a tool's output: anything else (empty, binary, an HTML
  report, a stray CSV) is an error.
- Under a directory, files that are no tool's output (manifests, stderr logs, HTML reports,
  scripts) are skipped quietly. A file recognised as a tool's output but malformed is reported
  as a :class:`~perfkit.errors.ParseError`; the good files still load.
- Hidden directories (``runs/.aborted/``, ``.ipynb_checkpoints``) are never read: an aborted run
  is kept for inspection but never counted.
- A run directory whose perfkit manifest says the run failed or was killed yields a Run that
  says so (with whatever could be parsed), so a failure is never dropped silently.
- A run directory whose manifest records a run that none of its files gives (its output
  overwritten with garbage, emptied or deleted) is an error at the file that should hold it
  (:func:`perfkit.ingest.refusal.unreadable_run`): every run folder is a run or an error,
  never nothing.
- A value of a run that cannot be true (a percentile above the max, min above max, failures
  above requests, a latency of 1e308 ms, a negative counter) is kept out of the run, named in
  a note (:func:`perfkit.consistency.kept_out`): no analysis uses it.
"""

from __future__ import annotations

import dataclasses
import gc
import importlib
import os
import typing
from collections.abc import Iterable
from contextvars import ContextVar
from pathlib import Path
from typing import NamedTuple

from perfkit._fsutil import NotRegularFileError, read_bytes
from perfkit.consistency import kept_out
from perfkit.errors import LoadError, ParseError, PerfkitError, UnknownFormatError
from perfkit.ingest.decode import Decoded, decode, noted
from perfkit.ingest.refusal import unreadable_run
from perfkit.ingest.sniffer import HEAD_BYTES, sniff
from perfkit.model import Run
from perfkit.store.discover import walk
from perfkit.store.manifest import (
    MANIFEST_NAMES,
    ManifestInfo,
    apply_manifest,
    find_manifest,
    read_manifest,
)
from perfkit.store.version import SchemaVersionError
from perfkit.vocabulary import FAILED_STATUSES, ManifestStatus
from perfkit.warning import Code, Warn

#: the unit of HdrHistogram log values a caller states (the CLI's ``--unit``), for every load
#: in its context: None lets each log say (:func:`perfkit.store.hlog.parse`)
VALUE_UNIT: ContextVar[str | None] = ContextVar("VALUE_UNIT", default=None)

_TOOL_LATENCY_SOURCE = {"wrk": "summary_only", "wrk2": "hdr_corrected",
                        "locust": "locust_rounded"}
_LOCUST_KINDS = {"locust_json", "locust_stats", "locust_distribution", "locust_history",
                 "locust_failures", "locust_exceptions"}


@dataclasses.dataclass
class LoadResult:
    """Everything found under some paths: the runs that loaded and the errors of the rest."""

    runs: list[Run] = dataclasses.field(default_factory=list)
    errors: list[PerfkitError] = dataclasses.field(default_factory=list)

    def extend(self, other: LoadResult) -> None:
        self.runs.extend(other.runs)
        self.errors.extend(other.errors)


class _File(NamedTuple):
    path: str
    kind: str
    text: str
    #: how the file was decoded when not as UTF-8 (:mod:`perfkit.ingest.decode`)
    decoded: Warn | None = None


def read_text(path: str | os.PathLike) -> str | None:
    """The file as text (UTF-8, else as its byte-order mark says, else Latin-1), or None when it
    is binary (a NUL byte in its head)."""
    decoded = decode(read_bytes(path), HEAD_BYTES)
    return None if decoded is None else decoded.text


def _output(path: str, decoded: Decoded | None, wrk_tool: str | None) -> _File | None:
    """The tool output ``decoded`` (the text of ``path``) is (None: not one); see
    :func:`classify`."""
    if decoded is None:
        return None
    kind = sniff(decoded.text[:HEAD_BYTES])
    if kind is None:
        return None
    if wrk_tool is not None and kind in ("wrk", "wrk2"):
        kind = wrk_tool
    return _File(path, kind, decoded.text, decoded.note)


def _output_of(path: str, data: bytes, wrk_tool: str | None) -> _File | None:
    """The tool output that ``data``, the bytes of ``path``, is (None: not one), as
    :func:`_output` of its text says, with the head of a long file sniffed before the whole
    file is decoded: a file that is no tool output (Locust's HTML report, about 1 MB) is not.

    The head's first HEAD_BYTES characters are those of the whole text when it decodes: at most
    4 bytes a character, so ``4 * HEAD_BYTES`` bytes hold them (a character cut at the end is
    past them); when it does not decode (a NUL byte in the head: binary), the answer is None
    either way."""
    if (len(data) > 4 * HEAD_BYTES and data.find(b"\x00", 0, HEAD_BYTES) < 0
            and sniff(data[:4 * HEAD_BYTES].decode("utf-8", "ignore")[:HEAD_BYTES]) is None):
        return None
    return _output(path, decode(data, HEAD_BYTES), wrk_tool)


def classify(path: str, wrk_tool: str | None = None) -> _File | None:
    """The tool output at ``path`` (None: not one). ``wrk_tool``: what a manifest says wrote
    a wrk-family output ("wrk" or "wrk2"), which settles the two apart."""
    return _output_of(path, read_bytes(path), wrk_tool)


def _parser(module: str):
    # imported on first use: ``import perfkit`` stays cheap and loads no parser it won't need
    return importlib.import_module(f"perfkit.ingest.{module}")


def _parse_one(f: _File) -> list[Run]:
    source = f.path
    if f.kind in ("wrk", "wrk2"):
        return [_parser(f.kind).parse(f.text, source)]
    if f.kind == "hlog":
        hlog = importlib.import_module("perfkit.store.hlog")  # the format read and written
        return hlog.parse(f.text, source, unit=VALUE_UNIT.get())
    raise AssertionError(f.kind)  # pragma: no cover - Locust files go through _parse_locust


def _parse_locust(files: list[_File], unread: list[str]) -> list[Run]:
    return _parser("locust").parse_files([(f.kind, f.path, f.text) for f in files], unread)


def _failed_placeholder(info: ManifestInfo, directory: str, reason: str) -> Run:
    tool = info.tool or "wrk"
    return Run(
        tool=tool,
        source=str(directory),
        latency_source=_TOOL_LATENCY_SOURCE.get(tool, "summary_only"),
        notes=(Warn(Code.RUN_ENDED, status=info.status or ManifestStatus.FAILED,
                    exit_code=info.exit_code, reason=reason),),
    )


STDERR_NAMES = ("stderr.txt", "run.stderr")


def _stderr_reason(paths: list[str]) -> str:
    """Why a run wrote no output: the last line of its stderr (``unable to connect ...``)."""
    for path in paths:
        name = os.path.basename(path)
        if name in STDERR_NAMES:
            try:
                with open(path, "rb") as fh:
                    lines = fh.read()[-4096:].decode("utf-8", "replace").splitlines()
            except OSError:
                continue
            last = next((ln.strip() for ln in reversed(lines) if ln.strip()), None)
            if last:
                return f"no tool output was written; {name} says {last[:200]!r}"
    return "no tool output was written"


@dataclasses.dataclass
class _RunDir:
    """One run directory between reading and parsing: its manifest and its tool outputs."""

    directory: str
    paths: list[str]
    info: ManifestInfo | None
    files: list[_File]
    errors: list[PerfkitError]
    #: the other files (no tool's output, as far as the sniffer tells)
    unread: list[str] = dataclasses.field(default_factory=list)


_LOOK = object()
_MANIFEST_SUFFIXES = tuple(os.sep + name for name in MANIFEST_NAMES)
#: run directories read and parsed together (see :func:`scan_directory`)
BATCH_DIRS = 64


def _prepare(directory: str, paths: list[str], manifest: str | None | object = _LOOK) -> _RunDir:
    """Read the manifest and every file of one run directory; keep the tool outputs.

    ``manifest``: its path when the caller knows it (None: there is none); else looked up.
    """
    errors: list[PerfkitError] = []
    manifest_path = (find_manifest(Path(directory)) if manifest is _LOOK
                     else typing.cast("str | None", manifest))
    info: ManifestInfo | None = None
    if manifest_path is not None:
        try:
            info = read_manifest(manifest_path)
        except (ParseError, SchemaVersionError) as exc:
            errors.append(exc)
    files = []
    unread = []
    wrk_tool = info.tool if info is not None and info.tool in ("wrk", "wrk2") else None
    for path in sorted(paths):
        if path.endswith(_MANIFEST_SUFFIXES):
            continue
        try:
            data = read_bytes(path)
        except OSError:  # removed or unreadable meanwhile: not a tool output we can read
            continue
        f = _output_of(path, data, wrk_tool)  # classify(), its bytes read above
        if f is not None:
            files.append(f)
        else:
            unread.append(path)
    return _RunDir(directory, paths, info, files, errors, unread)


def _fast_parse(dirs: list[_RunDir]) -> dict[str, Run]:
    """Runs of the wrk2 outputs of the usual shape, all at once (:mod:`fastwrk2`)."""
    todo = [(f.text, f.path) for d in dirs for f in d.files if f.kind == "wrk2"]
    if not todo:
        return {}
    runs = _parser("fastwrk2").parse_many(todo)
    return {source: run for (_, source), run in zip(todo, runs, strict=True) if run is not None}


def _finish(d: _RunDir, fast: dict[str, Run]) -> LoadResult:
    """Parse one prepared run directory (fast-path runs given) and merge its manifest."""
    result = LoadResult(errors=list(d.errors))
    info = d.info
    runs: list[Run] = []
    failed = info is not None and info.status in FAILED_STATUSES
    reasons: list[str] = []
    for f in d.files:
        if f.kind in _LOCUST_KINDS:
            continue
        done = fast.get(f.path)
        if done is not None:
            runs.append(done)
            continue
        try:
            runs.extend(_parse_one(f))
        except ParseError as exc:
            (reasons.append(str(exc)) if failed else result.errors.append(exc))
    locust_files = [f for f in d.files if f.kind in _LOCUST_KINDS]
    if locust_files:
        try:
            runs.extend(_parse_locust(locust_files, d.unread))
        except ParseError as exc:
            (reasons.append(str(exc)) if failed else result.errors.append(exc))
    runs = noted(runs, {f.path: f.decoded for f in d.files if f.decoded})
    if info is not None:
        runs = [apply_manifest(r, info) for r in runs]
        if failed and not runs:
            reason = "; ".join(reasons) or _stderr_reason(d.paths)
            runs = [apply_manifest(_failed_placeholder(info, d.directory, reason), info)]
        elif not runs and not result.errors:  # a run its manifest records, and nothing gives
            result.errors.append(unreadable_run(d.directory, d.paths, info.raw, info.path))
    result.runs.extend(map(kept_out, runs))  # a value that cannot be true: out, and named
    return result


def load_directory_files(directory: str | os.PathLike, paths: list, fast: bool = True
                         ) -> LoadResult:
    """Load the tool outputs among ``paths`` (all in ``directory``) as one run directory.

    ``fast=False`` parses every file with the careful line parsers (the tests compare both).
    """
    d = _prepare(str(directory), [str(p) for p in paths])
    return _finish(d, _fast_parse([d]) if fast else {})


def _load_dirs(dirs: list[tuple[str, list[str], str | None | object]], fast: bool
               ) -> list[LoadResult]:
    """Load run directories ``(directory, file paths, manifest path or _LOOK)``, in batches:
    the texts of one batch are dropped before the next is read, so memory is reused rather
    than grown (1,008 wrk2 outputs: 10,800 page faults at once, 3,100 in batches of 64, a
    tenth less CPU time)."""
    done: list[LoadResult] = []
    for start in range(0, len(dirs), BATCH_DIRS):
        batch = [_prepare(*d) for d in dirs[start:start + BATCH_DIRS]]
        parsed = _fast_parse(batch) if fast else {}
        done.extend(_finish(d, parsed) for d in batch)
    return done


def scan_directory(root: Path, fast: bool = True, cache: bool | None = None) -> LoadResult:
    """Every run under the directory ``root``, wrk2 outputs parsed in one batch.

    With the run store (``cache``; default: on unless ``PERFKIT_CACHE=0``) the runs of run
    directories whose files did not change come from ``root/.perfkit/cache`` (see
    :mod:`perfkit.store.runcache`); the others are parsed and the cache is updated.
    """
    caching = importlib.import_module("perfkit.store.runcache")  # on first use, as parsers
    store = caching.RunCache(str(Path(root))) if caching.enabled(cache) else None
    try:
        return _scan_with(root, store, fast)
    except BaseException:
        if store is not None:
            store.abandon()  # no store: no folder made for it left behind
        raise


def _scan_with(root: Path, store, fast: bool) -> LoadResult:
    """:func:`scan_directory` with its run store (None: none)."""
    unchanged = None if store is None else store.unchanged()
    # nothing changed: no walk, and only the directories with errors parsed again
    if unchanged is not None and store is not None:
        again = [(d, paths, _LOOK) for d, paths in unchanged if d in store.reparse]
        reloaded = iter(_load_dirs(again, fast))
        result = LoadResult()
        for d, runs in unchanged:
            if d in store.reparse:
                result.extend(next(reloaded))
            else:
                result.runs.extend(runs)
        return result
    walked = list(walk(str(Path(root)), store, with_stat=store is not None))
    reused: dict[int, list[Run]] = {}
    todo = []
    for i, (directory, entries, _) in enumerate(walked):
        runs = None if store is None else store.lookup(directory, entries)
        if runs is not None:
            reused[i] = runs
        else:
            todo.append(i)
    loaded = _load_dirs([(walked[i][0], [p for p, _ in walked[i][1]], walked[i][2])
                         for i in todo], fast)
    done = dict(zip(todo, loaded, strict=True))
    result = LoadResult()
    for i, (directory, entries, _) in enumerate(walked):
        if i in reused:
            result.runs.extend(reused[i])
            continue
        one = done[i]
        if store is not None:
            # a directory with an error is recorded without runs: parsed again on every load,
            # so its error is reported every time
            store.put(directory, entries, None if one.errors else one.runs)
        result.extend(one)
    if store is not None:
        store.save()
    return result


def scan(path: str | os.PathLike, cache: bool | None = None) -> LoadResult:
    """Load every run under ``path`` (a file or a directory), collecting errors.

    ``cache``: use the run store of a directory (default: on unless ``PERFKIT_CACHE=0``)."""
    p = Path(path)
    if not p.exists():
        return LoadResult(errors=[UnknownFormatError(f"{p}: no such file or directory")])
    if VALUE_UNIT.get() is not None:
        cache = False  # the run store holds runs read in the logs' own units
    if not p.is_dir():
        return _scan_file(p)
    # Loading builds many small objects and no reference cycle: Python's cyclic garbage
    # collector would walk them again and again (it doubled the time of a cached load).
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return scan_directory(p, cache=cache)
    finally:
        if was_enabled:
            gc.enable()


def _scan_file(p: Path) -> LoadResult:
    try:
        text = read_text(p)
    except NotRegularFileError as exc:  # a FIFO or a device: refused before it is read
        return LoadResult(errors=[UnknownFormatError(f"{p}: {exc.strerror}")])
    if text is None:
        return LoadResult(errors=[ParseError(str(p), None, "text output of wrk, wrk2 or Locust",
                                             "a binary file")])
    if not text.strip():
        return LoadResult(errors=[ParseError(str(p), 1, "output of wrk, wrk2 or Locust",
                                             "an empty file")])
    f = classify(str(p))
    if f is None:
        from perfkit.ingest.refusal import not_an_output
        return LoadResult(errors=[UnknownFormatError(not_an_output(str(p), text))])
    # a named file still takes its manifest and, for Locust, stays a single file
    return load_directory_files(p.parent, [p])


def scan_many(paths: Iterable[str | os.PathLike]) -> LoadResult:
    result = LoadResult()
    for path in paths:
        result.extend(scan(path))
    return result


def load(path: str | os.PathLike, strict: bool = True, cache: bool | None = None
         ) -> list[Run]:
    """Load every run under ``path`` (a file or a directory) as a list of :class:`Run`.

    Parameters
    ----------
    path : str or path-like
        A tool's output file, a run directory, or a tree of run directories.
    strict : bool
        When True (default), any malformed file raises :class:`~perfkit.errors.LoadError`, which
        lists every error and still carries the runs that loaded in ``.runs``. When False, the
        good runs are returned and the errors are ignored.
    cache : bool, optional
        Keep and use the run store in ``DIR/.perfkit/cache/`` when ``path`` is a directory
        (:mod:`perfkit.store.runcache`): unchanged run directories are not parsed again.
        Default: on, unless the environment sets ``PERFKIT_CACHE=0``.
    """
    result = scan(path, cache=cache)
    if result.errors and strict:
        raise LoadError(result.errors, result.runs)
    return result.runs
