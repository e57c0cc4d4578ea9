"""A benchmark corpus of varied real tool outputs: every run directory of ``tests/fixtures``,
``/work/shared/fixtures`` (when present) and ``data/``, replicated to about ``runs`` runs.

The run directories are the real recorded outputs (wrk2 ``--latency`` with and without ``-U``,
non-2xx, calibration and short runs, saturated and timed-out runs, wrk, Locust CSV sets and
``--json``, HdrHistogram logs), each copied whole with its manifest (``meta.json`` or
``manifest.json``), so the loader sees what it sees on real data. A directory whose files are
byte-identical to one already taken (the shared fixtures are copied into ``tests/fixtures``)
is taken once. Nothing is edited: a copy is a copy.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = (ROOT / "tests" / "fixtures", Path("/work/shared/fixtures"), ROOT / "data")


@dataclass(frozen=True)
class Corpus:
    root: Path
    runs: int  # run directories written
    output_bytes: int  # bytes of the tool outputs (what the parsers read)
    kinds: dict[str, int]  # run directories per tool


def run_dirs(sources: tuple[Path, ...] = SOURCES) -> list[tuple[Path, str]]:
    """(run directory, tool) of every distinct run directory holding a tool output."""
    from perfkit.ingest.loader import classify
    from perfkit.store.discover import walk

    found: list[tuple[Path, str]] = []
    seen: set[str] = set()
    for source in sources:
        if not source.is_dir():
            continue
        for directory, entries, manifest in walk(str(source), with_stat=False):
            if manifest is None:
                continue
            kinds = set()
            for path, _ in entries:
                f = classify(path)
                if f is not None:
                    kinds.add(f.kind.split("_")[0])
            if not kinds:
                continue
            digest = hashlib.sha256()
            for path, _ in sorted(entries):
                digest.update(os.path.relpath(path, directory).encode() + b"\0")
                digest.update(Path(path).read_bytes())
            if digest.hexdigest() in seen:
                continue
            seen.add(digest.hexdigest())
            found.append((Path(directory), "+".join(sorted(kinds))))
    return found


def build(target: Path, runs: int = 2000, tools: tuple[str, ...] = ()) -> Corpus:
    """Copy the distinct run directories into ``target`` round-robin until ``runs`` runs
    (only those of ``tools``, e.g. ``("wrk2",)``, if given)."""
    from perfkit.ingest.loader import classify

    dirs = [d for d in run_dirs() if not tools or d[1] in tools]
    sizes = []
    for directory, _ in dirs:
        total = 0
        for path in directory.rglob("*"):
            if path.is_file() and classify(str(path)) is not None:
                total += path.stat().st_size
        sizes.append(total)
    kinds: dict[str, int] = {}
    output_bytes = 0
    for k in range(runs):
        i = k % len(dirs)
        directory, kind = dirs[i]
        shutil.copytree(directory, target / f"copy{k // len(dirs):03d}" / f"{i:04d}-"
                        f"{directory.name}", copy_function=shutil.copy)
        kinds[kind] = kinds.get(kind, 0) + 1
        output_bytes += sizes[i]
    return Corpus(target, runs, output_bytes, kinds)


def describe(corpus: Corpus) -> str:
    parts = ", ".join(f"{n} {kind}" for kind, n in sorted(corpus.kinds.items(),
                                                           key=lambda kv: -kv[1]))
    return (f"{corpus.runs} run directories ({parts}); {corpus.output_bytes / 1e6:.1f} MB of "
            f"tool output")
