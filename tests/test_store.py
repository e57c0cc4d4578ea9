"""The run store: runs_to_table/table_to_runs round trips, and the per-directory cache in
.perfkit/cache/ (reuse, re-parse on any change, corrupt or foreign caches ignored)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import pickle
import shutil
import struct
import time
import warnings
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import perfkit
from perfkit.histogram import LatencyHistogram
from perfkit.model import CLASS_DEFAULTS, FrozenMap, Run
from perfkit.store import runcache as run_cache
from perfkit.store import runtable as store
from perfkit.store.runtable import check_histograms, runs_to_table, table_to_runs
from perfkit.warning import Code, Warn

#: notes of every kind of field: text, a float, an int, None, a tuple, a warning within one
X = Warn(Code.RECORDED, text="x")
Y = Warn(Code.ERRORS_HIGH, ratio=0.25)
Z = Warn(Code.PASTED_CTRL_C, lines=(3, 4), within=Warn(Code.RUN_ENDED, status="failed",
                                                        exit_code=None, reason="r"))

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"

FIELD_NAMES = [f.name for f in dataclasses.fields(Run)]


@pytest.fixture(scope="module")
def all_runs():
    # data/seeds holds the write-ups' outputs as printed (one elided by its author: refused)
    data = [p for p in (HERE.parent / "data").iterdir() if p.is_dir() and p.name != "seeds"]
    fixtures = [d for d in sorted(FIXTURES.iterdir())
                if d.is_dir() and d.name != "published"]  # published/: refusals on purpose
    return [r for d in fixtures + list(data) for r in perfkit.load(d)]


def _parquet_round_trip(table: pa.Table) -> pa.Table:
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return pq.read_table(pa.BufferReader(sink.getvalue()))


def test_table_round_trip_gives_equal_runs_in_every_field(all_runs):
    assert len(all_runs) > 300
    assert {r.tool for r in all_runs} >= {"wrk", "wrk2", "locust"}
    table = _parquet_round_trip(runs_to_table(all_runs))
    back = table_to_runs(table)
    assert len(back) == len(all_runs)
    for a, b in zip(all_runs, back, strict=True):
        assert a.same_as(b), a.source
        assert b.to_record().keys() == a.to_record().keys()


def test_table_columns_are_typed_and_histograms_are_sparse_hdrhistogram_counts(all_runs):
    table = runs_to_table(all_runs)
    assert table.schema.field("requests").type == pa.int64()
    assert table.schema.field("duration_s").type == pa.float64()
    assert table.schema.field("percentiles_ms").type == pa.map_(pa.float64(), pa.float64())
    assert table.schema.field("histogram_indexes").type == pa.list_(pa.int64())
    assert table.schema.field("histogram_counts").type == pa.list_(pa.int64())
    from hdrh.histogram import HdrHistogram  # any HdrHistogram library of the layout takes them

    from perfkit.hdrlayout import HIGHEST_US, LOWEST_US, SIGNIFICANT_FIGURES

    first = next(r for r in all_runs if r.histogram is not None)
    row = all_runs.index(first)
    hdr = HdrHistogram(LOWEST_US, HIGHEST_US, SIGNIFICANT_FIGURES)
    for index, count in zip(table.column("histogram_indexes")[row].as_py(),
                            table.column("histogram_counts")[row].as_py(), strict=True):
        hdr.counts[index] = count
    hdr.set_internal_tacking_values(table.column("histogram_indexes")[row][0].as_py(),
                                    table.column("histogram_indexes")[row][-1].as_py(),
                                    first.histogram.total_count)
    assert hdr.get_total_count() == first.histogram.total_count
    assert hdr.get_value_at_percentile(99) == first.histogram.percentile_us(99)


def test_a_value_of_another_type_than_declared_keeps_its_type(all_runs):
    run = all_runs[0].replace(latency_mean_ms=3, threads=None, extra={"k": {1: (2, 3.5)}})
    (back,) = table_to_runs(_parquet_round_trip(runs_to_table([run])))
    assert back.same_as(run) and type(back.latency_mean_ms) is int
    assert back.extra["k"][1] == (2, 3.5)


def test_a_histogram_read_from_a_table_builds_histograms_as_its_class_does(all_runs):
    """A stored histogram (read lazily) is a LatencyHistogram: its class's constructors
    (``merge``, ``from_values_us``) work through it as they do through any histogram. Its
    slot once shadowed the class's ``_sparse`` constructor (found by mypy: TypeError)."""
    run = next(r for r in all_runs if r.histogram is not None and r.histogram.total_count)
    (back,) = table_to_runs(_parquet_round_trip(runs_to_table([run])))
    lazy = back.histogram
    assert type(lazy) is not LatencyHistogram  # the lazy subclass of the run store
    merged = type(lazy).merge([lazy, lazy])
    assert merged.total_count == 2 * run.histogram.total_count
    assert type(lazy).from_values_us(np.array([100.0])).total_count == 1


