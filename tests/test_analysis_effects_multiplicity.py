"""perfkit.analysis.effects._multiplicity: the Holm families of a page, stated once, as data."""

from __future__ import annotations

from pathlib import Path

from perfkit.analysis.effects import _multiplicity as multiplicity

#: the demo factorial as first recorded, with the upstream's queue of 100: its 1 s stalls
#: (tests/fixtures/stalls/README.md)
STALLS = Path(__file__).resolve().parent / "fixtures" / "stalls"
DATA = Path(__file__).resolve().parents[1] / "data"


def test_the_holm_families_are_stated_once_as_data():
    from perfkit.report.sections import common, effects

    rows = common.load_experiment("factorial-upstream-backlog100", str(STALLS)).rows({})
    metrics = ["latency_p99_ms", "throughput_rps"]
    ab = effects.ab_tables(rows, ["keepalive", "cache"], metrics, "connections")
    res = effects.factorials(rows, ["keepalive", "cache"], metrics, "connections")
    frame = multiplicity.families(ab, res)
    sizes = frame.groupby("analysis")["tests"].agg(list).to_dict()
    # throughput's interaction at 256 connections gives two families of simple effects
    assert sizes == {"A/B": [6, 6], "factorial": [3] * 6, "simple effects": [2, 2]}
    text = multiplicity.statement(frame)
    assert text.startswith("Holm's adjustment is applied within each family at alpha 0.05, "
                           "never across families")
    assert "A/B: one family per metric: every row of its table (2 families of 6 tests " \
           "each)" in text


def test_a_worded_verdict_beside_an_interval_holding_no_change_is_judged_by_its_identity():
    # before: adjusted_verdict read the verdict's words, str(verdict).startswith(("better",
    # "worse")); a verdict worded beyond its identity is now judged by the identity given
    worded = "better (affected by the 1000 ms cap)"
    shown = multiplicity.adjusted_verdict(worded, 0.9, 1.1, 1.0, 0.04, 3, identity="better")
    assert shown == (f"{worded} (after Holm over 3 tests, p 0.040; its simultaneous interval "
                     "holds no change)")
    # the words alone decide nothing: an identity that is not significant leaves it as it is
    assert multiplicity.adjusted_verdict(worded, 0.9, 1.1, 1.0, 0.04, 3,
                                         identity="interaction") == worded
