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
"""

from __future__ import annotations

import dataclasses
import importlib
import os
from collections.abc import Iterable
from pathlib import Path

from perfkit.errors import LoadError, ParseError, PerfkitError, UnknownFormatError
from perfkit.ingest.manifest import (
    MANIFEST_NAMES,
    ManifestInfo,
    apply_manifest,
    find_manifest,
    read_manifest,
)
from perfkit.ingest.sniff import HEAD_BYTES, sniff
from perfkit.model import Run

FAILED_STATUSES = {"failed", "killed", "aborted", "timeout"}
_TOOL_LATENCY_SOURCE = {"wrk": "summary_only", "wrk2": "hdr_corrected",
                        "locust": "locust_rounded"}
_LOCUST_KINDS = {"locust_json", "locust_stats", "locust_history", "locust_failures",
                 "locust_exceptions"}


@dataclasses.dataclass
class LoadResult:
    """Everything found under some paths: the runs that loaded and the errors of the rest."""

    runs: list[Run] = dataclasses.field(default_factory=list)
    errors: list[PerfkitError] = dataclasses.field(default_factory=list)

    def extend(self, other: LoadResult) -> None:
        self.runs.extend(other.runs)
        self.errors.extend(other.errors)


@dataclasses.dataclass(frozen=True)
class _File:
    path: Path
    kind: str
    text: str


def read_text(path: Path) -> str | None:
    """The file as text, or None when it is binary (NUL bytes or not UTF-8)."""
    data = path.read_bytes()
    if b"\x00" in data[:HEAD_BYTES]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def classify(path: Path) -> _File | None:
    text = read_text(path)
    if text is None:
        return None
    kind = sniff(text[:HEAD_BYTES])
    return None if kind is None else _File(path, kind, text)


def _parser(module: str):
    # imported on first use: ``import perfkit`` stays cheap and loads no parser it won't need
    return importlib.import_module(f"perfkit.ingest.{module}")


def _parse_one(f: _File) -> list[Run]:
    source = str(f.path)
    if f.kind in ("wrk", "wrk2"):
        return [_parser(f.kind).parse(f.text, source)]
    if f.kind == "hlog":
        return _parser("hlog").parse(f.text, source)
    raise AssertionError(f.kind)  # pragma: no cover - Locust files go through _parse_locust


def _parse_locust(files: list[_File]) -> list[Run]:
    return _parser("locust").parse_files([(f.kind, str(f.path), f.text) for f in files])


def _failed_placeholder(info: ManifestInfo, directory: Path, reason: str) -> Run:
    tool = info.tool or "wrk"
    return Run(
        tool=tool,
        source=str(directory),
        latency_source=_TOOL_LATENCY_SOURCE.get(tool, "summary_only"),
        notes=(f"run {info.status or 'failed'} (exit code {info.exit_code}): {reason}",),
    )


STDERR_NAMES = ("stderr.txt", "run.stderr")


def _stderr_reason(paths: list[Path]) -> str:
    """Why a run wrote no output: the last line of its stderr (``unable to connect ...``)."""
    for path in paths:
        if path.name in STDERR_NAMES:
            try:
                lines = path.read_bytes()[-4096:].decode("utf-8", "replace").splitlines()
            except OSError:
                continue
            last = next((ln.strip() for ln in reversed(lines) if ln.strip()), None)
            if last:
                return f"no tool output was written; {path.name} says {last[:200]!r}"
    return "no tool output was written"


def load_directory_files(directory: Path, paths: list[Path]) -> LoadResult:
    """Load the tool outputs among ``paths`` (all in ``directory``) as one run directory."""
    result = LoadResult()
    manifest_path = find_manifest(directory)
    info: ManifestInfo | None = None
    if manifest_path is not None:
        try:
            info = read_manifest(manifest_path)
        except ParseError as exc:
            result.errors.append(exc)
    files = []
    for path in sorted(paths):
        if path.name in MANIFEST_NAMES:
            continue
        f = classify(path)
        if f is None:
            continue
        if info is not None and info.tool in ("wrk", "wrk2") and f.kind in ("wrk", "wrk2"):
            f = dataclasses.replace(f, kind=info.tool)
        files.append(f)
    runs: list[Run] = []
    failed = info is not None and info.status in FAILED_STATUSES
    reasons: list[str] = []
    for f in files:
        if f.kind in _LOCUST_KINDS:
            continue
        try:
            runs.extend(_parse_one(f))
        except ParseError as exc:
            (reasons.append(str(exc)) if failed else result.errors.append(exc))
    locust_files = [f for f in files if f.kind in _LOCUST_KINDS]
    if locust_files:
        try:
            runs.extend(_parse_locust(locust_files))
        except ParseError as exc:
            (reasons.append(str(exc)) if failed else result.errors.append(exc))
    if info is not None:
        runs = [apply_manifest(r, info) for r in runs]
        if failed and not runs:
            reason = "; ".join(reasons) or _stderr_reason(paths)
            runs = [apply_manifest(_failed_placeholder(info, directory, reason), info)]
    result.runs.extend(runs)
    return result


def _visible_files(directory: Path, recursive: bool) -> list[Path]:
    found = []
    for dirpath, dirnames, filenames in os.walk(directory):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        found.extend(Path(dirpath) / n for n in filenames if not n.startswith("."))
        if not recursive:
            break
    return found


def _walk(root: Path) -> Iterable[tuple[Path, list[Path]]]:
    """Run directories under ``root`` with their files.

    A directory holding a manifest is one run: the files of its subdirectories (e.g. Locust's
    CSVs in ``runs/<id>/locust/``) belong to it. Other directories are searched further.
    """
    for dirpath, dirnames, _ in os.walk(root):
        directory = Path(dirpath)
        if find_manifest(directory) is not None:
            dirnames[:] = []
            yield directory, _visible_files(directory, recursive=True)
            continue
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        yield directory, _visible_files(directory, recursive=False)


def scan(path: str | os.PathLike) -> LoadResult:
    """Load every run under ``path`` (a file or a directory), collecting errors."""
    p = Path(path)
    if not p.exists():
        return LoadResult(errors=[UnknownFormatError(f"{p}: no such file or directory")])
    if p.is_dir():
        result = LoadResult()
        for directory, files in _walk(p):
            result.extend(load_directory_files(directory, files))
        return result
    return _scan_file(p)


def _scan_file(p: Path) -> LoadResult:
    text = read_text(p)
    if text is None:
        return LoadResult(errors=[ParseError(str(p), None, "text output of wrk, wrk2 or Locust",
                                             "a binary file")])
    if not text.strip():
        return LoadResult(errors=[ParseError(str(p), 1, "output of wrk, wrk2 or Locust",
                                             "an empty file")])
    f = classify(p)
    if f is None:
        return LoadResult(errors=[UnknownFormatError(
            f"{p}: not the output of wrk, wrk2, Locust (CSV or --json) or an HdrHistogram log")])
    # a named file still takes its manifest and, for Locust, stays a single file
    return load_directory_files(p.parent, [p])


def scan_many(paths: Iterable[str | os.PathLike]) -> LoadResult:
    result = LoadResult()
    for path in paths:
        result.extend(scan(path))
    return result


def load(path: str | os.PathLike, strict: bool = True) -> list[Run]:
    """Load every run under ``path`` (a file or a directory) as a list of :class:`Run`.

    Parameters
    ----------
    path : str or path-like
        A tool's output file, a run directory, or a tree of run directories.
    strict : bool
        When True (default), any malformed file raises :class:`~perfkit.errors.LoadError`, which
        lists every error and still carries the runs that loaded in ``.runs``. When False, the
        good runs are returned and the errors are ignored.
    """
    result = scan(path)
    if result.errors and strict:
        raise LoadError(result.errors, result.runs)
    return result.runs