def _bits(value):
    return struct.pack("<d", value) if type(value) is float else value


def test_columns_equal_in_every_row_round_trip_exactly(all_runs):
    """A column holding one value in every row (null, empty, or equal: a wrk2 store's tool,
    its Locust fields) is read once for all runs; one that varies, row by row."""
    wrk2 = [r for r in all_runs if r.tool == "wrk2" and r.histogram is not None][:6]
    same = [wrk2[0].replace(source=f"{wrk2[0].source}.{i}") for i in range(4)]  # all equal
    nan = [r.replace(latency_min_ms=math.nan, duration_s=-0.0, notes=(), argv=None)
           for r in wrk2]
    signed = [r.replace(duration_s=z, errors_read=e) for r, z, e in
              zip(wrk2, (0.0, -0.0) * 3, (0, 1, 0, 0, 0, 0), strict=True)]
    mixed = [r.replace(argv=a, notes=n) for r, a, n in
             zip(wrk2, (None, ("wrk2", "-R1"), (), ("wrk2",), None, ("",)),
                 ((), (X,), (), (Y, Z), (), ()), strict=True)]
    one = [r.replace(notes=(Warn(Code.RECORDED, text=f"note {i}"),), argv=("wrk2", f"-R{i}"))
           for i, r in enumerate(wrk2)]
    for runs in ([wrk2[0]], same, nan, signed, mixed, one, all_runs):
        table = _parquet_round_trip(runs_to_table(runs))
        back = table_to_runs(table)
        assert _same(runs, back)
        for a, b in zip(runs, back, strict=True):
            # a field at its class default in every row may be left to the class (a smaller
            # __dict__), but never one of another value
            assert set(vars(b)) <= set(FIELD_NAMES)
            assert all(getattr(a, k) == CLASS_DEFAULTS[k] for k in set(FIELD_NAMES) - set(vars(b)))
            for name in FIELD_NAMES:
                value = getattr(a, name)
                got = getattr(b, name)
                if isinstance(value, Mapping):
                    assert isinstance(got, FrozenMap), name
                elif isinstance(value, LatencyHistogram):
                    assert isinstance(got, LatencyHistogram), name
                else:
                    assert type(got) is type(value) and _bits(got) == _bits(value), name
    back = table_to_runs(runs_to_table(signed))
    assert [math.copysign(1, r.duration_s) for r in back] == [1, -1] * 3


