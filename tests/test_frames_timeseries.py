"""perfkit.frames.timeseries_frame on the real Locust histories, checked against the CSV files
read directly with the csv module."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pytest

import perfkit
from perfkit.frames import TIMESERIES_COLUMNS, timeseries_frame
from perfkit.ingest import locust
from perfkit.model import Run

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "locust"
HISTORIES = {"clean_u20": "clean", "failures_u30": "failures", "processes2_u40": "procs"}


@pytest.fixture(scope="module")
def frame():
    return timeseries_frame(perfkit.load(FIXTURES))


def _csv_rows(run_dir: str) -> list[dict]:
    path = FIXTURES / run_dir / f"{HISTORIES[run_dir]}_stats_history.csv"
    return list(csv.DictReader(io.StringIO(path.read_bytes().decode("utf-8"), newline="")))


def _value(text: str) -> float:
    return np.nan if text == "N/A" else float(text)


def test_columns_and_one_row_per_history_row(frame):
    assert tuple(frame.columns) == TIMESERIES_COLUMNS
    for run_dir in HISTORIES:
        assert (frame.run_id == run_dir).sum() == len(_csv_rows(run_dir))


@pytest.mark.parametrize("run_dir", sorted(HISTORIES))
def test_throughput_is_differenced_from_the_total_counts(frame, run_dir):
    rows = _csv_rows(run_dir)
    for name in {r["Name"] for r in rows}:
        mine = [r for r in rows if r["Name"] == name]
        got = frame[(frame.run_id == run_dir) & (frame.endpoint == name)]
        ts = [int(r["Timestamp"]) for r in mine]
        for column, total in (("throughput_rps", "Total Request Count"),
                              ("failures_per_s", "Total Failure Count")):
            counts = [int(r[total]) for r in mine]
            expected = [np.nan] + [(counts[i] - counts[i - 1]) / (ts[i] - ts[i - 1])
                                   for i in range(1, len(mine))]
            np.testing.assert_array_equal(got[column].to_numpy(), expected)
        printed = [float(r["Requests/s"]) for r in mine]
        np.testing.assert_array_equal(got["requests_per_s_printed"].to_numpy(), printed)
        assert list(got["timestamp_s"]) == ts
        assert list(got["user_count"]) == [int(r["User Count"]) for r in mine]


def test_differenced_rates_add_up_to_the_total(frame):
    """Even with --processes, whose master totals move every ~3 s, rate x dt sums to the
    requests counted between the first and last rows."""
    for run_dir in HISTORIES:
        agg = frame[(frame.run_id == run_dir) & (frame.endpoint == "Aggregated")]
        dt = np.diff(agg.timestamp_s.to_numpy(dtype=float))
        rows = [r for r in _csv_rows(run_dir) if r["Name"] == "Aggregated"]
        total = int(rows[-1]["Total Request Count"]) - int(rows[0]["Total Request Count"])
        assert np.nansum(agg.throughput_rps.to_numpy()[1:] * dt) == total


def test_printed_percentiles_and_missing_values(frame):
    agg = frame[(frame.run_id == "clean_u20") & (frame.endpoint == "Aggregated")]
    rows = [r for r in _csv_rows("clean_u20") if r["Name"] == "Aggregated"]
    p99 = [_value(r["99%"]) for r in rows]
    p99[1] = np.nan  # all percentiles printed 0 with 293 requests: no window yet
    np.testing.assert_array_equal(agg.latency_p99_ms.to_numpy(), p99)
    np.testing.assert_array_equal(agg.latency_p50_ms.to_numpy()[2:],
                                  [_value(r["50%"]) for r in rows[2:]])
    assert not frame.cumulative_percentiles.any()  # every fixture used --csv-full-history


def test_elapsed_counts_from_the_runs_first_row(frame):
    clean = frame[frame.run_id == "clean_u20"]
    assert clean.elapsed_s.min() == 0.0
    first_endpoint_row = clean[clean.endpoint == "/"].iloc[0]
    assert first_endpoint_row.elapsed_s == 1.0  # Aggregated starts a second earlier


def test_ramp_up_until_the_user_count_peaks(frame):
    agg = frame[(frame.run_id == "clean_u20") & (frame.endpoint == "Aggregated")]
    assert list(agg.user_count[:3]) == [0, 10, 20]
    assert list(agg.ramp_up) == [True, True] + [False] * (len(agg) - 2)
    procs = frame[(frame.run_id == "processes2_u40") & (frame.endpoint == "Aggregated")]
    assert list(procs.user_count[:4]) == [0, 0, 20, 40] and procs.user_count.iloc[-1] == 0
    assert list(procs.ramp_up[:4]) == [True, True, True, False]
    assert not procs.ramp_up.iloc[-1]  # users stopped at the end is not a ramp-up


def test_cumulative_flag_without_full_history():
    path = FIXTURES / "clean_u20" / "clean_stats_history.csv"
    lines = path.read_bytes().decode("utf-8").splitlines(keepends=True)
    text = lines[0] + "".join(line for line in lines[1:] if ",,Aggregated," in line)
    stats = FIXTURES / "clean_u20" / "clean_stats.csv"
    runs = locust.parse_files([("locust_history", "x_stats_history.csv", text),
                               ("locust_stats", "x_stats.csv",
                                stats.read_bytes().decode("utf-8"))])
    frame = timeseries_frame(runs)
    assert list(frame.endpoint.unique()) == ["Aggregated"]
    assert frame.cumulative_percentiles.all()
    assert frame.run_id.iloc[0] == "x_stats.csv"  # no manifest: the source names the run


def test_runs_without_history_give_an_empty_frame():
    wrk_like = Run(tool="wrk", source="out.txt", latency_source="summary_only")
    frame = timeseries_frame([wrk_like])
    assert frame.empty and tuple(frame.columns) == TIMESERIES_COLUMNS
