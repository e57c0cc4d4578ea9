"""The performance-history store: the runs of every CI job, one Parquet file per label.

Layout (default folder ``.perfkit/history/`` under the current directory)::

    <store>/HISTORY.json                 {"format": "perfkit-history", "version": 2}
    <store>/labels/000001-v01.parquet    the runs of one ``perfkit history add`` (one label)
    <store>/labels/000002-3f9c2e1.parquet
    ...

Each label file holds one row per run: the history columns ``label``, ``time_utc`` (the
label's time, ISO 8601 UTC: ``--time``, else the first run's start), ``added_utc``, ``seq``
(the file's number) and ``job`` (the folder the runs came from); then the tidy per-run columns
of :func:`perfkit.frames.runs_frame` (``latency_p99_ms``, ``throughput_rps``, ...; the
per-run ``warnings`` joined by ``"; "``), readable by any Parquet reader; and ``run_json``,
every field of the :class:`perfkit.model.Run` (percentiles, histograms as HdrHistogram's
compressed base64 text, manifest, factors), from which perfkit rebuilds the runs. The file's
schema metadata (key ``perfkit.history``) repeats the label, time and seq.

Version 2 keeps a run's notes as coded warnings (:meth:`perfkit.warning.Warn.encode`'s code and
fields); a version-1 store kept them as sentences, read as :attr:`perfkit.warning.Code.RECORDED`
with the sentence as its text (nothing stored is rewritten). Adding a label to a version-1 store
marks it version 2, so that an older perfkit refuses it rather than misread the new labels.

The store only grows:

- a label is written once: adding a label already stored is refused unless ``replace`` (then
  the new file is written first and the old one removed after);
- every write is atomic: the file is written and fsynced under a temporary name, then linked
  to its final name, which fails rather than overwrite (two writers racing for one number:
  the second takes the next one), so a reader never sees half a file and nothing stored is
  overwritten. Of two concurrent adds of one label, the first linked wins; the other is
  removed and refused.

Readers order labels by ``time_utc``, then ``seq``. A label found in two files (a replace
interrupted between its two steps) is read from the newer file, with a warning.
"""

from __future__ import annotations

import dataclasses
import io
import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from perfkit._fsutil import fsync_dir, write_bytes_atomic
from perfkit.counters import FIELDS as COUNTER_FIELDS
from perfkit.counters import counters_of
from perfkit.errors import DataError, UsageError
from perfkit.frames import runs_frame
from perfkit.histogram import LatencyHistogram
from perfkit.model import Run
from perfkit.paths import HISTORY_STORE
from perfkit.warning import Code, Warn

#: the store's folder when none is given, relative to the current directory
DEFAULT_STORE = HISTORY_STORE
MARKER = "HISTORY.json"
FORMAT = "perfkit-history"
VERSION = 2
#: the versions this perfkit reads (1: notes as sentences)
READABLE = (1, 2)
META_KEY = b"perfkit.history"
#: a label file's name: its seq, then its label's slug (:func:`_slug`)
_NAME = re.compile(r"(\d+)-(.*)\.parquet")
HISTORY_COLUMNS = ("label", "time_utc", "added_utc", "seq", "job")

_HISTOGRAMS = ("histogram", "uncorrected_histogram")
_PERCENTILES = ("percentiles_ms", "uncorrected_percentiles_ms")
_TUPLES = ("argv",)


# -- Run <-> JSON -------------------------------------------------------------------------------
def _plain(value: Any) -> Any:
    """JSON-able form; a mapping with a non-string key becomes ``{"__pairs__": [[k, v]...]}``."""
    if isinstance(value, Mapping):
        if all(isinstance(k, str) for k in value) and "__pairs__" not in value:
            return {k: _plain(v) for k, v in value.items()}
        return {"__pairs__": [[_plain(k), _plain(v)] for k, v in value.items()]}
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, Warn):
        return json.loads(value.encode())
    if hasattr(value, "item") and not isinstance(value, str):
        return value.item()
    return value


