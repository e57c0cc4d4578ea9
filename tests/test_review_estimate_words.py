"""Every sentence that says what a latency value is comes from the results' own method: the
geometric mean with 2-4 runs, the median of the runs' percentiles from 5 (review 3, item 1)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from perfkit.analysis import load_experiment
from perfkit.report.sections import latency, scaling

ROOT = Path(__file__).resolve().parents[1]
AT = {"target_rate_rps": 30000, "connections": 64}


@pytest.fixture(scope="module")
def sweep():
    return load_experiment(ROOT / "data" / "demo-wrk2-sweep")


def _cell(sweep, by):
    groups = latency.grouped_runs(sweep, by, AT)
    return groups, latency.percentiles(groups, (99.0,), seed=1, n_resamples=100)


def test_three_runs_are_said_to_be_a_geometric_mean_not_a_median(sweep):
    groups, table = _cell(sweep, ["profile"])
    default = groups.config("default").values_ms(99.0)
    (e,) = [e for e in table.estimates if e.config == "default"]
    assert e.ci.estimate_ms == pytest.approx(math.exp(np.log(default).mean()))
    said = " ".join([table.describe(), *latency.caveats(table)])
    assert "geometric mean of the 3 runs' percentiles" in said
    for wrong in ("as the median of per-run percentiles", "never by averaging",
                  "the estimate is the median run's percentile"):
        assert wrong not in said


def test_five_runs_or_more_are_said_to_be_the_median(sweep):
    groups, table = _cell(sweep, [])  # both profiles together: 6 runs
    assert table.estimates[0].ci.method == "order_stats"
    values = groups.config("all runs").values_ms(99.0)
    assert table.estimates[0].ci.estimate_ms == pytest.approx(np.median(values))
    said = table.describe()
    assert "each value shown is the median of the 6 runs' percentiles" in said
    assert "order-statistic intervals" in said
    assert not any("geometric mean" in c for c in latency.caveats(table))


def test_the_spectrum_caption_names_its_estimate_once(sweep):
    groups = latency.grouped_runs(sweep, ["profile"], AT)
    text = latency.spectrum_caption(latency.spectrum(groups, n_resamples=50), AT, 0.95)
    assert text.count("geometric mean") == 1 and "30000 req/s offered, 64 connections" in text


@pytest.mark.parametrize("by, words", [(["profile", "connections"], "geometric mean of the 3"),
                                       (["connections"], "median of the 6 runs' p99")])
def test_the_heat_map_and_the_latency_line_say_what_their_cells_are(sweep, by, words):
    table = scaling.slo(sweep.rows(), by, 5.0, 99.0, seed=1, n_resamples=100)
    for text in (scaling.heatmap_caption(table), scaling.heatmap_text(table),
                 scaling.latency_caption(table, 99.0, 5.0), table.describe()):
        assert words in text
        assert "median run's percentile)" not in text and "medians" not in text
    grid = scaling.heat_tables(table)
    cell = grid["default"] if "profile" in by else grid["all runs"]
    v = table.verdicts_frame()
    row = v[(v["rate_rps"] == 30000) & (v["connections"] == 64)]
    if "profile" in by:
        row = row[row["profile"] == "default"]
    assert cell.loc[64, 30000] == pytest.approx(row["estimate_ms"].iloc[0])


@pytest.mark.parametrize("name", ["latency", "scaling"])
def test_no_notebook_text_claims_a_median_or_no_averaging(name):
    nb = json.loads((ROOT / "notebooks" / f"{name}.ipynb").read_text())
    text = " ".join("".join(c["source"]).replace("\n", " ") for c in nb["cells"])
    for wrong in ("never averaged", "median of the runs' percentiles",
                  "the line joins the medians at each rate"):
        assert wrong not in text
