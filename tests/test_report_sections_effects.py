"""The tuning-effects page (perfkit.report.sections.effects) on the demo factorial: forest plots
and answers give the simple effects where an interaction is significant, effects from runs
that waited for the 1 s SYN retry are artefacts (latency) or flagged (throughput) alike
everywhere, and the verdict column holds verdicts only.

Expected values are computed here from the per-run columns (numpy/scipy), not by the code
under test.
"""

from __future__ import annotations

import itertools
import math
import re
from pathlib import Path

import numpy as np
import pytest
from _syn_cap import on_syn_cap
from scipy import stats as sps

from perfkit.analysis import load_experiment
from perfkit.analysis.compare import NOT_TESTABLE
from perfkit.analysis.core import affected, artefact
from perfkit.analysis.effects import headline_effects
from perfkit.formatting import fmt_sig
from perfkit.report.sections import aa as aa_section
from perfkit.report.sections import effects
from perfkit.vocabulary import Verdict
from perfkit.warning import Code, Warn, texts


def codes(answer) -> set[Code]:
    """The codes of an answer's coded caveats."""
    return {w.code for w in answer.warnings if isinstance(w, Warn)}

#: the demo factorial as first recorded, with the upstream's queue of 100: its 1 s stalls
#: (tests/fixtures/stalls/README.md)
STALLS = Path(__file__).resolve().parent / "fixtures" / "stalls"
DATA = Path(__file__).resolve().parents[1] / "data"


#: the verdicts of an effect from values on the 1 s SYN retry, and of a measured one from runs
#: that waited for it ("artefact of the 1000 ms cap", "better (affected by the 1000 ms cap)")
ARTEFACT = artefact([1000.0])
AFFECTED = affected(Verdict.BETTER, [1000.0])
#: the verdicts of a measured effect
MEASURED = [Verdict.BETTER, Verdict.WORSE, Verdict.NO_CHANGE, Verdict.INTERACTION]


#: the connection levels where keepalive x cache is significant (Holm), per metric
INTERACTING = {"latency_p99_ms": set(), "throughput_rps": {256}}


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


def _effect(found, factor: str, question: str):
    """The answers of ``factor``'s group asking ``question``."""
    return [a for a in found if a.group.startswith(f"Effect of {factor}:")
            and a.question == question]


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


def _simple(frame, level, factor, other, other_level, column="throughput_rps"):
    """log values of ``factor`` high and low at ``other = other_level``, at one load level."""
    at = frame[(frame["connections"] == level) & (frame[other] == other_level)]
    logs = np.log(at[column].to_numpy(float))
    off = (at[factor] == "none").to_numpy()
    return logs[~off], logs[off]


def _exact_rank_p(x, y):
    """Two-sided exact permutation p of the rank-sum with midranks, by enumerating every split
    of the runs; written apart from perfkit (scipy's exact Mann-Whitney ignores ties)."""
    ranks = sps.rankdata(np.r_[x, y])
    observed = ranks[:len(x)].sum()
    centre = len(x) * (len(ranks) + 1) / 2
    sums = np.array([ranks[list(c)].sum()
                     for c in itertools.combinations(range(len(ranks)), len(x))])
    return float(np.mean(np.abs(sums - centre) >= abs(observed - centre) - 1e-9))


#: a verdict: better/worse/~/not testable/no data, an artefact, or an A/A rule's outcome
VERDICT = re.compile(r"better|worse|~|not testable|no data|not tested|"
                     r"~ \(p [\d.]+ after Holm over \d+ tests; the interval is unadjusted\)|"
                     r"(better|worse)( \(affected by the [\d ]+(and [\d ]+)*ms caps?\))?"
                     r"( \(after Holm over \d+ tests, p [\d.]+; its simultaneous interval "
                     r"holds no change\))?|"
                     r"artefact of the [\d ]+(and [\d ]+)*ms caps?|"
                     r"(holds its size \(rate <=|exceeds its size \(rate >) [\d.]+ x [\d.]+\)|")


