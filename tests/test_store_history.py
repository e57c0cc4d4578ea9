"""The history store: a run's notes kept as coded warnings (version 2), a version-1 store, whose
notes are sentences, read without rewriting them and never misread; plain Parquet that DuckDB
reads (issue 33, docs/scale.md).

The query shown in docs/scale.md runs against a store written by ``perfkit history add`` on
the demo history's first three jobs; its per-label medians must be the runs' own. Skipped
when DuckDB is not installed (it is not a dependency of perfkit).
"""

from __future__ import annotations

import json
import re
import statistics
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import perfkit
from perfkit.errors import DataError
from perfkit.store import history as store
from perfkit.warning import Code, Warn

REPO = Path(__file__).resolve().parents[1]
JOB = REPO / "data" / "demo-history" / "jobs" / "01-v01"
ROOT = REPO
JOBS = ROOT / "data" / "demo-history" / "jobs"


def _as_version_1(path: Path) -> list[list[str]]:
    """The store at ``path`` as version 1 wrote it: the marker's version 1, each run's notes
    their sentences. Returns the sentences, per run."""
    (path / store.MARKER).write_text(json.dumps({"format": store.FORMAT, "version": 1}))
    (label,) = sorted((path / "labels").iterdir())
    table = pq.read_table(label)
    runs = [json.loads(t) for t in table.column("run_json").to_pylist()]
    said = []
    for run in runs:
        run["notes"] = [str(Warn.decode(n)) for n in run["notes"]]
        said.append(run["notes"])
    index = table.schema.get_field_index("run_json")
    table = table.set_column(index, "run_json", pa.array([json.dumps(r) for r in runs]))
    pq.write_table(table, label)
    return said


def test_notes_are_kept_coded(tmp_path):
    runs = [r.replace(notes=(Warn(Code.HISTOGRAM_PARTIAL, held=1, requests=2),))
            for r in perfkit.load(JOB)]
    store.add_label(tmp_path, runs, "v01")
    (file,) = store.label_files(tmp_path)[0]
    back = store.read_label(file)
    assert [r.notes for r in back] == [r.notes for r in runs]
    assert json.loads((tmp_path / store.MARKER).read_text())["version"] == 2


def test_a_version_1_store_reads_its_sentences_as_recorded_and_is_marked_2_when_added_to(
        tmp_path):
    runs = [r.replace(notes=(Warn(Code.HISTOGRAM_PARTIAL, held=1, requests=2),))
            for r in perfkit.load(JOB)]
    store.add_label(tmp_path, runs, "v01")
    said = _as_version_1(tmp_path)
    (file,) = store.label_files(tmp_path)[0]
    back = store.read_label(file)
    assert [r.notes for r in back] == [tuple(Warn(Code.RECORDED, text=t) for t in s)
                                       for s in said]
    assert [[str(n) for n in r.notes] for r in back] == [[str(n) for n in r.notes]
                                                         for r in runs]
    store.add_label(tmp_path, runs, "v02")
    assert json.loads((tmp_path / store.MARKER).read_text())["version"] == 2
    assert len(store.label_files(tmp_path)[0]) == 2


def test_a_newer_store_is_refused(tmp_path):
    store.init_store(tmp_path)
    (tmp_path / store.MARKER).write_text(json.dumps({"format": store.FORMAT, "version": 3}))
    with pytest.raises(DataError, match="expected history store version 2, found 3"):
        store.label_files(tmp_path)



def _doc_query(store: Path) -> str:
    text = (ROOT / "docs" / "scale.md").read_text()
    sql = re.search(r"```sql\n(.*?)```", text, re.S)
    assert sql, "docs/scale.md shows no SQL query"
    return sql.group(1).replace("STORE", store.as_posix())


@pytest.mark.slow
def test_the_documented_duckdb_query_reads_the_history_store(tmp_path):
    duckdb = pytest.importorskip("duckdb")

    store = tmp_path / "history"
    jobs = sorted(JOBS.iterdir())[:3]
    for job in jobs:
        subprocess.run([sys.executable, "-m", "perfkit", "history", "add", "--store",
                        str(store), "--label", job.name, str(job)], check=True, cwd=ROOT,
                       capture_output=True)
    rows = duckdb.sql(_doc_query(store)).fetchall()
    assert [r[0] for r in rows] == [j.name for j in jobs]
    for (label, _, runs, p99), job in zip(rows, jobs, strict=True):
        values = [r.percentiles_ms[99.0] for r in perfkit.load(job, cache=False)]
        assert runs == len(values), label
        assert p99 == pytest.approx(statistics.median(values), rel=1e-9), label


def test_adding_a_label_reads_only_the_files_that_can_hold_it(tmp_path, monkeypatch):
    """Adding a label costs the same whatever the store holds (issue 33 item 4): it reads the
    files named with its slug, not every label's metadata; a label added twice is still
    refused, and the next file takes the next number."""
    runs = perfkit.load(JOB)
    for i in range(30):
        store.add_label(tmp_path, runs, f"v{i:02d}", time_utc=f"2026-01-01T00:00:{i:02d}Z")
    read: list[Path] = []
    real = store._read_meta
    monkeypatch.setattr(store, "_read_meta", lambda file: read.append(file) or real(file))
    written = store.add_label(tmp_path, runs, "v30", time_utc="2026-01-01T00:01:00Z")
    assert written.seq == 31 and written.path.name == "000031-v30.parquet"
    assert read == [written.path]  # its own file, checked against a racing writer
    read.clear()
    with pytest.raises(DataError, match="already in the history"):
        store.add_label(tmp_path, runs, "v07")
    assert [p.name for p in read] == ["000008-v07.parquet"]
