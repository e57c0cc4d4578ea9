"""The seeds of the ingest fuzzer (tests/_fuzz.py): real tool outputs, as perfkit sniffs them.

Every file under tests/fixtures and data/ that a tool wrote (wrk, wrk2, Locust CSV and
``--json``), with its run manifest; every Locust run directory as a whole (its stats, history,
failures, exceptions and ``--json`` files together, as ``locust.parse_files`` merges them);
three interval logs written by hdrh's own HistogramLogWriter (no tool here writes ``.hlog``);
and the raw counter snapshots ``perfkit run`` keeps (nginx's ``stub_status`` page, the
kernel's ``/proc/net/netstat`` and ``/proc/net/snmp``), :data:`COUNTER_SEEDS` distinct ones.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from perfkit.ingest.sniffer import KINDS, sniff

FIXTURES = Path(__file__).resolve().parent / "fixtures"
DATA = FIXTURES.parents[1] / "data"
LOCUST_KINDS = frozenset(k for k in KINDS if k.startswith("locust"))
#: the counter snapshots' kinds, by file name (no sniffer knows them: the runner writes them)
COUNTER_KINDS = {"stub_status.txt": "stub_status", "netstat.txt": "proc_net",
                 "snmp.txt": "proc_net"}
#: distinct counter snapshots taken as seeds (of each name; there are hundreds, much alike)
COUNTER_SEEDS = 12


@dataclass(frozen=True)
class Seed:
    """One real output (or, ``kind == "locust_dir"``, a Locust run directory's files)."""

    kind: str
    name: str
    data: bytes
    manifest: bytes | None
    manifest_name: str | None
    #: a Locust directory's files: (kind, file name, bytes)
    files: tuple[tuple[str, str, bytes], ...] = ()


def _hlog_seeds() -> list[Seed]:
    """Interval logs written by hdrh's own HistogramLogWriter (no hlog fixture exists): with
    a BaseTime and absolute timestamps; with a StartTime, relative timestamps and tags; in
    nanoseconds (``#[ValueUnit: ns]``)."""
    from hdrh.histogram import HdrHistogram
    from hdrh.log import HistogramLogWriter

    rng = np.random.default_rng(7)
    out = []
    for shape in ("base", "start_tags", "ns"):
        buf = io.StringIO()
        writer = HistogramLogWriter(buf)
        writer.output_log_format_version()
        if shape == "base":
            writer.output_base_time(1795290763000)  # output_start_time is broken in hdrh 0.10
        else:  # the comment the Java writer writes
            writer.output_comment("[StartTime: 1795290763.000 (seconds since epoch), x]")
        if shape == "ns":
            writer.output_comment("[ValueUnit: ns]")
        writer.output_legend()
        for i in range(3):
            hist = HdrHistogram(1, 3_600_000_000_000, 3)
            scale = 1000 if shape == "ns" else 1
            for v in (rng.lognormal(7, 1, 300) * scale).astype(int) + 1:
                hist.record_value(int(v))
            if shape == "base":
                writer.output_interval_histogram(hist, 1795290763.0 + i, 1795290764.0 + i)
                continue
            line = io.StringIO()
            HistogramLogWriter(line).output_interval_histogram(hist, 0.127 + i, 1.127 + i)
            buf.write(("Tag=checkout," if shape == "start_tags" and i % 2 else "")
                      + line.getvalue())
        out.append(Seed("hlog", f"generated_{shape}.hlog", buf.getvalue().encode(), None, None))
    return out


def _manifest(directory: Path) -> tuple[bytes | None, str | None]:
    path = next((directory / n for n in ("manifest.json", "meta.json")
                 if (directory / n).is_file()), None)
    return (path.read_bytes(), path.name) if path else (None, None)


def _seeds_under(root: Path, prefix: str) -> list[Seed]:
    seeds = []
    locust_dirs: dict[Path, list[tuple[str, str, bytes]]] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if (not path.is_file() or path.name in ("manifest.json", "meta.json")
                or any(part.startswith(".") for part in rel.parts)):
            continue
        data = path.read_bytes()
        if not data.strip() or b"\x00" in data[:4096]:
            continue
        try:
            kind = sniff(data[:16384].decode("utf-8"))
        except UnicodeDecodeError:
            continue
        if kind is None:
            continue
        manifest, manifest_name = _manifest(path.parent)
        seeds.append(Seed(kind, prefix + str(rel), data, manifest, manifest_name))
        if kind in LOCUST_KINDS:
            locust_dirs.setdefault(path.parent, []).append((kind, path.name, data))
    for directory, files in locust_dirs.items():
        if len(files) > 1:
            manifest, manifest_name = _manifest(directory)
            seeds.append(Seed("locust_dir", prefix + str(directory.relative_to(root)), b"",
                              manifest, manifest_name, tuple(files)))
    return seeds


def _counter_seeds(roots: list[Path]) -> list[Seed]:
    """Up to :data:`COUNTER_SEEDS` distinct snapshots of each counter file under ``roots``."""
    out: list[Seed] = []
    for name, kind in COUNTER_KINDS.items():
        seen: set[bytes] = set()
        for root in roots:
            for path in sorted(root.rglob(f"counters/*/{name}")):
                data = path.read_bytes()
                if data in seen or len(seen) >= COUNTER_SEEDS:
                    continue
                seen.add(data)
                out.append(Seed(kind, f"counters/{path.relative_to(root.parent)}", data, None,
                                None))
    return out


def load_seeds(root: Path = FIXTURES, data: Path | None = DATA) -> list[Seed]:
    """Every tool output under ``root`` and ``data`` (names ``data/...``), every Locust run
    directory among them, three hdrh-written interval logs, and counter snapshots."""
    seeds = _seeds_under(root, "")
    if data is not None and data.is_dir():
        seeds += _seeds_under(data, "data/")
    roots = [root] + ([data] if data is not None and data.is_dir() else [])
    return seeds + _hlog_seeds() + _counter_seeds(roots)