@pytest.mark.parametrize("repeated", [True, False])
def test_string_lists_read_as_tuples_per_row(repeated):
    """notes and argv: every row as written (None, empty, empty strings, words that join to
    the same text), also from a slice and from dictionary-typed strings; with ``repeated``,
    equal rows are one tuple."""
    rows = [["wrk2", "-t2", "http://x/"], None, [], ["a b"], ["a", "b"], [""], ["", ""],
            ["wrk2", "-t2", "http://x/"], ["a", "b"], None, ["é", "a"]]
    arr = pa.array(rows, type=pa.list_(pa.string()))
    dictionary = pa.ListArray.from_arrays(arr.offsets, arr.values.dictionary_encode(),
                                          mask=arr.is_null())
    for given, expected in [(arr, rows), (arr.slice(3, 6), rows[3:9]),
                            (dictionary, rows), (dictionary.slice(1, 4), rows[1:5])]:
        out = store._strings(given, repeated=repeated)
        assert list(out) == [None if r is None else tuple(r) for r in expected]
        assert all(type(t) is tuple for t in out if t is not None)
    out = store._strings(arr, repeated=repeated)
    assert (out[0] is out[7] and out[4] is out[8]) == repeated
    assert store._strings(pa.array([[], []], type=pa.list_(pa.string())), repeated) == ()
    assert store._strings(pa.array([None, None], type=pa.list_(pa.string())), repeated) is None
    assert list(store._strings(pa.array([[], None], type=pa.list_(pa.string())),
                               repeated)) == [(), None]


def test_a_sliced_or_chunked_table_gives_its_rows(all_runs):
    table = runs_to_table(all_runs)
    part = table.slice(5, 40)
    assert _same(all_runs[5:45], table_to_runs(part))
    chunked = pa.concat_tables([table.slice(0, 7), table.slice(7, 30)])
    assert chunked.column("percentiles_ms").num_chunks == 2
    assert _same(all_runs[:37], table_to_runs(chunked))
    assert table_to_runs(table.slice(0, 0)) == []


def test_runs_from_parquet_bytes_read_histograms_and_maps_on_first_use(all_runs):
    """A ParquetTable (the run store's file, from its bytes) reads the histograms, manifests
    and extra maps once each, when a run first uses one; the runs are the same."""
    sink = pa.BufferOutputStream()
    pq.write_table(runs_to_table(all_runs), sink)
    stored = store.ParquetTable(sink.getvalue().to_pybytes())
    read = []
    real = stored.read
    stored.read = lambda names: (read.append(list(names)), real(names))[1]
    runs = table_to_runs(stored)
    assert len(read) == 1 and not set(read[0]) & set(store.DEFERRED_COLUMNS)
    assert _same(all_runs, runs)  # compares every field: reads the rest
    later = [name for names in read[1:] for name in names]
    assert sorted(later) == sorted(set(later)) and set(later) == set(store.DEFERRED_COLUMNS)
    check_histograms(runs)
    assert _same(all_runs, pickle.loads(pickle.dumps(runs)))
    sink = pa.BufferOutputStream()  # row groups: chunks with dictionaries of their own
    pq.write_table(runs_to_table(all_runs), sink, row_group_size=50)
    stored = store.ParquetTable(sink.getvalue().to_pybytes())
    assert stored.file.metadata.num_row_groups > 2
    assert _same(all_runs, table_to_runs(stored))


def test_runs_read_from_a_table_pickle_and_decode(all_runs):
    runs = table_to_runs(_parquet_round_trip(runs_to_table(all_runs)))
    check_histograms(runs)
    back = pickle.loads(pickle.dumps(runs))
    assert _same(all_runs, back)
    hist = next(r.histogram for r in runs if r.histogram is not None)
    assert hist.percentile_ms(99) > 0 and hist.total_count == int(np.sum(hist.bucket_counts))


# -- the cache ------------------------------------------------------------------------------
@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "runs"
    shutil.copytree(FIXTURES / "wrk2" / "sweep", root / "wrk2")
    shutil.copytree(FIXTURES / "locust" / "clean_u20", root / "locust" / "clean_u20")
    shutil.copytree(FIXTURES / "wild" / "wrk2" / "connection_refused", root / "refused")
    old = time.time() - 3600  # data written long before: outside the racy window
    for p in root.rglob("*"):
        os.utime(p, (old, old))
    return root


def _cache_files(root: Path) -> list[Path]:
    run_cache.flush()  # the store is written in the background once a load has returned
    return sorted((root / ".perfkit" / "cache").iterdir())


def _same(a: list, b: list) -> bool:
    return len(a) == len(b) and all(x.same_as(y) for x, y in zip(a, b, strict=True))