def _unplain(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"__pairs__"}:
            return {_unplain(k): _unplain(v) for k, v in value["__pairs__"]}
        return {k: _unplain(v) for k, v in value.items()}
    if isinstance(value, list):
        return tuple(_unplain(v) for v in value)
    return value


def run_to_json(run: Run) -> str:
    """Every field of ``run`` as JSON text (histograms encoded, mappings with typed keys)."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(Run):
        value = getattr(run, f.name)
        if f.name in _HISTOGRAMS:
            value = None if value is None else value.encode()
        elif f.name in _PERCENTILES:
            value = [[float(q), float(v)] for q, v in value.items()]
        elif f.name == "counters":
            value = value.values()
        out[f.name] = _plain(value)
    return json.dumps(out, separators=(",", ":"), allow_nan=True)


def run_from_json(text: str) -> Run:
    """The :class:`Run` :func:`run_to_json` wrote."""
    data = json.loads(text)
    fields = {}
    for f in dataclasses.fields(Run):
        if f.name not in data:
            continue
        value = data[f.name]
        if f.name in _HISTOGRAMS:
            value = None if value is None else LatencyHistogram.decode(value)
        elif f.name in _PERCENTILES:
            value = {float(q): float(v) for q, v in value}
        elif f.name in _TUPLES:
            value = None if value is None else tuple(value)
        elif f.name == "notes":  # version 1: sentences
            value = tuple(Warn(Code.RECORDED, text=n) if isinstance(n, str) else Warn.decode(n)
                          for n in value)
        elif f.name == "counters":
            value = counters_of(value)
        else:
            value = _unplain(value)
        fields[f.name] = value
    if "counters" not in data:  # written before the counters were a sub-record: flat fields
        fields["counters"] = counters_of({k: data[k] for k in COUNTER_FIELDS if k in data})
    return Run(**fields)


# -- times ------------------------------------------------------------------------------------
def utc_text(value: Any, what: str = "--time") -> str:
    """An ISO 8601 time (a zone-less one is UTC) as ``YYYY-MM-DDTHH:MM:SS.fffZ``."""
    try:
        ts = pd.Timestamp(value)
    except (ValueError, TypeError):
        ts = None
    if ts is None or ts is pd.NaT:
        raise UsageError(f"{what}: expected an ISO 8601 time such as 2026-11-22T22:03:12Z, "
                         f"found {value!r}")
    ts = ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")
    return ts.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ts.microsecond // 1000:03d}Z"


def job_time(runs: Sequence[Run]) -> str | None:
    """The earliest recorded start of ``runs`` (None when no run recorded one)."""
    starts = [utc_text(r.start_utc, "start_utc") for r in runs if r.start_utc]
    return min(starts) if starts else None


def now_utc() -> str:
    return utc_text(datetime.now(UTC))


# -- the store --------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class LabelFile:
    """One stored label: its file and what its schema metadata says."""

    path: Path
    label: str
    time_utc: str
    seq: int
    n_runs: int
    design: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    #: the job's files that could not be read, left out by --skip-unreadable (their errors)
    left_out: tuple[str, ...] = ()


def is_store(path: str | os.PathLike) -> bool:
    """True for a folder that holds a history store (its marker file)."""
    return (Path(path) / MARKER).is_file()


def _check_store(path: Path) -> None:
    marker = path / MARKER
    try:
        info = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DataError(f"{marker}: expected a perfkit history marker (JSON), found "
                        f"{type(exc).__name__}: {exc}") from None
    if not isinstance(info, dict) or info.get("format") != FORMAT:
        raise DataError(f"{marker}: expected format {FORMAT!r}, found {info!r}")
    if info.get("version") not in READABLE:
        raise DataError(f"{marker}: expected history store version {VERSION}, found "
                        f"{info.get('version')!r}: use the perfkit that wrote it")


def _store_version(path: Path) -> int:
    return int(json.loads((path / MARKER).read_text(encoding="utf-8"))["version"])


def label_files(store: str | os.PathLike) -> tuple[list[LabelFile], list[Warn]]:
    """The stored labels in series order (time, then seq), and warnings (duplicates)."""
    path = Path(store)
    if not path.is_dir():
        raise DataError(f"no history store at {path} (create one with perfkit history add)")
    _check_store(path)
    found = _all_files(path)
    newest: dict[str, LabelFile] = {}
    warnings: list[Warn] = []
    for item in sorted(found, key=lambda f: f.seq):
        if item.label in newest:
            warnings.append(Warn(Code.LABEL_STORED_TWICE, label=item.label,
                                 older=newest[item.label].path.name, newer=item.path.name))
        newest[item.label] = item
    ordered = sorted(newest.values(), key=lambda f: (f.time_utc, f.seq))
    return ordered, warnings


def read_label(file: LabelFile) -> list[Run]:
    """The runs stored in one label file."""
    table = pq.read_table(file.path, columns=["run_json"])
    return [run_from_json(t) for t in table.column("run_json").to_pylist()]


def _arrow_column(values: pd.Series) -> pa.Array:
    """A column as Arrow: as it is when Arrow takes it, else as text (mixed-type factors)."""
    if values.dtype == object:
        try:
            return pa.array(values.tolist(), from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError):
            return pa.array([None if _missing(v) else str(v) for v in values], pa.string())
    return pa.Array.from_pandas(values)


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _table(runs: Sequence[Run], label: str, time_utc: str, seq: int, job: str,
           design: Mapping[str, Any], left_out: Sequence[str] = ()) -> pa.Table:
    frame = runs_frame(runs)
    frame["warnings"] = ["; ".join(w) for w in frame["warnings"]]
    head = {"label": [label] * len(runs), "time_utc": [time_utc] * len(runs),
            "added_utc": [now_utc()] * len(runs), "seq": [seq] * len(runs),
            "job": [job] * len(runs)}
    columns = {k: pa.array(v) for k, v in head.items()}
    for name in frame.columns:
        if name not in columns:
            columns[str(name)] = _arrow_column(frame[name])
    columns["run_json"] = pa.array([run_to_json(r) for r in runs], pa.string())
    meta = {META_KEY: json.dumps({"label": label, "time_utc": time_utc, "seq": seq,
                                  "n_runs": len(runs), "version": VERSION,
                                  "design": dict(design),
                                  **({"left_out": list(left_out)} if left_out else {})},
                                 default=str).encode()}
    return pa.table(columns).replace_schema_metadata(meta)


def _slug(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", label).strip("-.")[:60] or "label"


def init_store(store: str | os.PathLike) -> Path:
    """Create the store's folder and marker when missing; return its path."""
    path = Path(store)
    if path.exists() and not path.is_dir():
        raise UsageError(f"--store {path}: expected a folder, found a file")
    if path.is_dir() and any(path.iterdir()) and not is_store(path):
        raise UsageError(f"--store {path}: expected a perfkit history store or an empty "
                         f"folder, found a folder without {MARKER}")
    (path / "labels").mkdir(parents=True, exist_ok=True)
    if not is_store(path):
        _write_marker(path)
    _check_store(path)
    return path


