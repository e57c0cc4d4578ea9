"""Change points by E-divisive means: the statistic by brute force, then detection by simulation.

Synthetic histories: labels with 1 or 3 runs, run-to-run log sd 0.05-0.1 (our testbed's),
steps of k x sigma_label where sigma_label = run_sd / sqrt(runs) is the noise of a label's mean.
Figures measured with these seeds are printed with ``pytest -s``; the full table is
benchmarks/calibration_changepoint.py.
"""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest

from perfkit.stats import change_points, edivisive
from perfkit.stats.changepoint import labels_needed, permutation_floor
from perfkit.warning import Code, Warn, texts

ALPHA = 0.05


def _brute_q(x: np.ndarray, y: np.ndarray) -> float:
    """Matteson and James's Q of two samples, straight from the definition (exponent 1)."""
    m, n = len(x), len(y)
    cross = np.abs(np.subtract.outer(x, y)).mean()
    within_x = np.abs(np.subtract.outer(x, x)).sum() / (m * (m - 1)) if m > 1 else 0.0
    within_y = np.abs(np.subtract.outer(y, y)).sum() / (n * (n - 1)) if n > 1 else 0.0
    return m * n / (m + n) * (2 * cross - within_x - within_y)


def _history(rng, labels: int, runs: int, run_sd: float, steps: dict[int, float],
             label_sd: float = 0.0) -> list[np.ndarray]:
    level = np.zeros(labels)
    for at, step in steps.items():
        level[at:] += step
    level += label_sd * rng.standard_normal(labels)
    return list(np.exp(level[:, None] + run_sd * rng.standard_normal((labels, runs))))


def _err(p: float, n: int) -> float:
    return 2 * math.sqrt(p * (1 - p) / n)


def test_best_split_is_the_brute_force_maximum_over_label_splits():
    rng = np.random.default_rng(1)
    counts = np.array([1, 3, 2, 2, 1, 3, 2, 1])
    z = rng.normal(0, 1, counts.sum()) + np.repeat([0, 0, 0, 1, 1, 1, 0, 0], counts)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    bounds = np.concatenate([starts, [len(z)]])
    p, c = edivisive.prefix(edivisive.block_sums(z, starts, 1.0), counts)
    for start, end, min_labels in [(0, 8, 1), (0, 8, 2), (1, 7, 2), (2, 8, 1)]:
        best = max((_brute_q(z[bounds[start]:bounds[t]], z[bounds[t]:bounds[k]]), t)
                   for t, k in itertools.combinations(range(start + 1, end + 1), 2)
                   if t - start >= min_labels and k - t >= min_labels)
        q, tau = edivisive.best_split(p, c, start, end, min_labels)
        assert float(q) == pytest.approx(best[0], rel=1e-12) and int(tau) == best[1]


def test_a_batch_of_permuted_matrices_gives_the_same_q_as_one_at_a_time():
    rng = np.random.default_rng(2)
    counts = np.array([2, 1, 3, 2, 2, 1])
    z = rng.normal(0, 1, counts.sum())
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    blocks = edivisive.block_sums(z, starts, 1.0)
    orders = np.array([rng.permutation(6) for _ in range(5)])
    p, c = edivisive.prefix(blocks[orders[:, :, None], orders[:, None, :]], counts[orders])
    batch, _ = edivisive.best_split(p, c, 0, 6, 1)
    for r, order in enumerate(orders):
        values = [z[starts[i]:starts[i] + counts[i]] for i in order]
        zz = np.concatenate(values)
        cc = counts[order]
        ss = np.concatenate([[0], np.cumsum(cc)[:-1]])
        one = edivisive.best_split(*edivisive.prefix(edivisive.block_sums(zz, ss, 1.0), cc),
                                   0, 6, 1)[0]
        assert batch[r] == pytest.approx(float(one), rel=1e-12)


