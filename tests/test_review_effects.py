"""The tuning-effects page, third review (items F1-F3), checked on the demo data.

Expected values are computed here from the per-run columns (numpy/scipy), not by the code
under test: F1 the forest plots show the simple effects where an interaction is significant,
F2 a run whose max sits on the 1 s SYN retransmission contaminates its tail (and throttles its
throughput), F3 every "~" says what the design could have detected.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from scipy import optimize
from scipy import stats as sps

from perfkit.analysis import load_experiment
from perfkit.analysis.effects import headline_effects
from perfkit.formatting import fmt_sig
from perfkit.present import effects as present_effects
from perfkit.report.sections import effects

DATA = Path(__file__).resolve().parents[1] / "data"
FACTORS = ["keepalive", "cache"]
METRICS = ["latency_p99_ms", "throughput_rps"]
ARTEFACT = "artefact of the 1000 ms cap"
#: the connection levels where keepalive x cache is significant (Holm), per metric
INTERACTING = {"latency_p99_ms": set(), "throughput_rps": {256}}


@pytest.fixture(scope="module")
def tuning():
    rows = load_experiment(DATA / "demo-wrk-factorial").rows()
    results = effects.factorials(rows, FACTORS, METRICS, "connections", 0.95, 0.05)
    tables = effects.ab_tables(rows, FACTORS, METRICS, "connections", 0.05, 0.95)
    return rows, results, tables, effects.answers(tables, results)


def _ratio(frame, level, factor, other, other_level, col, drop=()):
    """A simple effect by hand: geometric mean with ``factor`` on over off, one cell pair."""
    at = frame[(frame["connections"] == level) & (frame[other] == other_level)
               & ~frame["run_id"].str[:4].isin(drop)]
    logs = np.log(at[col].to_numpy(float))
    off = (at[factor] == "none").to_numpy()
    return math.exp(logs[~off].mean() - logs[off].mean())


def _hl_ratio(frame, level, factor, other, other_level, col):
    """A two-cell simple effect by hand as the A/B table computes it: the Hodges-Lehmann
    ratio, the median of every ratio of a run with ``factor`` on to a run with it off."""
    at = frame[(frame["connections"] == level) & (frame[other] == other_level)]
    off = (at[factor] == "none").to_numpy()
    values = at[col].to_numpy(float)
    return float(np.median(np.divide.outer(values[~off], values[off])))


# -- F1 ----------------------------------------------------------------------------------------
def test_f1_forest_plots_show_simple_effects_where_an_interaction_is_significant(tuning):
    rows, results, _, found = tuning
    frame = rows.frame
    for result in results:
        forest = effects.forest_rows(result)
        t = result.effects
        for level in (16, 64, 256):
            at = forest[forest["connections"] == level]
            p = t[(t["by"] == level) & (t["term"] == "keepalive:cache")]["p_value_holm"]
            split = bool(p.iloc[0] < 0.05)
            # the demo's data: throughput's interaction at 256 connections (with HC2 errors; the
            # pooled t also called 64's, p 0.05 with 8.1 Satterthwaite df), none on p99
            assert split == (level in INTERACTING[result.metric.name]), (result.metric.name,
                                                                          level)
            mains = at[at["at"] == ""]
            if not split:
                assert set(mains["term"]) == {"keepalive", "cache", "keepalive:cache"}
                continue
            # no main effect of an interacting factor
            assert list(mains["label"]) == ["keepalive × cache (interaction)"]
            simple = at[at["at"] != ""]
            assert len(simple) == 4
            for r in simple.itertuples():
                other, other_level = r.at.split("=")
                expect = _hl_ratio(frame, level, r.term, other, other_level,
                                   result.metric.name)
                assert r.ratio == pytest.approx(expect, rel=1e-9)
                assert r.label == f"{r.term} at {r.at}"
    # issue 21: no "Other significant effects: N more (smaller)": every effect a reader can
    # take alone (the forest plot's rows but the interactions) is a row of the answers
    everything, _ = headline_effects(results)
    assert everything
    for result in results:
        forest = effects.forest_rows(result)
        alone = forest[~forest["term"].str.contains(":")]
        rows = [a for a in found if a.topic == "effect" and result.metric.label in a.question]
        assert len(rows) == len(alone), result.metric.name
        for r in alone.itertuples():
            at = f", {r.at.replace('=', ' = ')}" if r.at else ""
            (a,) = [a for a in rows if a.group.startswith(f"Effect of {r.term}:")
                    and a.question == f"{result.metric.label}, {r.connections} "
                                      f"connections{at}"]
            assert a.answer.startswith(f"x{fmt_sig(r.ratio)} ")
    assert not [a for a in found if a.question == "Other significant effects"]
    fig = effects.forest_figure(results[1], None, 0.05)  # throughput: it has simple effects
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert "cache at keepalive=keepalive" in labels and "keepalive at cache=ram" in labels
    assert "simple effects" in effects.forest_caption(results[1])


def _effect(found, factor: str, question: str):
    """The answers of ``factor``'s group asking ``question``."""
    return [a for a in found if a.group.startswith(f"Effect of {factor}:")
            and a.question == question]