def test_second_load_comes_from_the_cache_and_is_identical(tree, monkeypatch):
    # the copies' ctimes are seconds old: outside a racy window of 0 (see the next test)
    monkeypatch.setattr(run_cache, "RACY_NS", 0)
    first = perfkit.load(tree, cache=True)
    (cached,) = _cache_files(tree)
    assert cached.name.startswith("runs-") and cached.suffix == ".parquet"
    # the index in the file's metadata once (not also in the schema Arrow serializes)
    assert b"perfkit.files" in pq.ParquetFile(cached).metadata.metadata
    assert b"perfkit.files" not in pq.read_schema(cached).metadata
    parsed = []
    real = run_cache.RunCache.put
    monkeypatch.setattr(run_cache.RunCache, "put",
                        lambda self, d, e, r: (parsed.append(d), real(self, d, e, r)))
    second = perfkit.load(tree, cache=True)
    assert parsed == [] and _same(first, second)
    assert _same(second, perfkit.load(tree, cache=False))
    assert _cache_files(tree) == [cached]  # nothing changed: not rewritten


def test_the_store_compresses_only_the_columns_read_on_first_use(tree):
    """Every load decodes the other columns: they are stored plain (zstd saves little on
    them and costs a sixth of reading the runs); the histograms, manifests and extra maps,
    most of the bytes and read only when used, are compressed."""
    perfkit.load(tree, cache=True)
    (cached,) = _cache_files(tree)
    meta = pq.ParquetFile(cached).metadata
    codecs = {meta.row_group(0).column(i).path_in_schema.split(".")[0]:
              meta.row_group(0).column(i).compression for i in range(meta.num_columns)}
    assert set(store.DEFERRED_COLUMNS) <= codecs.keys()
    assert {name for name, codec in codecs.items() if codec != "UNCOMPRESSED"} == set(
        store.DEFERRED_COLUMNS)
    assert {codecs[name] for name in store.DEFERRED_COLUMNS} == {"ZSTD"}


def test_files_changed_just_before_the_cache_was_written_are_hashed_again(tree, monkeypatch):
    """Racy files (git's term): an edit within the timestamp granularity could keep the stat;
    such files are re-hashed (never trusted by stat alone) and the cache is refreshed."""
    monkeypatch.setattr(run_cache, "RACY_NS", 3600 * 10**9)
    perfkit.load(tree, cache=True)
    hashed = []
    real = run_cache.sha256_file
    monkeypatch.setattr(run_cache, "sha256_file", lambda p: (hashed.append(p), real(p))[1])
    perfkit.load(tree, cache=True)
    assert len(hashed) == sum(1 for p in tree.rglob("*") if p.is_file()
                              and ".perfkit" not in p.parts)


def test_an_edited_added_or_removed_file_is_parsed_again(tree):
    perfkit.load(tree, cache=True)
    target = tree / "wrk2" / "default_R15000_c16_rep1" / "run.stdout"
    target.write_text(target.read_text().replace("Requests/sec:  ", "Requests/sec:  9"))
    (edited,) = [r for r in perfkit.load(tree, cache=True) if r.source == str(target)]
    assert edited.throughput_rps > 90_000
    shutil.copytree(tree / "wrk2" / "default_R15000_c16_rep2", tree / "wrk2" / "copy")
    assert sum("copy" in r.source for r in perfkit.load(tree, cache=True)) == 1
    shutil.rmtree(tree / "wrk2" / "copy")
    runs = perfkit.load(tree, cache=True)
    assert not any("copy" in r.source for r in runs)
    assert _same(runs, perfkit.load(tree, cache=False))


def test_an_edit_keeping_size_and_mtime_is_still_seen(tree):
    perfkit.load(tree, cache=True)
    target = tree / "wrk2" / "default_R15000_c16_rep1" / "run.stdout"
    st = target.stat()
    text = target.read_text()
    target.write_text(text.replace("Requests/sec:  1", "Requests/sec:  2", 1))
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))  # the ctime still moves
    assert target.stat().st_size == st.st_size and target.stat().st_mtime_ns == st.st_mtime_ns
    (run,) = [r for r in perfkit.load(tree, cache=True) if r.source == str(target)]
    assert str(run.throughput_rps).startswith("2")