def test_a_clear_step_is_found_with_its_ratio_segments_and_labels():
    rng = np.random.default_rng(3)
    values = _history(rng, 16, 3, 0.05, {9: math.log(1.25)})
    labels = [f"v1.{i}" for i in range(16)]
    got = change_points(values, labels, seed=1)
    assert len(got.change_points) == 1
    cp = got.change_points[0]
    assert (cp.index, cp.label, cp.label_before) == (9, "v1.9", "v1.8")
    assert cp.p_value == pytest.approx(1 / 200) and cp.p_value_adjacent <= ALPHA
    assert cp.ratio_ci_low < 1.25 < cp.ratio_ci_high and cp.ratio == pytest.approx(1.25, rel=0.05)
    assert (cp.n_labels_before, cp.n_labels_after, cp.n_runs_before, cp.n_runs_after) == \
        (9, 7, 27, 21)
    assert [(s.start, s.end, s.first_label, s.last_label) for s in got.segments] == \
        [(0, 9, "v1.0", "v1.8"), (9, 16, "v1.9", "v1.15")]
    assert got.segments[1].median / got.segments[0].median == pytest.approx(1.25, rel=0.05)
    json.dumps(got.to_dict())


def test_a_regression_and_its_fix_are_two_change_points_in_series_order():
    rng = np.random.default_rng(4)
    values = _history(rng, 24, 3, 0.07, {8: 0.25, 16: -0.25})
    got = change_points(values, seed=2)
    assert [cp.index for cp in got.change_points] == [8, 16]
    assert sorted(cp.order for cp in got.change_points) == [1, 2]
    up, down = got.change_points
    assert up.ratio > 1 > down.ratio
    assert up.n_labels_after == 8 and down.n_labels_before == 8


def test_one_run_per_label_and_scalar_items_work():
    rng = np.random.default_rng(5)
    values = [float(v[0]) for v in _history(rng, 20, 1, 0.05, {12: 0.3})]
    got = change_points(values, seed=0)
    assert [cp.index for cp in got.change_points] == [12]
    assert got.runs_per_label == (1,) * 20


def test_same_seed_same_answer_and_the_method_is_stated():
    rng = np.random.default_rng(6)
    values = _history(rng, 14, 3, 0.07, {7: 0.1})
    assert change_points(values, seed=9) == change_points(values, seed=9)
    assert "shuffling whole labels" in change_points(values).method


def test_missing_runs_and_empty_labels_are_left_out_with_warnings():
    values = [[1.0, 1.1], [None, 1.0], [float("nan")], [1.05, 0.95], [1.0], [1.1]]
    got = change_points(values, list("abcdef"))
    assert got.labels == ("a", "b", "d", "e", "f") and got.runs_per_label == (2, 1, 2, 1, 1)
    assert Warn(Code.FAILED_RUNS_LEFT_OUT, runs=2) in got.warnings
    assert Warn(Code.LABELS_LEFT_OUT, labels=("c",)) in got.warnings
    assert "1 label(s) without a usable run left out: c" in texts(got.warnings)


def test_a_series_too_short_to_split_says_so():
    got = change_points([[1.0], [2.0], [3.0]])
    assert got.change_points == () and len(got.segments) == 1
    short = got.warnings[0]
    assert (short.code, short["labels"], short["need"], short["floor"]) == (
        Code.TOO_FEW_LABELS, 3, 8, None)  # a split needs 2 labels on each side: none tested
    assert math.isnan(got.stop_p_value)


def _exact_p(values: list[list[float]], min_labels: int = 2) -> float:
    """The exact permutation p of the first split: the share of every order of the labels
    whose best Q reaches the observed one (what the Monte Carlo test estimates)."""
    counts = np.array([len(v) for v in values])
    z = np.log(np.concatenate(values))
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    blocks = edivisive.block_sums(z, starts, 1.0)
    orders = np.array(list(itertools.permutations(range(len(values)))))
    shuffled = blocks[orders[:, :, None], orders[:, None, :]]
    p, c = edivisive.prefix(shuffled, counts[orders])
    q, _ = edivisive.best_split(p, c, 0, len(values), min_labels)
    observed = q[0]  # the identity order comes first
    return float(np.mean(q >= observed - 1e-12 * abs(observed)))


@pytest.mark.parametrize("n_labels", [4, 5, 6, 7, 8])
def test_the_permutation_floor_is_what_every_order_of_a_clean_step_gives(n_labels):
    rng = np.random.default_rng(n_labels)
    step = n_labels // 2
    values = [list(np.exp(0.02 * rng.standard_normal(3) + (1.0 if i >= step else 0.0)))
              for i in range(n_labels)]
    assert math.isclose(_exact_p(values), permutation_floor(n_labels), rel_tol=1e-9)