# -- F2 ----------------------------------------------------------------------------------------
def _max_on_cap(frame):
    """Runs whose max is within [950, 1100] ms while their median is under 100 ms."""
    top, med = frame["latency_max_ms"].to_numpy(float), frame["latency_p50_ms"].to_numpy(float)
    return frame[(top >= 950) & (top <= 1100) & (med < 100)]


def _waited(frame):
    """Runs that waited for the 1 s SYN retry, by hand: a max on the cap with a median under
    100 ms, or SYN retransmissions counted in the run's namespace with its max within
    [950 ms, 1100 ms plus the run's median] or its p99 within [950, 1050 plus the median]
    (the retried request's own turn after the retry)."""
    top, med = frame["latency_max_ms"].to_numpy(float), frame["latency_p50_ms"].to_numpy(float)
    p99 = frame["latency_p99_ms"].to_numpy(float)
    retried = frame["tcp_syn_retransmits"].fillna(0).to_numpy(float) > 0
    counted = retried & (((top >= 950) & (top <= 1100 + med))
                         | ((p99 >= 950) & (p99 <= 1050 + med)))
    return frame[((top >= 950) & (top <= 1100) & (med < 100)) | counted]


def test_f2_a_max_on_the_syn_timeout_makes_p99_effects_from_its_runs_artefacts(tuning):
    rows, (p99, thr), _, found = tuning
    frame = rows.frame
    waited = _max_on_cap(frame)
    cell = waited[waited["keepalive"] == "keepalive"]
    assert sorted(cell["run_id"].str[:4]) == ["0012", "0013"]
    assert set(cell["connections"]) == {256} and set(cell["cache"]) == {"none"}
    assert ((cell["latency_p99_ms"] - 1000).abs() > 50).all()  # the 5% rule misses them
    # the cache's effect on p99 with keepalive rests on them: x0.0592 with, x0.0379 without
    kw = {"level": 256, "factor": "cache", "other": "keepalive", "other_level": "keepalive",
          "col": "latency_p99_ms"}
    assert _ratio(frame, **kw) == pytest.approx(0.0592, abs=5e-5)
    assert _ratio(frame, drop=("0012", "0013"), **kw) == pytest.approx(0.0379, abs=5e-5)
    table = p99.to_frame()
    (row,) = table[(table["connections"] == 256) & (table["term"] == "cache")].itertuples()
    assert row.verdict == ARTEFACT
    assert any("0012" in w and "max 1100" in w for w in p99.level_warnings[256])
    (answer,) = _effect(found, "cache", "p99 latency, 256 connections")
    assert answer.verdict == ARTEFACT and any("max 1100" in w for w in answer.warnings)
    assert answer.kind == "artefact" and "max 1100" in answer.warnings[0]  # its first caveat
    # honest effects stay measured: below 256 connections every max is far from any cap
    assert frame.loc[frame["connections"] != 256, "latency_max_ms"].max() < 100
    assert not table.loc[table["connections"] != 256, "verdict"].str.startswith("artefact").any()
    ram = frame[(frame["connections"] == 256) & (frame["cache"] == "ram")]
    assert ram["latency_max_ms"].max() < 100
    # ... and so do the effects from the cells with the cache at 256, which did not wait
    s = thr.simple_effects
    (ka,) = s[(s["connections"] == 256) & (s["at"] == "cache=ram")].itertuples()
    assert ka.verdict == "~" and not ka.cap_affected and not ka.warnings  # x0.995


