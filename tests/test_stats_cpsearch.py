"""The change-point search on long histories: bounded by construction, its level kept.

A history longer than one window is searched in half-overlapping windows, each at alpha over
the number of windows, with sequential permutation tests (perfkit/stats/_cpsearch.py). These
tests check what bounds its cost (no array spans more than a window's labels, the run distance
matrix is built a band at a time), that the sequential test decides as all its permutations
would, and, by simulation, that a flat history still shows a change point at most alpha of the
time while a step is found where it is.
"""

from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pytest

from perfkit.stats import _cpsearch, change_points, edivisive

ALPHA = 0.05


def _history(rng, labels: int, runs: int, run_sd: float, steps: dict[int, float]) -> list:
    level = np.zeros(labels)
    for at, step in steps.items():
        level[at:] += step
    return list(np.exp(level[:, None] + run_sd * rng.standard_normal((labels, runs))))


def test_no_array_of_the_search_spans_more_labels_than_a_window(monkeypatch):
    seen: list[int] = []
    block_sums, prefix = edivisive.block_sums, edivisive.prefix

    def spy_blocks(z, starts, exponent):
        seen.append(len(starts))
        return block_sums(z, starts, exponent)

    def spy_prefix(blocks, counts):
        seen.append(blocks.shape[-1])
        return prefix(blocks, counts)

    monkeypatch.setattr(edivisive, "block_sums", spy_blocks)
    monkeypatch.setattr(edivisive, "prefix", spy_prefix)
    values = _history(np.random.default_rng(4), 400, 3, 0.07, {130: 0.3, 290: -0.3})
    got = change_points(values, window_labels=50)
    assert [c.index for c in got.change_points] == [130, 290]
    assert seen and max(seen) <= 50


def test_the_run_distances_are_summed_a_band_at_a_time_with_the_whole_matrix_sums():
    rng = np.random.default_rng(2)
    counts = rng.integers(1, 9, 1500)
    z = rng.normal(0, 1, counts.sum())
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    tracemalloc.start()
    try:
        got = edivisive.block_sums(z, starts, 1.0)
        peak_bytes = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(z) ** 2 * 8 > 4 * peak_bytes  # the R x R matrix would be > 4 times the peak
    d = np.abs(np.subtract.outer(z, z))
    assert np.array_equal(got, np.add.reduceat(np.add.reduceat(d, starts, axis=0), starts,
                                               axis=1))


@pytest.mark.parametrize("n_windows", [1, 3, 19, 200])
@pytest.mark.parametrize("alpha", [0.05, 0.01, 0.1])
def test_each_window_is_tested_at_alpha_over_the_windows(n_windows, alpha):
    h, most = _cpsearch.sequential_plan(alpha, 199, n_windows)
    assert h >= 1 and most >= 199
    assert h / (most + 1) <= alpha / n_windows + 1e-15


def test_windows_cover_the_history_half_overlapping_and_end_at_the_newest_label():
    assert _cpsearch.window_starts(100, 100) == [0]
    assert _cpsearch.window_starts(230, 100) == [0, 50, 100, 130]
    starts = _cpsearch.window_starts(1000, 100)
    assert len(starts) == 19 and starts[-1] + 100 == 1000


def test_the_sequential_test_decides_as_all_its_permutations_would():
    rng = np.random.default_rng(8)
    for trial in range(30):
        step = 0.0 if trial % 2 else 0.08
        values = _history(rng, 30, 3, 0.07, {15: step})
        counts = np.full(30, 3)
        z = np.log(np.concatenate(values))
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        blocks = edivisive.block_sums(z, starts, 1.0)
        p, c = edivisive.prefix(blocks, counts)
        q_obs = float(edivisive.best_split(p, c, 0, 30, 2)[0])
        h, most = _cpsearch.sequential_plan(ALPHA, 199, 3)
        full = edivisive.permuted_maxima(blocks, counts, [(0, 30)], 2, most,
                                         np.random.default_rng(trial))
        rejects = int(np.count_nonzero(full >= q_obs - 1e-12 * abs(q_obs))) < h
        p_seq, accepted = _cpsearch._sequential(blocks, counts, [(0, 30)], 2, most, h, q_obs,
                                                np.random.default_rng(trial))
        assert accepted == rejects and (p_seq <= h / (most + 1)) == rejects


@pytest.mark.slow
def test_a_flat_long_history_shows_a_change_point_at_most_alpha_of_the_time():
    """9 windows of 60 labels over 300: at alpha per window it would be about 0.3."""
    rng = np.random.default_rng(11)
    n = 200
    hits = sum(bool(change_points(_history(rng, 300, 3, 0.07, {}), seed=i,
                                  window_labels=60).change_points) for i in range(n))
    rate = hits / n
    print(f"\nflat, 300 labels in 9 windows: false alarms {rate:.3f} over {n} histories")
    assert rate <= ALPHA + 2 * math.sqrt(ALPHA * (1 - ALPHA) / n)


def test_steps_of_a_long_history_are_found_where_they_are_with_adjusted_p():
    rng = np.random.default_rng(5)
    sigma = 0.07 / math.sqrt(3)
    steps = {75: 4 * sigma, 230: -4 * sigma, 400: 4 * sigma}  # 75: a windows' core edge
    got = change_points(_history(rng, 500, 3, 0.07, steps), seed=3)
    assert len(got.change_points) == 3
    assert all(abs(c.index - at) <= 1 for c, at in zip(got.change_points, steps, strict=True))
    windows = len(_cpsearch.window_starts(500, 100))
    h, most = _cpsearch.sequential_plan(ALPHA, 199, windows)
    assert all(c.p_value <= ALPHA and c.p_value >= windows / (most + 1) - 1e-12
               for c in got.change_points)
    assert f"{windows} half-overlapping windows" in got.method
    assert got.stop_p_value > ALPHA