@pytest.mark.parametrize("n_labels", [4, 5, 6, 7])
def test_histories_too_short_for_a_change_point_say_how_many_labels_it_needs(n_labels):
    # a clean step of e (x2.7) mid-series: the Monte Carlo test found it by chance in 12 of
    # 40 seeds at 7 labels, where no exact p reaches 0.05; now it is not run, and said
    values = [[math.exp(1.0 if i >= n_labels // 2 else 0.0) * (1 + 0.01 * r) for r in range(3)]
              for i in range(n_labels)]
    for seed in range(5):
        got = change_points(values, seed=seed)
        assert got.change_points == ()
        short = got.warnings[0]
        assert (short.code, short["labels"], short["need"]) == (Code.TOO_FEW_LABELS,
                                                                n_labels, 8)
    assert labels_needed(0.05) == 8 and labels_needed(0.01) == 10
    assert permutation_floor(7) > 0.05 >= permutation_floor(8)
    eight = [[math.exp(1.0 if i >= 4 else 0.0) * (1 + 0.01 * r) for r in range(3)]
             for i in range(8)]
    found = change_points(eight, seed=0)
    assert [c.index for c in found.change_points] == [4]  # from 8 labels on it is found


def test_bad_input_is_refused_with_the_reason():
    with pytest.raises(ValueError, match="label b: per-run values must be > 0"):
        change_points([[1.0], [0.0]], ["a", "b"])
    with pytest.raises(ValueError, match="2 labels for 3 items"):
        change_points([[1.0], [2.0], [3.0]], ["a", "b"])
    with pytest.raises(ValueError, match="permutations"):
        change_points([[1.0]] * 6, permutations=10)
    with pytest.raises(ValueError, match="exponent"):
        change_points([[1.0]] * 6, exponent=2.0)
    with pytest.raises(ValueError, match="ci_unit"):
        change_points([[1.0]] * 6, ci_unit="commit")


@pytest.mark.slow
def test_flat_noisy_histories_show_a_change_point_at_most_alpha_of_the_time():
    rng = np.random.default_rng(20240612)
    n = 300
    hits = 0
    for i in range(n):
        runs, sd = (1, 0.1) if i % 2 else (3, 0.05)
        hits += bool(change_points(_history(rng, 20, runs, sd, {}), seed=i).change_points)
    rate = hits / n
    print(f"\nfalse-positive rate on {n} flat histories: {rate:.3f} +- {_err(ALPHA, n):.3f}")
    assert rate <= ALPHA + _err(ALPHA, n)


@pytest.mark.slow
def test_steps_of_three_label_sigmas_are_recalled_at_least_90_percent():
    rng = np.random.default_rng(20240613)
    shapes = [(20, {10: 3.0}), (24, {8: 3.0, 16: -3.0}), (24, {8: 3.0, 16: 3.0})]
    found = total = 0
    for i in range(150):
        labels, steps = shapes[i % 3]
        runs, sd = (1, 0.07) if i % 2 else (3, 0.1)
        sigma = sd / math.sqrt(runs)
        values = _history(rng, labels, runs, sd, {at: k * sigma for at, k in steps.items()})
        where = [cp.index for cp in change_points(values, seed=i).change_points]
        found += sum(any(abs(w - at) <= 1 for w in where) for at in steps)
        total += len(steps)
    recall = found / total
    print(f"\nrecall (within 1 label) of {total} steps of 3 sigma: {recall:.3f} "
          f"+- {_err(recall, total):.3f}")
    assert recall >= 0.9


@pytest.mark.slow
def test_shuffling_labels_keeps_alpha_with_a_label_effect_where_shuffling_runs_does_not():
    rng = np.random.default_rng(20240614)
    n, by_label, by_run = 200, 0, 0
    for i in range(n):
        values = _history(rng, 20, 3, 0.05, {}, label_sd=0.05)
        by_label += bool(change_points(values, seed=i).change_points)
        counts = np.full(20, 3)
        z = np.log(np.concatenate(values))
        starts = np.arange(20) * 3
        p, c = edivisive.prefix(edivisive.block_sums(z, starts, 1.0), counts)
        q = float(edivisive.best_split(p, c, 0, 20, 2)[0])
        null = edivisive.permuted_run_maxima(z, starts, counts, [(0, 20)], 2, 1.0, 199,
                                             np.random.default_rng(i))
        by_run += (1 + np.count_nonzero(null >= q)) / 200 <= ALPHA
    print(f"\nwith a label effect: false positives shuffling labels {by_label / n:.3f}, "
          f"shuffling runs {by_run / n:.3f}")
    assert by_label / n <= ALPHA + _err(ALPHA, n)
    assert by_run / n > 0.3
