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
- ``histogram`` and ``uncorrected_histogram``: the HdrHistogram's non-zero counts, sparse, as
  two ``list<int64>`` columns: ``*_indexes``, each count's index into HdrHistogram's counts
  array (the layout of :mod:`perfkit.hdrlayout`: lowest 1 us, highest 24 h, 3 significant
  digits; any HdrHistogram library of that layout takes them as they are), and ``*_counts``;
  with ``*_count``, ``*_min_raw_us`` and ``*_max_raw_us`` beside them. Written from the arrays
  a LatencyHistogram holds, with no encoding (a store written on the first load costs little
  more than the load);
- ``counters`` (:class:`perfkit.counters.ServerCounters`): one ``int64`` column per field,
  named as the field (the record's column), null for None;
- ``notes`` and ``argv``: ``list<string>``, a note (a coded warning) as the JSON of its code
  and fields (:meth:`perfkit.warning.Warn.encode`); ``factors``, ``manifest`` and ``extra``:
  JSON with non-string keys tagged (``{"__map__": [[key, value], ...]}``).

Reading is lazy where it pays: a histogram's arrays are sliced and a JSON map or a percentile
map built on first use, so loading 10,000 cached runs costs little more than building the Run
objects. Read from the Parquet file's bytes (:class:`ParquetTable`, as the run store does), the
histograms and the manifest and extra texts (most of the bytes) are not even read from the file
until a run first uses one. A column holding one value in every row (null, empty, or
equal: a wrk2 store's Locust fields, its tool) gives that one value to every run.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import operator
import threading
import typing
from collections import deque
from collections.abc import Mapping, Sequence
from itertools import chain, repeat
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from perfkit.counters import FIELDS as COUNTER_FIELDS
from perfkit.counters import NO_COUNTERS, ServerCounters
from perfkit.hdrlayout import LAYOUT
from perfkit.histogram import LatencyHistogram
from perfkit.model import (
    CLASS_DEFAULTS,
    LATENCY_SOURCES,
    FrozenMap,
    Run,
    derived_checks,
    remember_checks,
)
from perfkit.store.lazymap import LazyJsonMap, LazyMap
from perfkit.warning import Warn

#: bump when the table layout changes: a cache of another version is ignored (2: the server
#: and kernel counters' columns, issue 25; 3: histograms as sparse counts, not HdrHistogram
#: strings, issue 24; 4: the counters a sub-record of Run, their columns unchanged, with the
#: upstream's and the listening sockets' beside them, issue 29; 5: notes as coded warnings,
#: not sentences, issue 32: a version-4 cache holds sentences, rebuilt; 6: each run's
#: validity checks, whether its manifest recorded counters and its manifest's status kept
#: beside it, issue 33)
TABLE_VERSION = "6"
#: the modules whose code derives the checks a table keeps (:func:`perfkit.model.
#: derived_checks`): a digest of their source is part of the version a store is written with
#: (:data:`CHECKS_DIGEST`), so that a store written before they changed is not read
CHECKS_MODULES = ("perfkit.model", "perfkit.consistency", "perfkit.counters", "perfkit.units",
                  "perfkit.warning")
_HISTOGRAMS = ("histogram", "uncorrected_histogram")
_SPARSE = ("_indexes", "_counts")
_PERCENTILES = ("percentiles_ms", "uncorrected_percentiles_ms")
_JSON_MAPS = ("factors", "manifest", "extra")
#: string columns whose values recur from run to run by nature (one tool, one target URL,
#: one tool version...): read from Parquet as its dictionary (one str per distinct value)
_REPEATED = ("tool", "latency_source", "endpoint", "method", "url", "tool_version")
#: the columns a run only reads on first use (its histograms' counts, its maps parsed): read
#: from a :class:`ParquetTable` on first use too, they are most of its bytes
DEFERRED_COLUMNS = (*(h + part for h in _HISTOGRAMS for part in _SPARSE), "manifest", "extra")
_ARROW = {str: pa.string(), int: pa.int64(), float: pa.float64(), bool: pa.bool_()}
_MAP_TYPE = pa.map_(pa.float64(), pa.float64())
_SPARSE_TYPE = pa.list_(pa.int64())


def _checks_digest() -> str:
    """sha256 (first 16 hex digits) of the source of :data:`CHECKS_MODULES` (of whatever of it
    can be read: an installation without sources has its version to tell it apart)."""
    import hashlib
    import importlib.util

    h = hashlib.sha256()
    for name in CHECKS_MODULES:
        spec = importlib.util.find_spec(name)
        try:
            with open(spec.origin if spec and spec.origin else "", "rb") as fh:
                h.update(fh.read())
        except OSError:
            h.update(name.encode())
    return h.hexdigest()[:16]


CHECKS_DIGEST = _checks_digest()


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
        # a FrozenMap's dict as it is: dict(value) would call its __getitem__ for every key
        data = value._data if isinstance(value, FrozenMap) else dict(value)
        if all(type(k) is str for k in data) and "__map__" not in data:
            return data
        return {"__map__": [[k, v] for k, v in data.items()]}
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
    with non-string keys is always tagged, never silently given string keys. A manifest read
    from a file gives that file's JSON text
    (:meth:`perfkit.store.lazymap.LazyJsonMap.json_text`), not decoded and encoded again."""
    if type(value) is LazyJsonMap:
        text = value.json_text(_ENCODER.encode)
        if text is not None:
            return text
    if isinstance(value, Mapping):
        value = _default(value)
    return _ENCODER.encode(value)


def loads(text: str) -> Any:
    value = json.loads(text, object_hook=_hook)
    return _tuples(value) if type(value) is list else value


def _json_dict(text: str) -> dict:
    return loads(text)._data


class LazyHistogram(LatencyHistogram):
    """A LatencyHistogram whose counts are sliced from the table's columns on first use.

    ``sparse`` gives the row's (indexes, counts) arrays (:class:`_SparseColumns`: a run
    table's columns stay Arrow data, or unread, until a histogram is used); its total, min and
    max are known without them (from the table's columns)."""

    __slots__ = ("_columns", "_row")  # not _sparse: that is the class's constructor

    def __init__(self, sparse: _SparseColumns, row: int, total: int, min_raw: int | None,
                 max_raw: int | None):
        self._columns = sparse
        self._row = row
        self._total = total
        self._min_raw = min_raw
        self._max_raw = max_raw

    def __getattr__(self, name: str) -> Any:
        if name not in ("_idx", "_cnt"):
            raise AttributeError(name)
        idx, cnt = self._columns.row(self._row)
        if (len(idx) != len(cnt) or int(cnt.sum()) != self._total
                or (len(idx) and (idx[0] < 0 or idx[-1] >= LAYOUT.counts_len
                                  or not (np.diff(idx) > 0).all() or cnt.min() <= 0))):
            raise ValueError("run store: a histogram does not hold its recorded counts")
        self._idx, self._cnt = idx, cnt
        return idx if name == "_idx" else cnt


class _SparseColumns:
    """The ``*_indexes`` and ``*_counts`` columns of one histogram field: each row's arrays
    (read-only views of the columns' values), the columns taken on first use (``source()``:
    from memory, or read from a :class:`ParquetTable`)."""

    __slots__ = ("_source", "_arrays", "_lock")

    def __init__(self, source: Any):
        self._source = source
        self._arrays: tuple[np.ndarray, ...] | None = None  # offsets, values of each
        self._lock = threading.Lock()

    def row(self, row: int) -> tuple[np.ndarray, np.ndarray]:
        if self._arrays is None:
            with self._lock:
                if self._arrays is None:
                    self._arrays = tuple(x for a in self._source() for x in _flat(a))
        idx_offsets, idx, cnt_offsets, cnt = self._arrays
        start, end = idx_offsets[row], idx_offsets[row + 1]
        if cnt_offsets[row] != start or cnt_offsets[row + 1] != end:
            raise ValueError("run store: a histogram's indexes and counts differ in length")
        return idx[start:end], cnt[start:end]


def _flat(arr: pa.ListArray) -> tuple[np.ndarray, np.ndarray]:
    """(offsets, values) of an int64 list column, as read-only numpy views of its buffers."""
    if not arr.type.equals(_SPARSE_TYPE) or arr.values.null_count:
        raise ValueError("run store: a histogram column is not a list of int64")
    offsets = arr.offsets.to_numpy()
    values = arr.values.to_numpy()
    offsets.flags.writeable = False  # Arrow's buffers are read-only already; said again
    return offsets, values


def _sparse_columns(hists: list[LatencyHistogram | None]) -> tuple[pa.Array, pa.Array]:
    """The ``*_indexes`` and ``*_counts`` columns of ``hists`` (null where None)."""
    held = [h for h in hists if h is not None]
    lengths = np.zeros(len(hists), dtype=np.int64)
    lengths[[i for i, h in enumerate(hists) if h is not None]] = [len(h.bucket_indexes)
                                                                   for h in held]
    offsets = np.zeros(len(hists) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    mask = pa.array([h is None for h in hists], type=pa.bool_())
    out = []
    for arrays in ([h.bucket_indexes for h in held], [h.bucket_counts for h in held]):
        values = (np.concatenate(arrays).astype(np.int64, copy=False) if held
                  else np.zeros(0, dtype=np.int64))
        out.append(pa.LargeListArray.from_arrays(offsets, values, mask=mask)
                   .cast(_SPARSE_TYPE))
    return out[0], out[1]


# -- runs -> table ------------------------------------------------------------------------------
def _scalar_column(name: str, kind: type, values: Sequence) -> tuple[pa.Array, bool]:
    """(column, is_json): typed when every value has the declared type, else tagged JSON."""
    types = set(map(type, values))
    types.discard(type(None))
    if types <= {kind}:
        held = [v for v in values if v is not None] if kind is int else ()
        if not held or (-2**63 <= min(held) and max(held) < 2**63):
            return pa.array(values, type=_ARROW[kind]), False
    return pa.array([dumps(v) for v in values], type=pa.string()), True


_GET_SCALARS = operator.attrgetter(*SCALARS)


def _map_column(maps: list[Mapping[float, float]]) -> pa.MapArray:
    """A ``map<double, double>`` column of percentile maps, from their flat keys and values."""
    datas = [m._data if isinstance(m, FrozenMap) else dict(m) for m in maps]
    offsets = np.zeros(len(datas) + 1, dtype=np.int32)
    np.cumsum(list(map(len, datas)), out=offsets[1:])
    keys = pa.array(list(chain.from_iterable(datas)), type=pa.float64())
    items = pa.array(list(chain.from_iterable(map(dict.values, datas))), type=pa.float64())
    return pa.MapArray.from_arrays(pa.array(offsets), keys, items)


def runs_to_table(runs: Sequence[Run]) -> pa.Table:
    """One row per run (see the module docstring); inverse of :func:`table_to_runs`."""
    columns: dict[str, pa.Array] = {}
    json_columns = []
    values = list(zip(*map(_GET_SCALARS, runs), strict=True)) or [()] * len(SCALARS)
    for (name, kind), column_values in zip(SCALARS.items(), values, strict=True):
        column, is_json = _scalar_column(name, kind, column_values)
        columns[name] = column
        if is_json:
            json_columns.append(name)
    counters = [r.counters for r in runs]
    for name in COUNTER_FIELDS:
        columns[name] = pa.array([getattr(c, name) for c in counters], type=pa.int64())
    for name in _PERCENTILES:
        columns[name] = _map_column([getattr(r, name) for r in runs])
    for name in _HISTOGRAMS:
        hists = [getattr(r, name) for r in runs]
        columns[f"{name}_indexes"], columns[f"{name}_counts"] = _sparse_columns(hists)
        columns[f"{name}_count"] = pa.array(
            [None if h is None else h.total_count for h in hists], type=pa.int64())
        for part in ("min", "max"):
            columns[f"{name}_{part}_raw_us"] = pa.array(
                [None if h is None else getattr(h, f"_{part}_raw") for h in hists],
                type=pa.int64())
    encoded: dict[Warn, str] = {}  # runs share notes (a tool's, a manifest's)
    columns["notes"] = pa.array([[encoded[w] if w in encoded else encoded.setdefault(w, w.encode())
                                  for w in r.notes] for r in runs], type=pa.list_(pa.string()))
    derived = [derived_checks(r) for r in runs]
    columns["checks"] = pa.array([[encoded[w] if w in encoded else encoded.setdefault(w, w.encode())
                                   for w in d.checks] for d in derived],
                                 type=pa.list_(pa.string()))
    columns["counters_recorded"] = pa.array([d.counters_recorded for d in derived],
                                            type=pa.bool_())
    columns["manifest_status"] = pa.array([d.status for d in derived], type=pa.string())
    columns["manifest_status_kept"] = pa.array([d.status_kept for d in derived], type=pa.bool_())
    columns["argv"] = pa.array([None if r.argv is None else list(r.argv) for r in runs],
                               type=pa.list_(pa.string()))
    for name in _JSON_MAPS:
        texts: dict[int, str] = {}  # by object: runs share maps (the empty one, a manifest's)
        columns[name] = pa.array([texts[id(m)] if id(m) in texts
                                  else texts.setdefault(id(m), dumps(m))
                                  for m in (getattr(r, name) for r in runs)], type=pa.string())
    metadata = {"perfkit.table_version": TABLE_VERSION,
                "perfkit.json_columns": json.dumps(json_columns)}
    return pa.table(columns).replace_schema_metadata(metadata)


# -- table -> runs ------------------------------------------------------------------------------
#: a column whose rows do not all hold one value
_VARIES = object()


class _Rows(list):
    """A field's value in each row (what is not one value for every row)."""


_new = object.__new__
#: object.__setattr__(run, "__dict__", ...), direct (the descriptor of the first class of Run's
#: bases that has one: Provenance)
_set_state = next(vars(c)["__dict__"] for c in Run.__mro__ if "__dict__" in vars(c)).__set__


def _array(table: pa.Table, name: str) -> pa.Array:
    column = table.column(name)
    if column.num_chunks == 1:
        return column.chunk(0)
    kind = column.type  # chunks of different dictionaries (row groups): plain values
    if pa.types.is_dictionary(kind):
        column = column.cast(kind.value_type)
    return column.combine_chunks()


def _one_value(arr: pa.Array) -> Any:
    """The value of every row of a scalar column (same type, same bits), else _VARIES."""
    n = len(arr)
    if arr.null_count == n:
        return None
    if arr.null_count:
        return _VARIES
    if pa.types.is_dictionary(arr.type):
        indices = arr.indices.to_numpy()
        return arr[0].as_py() if (indices == indices[0]).all() else _VARIES
    if pa.types.is_string(arr.type):
        return arr[0].as_py() if _same_texts(arr) else _VARIES
    values = arr.to_numpy(zero_copy_only=False)
    if values.dtype == np.float64:
        values = values.view(np.int64)  # bits: -0.0 is not 0.0, a NaN equals itself
    return arr[0].as_py() if (values == values[0]).all() else _VARIES


def _same_texts(arr: pa.Array) -> bool:
    """Every row of a string column (without nulls) holds the same text."""
    lengths = pc.binary_length(arr).to_numpy()
    return bool((lengths == lengths[0]).all()) and pc.all(pc.equal(arr, arr[0])).as_py()


def _scalars(arr: pa.Array) -> list:
    if arr.null_count == 0 and (pa.types.is_int64(arr.type) or pa.types.is_float64(arr.type)):
        return arr.to_numpy().tolist()  # no nulls: numpy builds the Python numbers faster
    if arr.null_count == 0 and pa.types.is_dictionary(arr.type):  # one str per distinct text
        return list(map(arr.dictionary.to_pylist().__getitem__, arr.indices.to_numpy().tolist()))
    return arr.to_pylist()


def _with_nulls(out: _Rows, arr: pa.Array, value: Any) -> _Rows:
    """``out`` with ``value`` at each row where ``arr`` is null."""
    if arr.null_count:
        for i in np.flatnonzero(arr.is_null().to_numpy(zero_copy_only=False)).tolist():
            out[i] = value
    return out


def _percentile_dict(keys: np.ndarray, items: np.ndarray, offsets: np.ndarray, row: int
                     ) -> dict:
    start, end = offsets[row], offsets[row + 1]
    return dict(zip(keys[start:end].tolist(), items[start:end].tolist(), strict=True))


def _percentiles(arr: pa.MapArray, rows: list[int]) -> Any:
    """One lazy map per row, built from the row's slice of the flat keys and values on first
    use (a null map reads as an empty one); the empty map if every row's is."""
    offsets = arr.offsets.to_numpy()
    if offsets[0] == offsets[-1]:
        return FrozenMap()
    keys, items = arr.keys, arr.items
    if keys.null_count or items.null_count:  # not written by runs_to_table: Python's lists
        keys, items = np.array(keys.to_pylist(), object), np.array(items.to_pylist(), object)
    else:
        keys, items = keys.to_numpy(), items.to_numpy()
    make = functools.partial(_percentile_dict, keys, items, offsets)
    return _with_nulls(_Rows(map(LazyMap, rows, repeat(make))), arr, FrozenMap())


def _strings(arr: pa.ListArray, repeated: bool) -> Any:
    """``notes``, ``argv``: a tuple of strings per row (None where null), sliced from one
    tuple of every row's strings; one value if every row's is empty, or null.

    ``repeated``: the rows recur (argv: the same command line in every repetition of a
    configuration): one tuple per distinct row, of one str per distinct string, both found
    by Arrow's hashing."""
    n = len(arr)
    if arr.null_count == n:
        return None
    offsets = arr.offsets.to_numpy()
    first, last = int(offsets[0]), int(offsets[-1])
    if first == last and not arr.null_count:
        return ()
    values = arr.values.slice(first, last - first)
    if repeated:
        out = _distinct_rows(values, offsets - first)
    else:
        flat = values.to_pylist()
        if arr.null_count == 0 and (np.diff(offsets) == 1).all():  # a note per run: by zip
            out = _Rows(zip(flat))
        else:
            out = _tuples_at(tuple(flat), offsets - first)
    return _with_nulls(out, arr, None)


def _notes(arr: pa.ListArray) -> Any:
    """``notes``: a tuple of warnings per row (:meth:`Warn.decode` of each text, once per
    distinct text), or one tuple for every row."""
    rows = _strings(arr, repeated=True)
    memo: dict[str, Warn] = {}

    def warnings(texts: tuple[str, ...] | None) -> tuple[Warn, ...]:
        return tuple(memo[t] if t in memo else memo.setdefault(t, Warn.decode(t))
                     for t in texts or ())

    if type(rows) is _Rows:
        done: dict[int, tuple[Warn, ...]] = {}  # distinct rows are one tuple each
        return _Rows(done[id(r)] if id(r) in done else done.setdefault(id(r), warnings(r))
                     for r in rows)
    return warnings(rows)


def _tuples_at(flat: tuple, offsets: np.ndarray) -> _Rows:
    """``flat[offsets[i]:offsets[i + 1]]`` for each row i."""
    bounds = offsets.tolist()
    return _Rows(map(flat.__getitem__, map(slice, bounds[:-1], bounds[1:])))


def _distinct_rows(values: pa.Array, offsets: np.ndarray) -> _Rows:
    """The rows of strings ``values[offsets[i]:offsets[i + 1]]``, each distinct row one tuple:
    each row's key is its strings' dictionary indexes as bytes (four per string, so two rows
    share a key only if they hold the same strings), hashed by Arrow."""
    if not pa.types.is_dictionary(values.type):
        values = values.dictionary_encode()
    words = np.empty(len(values.dictionary), dtype=object)
    words[:] = values.dictionary.to_pylist()
    indices = values.indices.to_numpy(zero_copy_only=False).astype(np.int32)
    keys = pa.Array.from_buffers(pa.binary(), len(offsets) - 1, [
        None, pa.py_buffer((offsets * 4).astype(np.int32)), pa.py_buffer(indices)])
    encoded = keys.dictionary_encode()
    distinct = encoded.dictionary  # its bytes back to the indexes of the strings of each row
    _, key_offsets, data = distinct.buffers()
    bounds = np.frombuffer(key_offsets, dtype=np.int32)[
        distinct.offset:distinct.offset + len(distinct) + 1]
    held = (np.frombuffer(data, dtype=np.int32) if data is not None and data.size
            else np.zeros(0, dtype=np.int32))
    rows = _tuples_at(tuple(words[held[bounds[0] // 4:bounds[-1] // 4]].tolist()),
                      (bounds - bounds[0]) // 4)
    return _Rows(map(rows.__getitem__, encoded.indices.to_numpy().tolist()))


def _histograms(table: pa.Table, name: str, sparse: _SparseColumns, rows: list[int]) -> Any:
    """A lazy histogram per row (None where ``*_count`` is null: runs_to_table writes a count
    exactly where it writes a histogram), its counts sliced from ``sparse`` on first use."""
    counts = _array(table, f"{name}_count")
    n = len(counts)
    if counts.null_count == n:
        return None
    parts = [_array(table, f"{name}{part}") for part in ("_min_raw_us", "_max_raw_us")]
    out = _Rows(map(LazyHistogram, repeat(sparse), rows, *map(_scalars, [counts, *parts])))
    return _with_nulls(out, counts, None)


def _counters(table: pa.Table, n: int) -> Any:
    """Each row's ServerCounters (NO_COUNTERS where every field is null); NO_COUNTERS alone
    when no row recorded any."""
    arrays = [_array(table, name) for name in COUNTER_FIELDS]
    if all(a.null_count == n for a in arrays):
        return NO_COUNTERS
    return _Rows(ServerCounters(*values) if any(v is not None for v in values) else NO_COUNTERS
                 for values in zip(*map(_scalars, arrays), strict=True))


def _text_at(texts: Any, row: int) -> str:
    """``texts[row]`` as a str (``texts``: a :class:`_DeferredColumn` or an Arrow array)."""
    text = texts[row]
    return text if type(text) is str else text.as_py()


def _json_at(texts: Any, index: int) -> dict:
    return _json_dict(_text_at(texts, index))


def _json_maps(arr: pa.Array) -> Any:
    """Factors: rows repeat their text (the runs of one configuration): one lazy map per
    distinct text (found by Arrow's hashing, not by hashing Python strings), parsed on first
    use; that map alone if every row has the same text."""
    if arr.null_count:
        raise ValueError("a JSON map column holds a null")
    if not pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_encode()
    texts = arr.dictionary
    maps = list(map(LazyMap, range(len(texts)), repeat(functools.partial(_json_at, texts))))
    if len(maps) == 1:
        return maps[0]
    return _Rows(map(maps.__getitem__, arr.indices.to_numpy(zero_copy_only=False).tolist()))


class ParquetTable:
    """A run table stored as Parquet, from the file's bytes (kept: immutable), for
    :func:`table_to_runs`: the columns of :data:`DEFERRED_COLUMNS` are read on first use of any of
    their rows (the run store's histograms, manifests and extra maps: most of its bytes, and
    most loads read few of them)."""

    def __init__(self, data: bytes):
        # reads the footer (ArrowInvalid if damaged)
        self.file = pq.ParquetFile(pa.BufferReader(data), read_dictionary=_REPEATED)
        #: the file's key-value metadata (the table's schema metadata, and any other entry)
        self.metadata: dict[bytes, bytes] = self.file.metadata.metadata or {}
        self.num_rows: int = self.file.metadata.num_rows
        self._lock = threading.Lock()

    def read(self, names: Sequence[str]) -> pa.Table:
        with self._lock:  # one reader of the file at a time
            return self.file.read(list(names), use_threads=False)

    def deferred(self, name: str) -> _DeferredColumn:
        return _DeferredColumn(self, name)

    def arrays(self, names: Sequence[str]) -> list[pa.Array]:
        """The columns ``names``, read now."""
        table = self.read(names)
        return [_array(table, name) for name in names]


class _DeferredColumn:
    """A string column of a :class:`ParquetTable`: ``column[row]``, the column read from the
    file the first time."""

    __slots__ = ("_stored", "_name", "_array")
    _array: Any  # a pyarrow array once read

    def __init__(self, stored: ParquetTable, name: str):
        self._stored, self._name, self._array = stored, name, None

    def __getitem__(self, row: int) -> str | None:
        if self._array is None:
            self._array = _array(self._stored.read([self._name]), self._name)
        return self._array[row].as_py()


def _at_class_default(name: str, value: Any) -> bool:
    default = CLASS_DEFAULTS.get(name, _VARIES)
    return type(value) is type(default) and value == default


def table_to_runs(table: pa.Table | ParquetTable) -> list[Run]:
    """The Runs of a table written by :func:`runs_to_table` (equal in every field), or of
    its Parquet file's bytes (:class:`ParquetTable`: some columns read on first use)."""
    stored = table if isinstance(table, ParquetTable) else None
    meta = (table.metadata if isinstance(table, ParquetTable) else table.schema.metadata) or {}
    if meta.get(b"perfkit.table_version") != TABLE_VERSION.encode():
        raise ValueError("not a perfkit run table of version " + TABLE_VERSION)
    json_columns = set(json.loads(meta.get(b"perfkit.json_columns", b"[]")))
    n = table.num_rows
    if not n:
        return []
    sparse_names = {h: [h + part for part in _SPARSE] for h in _HISTOGRAMS}
    if stored is not None:
        table = stored.read([f.name for f in stored.file.schema_arrow
                             if f.name not in DEFERRED_COLUMNS])
        texts: dict[str, Any] = {name: stored.deferred(name) for name in ("manifest", "extra")}
        sparse = {h: _SparseColumns(functools.partial(stored.arrays, names))
                  for h, names in sparse_names.items()}
    else:
        texts = {name: _array(table, name) for name in ("manifest", "extra")}
        sparse = {h: _SparseColumns(functools.partial(lambda t, ns: [_array(t, n) for n in ns],
                                                      table, names))
                  for h, names in sparse_names.items()}
    # each field: one list of n values, or one value for every run (a column that is null,
    # empty or equal in every row: the Locust fields of a wrk2 store, its tool...), set once
    # in the template every run's fields are copied from
    fields: dict[str, Any] = {}
    rows = list(range(n))  # each lazy value's row: one int object per row, shared
    for name in SCALARS:
        arr = _array(table, name)
        value = _one_value(arr)
        if value is not _VARIES:
            fields[name] = loads(value) if name in json_columns and value is not None else value
        elif name in json_columns:
            fields[name] = _Rows(map(loads, arr.to_pylist()))
        else:
            fields[name] = _Rows(_scalars(arr))
    fields["counters"] = _counters(table, n)
    for name in _PERCENTILES:
        fields[name] = _percentiles(_array(table, name), rows)
    for name in _HISTOGRAMS:
        fields[name] = _histograms(table, name, sparse[name], rows)
    fields["argv"] = _strings(_array(table, "argv"), repeated=True)
    fields["notes"] = _notes(_array(table, "notes"))
    fields["factors"] = _json_maps(_array(table, "factors"))
    for name in ("manifest", "extra"):  # a lazy map per row, parsed from its text
        fields[name] = _Rows(map(LazyMap, rows, repeat(functools.partial(_json_at, texts[name]))))
    sources = fields["latency_source"]
    sources = set(sources) if type(sources) is _Rows else {sources}
    if sources - LATENCY_SOURCES.keys():
        raise ValueError(f"latency_source must be one of {sorted(LATENCY_SOURCES)}, found "
                         f"{sorted(map(str, sources - LATENCY_SOURCES.keys()))}")
    # what Run(**fields) does, without the keyword-argument machinery and without
    # __post_init__, whose checks and conversions the columns above have made (every map
    # frozen, every list a tuple, the sources checked): each run's __dict__ a copy of the
    # template (Run's field order) updated with its row, every step a C-level loop. A field
    # at its class default in every row is left out: the run reads the class's value, and a
    # __dict__ of at most 42 keys is half the size (10,000 of them per load)
    template = {name: None if type(value) is _Rows else value
                for name, value in ((name, fields[name]) for name in _FIELDS)
                if not _at_class_default(name, value)}
    names = [name for name in _FIELDS if type(fields[name]) is _Rows]
    states = list(map(dict.copy, repeat(template, n)))
    deque(map(dict.update, states, map(zip, repeat(names),
                                        zip(*(fields[name] for name in names), strict=True))),
          maxlen=0)
    runs = list(map(_new, repeat(Run, n)))
    deque(map(_set_state, runs, states), maxlen=0)
    checks = _notes(_array(table, "checks"))
    remember_checks(runs, checks if type(checks) is _Rows else [checks] * n,
                    *(_array(table, name).to_pylist()
                      for name in ("counters_recorded", "manifest_status",
                                   "manifest_status_kept")))
    return runs


def check_histograms(runs: Sequence[Run]) -> None:
    """Decode every lazy histogram now (ValueError if one is damaged)."""
    for run in runs:
        for name in _HISTOGRAMS:
            hist = getattr(run, name)
            if hist is not None:
                np.asarray(hist.bucket_indexes)
