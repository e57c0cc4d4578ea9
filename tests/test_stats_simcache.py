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
    monkeypatch.setattr(_simcache, "_VALUES", {})
    monkeypatch.setattr(_simcache, "_VALUES_READ", set())
    yield
    _simcache.use_directory(None)


def _rate_files(folder):
    return [f for f in folder.iterdir() if f.name != _simcache.VALUES_FILE]


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
    # the two ratios, and the critical U of these run counts they rest on
    assert first.testable and len(_rate_files(tmp_path)) == 2
    monkeypatch.setattr(_simcache, "_MEMO", {})  # a new process: only the files remain

    def fail(*args, **kwargs):
        raise AssertionError("simulated again")

    monkeypatch.setattr(powersim, "shift_thresholds", fail)
    assert min_detectable_ratio(BASE, NEW, n_sim=2000) == first
    with pytest.raises(AssertionError, match="simulated again"):
        min_detectable_ratio(BASE, NEW, n_sim=2000, power=0.9)


def _fail():
    raise AssertionError("computed again")


def test_a_special_value_is_read_back_bit_for_bit_by_a_second_process(tmp_path, monkeypatch):
    """issue 33: the t, F, normal and binomial values a command asked scipy.special for are
    kept beside the run store, so that a second command imports no scipy."""
    from perfkit.stats import _dist

    _simcache.use_directory(tmp_path)
    q = _dist.t_ppf(0.975, 7.3)
    sf = _dist.t_sf(np.array([0.5, 2.0, 9.0]), 3.25)
    assert isinstance(q, np.float64) and (tmp_path / _simcache.VALUES_FILE).is_file()
    monkeypatch.setattr(_simcache, "_VALUES", {})  # a new process: the file alone
    monkeypatch.setattr(_simcache, "_VALUES_READ", set())
    again = _simcache.remembered_value("stdtrit", (7.3, 0.975), _fail)
    assert isinstance(again, np.float64) and again.tobytes() == q.tobytes()
    back = _simcache.remembered_value("stdtr", (3.25, -np.array([0.5, 2.0, 9.0])), _fail)
    assert back.shape == (3,) and back.tobytes() == sf.tobytes()
    back[0] = 0.0  # the caller's copy
    assert _simcache.remembered_value("stdtr", (3.25, -np.array([0.5, 2.0, 9.0])),
                                      _fail).tobytes() == sf.tobytes()


def test_other_arguments_or_types_are_computed_again(tmp_path):
    _simcache.use_directory(tmp_path)
    _simcache.remembered_value("stdtrit", (7.3, 0.975), lambda: np.float64(1.0))
    for args in ((7.3, 0.9751), (7, 0.975), (np.float32(7.3), 0.975), (np.array([7.3]), 0.975)):
        with pytest.raises(AssertionError, match="computed again"):
            _simcache.remembered_value("stdtrit", args, _fail)
    with pytest.raises(AssertionError, match="computed again"):
        _simcache.remembered_value("ndtri", (7.3, 0.975), _fail)


def test_a_damaged_values_file_is_computed_again_and_large_or_odd_arguments_are_not_kept(
        tmp_path, monkeypatch):
    from perfkit.stats import _dist

    _simcache.use_directory(tmp_path)
    q = _dist.t_ppf(0.975, 7.3)
    path = tmp_path / _simcache.VALUES_FILE
    line = path.read_text()
    path.write_text(line[:70] + "\n" + "not a value\n" + line.replace("<f8", "<f4"))
    monkeypatch.setattr(_simcache, "_VALUES", {})
    monkeypatch.setattr(_simcache, "_VALUES_READ", set())
    assert _simcache.remembered_value("stdtrit", (7.3, 0.975), lambda: q + 1) == q + 1
    big = np.linspace(-3, 3, _simcache.VALUE_MAX_SIZE + 1)
    _dist.norm_cdf(big)
    _dist.norm_cdf([0.5, 1.0])  # a list: not an array, computed as given
    assert len(path.read_text().splitlines()) == 4  # the three damaged lines and the new one


def test_a_seeded_usl_bootstrap_is_remembered_and_gives_the_same_fit(tmp_path, monkeypatch):
    from perfkit.stats import _usl_bootstrap
    from perfkit.stats.usl import fit_usl

    n = np.array([1, 2, 4, 8, 16, 32, 64] * 2)
    x = 1000 * n / (1 + 0.05 * (n - 1) + 0.0008 * n * (n - 1)) * np.repeat([1.0, 1.03], 7)
    fresh = fit_usl(n, x, n_resamples=200, seed=3)  # nothing remembered: no folder, no memo
    monkeypatch.setattr(_simcache, "_MEMO", {})
    _simcache.use_directory(tmp_path)
    assert fit_usl(n, x, n_resamples=200, seed=3) == fresh
    assert len(_rate_files(tmp_path)) == 1
    monkeypatch.setattr(_simcache, "_MEMO", {})  # a new process: only the file remains
    real_solve = _usl_bootstrap.solve

    def fail(*args, **kwargs):
        raise AssertionError("refitted again")

    monkeypatch.setattr(_usl_bootstrap, "solve", fail)
    assert fit_usl(n, x, n_resamples=200, seed=3) == fresh
    with pytest.raises(AssertionError, match="refitted again"):  # other inputs: refitted
        fit_usl(n, x, n_resamples=200, seed=4)
    with pytest.raises(AssertionError, match="refitted again"):  # unseeded: never remembered
        fit_usl(n, x, n_resamples=200, seed=None)
    monkeypatch.setattr(_usl_bootstrap, "solve", real_solve)
