"""compare(): a Comparison of the per-run values of a base and a new configuration."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats as sps

from perfkit.errors import UsageError
from perfkit.stats import compare
from perfkit.stats.comparison import COLUMNS, Comparison
from perfkit.warning import Code, Warn, texts


def _row(*args, **kwargs) -> dict:
    """The comparison's fields (its warnings as the values, its frame's as their words)."""
    result = compare(*args, **kwargs)
    assert isinstance(result, Comparison)
    frame = result.to_frame()  # the one-row frame compare() used to return
    assert list(frame.columns) == list(COLUMNS) and len(frame) == 1
    out = {**result.to_dict(), "warnings": result.warnings}
    for key, value in out.items():
        got = frame.iloc[0][key]
        if key == "warnings":
            assert got == texts(value)
            continue
        assert got == value or (isinstance(value, float) and math.isnan(value) and math.isnan(got))
    return out


def codes(row: dict) -> set[Code]:
    return {w.code for w in row["warnings"]}


def test_three_versus_three_cannot_be_significant_and_says_run_more():
    row = _row([1.0, 1.1, 1.2], [2.0, 2.1, 2.2])
    assert row["significant"] is None
    assert row["min_attainable_p"] == pytest.approx(0.1)
    assert row["p_value"] == pytest.approx(0.1)
    # the words name the next step
    assert "3 vs 3 runs cannot reach p < 0.05 (smallest p 0.10): run more (>= 4 vs 4)" \
        in texts(row["warnings"])
    assert math.isnan(row["ratio_ci_low"]) and math.isnan(row["ratio_ci_high"])
    median = Warn(Code.MEDIAN_CI_NEEDS_RUNS, need=6, confidence=0.95)
    assert Warn(Code.ON_SIDE, side="base and new", warning=median) in row["warnings"]
    assert Warn(Code.ON_SIDE, side="new", warning=median) in _row([1.0] * 6, [2.0] * 5)[
        "warnings"]


def test_run_more_names_the_runs_holm_needs_in_a_family():
    c = compare([1.0, 1.1, 1.2], [2.0, 2.1, 2.2], family=8)
    assert c.p_value == pytest.approx(0.1) and c.significant is None  # the test's own p
    (few,) = [w for w in c.warnings if w.code is Code.TOO_FEW_RUNS]
    assert (few["need"], few["family"]) == (6, 8)
    assert str(few).endswith("run more (>= 6 vs 6 for Holm over 8 comparisons)")


def test_five_versus_five_separated_is_significant_with_a_ratio_ci_above_one():
    base = [1.0, 1.1, 1.2, 1.05, 1.15]
    new = [1.3, 1.4, 1.25, 1.35, 1.5]
    row = _row(base, new)
    assert row["p_value"] == pytest.approx(2 / 252)
    assert row["p_method"] == "exact" and row["significant"] is True
    assert row["ratio_ci_low"] > 1 and row["ratio"] > 1
    assert row["median_base"] == 1.1 and row["median_new"] == 1.35


def test_p_value_matches_scipy_exact():
    rng = np.random.default_rng(2)
    base, new = rng.lognormal(0, 0.1, 7), rng.lognormal(0.05, 0.1, 9)
    row = _row(base, new)
    assert row["p_value"] == pytest.approx(sps.mannwhitneyu(new, base, method="exact").pvalue)


def test_ratio_of_a_doubled_sample_is_two():
    base = np.array([3.0, 3.3, 2.9, 3.6, 3.1, 3.2])
    row = _row(base, 2 * base)
    assert row["ratio"] == pytest.approx(2.0, rel=1e-12)


def test_identical_samples_give_p_one_and_ratio_one():
    row = _row([5.0, 6.0, 7.0, 8.0, 9.0], [5.0, 6.0, 7.0, 8.0, 9.0])
    assert row["p_value"] == 1.0 and row["significant"] is False and row["ratio"] == 1.0


def test_ratio_interval_excludes_one_exactly_when_significant():
    rng = np.random.default_rng(9)
    for _ in range(200):
        n_b, n_n = rng.integers(4, 12, size=2)
        base = rng.lognormal(0, 0.1, n_b)
        new = rng.lognormal(rng.uniform(0, 0.2), 0.1, n_n)
        row = _row(base, new)
        excludes = row["ratio_ci_low"] > 1 or row["ratio_ci_high"] < 1
        assert row["significant"] == excludes


@pytest.mark.slow
def test_with_heavy_ties_a_significant_interval_may_touch_one_but_never_straddle_it():
    # what the docstring promises: significant -> the interval lies on one side of 1 (an
    # endpoint can equal 1, the interval being open there); not significant -> 1 is inside
    rng = np.random.default_rng(13)
    touched = 0
    for _ in range(2000):
        n_b, n_n = rng.integers(4, 9, size=2)
        base = rng.integers(1, 4, n_b).astype(float)
        new = rng.integers(1, 5, n_n).astype(float)
        row = _row(base, new)
        if row["significant"] is None:
            continue
        low, high = row["ratio_ci_low"], row["ratio_ci_high"]
        if row["significant"]:
            assert low >= 1 or high <= 1
            touched += low == 1 or high == 1
        else:
            assert low <= 1 <= high
    assert touched > 0  # the case exists: the test would catch a docstring that denied it


def test_two_all_failed_sides_give_no_estimate_not_a_precise_no_change():
    row = _row([math.nan] * 5, [math.nan] * 5)
    assert row["significant"] is None
    assert all(math.isnan(row[k]) for k in ("ratio", "ratio_ci_low", "ratio_ci_high",
                                            "p_value", "median_base", "median_new"))
    assert row["n_failed_base"] == row["n_failed_new"] == 5
    assert Code.NO_FINISHED_RUN in codes(row)


def test_one_all_failed_side_is_a_result_ranked_worst():
    row = _row([1.0, 1.1, 1.2, 1.3, 1.4], [math.nan] * 5)
    assert row["significant"] is True and row["ratio"] == math.inf
    assert row["p_value"] == pytest.approx(2 / 252)


def test_a_design_whose_smallest_p_equals_alpha_is_not_testable():
    row = _row([1.0, 1.1, 1.2], [2.0, 2.1, 2.2], alpha=0.1)  # 3 vs 3: smallest p is 0.1
    assert row["min_attainable_p"] == pytest.approx(0.1)
    assert row["significant"] is None
    (few,) = [w for w in row["warnings"] if w.code is Code.TOO_FEW_RUNS]
    assert few["alpha"] == 0.1


def test_failed_runs_rank_slower_than_every_finished_run():
    base = [1.0, 1.1, 1.2, 1.3, 1.4]
    new = [1.05, 1.15, 1.25, None, float("nan")]
    row = _row(base, new)
    assert row["n_new"] == 5 and row["n_failed_new"] == 2
    # the two failed runs tie with each other above every value: enumerate all splits
    pooled = sps.rankdata(base + [1.05, 1.15, 1.25, 1e9, 1e9])
    u_new = pooled[5:].sum() - 15
    splits = [pooled[list(c)].sum() - 15 for c in itertools.combinations(range(10), 5)]
    assert u_new > 12.5
    assert row["p_value"] == pytest.approx(2 * np.mean(np.array(splits) >= u_new))
    assert row["median_new"] == 1.25
    assert Warn(Code.FAILED_RANKED_WORST, side="new", runs=2, lower_is_better=True) \
        in row["warnings"]


def test_failed_runs_rank_lowest_when_higher_is_better():
    row = _row([100.0, 101, 102, 103], [104.0, 105, 106, None], lower_is_better=False)
    ref = sps.mannwhitneyu([104.0, 105, 106, -1.0], [100.0, 101, 102, 103], method="exact")
    assert row["p_value"] == pytest.approx(ref.pvalue)
    assert Warn(Code.FAILED_RANKED_WORST, side="new", runs=1, lower_is_better=False) \
        in row["warnings"]


def test_a_failed_mask_marks_saturated_runs_with_values():
    row = _row([1.0, 1.1, 1.2, 1.3], [0.9, 0.95, 1.05, 0.5], failed_new=[False, False, False, True])
    ref = sps.mannwhitneyu([0.9, 0.95, 1.05, 99.0], [1.0, 1.1, 1.2, 1.3], method="exact")
    assert row["n_failed_new"] == 1
    assert row["p_value"] == pytest.approx(ref.pvalue)


def test_explicit_exclusion_is_echoed_with_its_reason():
    row = _row([1.0, 1.1, None, 1.3], [1.2, 1.4, 1.5, 1.6], exclude_failed="client crashed")
    assert row["n_base"] == 3 and row["n_failed_base"] == 1
    assert Warn(Code.EXCLUDED_FAILED, n_base=1, n_new=0, reason="client crashed") \
        in row["warnings"]


def test_large_samples_use_the_normal_approximation():
    rng = np.random.default_rng(4)
    base, new = rng.lognormal(0, 0.1, 30), rng.lognormal(0.02, 0.1, 26)
    row = _row(base, new)
    ref = sps.mannwhitneyu(new, base, method="asymptotic", use_continuity=True)
    assert row["p_method"] == "normal"
    assert row["p_value"] == pytest.approx(ref.pvalue, rel=1e-9)


def test_non_positive_values_give_no_ratio_but_still_a_test():
    row = _row([0.0, 1, 2, 3], [4.0, 5, 6, 7])
    assert math.isnan(row["ratio"]) and row["p_value"] == pytest.approx(2 / 70)
    assert Code.NONPOSITIVE_VALUES in codes(row)


def test_alpha_outside_zero_one_is_refused():
    with pytest.raises(UsageError, match="alpha"):
        compare([1, 2], [3, 4], alpha=5)
    with pytest.raises(ValueError, match="alpha"):  # a UsageError is also a ValueError
        compare([1, 2], [3, 4], alpha=0)


def test_at_the_rank_tests_floor_welchs_t_on_logs_decides_and_says_why():
    """Issue 34: 5 vs 5 runs in a Holm family of 6: the exact rank test's smallest p is
    2 / C(10, 5) = 0.0079, times 6 0.048, so only a complete separation could reach alpha and
    a seventh comparison would leave none testable. Welch's t on the log values has no such
    floor: it decides, with the ratio of geometric means and its t interval at Bonferroni's
    level, and the row says why. Checked against the formulas (the df 0.4 of the way from
    Hsu's n - 1 to Welch-Satterthwaite's: perfkit.stats.welch)."""
    base = np.array([10.0, 10.6, 9.7, 10.2, 11.0])
    new = np.array([11.5, 12.4, 11.1, 12.9, 11.8])
    c = compare(base, new, family=6)
    lb, ln = np.log(base), np.log(new)
    assert c.p_method == "welch_log" and c.min_attainable_p == 0.0
    vb, vn = lb.var(ddof=1) / 5, ln.var(ddof=1) / 5
    df = 4 + 0.4 * ((vb + vn) ** 2 / (vb ** 2 / 4 + vn ** 2 / 4) - 4)
    half = sps.t.ppf(1 - 0.05 / 12, df) * math.sqrt(vb + vn)
    diff = ln.mean() - lb.mean()
    assert c.p_value == pytest.approx(2 * sps.t.sf(abs(diff) / math.sqrt(vb + vn), df), rel=1e-9)
    assert (c.ratio, c.ratio_ci_low, c.ratio_ci_high) == pytest.approx(
        (math.exp(diff), math.exp(diff - half), math.exp(diff + half)), rel=1e-9)
    assert c.ratio_ci_level == pytest.approx(1 - 0.05 / 6) and c.df == pytest.approx(df)
    (note,) = [w for w in c.warnings if w.code is Code.RANK_TEST_FLOOR]
    assert note["switched"] and note["family"] == 6
    assert str(note).startswith("5 vs 5 runs: the smallest p the rank test can give is 0.0079; "
                                "with 6 comparisons 0.048, within a factor of 2 of alpha 0.05")
    assert "Welch's t" in str(note)
    # a family of 3 keeps the rank test (0.024 is below alpha / 2), and says nothing
    c3 = compare(base, new, family=3)
    assert c3.p_method == "exact" and not [w for w in c3.warnings
                                           if w.code is Code.RANK_TEST_FLOOR]
    # a failed run ranked worst has no value a mean can take: the rank test stays, and the row
    # says its verdict rests on the floor
    failed = compare(base, [*new[:4], math.nan], family=6)
    assert failed.p_method == "exact"
    (note,) = [w for w in failed.warnings if w.code is Code.RANK_TEST_FLOOR]
    assert not note["switched"]
    assert "rests on the test's floor" in str(note) and "failed runs ranked worst" in str(note)
