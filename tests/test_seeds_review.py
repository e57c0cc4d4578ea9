"""Review of the seeds report, item by item: what each note says must follow from the runs.

1. a wrk2 run whose peers all fell short too is not "like its peers'";
2. the timeout cap's sentence says what the cap does to each metric;
3. a runs-needed note on a decided claim says what it is for, or is left out;
4. an untested claim's caveats say each thing once;
5. the answers table fits the page;
6. one server profile, one colour, in every seeds figure.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from perfkit.analysis import load_experiment, metric, run_statuses
from perfkit.analysis.runstatus import SHORT, UNDECIDED, kept_up
from perfkit.report.sections import seeds as section

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"


@pytest.fixture(scope="module")
def analysis():
    return section.analyse(str(DATA), 0.1, 0.05)


@pytest.fixture(scope="module")
def results(analysis):
    return {r.claim["claim_id"]: r for r in analysis.results}


# -- 1: peers that all fell short say nothing of a run's latency --------------------------------
def test_a_run_whose_peers_all_fell_short_is_not_called_like_its_peers():
    # seeds-backlog at 1000 connections: every run of both arms achieved 0.913-0.914 x its rate
    exp = load_experiment(DATA / "seeds-backlog")
    for queue in (128, 32768):
        rows = exp.rows({"accept_queue": queue, "connections": 1000})
        assert not kept_up(rows).any()
        statuses = run_statuses(rows, metric("latency_p99_ms"))
        assert [s.status for s in statuses] == [SHORT] * len(rows)  # kept in doubt
        for s in statuses:
            assert "like its peers'" not in s.reason
            assert "every run of its configuration and load fell short (0.913-0.914 x" \
                in s.reason
            assert f"not sustained by this setup, {UNDECIDED}" in s.reason


def test_a_run_with_kept_up_peers_is_still_judged_by_their_latency():
    exp = load_experiment(DATA / "seeds-backlog")
    rows = exp.rows({"accept_queue": 128, "connections": 100})  # four runs kept 0.993 x
    assert kept_up(rows).sum() == 4
    (short,) = [s for s in run_statuses(rows, metric("latency_p99_ms")) if s.status == SHORT]
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