def test_the_ab_page_never_counts_an_untestable_row_as_no_change(demo_factorial):
    tables = effects.ab_tables(demo_factorial.rows(), ["keepalive", "cache"],
                               ["latency_p99_ms", "throughput_rps"], "connections", 0.05, 0.95)
    for table in tables:
        frame = table.to_frame()
        n = np.minimum(frame["n_base"], frame["n_new"]).to_numpy()
        floor = 2 / np.array([math.comb(2 * k, k) for k in n])  # exact MW, equal arms
        family = len(frame)
        untestable = np.minimum(1, floor * family) >= 0.05
        assert (frame.loc[untestable, "verdict"] == NOT_TESTABLE).all()
        assert not (frame.loc[untestable, "verdict"] == Verdict.NO_CHANGE).any()


def test_forest_plots_show_simple_effects_where_an_interaction_is_significant(demo_tuning):
    rows, results, _, found = demo_tuning
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
    everything = headline_effects(results)
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


def test_a_significant_interaction_headlines_its_simple_effects(demo_tuning):
    rows, (_, thr), _, found = demo_tuning
    frame = rows.frame
    # throughput at 256 (keepalive x cache significant there): the simple effect of keepalive
    # without the cache, by hand as the A/B table compares two cells: the Hodges-Lehmann
    # ratio (median of the pairwise ratios) and the exact Mann-Whitney U test (5 vs 5 runs),
    # Holm over the 2 levels of cache
    high, low = _simple(frame, 256, "keepalive", "cache", "none")
    ratio = math.exp(float(np.median(np.subtract.outer(high, low))))
    assert ratio == pytest.approx(1.633, abs=5e-4)  # 1.648 as a ratio of geometric means
    p = [_exact_rank_p(*_simple(frame, 256, "keepalive", "cache", lv)) for lv in ("none", "ram")]
    p_holm = min(1, 2 * p[0])  # the smaller p of two: Holm's first step
    assert p[0] < p[1]
    rows_ = thr.headline_rows()
    at256 = rows_[rows_["connections"] == 256]
    assert set(at256["at"]) == {"cache=none", "cache=ram", "keepalive=none",
                                "keepalive=keepalive"}  # simple effects only, no main effect
    (ka,) = at256[(at256["term"] == "keepalive") & (at256["at"] == "cache=none")].itertuples()
    assert ka.estimate == pytest.approx(ratio, rel=1e-9)
    assert ka.p_value == pytest.approx(p_holm, rel=1e-6) and ka.verdict == Verdict.BETTER
    # the page's answers and the index: simple effects, never a main effect "not
    # interpretable alone" (x1.28, x3.94 are the main effects at 256)
    assert not [a for a in found if "not interpretable" in a.verdict]
    assert not [a for a in found if a.answer.startswith(("x1.28 ", "x3.94 "))]
    effect_answers = [a for a in found if a.group.startswith("Effect of")]
    assert effect_answers
    for a in effect_answers:
        if "throughput" in a.question and " 256 connections" in a.question:
            assert re.fullmatch(r"Effect of (cache|keepalive): .*", a.group), a.group
            assert re.fullmatch(r"throughput, 256 connections, (cache|keepalive) = \w+",
                                a.question), a.question
            assert Code.INTERACT_AT in codes(a)