def test_f2_throughput_from_runs_that_waited_is_flagged_alike_everywhere(tuning):
    rows, (_, thr), tables, found = tuning
    frame = rows.frame
    cells = set(zip(*(_waited(frame)[c] for c in ("connections", "keepalive", "cache")),
                    strict=True))
    assert cells == {(256, "none", "none"), (256, "keepalive", "none")}
    # the factorial: measured (better/worse), flagged at 256 only
    table = thr.to_frame()
    effect = ~table["term"].isin(["block", "error"])
    assert table.loc[effect, "verdict"].isin(["better", "worse", "~", "interaction"]).all()
    assert (table.loc[effect, "cap_affected"] == (table.loc[effect, "connections"] == 256)).all()
    # the simple effects: flagged exactly when their runs include a cell that waited
    s = thr.simple_effects
    for r in s.itertuples():
        other, level = r.at.split("=")
        used = {(r.connections, *((lv, level) if other == "cache" else (level, lv)))
                for lv in ("none", "keepalive" if r.factor == "keepalive" else "ram")}
        assert r.cap_affected == bool(used & cells), r
        assert bool(r.warnings) == r.cap_affected and r.verdict != ARTEFACT
    # the A/B rows, their answer and the effect answers say the same
    (thr_ab,) = [t for t in tables if t.metric.name == "throughput_rps"]
    flagged = {(r.key[0], r.key[1]) for r in thr_ab.cap_affected_rows()}
    assert flagged == {("keepalive", 256), ("cache", 256)}
    assert not any("latency_p99_ms" in n for n in effects.notes([thr_ab]))
    assert [r.reported_verdict for r in thr_ab.cap_affected_rows()] == [
        "better (affected by the 1000 ms cap)"] * 2
    (answer,) = _effect(found, "cache", "throughput, 256 connections, keepalive = none")
    assert answer.verdict == "better (affected by the 1000 ms cap)"
    assert any("throttled" in w for w in answer.warnings)
    assert not any("throttled" in w for a in found if " 16 connections" in a.question
                   for w in a.warnings)


# -- F3 ----------------------------------------------------------------------------------------
def test_f3_every_no_change_says_what_the_design_could_have_detected(tuning):
    _, results, _, _ = tuning
    p99 = results[0]
    table = p99.to_frame()
    (ka,) = table[(table["connections"] == 16) & (table["term"] == "keepalive")].itertuples()
    assert ka.verdict == "~"
    # by hand: se of the log ratio from its 95% t interval on its Satterthwaite df (8.1 where
    # the pooled error had 12), then the noncentral t (scipy) at Holm's first step over the
    # 3 levels, 80% power
    df, level = ka.df, 0.05 / 3
    assert 4 < df < 12
    se = math.log(ka.ratio_ci_high / ka.ratio_ci_low) / (2 * sps.t.ppf(0.975, df))
    crit = sps.t.ppf(1 - level / 2, df)
    lam = optimize.brentq(lambda x: sps.nct.sf(crit, df, x) + sps.nct.cdf(-crit, df, x) - 0.8,
                          0, 7)  # scipy's nct.cdf is NaN at 8 on few, non-integer df
    assert ka.mde_ratio_high == pytest.approx(math.exp(lam * se), rel=1e-6)
    assert ka.mde_ratio_low == pytest.approx(math.exp(-lam * se), rel=1e-6)
    for result in results:
        t = result.to_frame()
        quiet = t[t["verdict"] == "~"]
        assert len(quiet) and (quiet["mde_ratio_high"].notna() | (quiet["mde_note"] != "")).all()
        s = result.simple_effects
        if not INTERACTING[result.metric.name]:  # no significant interaction: none to check
            assert not len(s)
            continue
        quiet = s[s["verdict"] == "~"]
        assert len(quiet) and (quiet["mde_high"].notna() | (quiet["mde_note"] != "")).all()
        for shown in present_effects.factorial(result):
            detect = next(i for i, c in enumerate(shown.columns)
                          if c.name.startswith("detectable"))
            verdict = [c.name for c in shown.columns].index("verdict")
            quiet_rows = [r for r in shown.rows if r[verdict] == "~"]
            assert quiet_rows and all(r[detect].startswith(("x", "none: ", "any change"))
                                      for r in quiet_rows)
            # a ~ keeps its estimate and interval
            assert all(re.match(r"\[[\d.e-]+, [\d.e-]+\]$", r[detect - 1]) for r in quiet_rows)


