"""The one rule for splitting rows by Locust endpoint, shared by compare, gate and plan."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import _cli_helpers as _cli
import pytest

from perfkit.analysis.core import per_endpoint

REPO = Path(__file__).resolve().parents[1]
SIDES = ("data/demo-locust::profile=default", "data/demo-locust::profile=buffered-log")


@pytest.mark.parametrize(("by", "split"), [
    ("auto", False), ("none", False), ("", False), ("users", False), ("endpoints", False),
    ("endpoint", True), ("users, endpoint", True), (["endpoint"], True), (None, False),
])
def test_only_naming_endpoint_splits_locust_rows(by, split):
    assert per_endpoint(by) is split


def _rows(*extra: str) -> list[dict[str, str]]:
    code, out, err = _cli.run_cli("compare", *SIDES, "--metric", "latency_p50_ms",
                                  "--format", "csv", *extra, cwd=REPO)
    assert code == 0, err
    return list(csv.DictReader(io.StringIO(out)))


def test_locust_runs_enter_through_their_aggregated_row_unless_endpoints_are_asked_for():
    pooled = _rows("--by", "users")
    assert [r["users"] for r in pooled] == ["5", "20", "60"]
    split = _rows("--by", "endpoint,users")
    assert sorted({r["endpoint"] for r in split}) == ["Aggregated", "page"]
    aggregated = [r for r in split if r["endpoint"] == "Aggregated"]
    for a, b in zip(pooled, aggregated, strict=True):
        assert (a["median_base_ms"], a["median_new_ms"]) == (b["median_base_ms"],
                                                             b["median_new_ms"])