def test_touch_without_change_reuses_the_cached_runs(tree):
    first = perfkit.load(tree, cache=True)
    os.utime(tree / "wrk2" / "default_R15000_c16_rep1" / "run.stdout")
    assert _same(first, perfkit.load(tree, cache=True))


def _rewrite(path: Path, table: pa.Table, meta: dict) -> None:
    """Replace the cache file by ``table`` with ``meta``, named by its bytes (undamaged)."""
    sink = pa.BufferOutputStream()
    pq.write_table(table.replace_schema_metadata(meta), sink)
    raw = sink.getvalue().to_pybytes()
    path.unlink()
    (path.parent / f"runs-{hashlib.sha256(raw).hexdigest()}.parquet").write_bytes(raw)


@pytest.mark.parametrize("damage", ["flip", "truncate", "garbage", "version", "previous",
                                    "index", "count"])
def test_a_corrupt_or_foreign_cache_is_ignored_with_a_note(tree, damage):
    expected = perfkit.load(tree, cache=False)
    perfkit.load(tree, cache=True)
    (path,) = _cache_files(tree)
    data = path.read_bytes()
    table = pq.read_table(path)
    meta = dict(pq.ParquetFile(path).metadata.metadata)  # the cache's entries with the table's
    del meta[b"ARROW:schema"]
    if damage == "flip":
        path.write_bytes(data[:200] + bytes([data[200] ^ 0xFF]) + data[201:])
    elif damage == "truncate":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "garbage":
        path.write_bytes(b"not parquet at all")
    elif damage == "version":
        meta[b"perfkit.cache_version"] = b"0/0.0.0"
        _rewrite(path, table, meta)
    elif damage == "previous":  # layout 3: the index as JSON, each run's directory a column
        meta = {k: v for k, v in meta.items() if k not in (
            b"perfkit.listings", b"perfkit.index", b"perfkit.files", b"perfkit.complete")}
        meta[b"perfkit.cache_version"] = (
            f"{store.TABLE_VERSION}/3/{perfkit.__version__}".encode())
        raw = json.dumps({"complete": True}).encode()
        meta[b"perfkit.state"] = pa.compress(raw, codec="zstd", asbytes=True)
        meta[b"perfkit.state_size"] = str(len(raw)).encode()
        dirs = pa.array(["wrk2"] * table.num_rows)
        _rewrite(path, table.append_column("_dir", dirs), meta)
    elif damage == "index":  # the listings are not an Arrow stream
        meta[b"perfkit.listings"] = meta[b"perfkit.listings"][:40]
        _rewrite(path, table, meta)
    else:  # the index counts one run too many
        counts = pa.ipc.open_stream(meta[b"perfkit.index"]).read_all()
        counts = counts.set_column(1, "runs", pc.add(counts.column("runs"), 1))
        meta[b"perfkit.index"] = run_cache._ipc(counts)
        _rewrite(path, table, meta)
    run_cache._NOTES.clear()  # the process keeps its last 100 notes: earlier tests fill them
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the store never prints: it notes
        runs = perfkit.load(tree, cache=True)
    assert _same(runs, expected)
    assert "ignored and rebuilt" in run_cache.notes()[0]
    run_cache.flush()
    seen = len(run_cache.notes())
    assert _same(perfkit.load(tree, cache=True), expected)  # rebuilt: trusted again
    assert len(run_cache.notes()) == seen


