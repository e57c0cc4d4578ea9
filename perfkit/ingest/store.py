"""Runs <-> an Arrow table (one row per Run), losslessly: the run store's format.

:func:`runs_to_table` and :func:`table_to_runs` are inverse: ``table_to_runs(runs_to_table(r))``
gives Runs equal to ``r`` in every field and type (:meth:`perfkit.model.Run.same_as`). The
table is what ``.perfkit/cache/`` holds as Parquet and what a performance-history store can
build on:

- scalar fields are typed columns (``requests`` int64, ``duration_s`` float64, ``tool``
  string, ``is_aggregate`` bool, ...), null for None. A column whose
  values do not all have the field's declared type (an int where a float is declared) is
  stored as tagged JSON instead, so no value changes type;
- ``percentiles_ms`` and ``uncorrected_percentiles_ms``: ``map<double, double>``;
- ``histogram`` and ``uncorrected_histogram``: the encoded HdrHistogram string (``HISTF...``,
  readable by any HdrHistogram library), with ``*_count``, ``*_min_raw_us`` and
  ``*_max_raw_us`` beside it;
- ``notes`` and ``argv``: ``list<string>``; ``factors``, ``manifest`` and ``extra``: JSON with
  non-string keys tagged (``{"__map__": [[key, value], ...]}``).

Reading is lazy where it pays: a histogram is decoded and a JSON map parsed on first use, so
loading 10,000 cached runs costs little more than building the Run objects.
"""

from __future__ import annotations

import dataclasses
import json
import typing
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from perfkit import hdrcodec
from perfkit.histogram import LatencyHistogram
from perfkit.ingest.lazymap import LazyMap
from perfkit.model import LATENCY_SOURCES, FrozenMap, Run

#: bump when the table layout changes: a cache of another version is ignored
TABLE_VERSION = "1"
_HISTOGRAMS = ("histogram", "uncorrected_histogram")
_PERCENTILES = ("percentiles_ms", "uncorrected_percentiles_ms")
_JSON_MAPS = ("factors", "manifest", "extra")
_LISTS = ("notes", "argv")
_ARROW = {str: pa.string(), int: pa.int64(), float: pa.float64(), bool: pa.bool_()}
_MAP_TYPE = pa.map_(pa.float64(), pa.float64())


def _scalar_fields() -> dict[str, type]:
    hints = typing.get_type_hints(Run)
    out = {}
    for f in dataclasses.fields(Run):
        args = [a for a in typing.get_args(hints[f.name]) if a is not type(None)]
        kind = hints[f.name] if not args else args[0]
        if kind in _ARROW and len(args) <= 1:
            out[f.name] = kind
    return out


SCALARS = _scalar_fields()
_FIELDS = tuple(f.name for f in dataclasses.fields(Run))


# -- JSON with typed keys -----------------------------------------------------------------------
def _default(value: Any) -> Any:
    """json's hook for what it cannot write: frozen mappings (tuples it writes as lists)."""
    if isinstance(value, Mapping):
        if all(type(k) is str for k in value) and "__map__" not in value:
            return dict(value)
        return {"__map__": [[k, v] for k, v in value.items()]}
    raise TypeError(f"cannot store a {type(value).__name__} in a run table")


def _tuples(items: list) -> tuple:
    return tuple(_tuples(x) if type(x) is list else x for x in items)


def _hook(obj: dict) -> FrozenMap:
    if obj.keys() == {"__map__"}:
        return FrozenMap({(_tuples(k) if type(k) is list else k):
                          (_tuples(v) if type(v) is list else v) for k, v in obj["__map__"]})
    return FrozenMap({k: _tuples(v) if type(v) is list else v for k, v in obj.items()})


_ENCODER = json.JSONEncoder(separators=(",", ":"), allow_nan=True, default=_default)


def dumps(value: Any) -> str:
    """JSON of a frozen value with its key types kept (see the module docstring).

    Every mapping in a Run is a FrozenMap, which json hands to :func:`_default`: so a mapping
    with non-string keys is always tagged, never silently given string keys."""
    if isinstance(value, Mapping):
        value = _default(value)
    return _ENCODER.encode(value)


def loads(text: str) -> Any:
    value = json.loads(text, object_hook=_hook)
    return _tuples(value) if type(value) is list else value


def _json_dict(text: str) -> dict:
    return loads(text)._data


class LazyHistogram(LatencyHistogram):
    """A LatencyHistogram decoded from its HdrHistogram string on first use of its counts.

    Its total, min and max are known without decoding (from the table's columns)."""

    __slots__ = ("_encoded",)

    def __init__(self, encoded: str, total: int, min_raw: int | None, max_raw: int | None):
        self._encoded = encoded
        self._total = total
        self._min_raw = min_raw
        self._max_raw = max_raw

    def __getattr__(self, name: str) -> Any:
        if name not in ("_idx", "_cnt"):
            raise AttributeError(name)
        decoded = hdrcodec.decode_sparse(self._encoded)
        if decoded is None:
            full = LatencyHistogram.decode(self._encoded)
            decoded = full._idx, full._cnt
        idx, cnt = decoded
        if int(cnt.sum()) != self._total:
            raise ValueError("run store: a histogram does not hold its recorded count")
        idx.flags.writeable = False
        cnt.flags.writeable = False
        self._idx, self._cnt = idx, cnt
        return idx if name == "_idx" else cnt


def _encode(hist: LatencyHistogram) -> str:
    return hdrcodec.encode_sparse(hist.bucket_indexes, hist.bucket_counts)


