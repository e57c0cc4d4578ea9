"""perfkit.present.effects: the factorial, simple-effect and A/B tables of the tuning-effects
page, on the demo factorial (data/demo-wrk-factorial)."""

from __future__ import annotations

import re
from pathlib import Path

from perfkit.analysis import load_experiment
from perfkit.present import effects as present_effects
from perfkit.vocabulary import Verdict

#: the demo factorial as first recorded, with the upstream's queue of 100: its 1 s stalls
#: (tests/fixtures/stalls/README.md)
STALLS = Path(__file__).resolve().parent / "fixtures" / "stalls"
DATA = Path(__file__).resolve().parents[1] / "data"


def test_variation_explained_prints_as_the_result_frame_gives_it():
    from perfkit.analysis import metric
    from perfkit.analysis.effects import factorial_effects

    rows = load_experiment(STALLS / "factorial-upstream-backlog100").rows()
    result = factorial_effects(rows, ["keepalive", "cache"], metric("latency_p99_ms"),
                               by=["connections"])
    (table, *_) = present_effects.factorial(result)
    frame = result.to_frame()
    share = frame[(frame["connections"] == 16) & (frame["term"] == "keepalive")]
    expected = f"{share['variation_pct'].iloc[0]:.3g}"
    (row,) = [r for r in table.rows if r[0] == "16" and r[1] == "keepalive"]
    at = [c.name for c in table.columns].index("variation")
    assert row[at] == expected == "6.22"


def test_the_tables_qualify_a_measured_change_from_runs_that_waited_as_the_answers_do():
    """The throughput tables at 256 connections (runs that waited for the 1 s SYN retry) read
    as the index does: the change with 'affected by the 1000 ms cap', never a bare 'better'."""
    from perfkit.present.tables import render_all
    from perfkit.report.sections import common, effects

    exp = common.load_experiment("factorial-upstream-backlog100", str(STALLS))
    rows = exp.rows({})
    (result,) = effects.factorials(rows, ["keepalive", "cache"], ["throughput_rps"],
                                   "connections", 0.95, 0.05)
    (table,) = effects.ab_tables(rows, ["keepalive", "cache"], ["throughput_rps"],
                                 "connections", 0.05, 0.95)
    for shown in (effects.present_factorial(result), effects.present_simple(result),
                  effects.present_table(table, rows)):
        text = render_all([shown], "markdown")
        lines = [ln for ln in text.splitlines() if ln.startswith("| 256 |")
                 or re.match(r"\| (keepalive|cache)( \[\d+\])? \| 256 \|", ln)]
        significant = [ln for ln in lines
                       if re.search(r"\bbetter\b|\bworse\b|\binteraction\b|\d% \[", ln)]
        assert significant, text
        assert all("affected by the 1000 ms cap" in ln for ln in significant), text
        assert not [ln for ln in text.splitlines() if ln.startswith("| 16 |")
                    and "affected" in ln]
    # the A/B change keeps its number beside the qualified verdict (Welch's t: 5 vs 5 runs in a
    # family of 6 put the rank test's smallest p at 0.048)
    assert "| +64.8% [+24.7%, +118%] | better (affected by the 1000 ms cap) |" in render_all(
        [effects.present_table(table, rows)], "markdown")


def test_an_interaction_is_neither_better_nor_worse_and_an_averaged_main_effect_no_verdict():
    """keepalive x cache on throughput at 64 connections is x0.85: the two gains do not add
    up, which is not a 'worse'; the main effects it makes uninterpretable alone send the
    reader to the simple effects instead of a verdict of their own."""
    from perfkit.present.tables import render_all
    from perfkit.report.sections import common, effects

    exp = common.load_experiment("factorial-upstream-backlog100", str(STALLS))
    (result,) = effects.factorials(exp.rows({}), ["keepalive", "cache"], ["throughput_rps"],
                                   "connections", 0.95, 0.05)
    frame = result.to_frame()
    inter = frame[(frame["term"] == "keepalive:cache") & frame["significant"]]
    assert len(inter) and (inter["verdict"] == Verdict.INTERACTION).all()
    text = render_all([effects.present_factorial(result)], "markdown")
    for line in text.splitlines():
        if re.match(r"\| (64|256) \| (keepalive|cache) \[1\]", line):
            # the verdict cell, then the mechanism the counters give beside it
            assert re.search(r"\| see the simple effects( \[\d\])? \| [^|]+ \|$", line), line
        if "keepalive:cache" in line and "|" in line:
            assert Verdict.WORSE not in line and Verdict.BETTER not in line, line


def test_a_smallest_detectable_effect_is_an_estimate_with_its_df_on_the_page_and_in_csv():
    """Issue 34: at 3 runs per cell the detectable size rests on 2-3 error df, where the
    spread (and so the size) could be half or twice the truth: the row says 'about ...
    (estimate, N df)' and the frame carries the df (detectable_df), its other columns kept."""
    from perfkit.analysis import metric
    from perfkit.analysis.effects import factorial_effects

    rows = load_experiment(STALLS / "factorial-upstream-backlog100").rows()
    result = factorial_effects(rows, ["keepalive", "cache"], metric("latency_p99_ms"),
                               by=["connections"])
    (table, *_) = present_effects.factorial(result)
    frame = result.to_frame()
    at = [c.name for c in table.columns].index("detectable (80% power)")
    tilde = frame.index[frame["mde_ratio_high"].notna()]
    assert len(tilde)
    for i in tilde:
        df = frame.loc[i, "detectable_df"]
        assert df == frame.loc[i, "df"] and 1 < df < 20
        cell = table.rows[i][at]
        assert re.fullmatch(r"about x\S+ / x\S+ \(estimate, [0-9.]+ df\)", cell), cell
        shown = float(re.search(r"estimate, ([0-9.]+) df", cell).group(1))
        assert abs(shown - df) <= 0.05 * df + 0.05
    assert frame.loc[frame["mde_ratio_high"].isna(), "detectable_df"].isna().all()
    simple = result.simple_frame()
    if len(simple):
        has = simple["mde_ratio_high"].notna()
        assert (simple.loc[has, "detectable_df"] == simple.loc[has, "df"]).all()


def test_the_ab_tables_detectable_change_is_an_estimate_with_its_df():
    from perfkit.analysis import metric
    from perfkit.analysis.compare import detectable_df
    from perfkit.analysis.effects import ab_comparisons
    from perfkit.present.compare import detectable_text

    rows = load_experiment(STALLS / "factorial-upstream-backlog100").rows()
    table = ab_comparisons(rows, ["keepalive", "cache"], metric("latency_p99_ms"),
                           by=["connections"])
    frame = table.to_frame()
    with_mde = [(i, r) for i, r in enumerate(table.rows) if r.mde is not None
                and r.mde.testable and not getattr(r.mde, "any_change", False)]
    assert with_mde
    for i, r in with_mde:
        df = detectable_df(r.mde)
        assert frame["detectable_df"].iloc[i] == df and df >= 1
        assert re.fullmatch(r"about \S+ / \S+ \(estimate, [0-9.]+ df\)", detectable_text(r.mde))
