"""perfkit.analysis.compare._aa: A/A false-positive rates, counted on splits of one configuration's
runs, carry no interval."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from perfkit.analysis import load_experiment, metric
from perfkit.analysis.compare import _aa as aa_calibration
from perfkit.warning import Code, Warn

DATA = Path(__file__).resolve().parents[1] / "data"


def test_aa_false_positive_rates_are_counted_and_carry_no_interval():
    rng = np.random.default_rng(3)
    values = rng.lognormal(0, 0.1, 20)
    hits, tested = aa_calibration.split_false_positive_rate(values, 5, metric("latency_p99_ms"),
                                                            0.05, 200, 1)
    assert tested == 200 and 0 <= hits <= tested
    result = aa_calibration.aa_calibration(load_experiment(DATA / "demo-aa").rows(), "arm",
                                           ["latency_p99_ms"])
    assert not any("ci" in c for c in result.to_frame().columns)
    assert Warn(Code.AA_SPLITS_SHARE_RUNS, splits=200) in result.warnings
