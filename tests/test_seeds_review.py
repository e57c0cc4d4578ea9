"""Review of the seeds report, item by item: what each note says must follow from the runs.

1. a wrk2 run whose peers all fell short too is not "like its peers'";
2. the timeout cap's sentence says what the cap does to each metric;
3. a runs-needed note on a decided claim says what it is for, or is left out;
4. an untested claim's caveats say each thing once;
5. the answers table fits the page;
6. one server profile, one colour, in every seeds figure.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from perfkit.analysis import load_experiment, metric, run_statuses
from perfkit.analysis.runstatus import SHORT, UNDECIDED, kept_up
from perfkit.report.sections import seeds as section

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"


@pytest.fixture(scope="module")
def analysis(seeds_analysis):
    return seeds_analysis  # section.analyse(data/, 0.1, 0.05), once per session (conftest.py)


@pytest.fixture(scope="module")
def results(analysis):
    return {r.claim["claim_id"]: r for r in analysis.results}


# -- 1: peers that all fell short say nothing of a run's latency --------------------------------
def test_a_run_whose_peers_all_fell_short_is_not_called_like_its_peers():
    # seeds-backlog at 1000 connections: every run of both arms fell short of its rate
    exp = load_experiment(DATA / "seeds-backlog")
    for queue, span in ((128, "0.916-0.939"), (32768, "0.915-0.927")):
        rows = exp.rows({"accept_queue": queue, "connections": 1000})
        assert not kept_up(rows).any()
        statuses = run_statuses(rows, metric("latency_p99_ms"))
        assert [s.status for s in statuses] == [SHORT] * len(rows)  # kept in doubt
        for s in statuses:
            assert "like its peers'" not in s.reason
            assert f"every run of its configuration and load fell short ({span} x" \
                in s.reason
            assert f"not sustained by this setup, {UNDECIDED}" in s.reason


def test_a_run_with_kept_up_peers_is_still_judged_by_their_latency():
    exp = load_experiment(DATA / "seeds-backlog")
    rows = exp.rows({"accept_queue": 32768, "connections": 100})  # three runs kept 0.993 x
    assert kept_up(rows).sum() == 3
    shorts = [s for s in run_statuses(rows, metric("latency_p99_ms")) if s.status == SHORT]
    assert len(shorts) == 2  # 0.963 and 0.964 x
    for short in shorts:
        assert "its latency is like its peers'" in short.reason and UNDECIDED not in short.reason


def test_the_seeds_notes_follow_the_rule(results):
    r = results["000-1"]
    notes = [r.reason, *r.worst, *r.warnings]
    assert not any("like its peers'" in n or "like their peers'" in n for n in notes), notes
    (doubt,) = [w for w in r.warnings if "fell short" in w and "kept, in doubt" in w]
    assert "no run of either arm kept the rate" in doubt
    assert f"not sustained by this setup, {UNDECIDED}" in doubt
    # 000-2: runs of both arms kept the rate, so its note says nothing of the kind
    (doubt,) = [w for w in results["000-2"].warnings if "kept, in doubt" in w]
    assert UNDECIDED not in doubt


# -- 2: what a timeout cap does to each metric ---------------------------------------------------
def _waited(max_ms: float):
    """Two runs whose max sits on ``max_ms`` with a fast median: they waited for a timeout."""
    import pandas as pd

    from perfkit.analysis.experiment import RunSet

    frame = pd.DataFrame([{"run_id": f"r{i}", "latency_p50_ms": 14.0, "latency_p90_ms": 20.0,
                           "latency_p99_ms": 60.0, "latency_max_ms": max_ms,
                           "throughput_rps": 9000.0, "error_ratio": 0.0005,
                           "errors_timeout": 20.0, "non_2xx_3xx": 3.0} for i in range(2)])
    return RunSet(frame, (None, None))


@pytest.mark.parametrize("cap_ms, name, says", [
    (2000.0, "throughput_rps", "throttled by it"),
    (1000.0, "throughput_rps", "throttled by it"),
    (2000.0, "error_ratio", "counts that timeout as well as the service's failures"),
    (2000.0, "errors_timeout", "counts that timeout as well as the service's failures"),
    (1000.0, "error_ratio", None),  # a SYN retry adds no error: nothing to say
    (1000.0, "errors_timeout", None),
    (2000.0, "non_2xx_3xx", "counts fewer attempts"),
])
def test_the_cap_sentence_says_what_the_cap_does_to_each_metric(cap_ms, name, says):
    from perfkit.analysis.caps import cap_check

    check = cap_check(_waited(cap_ms * 0.97), metric(name))
    assert not check.caps_ms  # not a latency: measured, never an artefact
    if says is None:
        assert not check and not check.warnings
        return
    (sentence,) = check.warnings
    assert says in sentence and "affected by the cap" in sentence
    assert check.affected_ms == (cap_ms,)
    if name != "throughput_rps":
        assert "throttled" not in sentence


def test_claim_002_1_says_its_error_ratio_counts_wrks_timeout(results):
    r = results["002-1"]
    texts = [w for w in (*r.warnings, *r.replication.row.warnings) if "2000 ms" in w
             and "run(s) with latencies" in w]
    assert texts and not any("throttled" in w for w in texts)
    assert all("error_ratio of these runs counts that timeout" in w for w in texts)


# -- 3: a runs-needed note on a decided claim says what it is for -------------------------------
def test_a_decided_claim_says_what_its_run_count_is_for(results):
    for cid in ("002-1", "002-2"):  # supported; supported in direction: decided by 5 vs 5 runs
        r = results[cid]
        assert r.runs_needed is not None and r.runs_needed_ratio == pytest.approx(1.1)
        assert r.runs_needed_note.startswith("the repeat decided this claim with 5 vs 5 runs")
        assert "if a change as small as 10% mattered: a repeat would need" \
            in r.runs_needed_note
    for cid in ("000-1", "004-3"):  # inconclusive: the run count is what a decisive repeat needs
        assert results[cid].runs_needed_note.startswith("a repeat would need")


def test_a_run_count_the_repeat_already_answered_is_left_out():
    from types import SimpleNamespace

    from perfkit.analysis.seeds_power import Needed, for_decided

    def repeat(lo, hi):
        return SimpleNamespace(n_base=5, n_new=5, ratio_ci_low=lo, ratio_ci_high=hi)

    sized = Needed(29, 1.245, 2, "a repeat would need >= 29 runs per arm to detect the "
                                 "published ratio (x1.25) ...", published=True)
    tenth = Needed(62, 1.1, 3, "a repeat would need >= 62 runs per arm to detect a 10% change")
    gone = for_decided(sized, repeat(1.3, 1.9), 0.1)
    assert gone.runs_per_arm is None and gone.note == ""
    assert for_decided(tenth, repeat(0.95, 1.04), 0.1).note == ""  # ±10% already excluded
    kept = for_decided(tenth, repeat(0.0003, 0.0006), 0.1)
    assert kept.runs_per_arm == 62 and kept.note.endswith(tenth.note)
    assert kept.note.startswith("the repeat decided this claim with 5 vs 5 runs")


# -- 4: each caveat once -------------------------------------------------------------------------
def test_no_caveat_of_an_answer_repeats_another(analysis, results):
    from perfkit.analysis.seeds_notes import published_caps

    for a in section.answers(analysis):
        cid = a.question.split(" ")[0]
        said = [w for w in a.warnings if w]
        for i, w in enumerate(said):
            others = said[:i] + said[i + 1:]
            assert not any(w in o for o in others), (cid, w)
        joined = " ".join(said)
        assert joined.count("a recommendation without a measurement") <= 1, cid
        assert joined.count("per configuration") <= 1, (cid, said)
        # what an untested claim's reason adds to its assessment is kept
        if results[cid].replication is None:
            assert all(c in said for c in published_caps(results[cid].claim["published_values"]))
    (only,) = [a for a in section.answers(analysis) if a.question.startswith("000-3")]
    assert only.warnings == ("a recommendation without a measurement: nothing to test",)


def test_a_not_testable_result_without_the_doubtful_runs_says_what_would_make_it_testable(
        analysis):
    found = [w for a in section.answers(analysis) for w in a.warnings
             if "without them: not testable" in w]
    assert found  # 000-2: 3 vs 1 runs once its short runs are left out
    assert all(re.search(r"needs >= \d+ runs per arm", w) for w in found)