def test_an_effect_from_values_on_the_cap_is_an_artefact(demo_tuning):
    rows, (p99, thr), tables, found = demo_tuning
    frame = rows.frame
    capped = frame[on_syn_cap(frame, "latency_p99_ms")]
    cells = set(zip(capped["connections"], capped["keepalive"], capped["cache"], strict=True))
    assert cells == {(256, "none", "none"), (256, "keepalive", "none")}, \
        "the demo data changed: the test proves nothing"
    table = p99.to_frame()
    effect = ~table["term"].isin(["error", "block"])
    assert (table.loc[effect & (table["connections"] == 256), "verdict"] == ARTEFACT).all()
    assert not (table.loc[table["connections"] != 256, "verdict"] == ARTEFACT).any()
    assert not (thr.to_frame()["verdict"] == ARTEFACT).any()  # throughput is measured
    # an artefact exactly when its runs include a capped cell: a main effect (every run of
    # its level), or a simple effect on the cells without the cache
    heads = p99.headline_rows()
    assert len(heads[heads["connections"] == 256])
    for r in heads[heads["connections"] == 256].itertuples():
        uses_cap = r.at in ("", "cache=none", "keepalive=none", "keepalive=keepalive")
        assert (r.verdict == ARTEFACT) == uses_cap, r
    # the answers: the artefact verdict with the cap warning; measured ones without it
    for a in found:
        if a.group.startswith("Effect of"):
            on_cap = a.verdict == ARTEFACT
            assert on_cap == any(w.code is Code.ON_CAP and w["effect"] != "throttled"
                                 for w in a.warnings if isinstance(w, Warn)), a
            assert on_cap == (a.kind == "artefact"), a  # listed apart from the answers
    assert [a for a in found if a.verdict == ARTEFACT]
    # the A/B tables: an artefact is counted as one, never as better or worse; throughput's
    # rows say the cap affects them, never that they are artefacts
    (p99_ab,) = [t for t in tables if t.metric.name == "latency_p99_ms"]
    (thr_ab,) = [t for t in tables if t.metric.name == "throughput_rps"]
    assert p99_ab.reported_counts().get(ARTEFACT) == 2
    assert all(w["effect"] == "throttled" for r in thr_ab.rows for w in r.cap_warnings)
    assert any(r.cap_warnings for r in thr_ab.rows)
    from perfkit.report.index import NotebookEntry, render_index

    page = render_index("t", "p", [NotebookEntry("tuning-effects", "t", None, None,
                                                 tuple(found))])
    # on the index an artefact is listed apart from the answers, its cap caveat marked
    aside = re.search(r'<ul class="answers-aside">(.*?)</ul>', page, re.S).group(1)
    items = re.findall(r"<li.*?</li>", aside, re.S)
    assert len(items) == sum(a.kind == "artefact" for a in found) > 0
    assert all(ARTEFACT in i and 'class="caveat-mark"' in i for i in items)


def test_a_max_on_the_syn_timeout_makes_p99_effects_from_its_runs_artefacts(demo_tuning):
    rows, (p99, thr), _, found = demo_tuning
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
    on_cap = [dict(w["runs"]) for w in p99.level_warnings[256] if w.code is Code.ON_CAP]
    assert any(("max", 1100.0) in v for runs in on_cap for rid, v in runs.items()
               if rid.startswith("0012"))
    (answer,) = _effect(found, "cache", "p99 latency, 256 connections")
    assert answer.verdict == ARTEFACT and any("max 1100" in t for t in texts(answer.warnings))
    assert answer.kind == "artefact" and "max 1100" in str(answer.warnings[0])  # its first
    # honest effects stay measured: below 256 connections every max is far from any cap
    assert frame.loc[frame["connections"] != 256, "latency_max_ms"].max() < 100
    assert not table.loc[table["connections"] != 256, "verdict"].str.startswith("artefact").any()
    ram = frame[(frame["connections"] == 256) & (frame["cache"] == "ram")]
    assert ram["latency_max_ms"].max() < 100
    # ... and so do the effects from the cells with the cache at 256, which did not wait
    s = thr.simple_effects
    (ka,) = s[(s["connections"] == 256) & (s["at"] == "cache=ram")].itertuples()
    assert ka.verdict == Verdict.NO_CHANGE and not ka.cap_affected and not ka.warnings  # x0.995


def test_throughput_from_runs_that_waited_is_flagged_alike_everywhere(demo_tuning):
    rows, (_, thr), tables, found = demo_tuning
    frame = rows.frame
    cells = set(zip(*(_waited(frame)[c] for c in ("connections", "keepalive", "cache")),
                    strict=True))
    assert cells == {(256, "none", "none"), (256, "keepalive", "none")}
    # the factorial: measured (better/worse), flagged at 256 only
    table = thr.to_frame()
    effect = ~table["term"].isin(["block", "error"])
    assert table.loc[effect, "verdict"].isin(MEASURED).all()
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
    assert not any(n.get("metric") == "latency_p99_ms" for n in effects.notes([thr_ab]))
    assert [r.reported_verdict for r in thr_ab.cap_affected_rows()] == [AFFECTED] * 2
    (answer,) = _effect(found, "cache", "throughput, 256 connections, keepalive = none")
    assert answer.verdict == AFFECTED
    assert any(w.code is Code.ON_CAP and w["effect"] == "throttled" for w in answer.warnings
               if isinstance(w, Warn))
    assert not any("throttled" in w for a in found if " 16 connections" in a.question
                   for w in a.warnings)


