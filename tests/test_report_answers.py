"""The answers block, the page's "said once" rule and the Methods page, on small known inputs
(issue 21: answers first; each caveat once per page, naming the rows it affects)."""

from __future__ import annotations

import re

from perfkit.report.answers import (
    ANSWERED,
    ARTEFACT,
    NOT_TESTABLE,
    Answer,
    answers_html,
    number,
    ordered,
    ratio_text,
)
from perfkit.report.condense import Said, condensed_table
from perfkit.report.methods import relative
from perfkit.report.methods_page import methods_markdown, sentences
from perfkit.report.threats import common, merge, records_html

DRIFT = "exp: the system drifted during the experiment (Kendall p = 0.01)"
CAP = ("8 run(s) with latencies that sit on 1000 ms, the Linux SYN retransmission timeout "
       "(1 s): connection attempts dropped from a full accept queue and retried (a, b)")


def _rows() -> list[Answer]:
    return [
        Answer("p99, 16 connections", "x0.75 [0.55, 1.03], -25%", "~", "20 runs", (DRIFT,),
               group="Effect of keepalive", topic="effect"),
        Answer("p99, 64 connections", "x0.67 [0.61, 0.74], -33%", "better", "10 runs",
               ("they interact at 64", DRIFT), group="Effect of keepalive", topic="effect"),
        Answer("p99, 256 connections", "x0.06 [0.02, 0.24], -94%", "artefact of the cap",
               "10 runs", (CAP, "they interact at 256", DRIFT), group="Effect of keepalive",
               topic="effect", kind=ARTEFACT),
        Answer("profile default", "3.46 ms [1.77, 6.77]", "", "3 runs", ("only 3 runs",),
               group="p99 latency", topic="comparison"),
        Answer("exp", "x0.84 [0.78, 0.92], -16%", "drift", "60 runs", (), group="Drift",
               topic="drift"),
    ]


def test_rows_come_by_designed_question_not_by_size():
    items = [*_rows()[3:], *_rows()[:3]]  # latency and drift answered first, effects last
    assert [a.topic for a in ordered(items)] == ["effect"] * 3 + ["comparison", "drift"]


def test_a_caveat_of_every_row_of_a_group_is_marked_once_on_its_heading():
    rows = [a for a in _rows() if a.kind == ANSWERED] + [_rows()[2]]
    cav = number(rows)
    drift = cav.notes.index(DRIFT) + 1
    assert cav.group_marks == {"Effect of keepalive": drift}
    assert cav.rows[drift - 1] == (1, 2, 5)  # both answered rows, and the artefact listed apart
    assert cav.marks[0] is None  # its only caveat is on the heading
    assert cav.notes[cav.marks[1] - 1] == "they interact at 64"
    assert cav.notes[cav.marks[4] - 1] == CAP  # an artefact leads with its cap caveat
    assert len(set(cav.notes)) == len(cav.notes)


def test_the_block_lists_answers_then_artefacts_then_the_caveats_each_naming_its_rows():
    html, cav = answers_html(_rows())
    table, aside = html.split('<ul class="answers-aside">')
    assert table.count('<tr id="row-') == 4 and aside.count('<li id="row-') == 1
    assert "artefact of the cap" in aside and "x0.06" not in table
    for row in re.findall(r'<tr id="row-\d+">.*?</tr>', table, flags=re.S):
        assert row.count('class="caveat-mark"') <= 1
    entries = re.findall(r'<li id="caveat-(\d+)">(.*?)</li>', html, flags=re.S)
    assert len(entries) == len(cav.notes)
    assert all('class="caveat-rows">(row' in e for _, e in entries)
    for target in re.findall(r'href="#((?:caveat|row)-\d+)"', html):
        assert f'id="{target}"' in html
    untestable = Answer("tuned / default", "x0.8 (no interval), -20%", NOT_TESTABLE, "3 vs 3",
                        kind=NOT_TESTABLE)
    html, _ = answers_html([untestable])
    assert "<table" not in html and "not testable" in html


def test_a_ratio_is_given_with_its_interval_and_as_a_percentage():
    assert ratio_text(0.670239, 0.60906, 0.737562) == "x0.67 [0.609, 0.738], -33%"
    assert ratio_text(1.25, 1.2, 1.3) == "x1.25 [1.2, 1.3], +25%"
    assert ratio_text(0.796, float("nan"), float("nan")) == "x0.796 (no interval), -20%"


def test_a_caveat_said_before_is_referred_to_not_repeated():
    said = Said()
    said.add(CAP, "caveat 5")
    assert said.condense(CAP) == "as caveat 5"
    other = CAP.replace("8 run(s)", "5 run(s)").replace("(a, b)", "(c)")
    assert said.condense(other) == other  # another caveat: in full, nothing spliced in
    assert said.condense("a different caveat altogether") == "a different caveat altogether"


def test_a_tables_long_notes_lines_and_cells_said_before_are_referred_to():
    from perfkit.present.tables import Column, Table

    long = "a setting described at length, " * 4
    table = Table((Column("claim"), Column("setting")), (("1", long), ("2", long)),
                  "t\nbase: the same arms described at length for every table of the page",
                  (CAP,))
    said = Said()
    said.add(CAP, "caveat 1")
    first = condensed_table(said, table, "verdicts")
    assert first.notes == ("as caveat 1",) and first.rows[1][1] == "(as above)"
    again = condensed_table(said, table, "assessment")
    assert again.rows[0][1] == "(as in the table “verdicts”)"
    assert again.title == "t\n(1 more line(s) as in the tables above)"


def test_threats_alike_but_for_the_experiment_are_one_and_the_common_ones_link_the_index():
    page_a = merge(["a: same host", "b: same host", "a: drifted"])
    page_b = merge(["c: same host", "c: short runs"])
    assert [(r["experiments"], r["text"]) for r in page_a] == [(["a", "b"], "same host"),
                                                               (["a"], "drifted")]
    shared = common([page_a, page_b])
    assert shared == [{"experiments": ["a", "b", "c"], "text": "same host"}]
    html = records_html("Threats to validity", page_a, {"a: drifted": 2}, {"same host": 1})
    assert 'href="index.html#threats-1"' in html and 'href="#caveat-2"' in html
    assert "(2)</h2>" in html and "<details" in html


def test_the_methods_say_what_several_experiments_share_once():
    def record(*setup):
        return {"setup": list(setup), "analyses": [], "closing": []}

    host = "Host: 2 CPUs, over loopback."
    text = methods_markdown({"e1": record("Experiment e1: 5 runs.", host),
                             "e2": record("Experiment e2: 3 runs.", host)}, "t")
    assert text.count(host) == 1 and "Every experiment: " in text
    assert text.count("The run is the experimental unit") == 1
    assert "## e1\n\nExperiment e1: 5 runs." in text
    assert sentences("As `wrk -c1. -d5s`. Next one.") == ["As `wrk -c1. -d5s`.", "Next one."]


def test_the_methods_show_no_path_of_the_machine_that_recorded_the_runs():
    argv = ("locust (locust 2.47.0 from /home/u/.venv/lib/python3.11/site-packages/locust), "
            "as `/home/u/.venv/bin/locust -f /home/u/perfkit/tests/locust/locustfile.py`")
    assert relative(argv) == ("locust (locust 2.47.0 from site-packages/locust), as "
                              "`locust -f tests/locust/locustfile.py`")
    assert relative("http://127.0.0.1:8080/ at 30 req/s") == "http://127.0.0.1:8080/ at 30 req/s"
