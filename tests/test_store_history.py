"""The history store is plain Parquet that DuckDB reads (issue 33, docs/scale.md).

The query shown in docs/scale.md runs against a store written by ``perfkit history add`` on
the demo history's first three jobs; its per-label medians must be the runs' own. Skipped
when DuckDB is not installed (it is not a dependency of perfkit).
"""

from __future__ import annotations

import re
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
JOBS = ROOT / "data" / "demo-history" / "jobs"


def _doc_query(store: Path) -> str:
    text = (ROOT / "docs" / "scale.md").read_text()
    sql = re.search(r"```sql\n(.*?)```", text, re.S)
    assert sql, "docs/scale.md shows no SQL query"
    return sql.group(1).replace("STORE", store.as_posix())


@pytest.mark.slow
def test_the_documented_duckdb_query_reads_the_history_store(tmp_path):
    duckdb = pytest.importorskip("duckdb")
    import perfkit

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
