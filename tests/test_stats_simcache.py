"""Power simulations remembered by their inputs (issue 33): same answer, nothing simulated twice."""

from __future__ import annotations

import numpy as np
import pytest

from perfkit.stats import _simcache, powersim
from perfkit.stats.power import min_detectable_ratio, runs_needed

BASE = np.array([10.2, 10.9, 10.4, 11.3, 10.0, 10.7])
NEW = np.array([10.8, 11.1, 10.5, 11.9, 10.6, 11.4])


@pytest.fixture(autouse=True)
def _fresh(monkeypatch):
    monkeypatch.setattr(_simcache, "_MEMO", {})
    yield
    _simcache.use_directory(None)


def _forbid_simulation(monkeypatch):
    def fail(*args, **kwargs):
        raise AssertionError("simulated again")
    monkeypatch.setattr(powersim, "rejection_rate", fail)


def test_a_second_runs_needed_on_the_same_inputs_simulates_nothing_and_agrees(
        tmp_path, monkeypatch):
    _simcache.use_directory(tmp_path)
    first = runs_needed(1.05, BASE, NEW, n_sim=2000)
    assert first.runs_per_arm is not None and list(tmp_path.iterdir())
    monkeypatch.setattr(_simcache, "_MEMO", {})  # a new process: only the files remain
    _forbid_simulation(monkeypatch)
    assert runs_needed(1.05, BASE, NEW, n_sim=2000) == first


def test_other_inputs_are_simulated_again(tmp_path, monkeypatch):
    _simcache.use_directory(tmp_path)
    runs_needed(1.05, BASE, NEW, n_sim=2000)
    _forbid_simulation(monkeypatch)
    for changed in (dict(n_sim=2001), dict(seed=1), dict(alpha=0.01)):
        with pytest.raises(AssertionError, match="simulated again"):
            runs_needed(1.05, BASE, NEW, **{"n_sim": 2000, **changed})
    with pytest.raises(AssertionError, match="simulated again"):  # other residuals, same sd
        runs_needed(1.05, BASE[::-1] * 1.01, NEW, n_sim=2000)


def test_an_unreadable_file_is_simulated_again(tmp_path):
    _simcache.use_directory(tmp_path)
    first = runs_needed(1.05, BASE, NEW, n_sim=2000)
    for f in tmp_path.iterdir():
        f.write_text("not a rate")
    _simcache._MEMO.clear()
    assert runs_needed(1.05, BASE, NEW, n_sim=2000) == first


def test_a_second_min_detectable_ratio_simulates_nothing_and_agrees(tmp_path, monkeypatch):
    """compare's and gate's 'detectable' column (issue 33): simulated once per spread, run
    counts, critical U, power, simulations and seed; the same two ratios read back."""
    _simcache.use_directory(tmp_path)
    first = min_detectable_ratio(BASE, NEW, n_sim=2000)
    assert first.testable and len(list(tmp_path.iterdir())) == 1
    monkeypatch.setattr(_simcache, "_MEMO", {})  # a new process: only the files remain

    def fail(*args, **kwargs):
        raise AssertionError("simulated again")

    monkeypatch.setattr(powersim, "shift_thresholds", fail)
    assert min_detectable_ratio(BASE, NEW, n_sim=2000) == first
    with pytest.raises(AssertionError, match="simulated again"):
        min_detectable_ratio(BASE, NEW, n_sim=2000, power=0.9)
