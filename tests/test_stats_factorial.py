"""factorial(): Jain's 2^k r analysis, coding of labels, blocks, per-level load, unbalance."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from perfkit.stats import factorial
from perfkit.stats.coding import code_factor

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
    table = factorial(_jain_frame(), ["A", "B"], "y", log=False, confidence=0.90)
    t = _by_term(table)
    assert list(table["term"]) == ["A", "B", "A:B", "error"]
    assert table.attrs["q0"] == pytest.approx(41)
    assert t.loc[["A", "B", "A:B"], "effect"].tolist() == pytest.approx([21.5, 9.5, 5.0])
    assert t["variation_pct"].round(2).tolist() == [78.88, 15.40, 4.27, 1.45]
    assert (round(t.loc["A", "ci_low"], 2), round(t.loc["A", "ci_high"], 2)) == (19.58, 23.42)
    assert t.loc["error", "ss"] == pytest.approx(102)
    assert table.attrs["df_error"] == 8


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
    table = factorial(_jain_frame(), ["A", "B"], "y", log=False, block="rep")
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
    assert table["variation_pct"].isna().all()
    assert any("A=1,B=1 (2 runs)" in w for w in table.attrs["warnings"])


def test_a_failed_run_is_left_out_with_a_warning():
    frame = _jain_frame()
    frame.loc[0, "y"] = np.nan
    table = factorial(frame, ["A", "B"], "y", log=False)
    assert any("1 run(s) without y" in w for w in table.attrs["warnings"])
    assert any("unbalanced" in w for w in table.attrs["warnings"])


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
