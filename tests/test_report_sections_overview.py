"""The overview counts what it draws: the quality caption's runs and experiments are the
figure's points, and the Locust throughput has no value before its first counted interval
(perfkit.report.sections.overview, on the demo experiments)."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import numpy as np
import pytest

from perfkit.analysis import load_experiment
from perfkit.report.sections import overview

DATA = Path(__file__).resolve().parents[1] / "data"
NAMES = ("demo-wrk-factorial", "demo-locust", "demo-wrk2-sweep", "demo-wrk2-uncorrected")


def _drawn(ax) -> tuple[int, int]:
    """(points, series) drawn as markers without lines on ``ax``."""
    lines = [ln for ln in ax.get_lines() if ln.get_linestyle() in ("None", "none")]
    n = sum(int(np.isfinite(np.asarray(ln.get_ydata(), float)).sum()) for ln in lines)
    return n, len(lines)


def test_the_quality_caption_counts_the_points_and_experiments_drawn():
    quality = overview.quality([load_experiment(DATA / n, name=n) for n in NAMES])
    caption = overview.quality_caption(quality)
    fig = overview.quality_figure(quality)
    counts = [tuple(map(int, m)) for m in re.findall(r"\((\d+) runs? of (\d+) experiments?",
                                                     caption)]
    assert counts == [_drawn(fig.axes[0]), _drawn(fig.axes[1])]
    assert len(quality.runs) == counts[0][0] + 1  # the -U run has no run order
    assert "not drawn: demo-wrk2-uncorrected: 1 run without a run order" in caption


def _history_csv(run_dir: Path) -> list[dict]:
    (path,) = run_dir.glob("*_stats_history.csv")
    with path.open(newline="", encoding="utf-8") as fh:
        return [r for r in csv.DictReader(fh) if r["Name"] == "Aggregated"]


@pytest.fixture(scope="module")
def series():
    return overview.locust_series(load_experiment(DATA / "demo-locust"))


def test_locust_throughput_starts_with_the_first_counted_interval(series):
    """At the first history row nothing has been counted yet (0 users, 0 requests): no rate is
    drawn there; the first rate is the first interval's, at its end, over the users then."""
    for run_id, run in series.groupby("run_id", sort=False):
        rows = _history_csv(DATA / "demo-locust" / "runs" / run_id)
        first = run.iloc[0]
        assert int(rows[0]["User Count"]) == 0 and int(rows[0]["Total Request Count"]) == 0
        assert np.isnan(first["throughput_rps"]) and np.isnan(first["throughput_smoothed_rps"])
        t0, t1 = int(rows[0]["Timestamp"]), int(rows[1]["Timestamp"])
        rate = (int(rows[1]["Total Request Count"]) - 0) / (t1 - t0)
        second = run.iloc[1]
        assert second["throughput_rps"] == pytest.approx(rate)
        assert second["user_count"] == int(rows[1]["User Count"]) > 0


def test_the_data_quality_answer_names_the_experiments_it_counts():
    """The count of runs with a problem covers this page's experiments, named: a reader sees
    which bundled experiments (e.g. demo-history, on a page of its own) it leaves out."""
    quality = overview.quality([load_experiment(DATA / n, name=n) for n in NAMES])
    summary = quality.summary_frame()
    (answer, *_) = overview.answers(summary, summary.iloc[:0])
    assert answer.n == f"{int(summary['runs'].sum())} runs in 4 experiments"
    assert all(n in answer.group for n in NAMES)  # named once, in the row's heading
    assert "demo-history" not in answer.group


def test_each_count_of_runs_with_a_problem_says_of_how_many_runs():
    # the review of issue 29: "saturated: 2, short: 1, generator busy: 7 of 176, host cpu
    # busy: 128 of 176" mixed bare counts with counts of the runs that recorded a CPU share
    quality = overview.quality([load_experiment(DATA / n, name=n) for n in NAMES])
    summary = quality.summary_frame()
    (answer, *_) = overview.answers(summary, summary.iloc[:0])
    parts = answer.answer.split(", ")
    assert parts and all(re.fullmatch(r"[A-Za-z0-9 .]+: \d+ of \d+", p) for p in parts), parts
    assert "cpu" not in answer.answer