def _write_marker(path: Path) -> None:
    _write_atomic(path / MARKER, json.dumps({"format": FORMAT, "version": VERSION},
                                            indent=2).encode() + b"\n", exclusive=False)


def _write_atomic(target: Path, data: bytes, exclusive: bool) -> bool:
    """Write ``data`` to ``target`` durably (fsynced); with ``exclusive`` never over an existing
    file (False: ``target`` exists, nothing written)."""
    return write_bytes_atomic(target, data, durable=True, exclusive=exclusive)


def add_label(store: str | os.PathLike, runs: Sequence[Run], label: str,
              time_utc: str | None = None, job: str = "", replace: bool = False,
              design: Mapping[str, Any] | None = None, left_out: Sequence[str] = ()
              ) -> LabelFile:
    """Store ``runs`` as ``label`` (see the module docstring); return the file written.
    ``design``: the job's experiment design (its ``experiment.yaml``), kept in the metadata;
    ``left_out``: the errors of the job's files that could not be read and were left out
    (``--skip-unreadable``), kept in the metadata too, so the label names them."""
    if not label or not label.strip():
        raise UsageError("--label: expected a commit or version, found an empty label")
    if not runs:
        raise DataError(f"no runs to add for label {label!r}")
    path = init_store(store)
    if _store_version(path) < VERSION:  # its new label is version 2's: older perfkits refuse
        _write_marker(path)
    older = _files_of(path, label)
    if older and not replace:
        raise DataError(f"label {label!r} is already in the history {path} "
                        f"({older[0].path.name}, {older[0].n_runs} runs): refused; use "
                        "--replace to replace it")
    when = time_utc or job_time(runs) or now_utc()
    seq = _last_seq(path) + 1
    while True:
        buf = io.BytesIO()
        pq.write_table(_table(runs, label, when, seq, job, design or {}, left_out), buf)
        target = path / "labels" / f"{seq:06d}-{_slug(label)}.parquet"
        if _write_atomic(target, buf.getvalue(), exclusive=True):
            break
        seq += 1
    written = LabelFile(target, label, when, seq, len(runs), dict(design or {}),
                        tuple(left_out))
    _settle(path, written, {f.path for f in older}, replace)
    return written