def test_a_table_of_the_flat_counters_layout_is_refused():
    """Version 4 holds the counters' sub-record (issue 32; version 5 notes as coded warnings
    too; version 6 each run's checks, issue 33): a version-3 table (the counters flat fields
    of Run) is refused, so the run store rebuilds it rather than read it wrong."""
    runs = perfkit.load(Path(__file__).resolve().parents[1] / "data" / "demo-backlog")
    table = runs_to_table(runs)
    assert [r.counters for r in table_to_runs(table)] == [r.counters for r in runs]
    old = table.replace_schema_metadata({**table.schema.metadata,
                                         b"perfkit.table_version": b"3"})
    with pytest.raises(ValueError, match="not a perfkit run table of version 6"):
        table_to_runs(old)


def test_the_cache_can_be_deleted_and_errors_are_never_cached(tree):
    perfkit.load(tree, cache=True)
    shutil.rmtree(tree / ".perfkit")
    bad = tree / "wrk2" / "default_R15000_c16_rep1" / "run.stdout"
    bad.write_text(bad.read_text()[:500])
    for _ in range(2):
        result = perfkit.scan(tree, cache=True)
        assert [e.path for e in result.errors] == [str(bad)]
    assert not list((tree / ".perfkit" / "cache").glob(".tmp-*"))


def test_no_cache_is_written_when_disabled(tree, monkeypatch):
    monkeypatch.setenv("PERFKIT_CACHE", "0")
    perfkit.load(tree)
    assert not (tree / ".perfkit").exists()
    monkeypatch.setenv("PERFKIT_CACHE", "1")
    perfkit.load(tree)
    assert _cache_files(tree)


def test_an_unchanged_tree_is_not_listed_again(tree, monkeypatch):
    """The second load stats each directory and file instead of scanning any directory."""
    monkeypatch.setattr(run_cache, "RACY_NS", 0)  # the fixture's ctimes are seconds old
    first = perfkit.load(tree, cache=True)
    run_cache.flush()  # the store's writer lists the tree too, in the background
    scanned = []
    real = os.scandir
    monkeypatch.setattr(os, "scandir", lambda p=".": (scanned.append(str(p)), real(p))[1])
    assert _same(first, perfkit.load(tree, cache=True))
    # no walk; the root alone may be listed again, by content, when it gained .perfkit/ within
    # the racy window of the store's write (as in the test of a tree with an error directory)
    store = run_cache.RunCache(str(tree))
    root_racy = max(tree.stat().st_mtime_ns, tree.stat().st_ctime_ns) >= store.written_ns
    assert {p for p in scanned if ".perfkit" not in p} <= ({str(tree)} if root_racy else set())


def test_an_entry_added_under_restored_directory_times_is_still_seen(tree):
    """Creating a file moves its directory's mtime and ctime; `touch -d` can put the mtime
    back, never the ctime: the directory is scanned again and its new file loaded."""
    perfkit.load(tree, cache=True)
    run_dir = tree / "locust" / "clean_u20"
    st = run_dir.stat()
    extra = next(p for p in run_dir.rglob("*_stats.csv"))
    shutil.copy(extra, extra.with_name("again_stats.csv"))
    os.utime(extra.parent, ns=(st.st_atime_ns, st.st_mtime_ns))
    runs = perfkit.scan(tree, cache=True)
    expected = perfkit.scan(tree, cache=False)
    assert len(runs.runs) == len(expected.runs)
    assert [str(e) for e in runs.errors] == [str(e) for e in expected.errors]
    assert _same(runs.runs, expected.runs)


def test_runs_keep_the_walk_order_after_a_partial_reparse(tree):
    """Directories found in the cache and directories parsed again are written in walk
    order: the next load (from the cache alone) returns the runs as a walk would."""
    perfkit.load(tree, cache=True)
    target = tree / "wrk2" / "default_R15000_c16_rep2" / "run.stdout"
    target.write_text(target.read_text() + "\n")
    expected = [r.source for r in perfkit.load(tree, cache=False)]
    assert [r.source for r in perfkit.load(tree, cache=True)] == expected
    assert [r.source for r in perfkit.load(tree, cache=True)] == expected