def test_a_measured_effect_from_runs_that_waited_says_so_in_its_verdict():
    """Throughput at 256 connections without keepalive comes from runs whose requests waited
    for the 1 s SYN retry: measured, so it keeps 'better', and its verdict cell says the cap
    affects it (the index reads the verdict, not only the footnote)."""
    from perfkit.report.sections import common, effects

    exp = common.load_experiment("demo-wrk-factorial", str(DATA))
    rows = exp.rows({})
    results = effects.factorials(rows, ["keepalive", "cache"], ["throughput_rps"],
                                 "connections", 0.95, 0.05)
    found = [a for a in effects.answers([], results, exp) if a.group.startswith("Effect")]
    affected = [a for a in found if "256" in a.question and "keepalive = none" in a.question]
    assert affected and all(a.verdict == "better (affected by the 1000 ms cap)"
                            for a in affected)
    assert all(any("affected by the cap" in w for w in a.warnings) for a in affected)
    assert all(a.verdict in ("better", "~") for a in found if "256" not in a.question)


def test_the_tables_qualify_a_measured_change_from_runs_that_waited_as_the_answers_do():
    """The throughput tables at 256 connections (runs that waited for the 1 s SYN retry) read
    as the index does: the change with 'affected by the 1000 ms cap', never a bare 'better'."""
    from perfkit.present.tables import render_all
    from perfkit.report.sections import common, effects

    exp = common.load_experiment("demo-wrk-factorial", str(DATA))
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
    # the A/B change keeps its number beside the qualified verdict
    assert "| +63.3% [+37.8%, +97.5%] | better (affected by the 1000 ms cap) |" in render_all(
        [effects.present_table(table, rows)], "markdown")


def test_an_interaction_is_neither_better_nor_worse_and_an_averaged_main_effect_no_verdict():
    """keepalive x cache on throughput at 64 connections is x0.85: the two gains do not add
    up, which is not a 'worse'; the main effects it makes uninterpretable alone send the
    reader to the simple effects instead of a verdict of their own."""
    from perfkit.present.tables import render_all
    from perfkit.report.sections import common, effects

    exp = common.load_experiment("demo-wrk-factorial", str(DATA))
    (result,) = effects.factorials(exp.rows({}), ["keepalive", "cache"], ["throughput_rps"],
                                   "connections", 0.95, 0.05)
    frame = result.to_frame()
    inter = frame[(frame["term"] == "keepalive:cache") & frame["significant"]]
    assert len(inter) and (inter["verdict"] == "interaction").all()
    text = render_all([effects.present_factorial(result)], "markdown")
    for line in text.splitlines():
        if re.match(r"\| (64|256) \| (keepalive|cache) \[1\]", line):
            # the verdict cell, then the mechanism the counters give beside it
            assert re.search(r"\| see the simple effects( \[\d\])? \| [^|]+ \|$", line), line
        if "keepalive:cache" in line and "|" in line:
            assert "worse" not in line and "better" not in line, line


def test_one_contrast_one_answer_a_b_rows_and_simple_effects_agree_and_say_what_they_estimate():
    """Issue 21: keepalive at 16 connections was 'better, -19.4%' in the A/B table and '0.749,
    ~' in the factorial table: a simple effect (cache held at none) and a main effect
    (averaged over cache), neither labelled. Each row now says what it estimates, and where
    both tables answer the same contrast (the simple effects of throughput at 256
    connections) they give the same estimate and interval."""
    from perfkit.report.sections import common, effects

    rows = common.load_experiment("demo-wrk-factorial", str(DATA)).rows({})
    results = effects.factorials(rows, ["keepalive", "cache"], METRICS, "connections", 0.95,
                                 0.05)
    tables = effects.ab_tables(rows, ["keepalive", "cache"], METRICS, "connections", 0.05,
                               0.95)
    same = 0
    for result, table in zip(results, tables, strict=True):
        ab = table.to_frame()
        assert set(zip(ab["factor"], ab["estimand"], strict=True)) == {
            ("keepalive", "simple effect, cache held at none"),
            ("cache", "simple effect, keepalive held at none")}
        main = result.to_frame()
        (ka16,) = main[(main["connections"] == 16) & (main["term"] == "keepalive")]["estimand"]
        assert ka16 == "main effect, averaged over cache"
        simple = result.simple_frame() if len(result.simple_effects) else None
        if simple is None:
            continue
        for _, s in simple[simple["at_level"] == "none"].iterrows():
            (r,) = ab[(ab["factor"] == s["factor"])
                      & (ab["connections"] == s["connections"])].itertuples()
            assert r.estimand == s["estimand"]
            assert (s["ratio"], s["ratio_ci_low"], s["ratio_ci_high"]) == (
                r.ratio, r.ratio_ci_low, r.ratio_ci_high)
            same += 1
    assert same == 2  # throughput at 256 connections: keepalive and cache