def _settle(path: Path, written: LabelFile, replaced: set[Path], replace: bool) -> None:
    """After linking: remove the files ``written`` replaces, or refuse a lost race."""
    every = [f for f in _files_of(path, written.label) if f.path != written.path]
    rivals = [f for f in every if f.path not in replaced]
    if rivals and not replace and min(f.seq for f in rivals) < written.seq:
        written.path.unlink()
        fsync_dir(written.path.parent)
        raise DataError(f"label {written.label!r} was added to {path} by another writer at "
                        "the same time: refused; use --replace to replace it")
    if replace:
        for f in every:
            if f.seq < written.seq:
                f.path.unlink(missing_ok=True)
        fsync_dir(written.path.parent)


def _files_of(path: Path, label: str) -> list[LabelFile]:
    """The stored files of ``label``, reading only the files named with its slug (and any file
    not named as :func:`add_label` names them), so that adding a label reads a few files
    whatever the store holds."""
    slug = _slug(label)
    out = []
    for file in sorted((path / "labels").glob("*.parquet")):
        named = _NAME.fullmatch(file.name)
        if named is None or named.group(2) == slug:
            meta = _read_meta(file)
            if meta.label == label:
                out.append(meta)
    return out


def _last_seq(path: Path) -> int:
    """The largest seq stored (0 for none), from the file names (``NNNNNN-slug.parquet``;
    a file named otherwise is read)."""
    seqs = [int(named.group(1)) if (named := _NAME.fullmatch(file.name)) else
            _read_meta(file).seq for file in (path / "labels").glob("*.parquet")]
    return max(seqs, default=0)


def _all_files(path: Path) -> list[LabelFile]:
    return [_read_meta(file) for file in sorted((path / "labels").glob("*.parquet"))]


def _read_meta(file: Path) -> LabelFile:
    try:
        info = json.loads((pq.read_schema(file).metadata or {})[META_KEY])
        return LabelFile(file, str(info["label"]), str(info["time_utc"]), int(info["seq"]),
                         int(info["n_runs"]), info.get("design") or {},
                         tuple(map(str, info.get("left_out") or ())))
    except (KeyError, ValueError, TypeError, pa.ArrowException):
        raise DataError(f"{file}: expected a Parquet file with perfkit history metadata "
                        f"({META_KEY.decode()}), found none") from None
