"""perfkit.analysis.seeds._power: a runs-needed note on a claim the repeat decided says what
the count is for, or is left out where the repeat already answered it."""

from __future__ import annotations


def test_a_run_count_the_repeat_already_answered_is_left_out():
    from types import SimpleNamespace

    from perfkit.analysis.seeds import Needed, for_decided

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