def test_the_stat_check_alone_sees_an_edit_and_an_added_file(tree, monkeypatch):
    """With no file in the racy window, the cached load decides by stat alone: an edit that
    keeps size and mtime, and a file added to a run directory, both move a ctime it
    compares."""
    monkeypatch.setattr(run_cache, "RACY_NS", 0)
    first = perfkit.load(tree, cache=True)
    assert _same(first, run_cache.RunCache(str(tree)).unchanged_runs())

    target = tree / "wrk2" / "default_R15000_c16_rep1" / "run.stdout"
    st = target.stat()
    target.write_text(target.read_text().replace("Requests/sec:  1", "Requests/sec:  2", 1))
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))  # only the ctime moves
    assert run_cache.RunCache(str(tree)).unchanged_runs() is None
    (run,) = [r for r in perfkit.load(tree, cache=True) if r.source == str(target)]
    assert str(run.throughput_rps).startswith("2")

    run_dir = tree / "refused"
    st = run_dir.stat()
    (run_dir / "notes.txt").write_text("an added file\n")
    os.utime(run_dir, ns=(st.st_atime_ns, st.st_mtime_ns))  # only the ctime moves
    assert run_cache.RunCache(str(tree)).unchanged_runs() is None
    assert _same(perfkit.load(tree, cache=True), perfkit.load(tree, cache=False))


def _counting_hashes(monkeypatch) -> list[str]:
    hashed: list[str] = []
    real = run_cache.sha256_file
    monkeypatch.setattr(run_cache, "sha256_file", lambda p: (hashed.append(p), real(p))[1])
    return hashed


def test_the_first_load_hashes_only_files_in_the_racy_window(tree, monkeypatch):
    """Issue 24: writing the store costs no read of a file the stat check can decide; a file
    changed within the racy window of the store's writing is hashed, as git's index does."""
    hashed = _counting_hashes(monkeypatch)
    monkeypatch.setattr(run_cache, "RACY_NS", 0)  # the fixture's files: all seconds old
    expected = perfkit.load(tree, cache=True)
    run_cache.flush()
    assert hashed == []
    files = sorted(str(p) for p in tree.rglob("*") if p.is_file() and ".perfkit" not in p.parts)
    shutil.rmtree(tree / ".perfkit")
    monkeypatch.setattr(run_cache, "RACY_NS", 3600 * 10**9)  # every file racy
    assert _same(perfkit.load(tree, cache=True), expected)
    run_cache.flush()
    assert sorted(hashed) == files
    hashed.clear()  # a racy file is checked by its hash on the next load, and reused
    assert _same(perfkit.load(tree, cache=True), expected) and sorted(hashed) == files


def test_an_edit_to_a_file_written_without_a_hash_is_parsed_again(tree, monkeypatch):
    monkeypatch.setattr(run_cache, "RACY_NS", 0)
    perfkit.load(tree, cache=True)
    target = tree / "wrk2" / "default_R15000_c16_rep1" / "run.stdout"
    target.write_text(target.read_text().replace("Requests/sec:  ", "Requests/sec:  9"))
    (edited,) = [r for r in perfkit.load(tree, cache=True) if r.source == str(target)]
    assert edited.throughput_rps > 90_000
    os.utime(target)  # touched, unchanged: without a hash to compare, parsed again, the same
    (again,) = [r for r in perfkit.load(tree, cache=True) if r.source == str(target)]
    assert again.same_as(edited)


