"""factorial(): Jain's 2^k r analysis, coding of labels, blocks, per-level load, unbalance."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from perfkit.stats import factorial
from perfkit.stats.coding import code_factor
from perfkit.warning import Code, Warn

# Jain (1991), memory-cache example, a 2^2 3 design (Table 18.1)
JAIN = {(-1, -1): [15, 18, 12], (1, -1): [45, 48, 51], (-1, 1): [25, 28, 19],
        (1, 1): [75, 75, 81]}


def _jain_frame(a_levels=(-1, 1), b_levels=(-1, 1)) -> pd.DataFrame:
    rows = []
    for (a, b), values in JAIN.items():
        for rep, y in enumerate(values):
            rows.append({"A": a_levels[a > 0], "B": b_levels[b > 0], "y": float(y), "rep": rep})
    return pd.DataFrame(rows)


def _by_term(table: pd.DataFrame) -> pd.DataFrame:
    return table.set_index("term")


def test_jain_memory_cache_known_answer():
    # Jain's own method: the t on the pooled error variance
    table = factorial(_jain_frame(), ["A", "B"], "y", log=False, confidence=0.90,
                      variance="pooled")
    t = _by_term(table)
    assert list(table["term"]) == ["A", "B", "A:B", "error"]
    assert table.attrs["q0"] == pytest.approx(41)
    assert t.loc[["A", "B", "A:B"], "effect"].tolist() == pytest.approx([21.5, 9.5, 5.0])
    assert t["variation_pct"].round(2).tolist() == [78.88, 15.40, 4.27, 1.45]
    assert (round(t.loc["A", "ci_low"], 2), round(t.loc["A", "ci_high"], 2)) == (19.58, 23.42)
    assert t.loc["error", "ss"] == pytest.approx(102)
    assert table.attrs["df_error"] == 8


def _welch_contrast(frame: pd.DataFrame, signs: dict) -> tuple[float, float]:
    """The separate-variance (Welch) standard error of q = sum_c sign_c mean_c / 4 and its
    Welch-Satterthwaite df, from the cells' sample variances, written apart from perfkit
    (Maxwell & Delaney 2004, ch. 5)."""
    parts = []
    for (a, b), cell in frame.groupby(["A", "B"])["y"]:
        n = len(cell)
        parts.append(((signs[a, b] / 4) ** 2 * cell.var(ddof=1) / n, n - 1))
    var = sum(v for v, _ in parts)
    return np.sqrt(var), var ** 2 / sum(v ** 2 / d for v, d in parts)


def test_effects_have_the_welch_error_of_their_contrast_without_equal_spread():
    frame = _jain_frame()
    frame.loc[(frame["A"] == 1) & (frame["B"] == 1), "y"] = [60.0, 75.0, 99.0]  # one wide cell
    frame = frame.drop(index=frame.index[0])                                    # and unequal
    table = factorial(frame, ["A", "B"], "y", log=False)
    t = _by_term(table)
    for term, signs in (("A", {(a, b): a for a in (-1, 1) for b in (-1, 1)}),
                        ("A:B", {(a, b): a * b for a in (-1, 1) for b in (-1, 1)})):
        se, df = _welch_contrast(frame, signs)
        assert t.loc[term, "df"] == pytest.approx(df, rel=1e-9)
        half = sps.t.ppf(0.975, df) * se
        assert t.loc[term, "ci_high"] - t.loc[term, "effect"] == pytest.approx(half, rel=1e-9)
        assert t.loc[term, "p_value"] == pytest.approx(
            2 * sps.t.sf(abs(t.loc[term, "effect"]) / se, df), rel=1e-9)
    # the pooled t assumed one spread: 8 - 1 = 7 error df, where the wide cell leaves ~2.6
    pooled = _by_term(factorial(frame, ["A", "B"], "y", log=False, variance="pooled"))
    assert pooled.loc["A", "df"] == 7 and t.loc["A", "df"] < 3


def test_one_factor_is_welchs_t_test():
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"A": ["off"] * 4 + ["on"] * 6,
                          "y": np.r_[rng.lognormal(0, 0.05, 4), rng.lognormal(0.3, 0.6, 6)]})
    row = _by_term(factorial(frame, ["A"], "y")).loc["A"]
    logs = np.log(frame["y"])
    welch = sps.ttest_ind(logs[frame["A"] == "on"], logs[frame["A"] == "off"], equal_var=False)
    assert row["p_value"] == pytest.approx(welch.pvalue, rel=1e-9)
    assert row["df"] == pytest.approx(welch.df, rel=1e-9)


def test_a_cell_of_one_run_leaves_the_effects_without_an_interval():
    frame = _jain_frame()
    frame = frame.drop(index=frame.index[-2:])  # (+, +) keeps one run
    table = factorial(frame, ["A", "B"], "y", log=False)
    assert _by_term(table).loc[["A", "B", "A:B"], "ci_low"].isna().all()
    assert Warn(Code.ONE_RUN_CELL) in table.attrs["warnings"]


@pytest.mark.slow  # a simulation
def test_intervals_cover_when_one_cell_is_wide():
    """A seeded slice of benchmarks/calibration_factorial.py: the demo's pattern at 256
    connections (cell log sds 0.016, 1.314, 0.113, 0.144), 3 runs per cell, no blocks. The
    pooled t covers 0.87 of the time (4000 sets: 0.870); HC2 with Satterthwaite df 0.94
    (0.936). Seeds 21-23 gave 0.865-0.878 and 0.938-0.945."""
    rng = np.random.default_rng(21)
    cells = [(-1, -1), (1, -1), (-1, 1), (1, 1)] * 3
    sds = {(-1, -1): 0.016, (1, -1): 1.314, (-1, 1): 0.113, (1, 1): 0.144}
    a = np.array([c[0] for c in cells])
    b = np.array([c[1] for c in cells])
    sd = np.array([sds[c] for c in cells])
    truth = {"A": -0.15, "B": -0.75, "A:B": 0.1}
    hits = {"hc2": 0, "pooled": 0}
    sims = 600
    for _ in range(sims):
        noise = rng.normal(0, 1, len(cells)) * sd
        y = truth["A"] * a + truth["B"] * b + truth["A:B"] * a * b + noise
        frame = pd.DataFrame({"A": a, "B": b, "y": y})
        for variance in hits:
            t = _by_term(factorial(frame, ["A", "B"], "y", log=False, variance=variance))
            hits[variance] += sum(t.loc[k, "ci_low"] <= v <= t.loc[k, "ci_high"]
                                  for k, v in truth.items())
    coverage = {k: v / (3 * sims) for k, v in hits.items()}
    assert coverage["hc2"] >= 0.925          # MC se ~0.009 (the 3 effects share their se)
    assert coverage["pooled"] <= 0.90


@pytest.mark.parametrize("a_levels,b_levels", [
    (("off", "on"), ("no", "yes")),
    (("default", "tuned"), (False, True)),
    (("backlog8", "backlog4096"), ("Disabled", "enabled")),
])
def test_labels_map_to_low_and_high_and_the_mapping_is_reported(a_levels, b_levels):
    table = factorial(_jain_frame(a_levels, b_levels), ["A", "B"], "y", log=False)
    assert _by_term(table).loc["A", "effect"] == pytest.approx(21.5)
    assert _by_term(table).loc["A:B", "effect"] == pytest.approx(5.0)
    coding = table.attrs["coding"]
    assert (coding["A"]["low"], coding["A"]["high"]) == a_levels
    assert (coding["B"]["low"], coding["B"]["high"]) == b_levels


def test_explicit_levels_override_the_rule():
    frame = _jain_frame(("fast", "slow"))
    table = factorial(frame, ["A", "B"], "y", log=False, levels={"A": ("slow", "fast")})
    assert _by_term(table).loc["A", "effect"] == pytest.approx(-21.5)


def test_natural_sort_puts_backlog8_below_backlog4096():
    _, mapping = code_factor(pd.Series(["backlog4096", "backlog8"]), "backlog")
    assert mapping["low"] == "backlog8" and mapping["rule"] == "natural sort order"


def test_log_effects_are_ratios_of_geometric_means():
    frame = _jain_frame()
    t = _by_term(factorial(frame, ["A", "B"], "y"))
    logs = np.log(frame["y"])
    gm_ratio = np.exp(logs[frame["A"] == 1].mean() - logs[frame["A"] == -1].mean())
    assert t.loc["A", "ratio"] == pytest.approx(gm_ratio)
    assert t.loc["A", "ratio_ci_low"] < gm_ratio < t.loc["A", "ratio_ci_high"]


def test_blocks_are_a_nuisance_term_with_their_own_variation():
    table = factorial(_jain_frame(), ["A", "B"], "y", log=False, block="rep",
                      variance="pooled")
    t = _by_term(table)
    assert table.attrs["df_error"] == (2 ** 2 - 1) * (3 - 1)
    assert t.loc["A", "effect"] == pytest.approx(21.5)
    # block means 40, 42.25, 40.75 around 41: SS = 4 * (1 + 1.5625 + 0.0625)
    assert t.loc["block", "ss"] == pytest.approx(10.5)
    assert t.loc["error", "ss"] == pytest.approx(102 - 10.5)
    assert t["variation_pct"].sum() == pytest.approx(100)


def test_unreplicated_design_is_refused():
    frame = _jain_frame()
    with pytest.raises(ValueError, match="unreplicated"):
        factorial(frame[frame["rep"] == 0], ["A", "B"], "y", log=False)


def test_unbalanced_design_is_fitted_by_ols_and_names_the_short_cell():
    frame = _jain_frame()
    short = frame.drop(index=frame.index[-1])  # one run of (+, +) failed
    table = factorial(short, ["A", "B"], "y", log=False)
    means = short.groupby(["A", "B"])["y"].mean()
    q_a = (means[1, 1] + means[1, -1] - means[-1, 1] - means[-1, -1]) / 4
    assert _by_term(table).loc["A", "effect"] == pytest.approx(q_a)
    (unbalanced,) = [w for w in table.attrs["warnings"] if w.code is Code.UNBALANCED_DESIGN]
    assert unbalanced["cells"] == (("A=1,B=1", 2),)
    # Type II sums of squares, checked against dummy-coded fits below
    expected = _type2_reference(short, block=None)
    assert _by_term(table).loc[["A", "B", "A:B"], "ss"].tolist() == pytest.approx(
        [expected["A"], expected["B"], expected["A:B"]], rel=1e-10)
    assert table.attrs["orthogonal"] is False and table.attrs["ss_type"] == "II"
    assert Code.NON_ORTHOGONAL in {w.code for w in table.attrs["warnings"]}


def _rss(columns: list[np.ndarray], y: np.ndarray) -> float:
    x = np.column_stack([np.ones(len(y)), *columns])
    coef = np.linalg.lstsq(x, y, rcond=None)[0]
    return float(((y - x @ coef) ** 2).sum())


def _type2_reference(frame: pd.DataFrame, block: str | None) -> dict:
    """Type II SS of a 2x2 (+ blocks) design from 0/1 dummy-coded OLS fits, written apart
    from perfkit: SS(A) = RSS(B, blocks) - RSS(A, B, blocks); SS(A:B) = RSS(A, B, blocks) -
    RSS(A, B, A:B, blocks); SS(blocks) = RSS(A, B, A:B) - RSS(everything)."""
    y = frame["y"].to_numpy(float)
    a = (frame["A"] == frame["A"].max()).to_numpy(float)
    b = (frame["B"] == frame["B"].max()).to_numpy(float)
    d = []
    if block:
        labels = sorted(frame[block].unique())
        d = [(frame[block] == lv).to_numpy(float) for lv in labels[1:]]
    out = {"A": _rss([b, *d], y) - _rss([a, b, *d], y),
           "B": _rss([a, *d], y) - _rss([a, b, *d], y),
           "A:B": _rss([a, b, *d], y) - _rss([a, b, a * b, *d], y)}
    if block:
        out["block"] = _rss([a, b, a * b], y) - _rss([a, b, a * b, *d], y)
    return out


def _incomplete_blocks_frame() -> pd.DataFrame:
    """2^2 x 4 runs, every cell complete, but day d1 holds 6 runs and d2 holds 10."""
    rng = np.random.default_rng(13)
    rows = []
    days = {(-1, -1): "d1 d1 d2 d2", (1, -1): "d1 d2 d2 d2", (-1, 1): "d1 d1 d2 d2",
            (1, 1): "d1 d2 d2 d2"}
    for (a, b), labels in days.items():
        for day in labels.split():
            y = 10 + 1.0 * a + 0.5 * b + 0.2 * a * b + (2.0 if day == "d2" else 0.0)
            rows.append({"A": a, "B": b, "day": day, "y": y + rng.normal(0, 0.3)})
    return pd.DataFrame(rows)


def test_incomplete_blocks_get_type2_sums_of_squares_and_a_warning():
    frame = _incomplete_blocks_frame()
    assert frame.groupby("day").size().to_dict() == {"d1": 6, "d2": 10}
    table = factorial(frame, ["A", "B"], "y", log=False, block="day")
    t = _by_term(table)
    expected = _type2_reference(frame, block="day")
    for term in ("A", "B", "A:B", "block"):
        assert t.loc[term, "ss"] == pytest.approx(expected[term], rel=1e-10)
    # effects are the least-squares ones with blocks in the model
    x = np.column_stack([np.ones(16), frame["A"], frame["B"], frame["A"] * frame["B"],
                         (frame["day"] == "d2").astype(float)])
    coef = np.linalg.lstsq(x, frame["y"].to_numpy(), rcond=None)[0]
    assert t.loc[["A", "B", "A:B"], "effect"].tolist() == pytest.approx(coef[1:4], rel=1e-10)
    # what the complete-block formula gave (N q^2 and block SS by subtraction) is not it
    assert abs(16 * t.loc["A", "effect"] ** 2 - t.loc["A", "ss"]) > 0.05 * t.loc["A", "ss"]
    assert table.attrs["orthogonal"] is False
    (non,) = [w for w in table.attrs["warnings"] if w.code is Code.NON_ORTHOGONAL]
    assert (non["unequal_cells"], non["block"]) == (False, "day")
    assert t["variation_pct"].sum() != pytest.approx(100)
    block_f = (expected["block"] / 1) / (t.loc["error", "ss"] / table.attrs["df_error"])
    pooled = _by_term(factorial(frame, ["A", "B"], "y", log=False, block="day",
                                variance="pooled"))
    assert pooled.loc["block", "p_value"] == pytest.approx(
        sps.f.sf(block_f, 1, table.attrs["df_error"]), rel=1e-9)
    # HC2: the Wald test of the block coefficient, on its robust variance
    assert t.loc["block", "p_value"] < 1e-5


def test_complete_blocks_stay_orthogonal_with_type2_equal_to_jain():
    table = factorial(_jain_frame(), ["A", "B"], "y", log=False, block="rep")
    t = _by_term(table)
    assert table.attrs["orthogonal"] is True
    assert t.loc["A", "ss"] == pytest.approx(12 * 21.5 ** 2)
    assert Code.NON_ORTHOGONAL not in {w.code for w in table.attrs["warnings"]}


def test_a_failed_run_is_left_out_with_a_warning():
    frame = _jain_frame()
    frame.loc[0, "y"] = np.nan
    table = factorial(frame, ["A", "B"], "y", log=False)
    assert Warn(Code.RUNS_WITHOUT_RESPONSE, runs=1, response="y") in table.attrs["warnings"]
    assert Code.UNBALANCED_DESIGN in {w.code for w in table.attrs["warnings"]}


def test_missing_cell_is_refused():
    frame = _jain_frame()
    without = frame[~((frame["A"] == 1) & (frame["B"] == 1))]
    with pytest.raises(ValueError, match="no runs in cell.*A=1,B=1"):
        factorial(without, ["A", "B"], "y", log=False)


def test_a_load_column_with_three_levels_is_analysed_per_level_with_holm():
    parts = []
    for i, conns in enumerate((16, 64, 256)):
        f = _jain_frame()
        f["y"] = f["y"] * (1 + i) + np.arange(len(f)) % 3 * i
        f["connections"] = conns
        parts.append(f)
    frame = pd.concat(parts, ignore_index=True)
    with pytest.raises(ValueError, match="by='connections'"):
        factorial(frame, ["A", "connections"], "y")
    table = factorial(frame, ["A", "B"], "y", log=False, by="connections")
    assert list(table["by"].unique()) == [16, 64, 256]
    a_rows = table[table["term"] == "A"]
    p = a_rows["p_value"].to_numpy()
    order = np.argsort(p)
    holm = np.maximum.accumulate(np.minimum(1, p[order] * np.array([3, 2, 1])))
    assert a_rows["p_value_holm"].to_numpy()[order] == pytest.approx(holm)


def test_three_factors_give_every_interaction_in_order():
    rng = np.random.default_rng(0)
    rows = []
    for a in (-1, 1):
        for b in (-1, 1):
            for c in (-1, 1):
                for _ in range(2):
                    y = 10 + 2 * a - 1 * b + 0.5 * a * c + rng.normal(0, 0.01)
                    rows.append({"a": a, "b": b, "c": c, "y": y})
    table = factorial(pd.DataFrame(rows), ["a", "b", "c"], "y", log=False)
    assert list(table["term"]) == ["a", "b", "c", "a:b", "a:c", "b:c", "a:b:c", "error"]
    effects = _by_term(table)["effect"]
    assert effects[["a", "b", "a:c"]].tolist() == pytest.approx([2, -1, 0.5], abs=0.01)