def test_a_measured_effect_from_runs_that_waited_says_so_in_its_verdict():
    """Throughput at 256 connections without keepalive comes from runs whose requests waited
    for the 1 s SYN retry: measured, so it keeps 'better', and its verdict cell says the cap
    affects it (the index reads the verdict, not only the footnote)."""
    from perfkit.report.sections import common, effects

    exp = common.load_experiment("factorial-upstream-backlog100", str(STALLS))
    rows = exp.rows({})
    results = effects.factorials(rows, ["keepalive", "cache"], ["throughput_rps"],
                                 "connections", 0.95, 0.05)
    found = [a for a in effects.answers([], results, exp) if a.group.startswith("Effect")]
    waited = [a for a in found if "256" in a.question and "keepalive = none" in a.question]
    assert waited and all(a.verdict == AFFECTED for a in waited)
    assert all(any(w.code is Code.ON_CAP and w["effect"] == "throttled" for w in a.warnings
                   if isinstance(w, Warn)) for a in waited)
    assert all(a.verdict in (Verdict.BETTER, Verdict.NO_CHANGE) for a in found
               if "256" not in a.question)


def test_captions_say_what_rows_compare_runs_per_arm_and_the_load_point(demo_tuning):
    from perfkit.present import compare as present_compare
    from perfkit.present import effects as present_effects
    from perfkit.present.tables import render

    rows, (p99, _), tables, _ = demo_tuning
    for table in tables:
        assert {(r.comparison.n_base, r.comparison.n_new) for r in table.rows} == {(5, 5)}
        caption = effects.ab_caption(table)
        assert "5 vs 5 runs per row" in caption and "high level (new)" in caption
        t = present_compare.comparison(table, rows.runs)
        base, new = t.title.splitlines()[1:3]  # 15 and 30 runs in all: the rows share a base
        assert base.endswith("(15 runs; 5 per row)") and new.endswith("(30 runs; 5 per row)")
        title = re.search(r'<p class="perfkit-caption">(.*?)</p>', render(t, "html")).group(1)
        assert title.count("<br>") == 2  # three lines, not one bold run-on heading
    # the factorial's cap footnote marks the 256 rows, not the end of "blocks: block"
    effects_table = present_effects.factorial(p99)[0]
    cap = next(i for i, n in enumerate(effects_table.notes, 1)
               if isinstance(n, Warn) and n.code is Code.ON_CAP and n["cap_ms"] == 1000.0)
    # (the title may carry the table-wide notes: since review29, that the counters are the
    # network namespace's totals; never the cap's)
    assert f"[{cap}]" not in effects_table.title
    titled = [effects_table.notes[int(m) - 1] for m in re.findall(r"\[(\d+)\]",
                                                                   effects_table.title)]
    assert all(n.code is Code.COUNTERS_NAMESPACE_TOTAL for n in titled), titled
    verdict = [c.name for c in effects_table.columns].index("verdict")
    marked = [r for r in effects_table.rows if r[verdict].endswith(f"[{cap}]")]
    assert marked and {r[0] for r in marked} == {"256"}
    # the A/A tables name their load point: every run at one number of connections
    frame = load_experiment(DATA / "demo-aa").rows().frame
    (conns,) = set(frame["connections"])
    cal = aa_section.calibrate("demo-aa", str(DATA), "arm", ["latency_p99_ms"], 0.05, 5, 20, 1)
    (designed,) = aa_section.designed(cal)
    assert f"at connections = {conns}" in aa_section.designed_caption(designed, cal)
    assert "10 vs 10 runs" in aa_section.designed_caption(designed, cal)
    assert f"at connections = {conns}" in aa_section.rates_caption(cal, 0.05)


def test_the_verdict_column_holds_verdicts_only(demo_tuning, demo_aa_calibration, demo_sweep):
    found = [*demo_tuning[3], *aa_section.answers(demo_aa_calibration)]
    rows = load_experiment(DATA / "demo-wrk2-sweep").rows()
    results = effects.factorials(rows, ["profile"], ["latency_p99_ms"], "target_rate_rps")
    found += effects.answers(effects.ab_tables(rows, ["profile"], ["latency_p99_ms"],
                                               "target_rate_rps"), results)
    assert {a.verdict for a in found} >= {Verdict.BETTER, ARTEFACT}
    for a in found:
        assert VERDICT.fullmatch(a.verdict), (a.question, a.verdict)