# -- runs -> table ------------------------------------------------------------------------------
def _scalar_column(name: str, kind: type, values: list) -> tuple[pa.Array, bool]:
    """(column, is_json): typed when every value has the declared type, else tagged JSON."""
    if all(v is None or type(v) is kind for v in values):
        if kind is not int or all(v is None or -2**63 <= v < 2**63 for v in values):
            return pa.array(values, type=_ARROW[kind]), False
    return pa.array([dumps(v) for v in values], type=pa.string()), True


def runs_to_table(runs: Sequence[Run]) -> pa.Table:
    """One row per run (see the module docstring); inverse of :func:`table_to_runs`."""
    columns: dict[str, pa.Array] = {}
    json_columns = []
    for name, kind in SCALARS.items():
        column, is_json = _scalar_column(name, kind, [getattr(r, name) for r in runs])
        columns[name] = column
        if is_json:
            json_columns.append(name)
    for name in _PERCENTILES:
        columns[name] = pa.array([list(getattr(r, name).items()) for r in runs],
                                 type=_MAP_TYPE)
    for name in _HISTOGRAMS:
        hists = [getattr(r, name) for r in runs]
        columns[name] = pa.array([None if h is None else _encode(h) for h in hists],
                                 type=pa.string())
        columns[f"{name}_count"] = pa.array(
            [None if h is None else h.total_count for h in hists], type=pa.int64())
        for part in ("min", "max"):
            columns[f"{name}_{part}_raw_us"] = pa.array(
                [None if h is None else getattr(h, f"_{part}_raw") for h in hists],
                type=pa.int64())
    columns["notes"] = pa.array([list(r.notes) for r in runs], type=pa.list_(pa.string()))
    columns["argv"] = pa.array([None if r.argv is None else list(r.argv) for r in runs],
                               type=pa.list_(pa.string()))
    for name in _JSON_MAPS:
        columns[name] = pa.array([dumps(getattr(r, name)) for r in runs], type=pa.string())
    metadata = {"perfkit.table_version": TABLE_VERSION,
                "perfkit.json_columns": json.dumps(json_columns)}
    return pa.table(columns).replace_schema_metadata(metadata)


# -- table -> runs ------------------------------------------------------------------------------
def _histograms(table: pa.Table, name: str) -> list[LatencyHistogram | None]:
    encoded = table.column(name).to_pylist()
    totals = table.column(f"{name}_count").to_pylist()
    lows = table.column(f"{name}_min_raw_us").to_pylist()
    highs = table.column(f"{name}_max_raw_us").to_pylist()
    return [None if e is None else LazyHistogram(e, t, lo, hi)
            for e, t, lo, hi in zip(encoded, totals, lows, highs, strict=True)]


def table_to_runs(table: pa.Table) -> list[Run]:
    """The Runs of a table written by :func:`runs_to_table` (equal in every field)."""
    meta = table.schema.metadata or {}
    if meta.get(b"perfkit.table_version") != TABLE_VERSION.encode():
        raise ValueError("not a perfkit run table of version " + TABLE_VERSION)
    json_columns = set(json.loads(meta.get(b"perfkit.json_columns", b"[]")))
    n = table.num_rows
    empty = FrozenMap()
    # a column that is null in every row (the Locust fields of a wrk2 store...) is one value
    # for all runs, set once in the template every run's fields are copied from
    constant: dict[str, Any] = {}
    columns: dict[str, list] = {}

    def null(name: str) -> bool:
        return n > 0 and table.column(name).null_count == n

    for name in SCALARS:
        if null(name):
            constant[name] = None
            continue
        values = table.column(name).to_pylist()
        columns[name] = [loads(v) for v in values] if name in json_columns else values
    for name in _PERCENTILES:
        if null(name):
            constant[name] = empty
            continue
        columns[name] = [LazyMap(items, dict) if items else empty
                         for items in table.column(name).to_pylist()]
    for name in _HISTOGRAMS:
        if null(name):
            constant[name] = None
            continue
        columns[name] = _histograms(table, name)
    columns["notes"] = [tuple(v) for v in table.column("notes").to_pylist()]
    if null("argv"):
        constant["argv"] = None
    else:
        columns["argv"] = [None if v is None else tuple(v)
                           for v in table.column("argv").to_pylist()]
    for name in _JSON_MAPS:
        # runs of one configuration share their factors' text: one frozen map serves them all
        shared: dict[str, LazyMap] = {}
        columns[name] = [shared.get(text) or shared.setdefault(text, LazyMap(text, _json_dict))
                         for text in table.column(name).to_pylist()]
    sources = set(columns["latency_source"]) if "latency_source" in columns else {None}
    if n and sources - LATENCY_SOURCES.keys():
        raise ValueError(f"latency_source must be one of {sorted(LATENCY_SOURCES)}, found "
                         f"{sorted(map(str, sources - LATENCY_SOURCES.keys()))}")
    template = {name: constant.get(name) for name in _FIELDS}  # Run's field order
    names = list(columns)
    new, set_state = object.__new__, object.__setattr__
    runs = []
    for row in zip(*(columns[name] for name in names), strict=True):
        # what Run(**fields) does, without the keyword-argument machinery (10,000 cached runs
        # are built per load) and without __post_init__, whose checks and conversions the
        # columns above have made: every map frozen, every list a tuple, the sources checked
        fields = template.copy()
        fields.update(zip(names, row, strict=True))
        run = new(Run)
        set_state(run, "__dict__", fields)
        runs.append(run)
    return runs


def check_histograms(runs: Sequence[Run]) -> None:
    """Decode every lazy histogram now (ValueError if one is damaged)."""
    for run in runs:
        for name in _HISTOGRAMS:
            hist = getattr(run, name)
            if hist is not None:
                np.asarray(hist.bucket_indexes)