def test_a_directory_with_an_error_keeps_the_load_from_the_store_and_its_error(
        tree, monkeypatch):
    """A run directory that gives an error is recorded, not cached: an unchanged tree is
    loaded without a walk, that directory alone parsed again, its error reported each time,
    and the runs come in walk order."""
    monkeypatch.setattr(run_cache, "RACY_NS", 0)
    bad = tree / "wrk2" / "default_R15000_c16_rep2" / "run.stdout"
    bad.write_text(bad.read_text()[:500])
    expected = perfkit.scan(tree, cache=False)
    assert [e.path for e in expected.errors] == [str(bad)]
    first = perfkit.scan(tree, cache=True)
    scanned = []
    real = os.scandir
    monkeypatch.setattr(os, "scandir", lambda p=".": (scanned.append(str(p)), real(p))[1])
    for _ in range(2):
        again = perfkit.scan(tree, cache=True)
        assert [str(e) for e in again.errors] == [str(e) for e in expected.errors]
        assert _same(again.runs, expected.runs) and _same(first.runs, expected.runs)
    store = run_cache.RunCache(str(tree))
    # no walk; the root alone may be listed again, by content, when it gained .perfkit/ within
    # the racy window of the store's write (a load slower than the file system's clock tick)
    root_racy = max(tree.stat().st_mtime_ns, tree.stat().st_ctime_ns) >= store.written_ns
    assert {p for p in scanned if ".perfkit" not in p} <= ({str(tree)} if root_racy else set())
    assert store.unchanged() is not None and store.reparse == {str(bad.parent)}
    bad.write_text((tree / "wrk2" / "default_R15000_c16_rep3" / "run.stdout").read_text())
    fixed = perfkit.scan(tree, cache=True)  # its file changed: the walk finds it mended
    assert fixed.errors == [] and _same(fixed.runs, perfkit.scan(tree, cache=False).runs)


def test_the_store_is_written_after_the_load_returns(tree, monkeypatch):
    """Building and writing the store runs in a thread of its own: the load returns its runs
    first; the next load of the same root, and flush(), wait for it."""
    release = __import__("threading").Event()
    real = run_cache.runs_to_table
    monkeypatch.setattr(run_cache, "runs_to_table",
                        lambda runs: (release.wait(60), real(runs))[1])
    runs = perfkit.load(tree, cache=True)  # returns while the writer waits
    assert runs and not list((tree / ".perfkit" / "cache").glob("runs-*.parquet"))
    release.set()
    assert _same(perfkit.load(tree, cache=True), runs)  # waited for the store, then read it
    assert len(_cache_files(tree)) == 1


def test_a_store_that_cannot_be_written_notes_it_and_loads_stay_right(tree, monkeypatch):
    def broken(runs):
        raise MemoryError("no room")

    monkeypatch.setattr(run_cache, "runs_to_table", broken)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the store never prints: it notes
        runs = perfkit.load(tree, cache=True)
        run_cache.flush()
    assert "run store not written: MemoryError: no room" in run_cache.notes()[-1]
    monkeypatch.undo()
    assert _same(runs, perfkit.load(tree, cache=False))
    assert _same(perfkit.load(tree, cache=True), runs)


def test_a_stored_run_has_its_checks_without_parsing_its_manifest(monkeypatch):
    """Issue 33: each run's validity checks, whether its manifest recorded counters and its
    manifest's status are kept with it (computed when the table is written), so that reading
    them back parses no manifest (1,000 runs: 0.2 s of a second command); the same values as
    the run's own."""
    data = Path(__file__).resolve().parents[1] / "data"
    runs = [*perfkit.load(data / "demo-aa"), *perfkit.load(data / "demo-backlog")]
    expected = [(r.warnings, r.counters_recorded, r.manifest_status) for r in runs]
    assert {rec for _, rec, _ in expected} == {True, False}  # both kinds of manifest
    assert {status for _, _, status in expected} == {"complete"}
    back = table_to_runs(runs_to_table(runs))
    parsed = []
    monkeypatch.setattr(store, "_json_dict", lambda text: parsed.append(text) or {})
    assert [(r.warnings, r.counters_recorded, r.manifest_status) for r in back] == expected
    assert parsed == []


def test_the_stored_checks_name_the_source_they_were_derived_with(monkeypatch):
    """A store written before the checks' code changed is not read: the digest of that code's
    source is part of the run store's version (perfkit.store.runtable.CHECKS_MODULES)."""
    assert store.CHECKS_DIGEST in run_cache._VERSION
    assert store._checks_digest() == store.CHECKS_DIGEST
    monkeypatch.setattr(store, "CHECKS_MODULES", (*store.CHECKS_MODULES, "perfkit.frames"))
    assert store._checks_digest() != store.CHECKS_DIGEST
