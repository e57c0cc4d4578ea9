"""perfkit.analysis.compare._notes: a row's notes are coded warnings, worded at presentation."""

from __future__ import annotations

from perfkit.analysis.compare._notes import holm_step_note
from perfkit.warning import Code


def test_a_significant_row_whose_bonferroni_interval_holds_no_change_says_why_by_its_code():
    # issue 34 (verdicts2) wrote this note as a sentence; issue 32: a warning is a value
    note = holm_step_note(0.0312, 6, 1 - 0.05 / 6)
    assert note.code is Code.HOLM_STEP_INTERVAL_HOLDS
    assert (note["family"], note["p_adjusted"]) == (6, 0.0312)
    assert str(note) == (
        "significant after Holm over 6 tests (p 0.031: a later step of the step-down, at a "
        "larger level), while its 99.2% interval (Bonferroni over 6, so that the family's "
        "intervals hold together) holds no change: the direction is shown, the size only "
        "bounded by that interval")
