"""perfkit.formatting: one precision for every estimate (three significant digits), and one
form for an interval and for a change."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("value, printed", [
    (239.5, "240"), (4.387, "4.39"), (32817.3, "32800"), (10.39, "10.4"), (0.03454, "0.0345"),
    (14911.2, "14900"), (0.0006195, "0.00062"), (25.76, "25.8"), (57.68, "57.7"),
    (3.0312, "3.03"), (45000, "45000"), (float("inf"), "inf"), (float("nan"), "-")])
def test_estimates_print_to_three_significant_digits(value, printed):
    from perfkit.formatting import fmt_sig

    assert fmt_sig(value) == printed


def test_intervals_and_changes_share_one_form():
    from perfkit.formatting import fmt_ci, pct_change

    assert fmt_ci(239.5, 4.387, 32817.3) == "240 [4.39, 32800]"
    assert fmt_ci(3.0312, 1.7654, 6.7721, "ms") == "3.03 ms [1.77, 6.77]"
    # a change beyond +-100% to 3 significant digits, below it to one decimal
    assert pct_change(37.872) == "+3690%" and pct_change(29.532) == "+2850%"
    assert pct_change(1.031) == "+3.1%" and pct_change(0.5) == "-50.0%"
    # one percentage-change form: signed, with % on every number
    assert fmt_ci(49.37, 24.1, 80.2, "%", digits=2) == "+49% [+24%, +80%]"
    assert fmt_ci(-18.2, -24.3, -11.1, "%", digits=2) == "-18% [-24%, -11%]"


def test_progress_tells_the_mean_time_of_the_steps_so_far_times_those_left(monkeypatch):
    import io

    from perfkit.formatting import Progress, duration_text

    monkeypatch.delenv("PERFKIT_NO_PROGRESS", raising=False)
    assert [duration_text(s) for s in (0.4, 12, 65, 3725)] == ["0 s", "12 s", "1 min 05 s",
                                                             "1 h 02 min"]
    now = [100.0]
    stream = io.StringIO()
    progress = Progress(stream, "sweep x", 10, done=4)  # resumed: 4 runs were done before
    progress._clock, progress.started = (lambda: now[0]), now[0]
    now[0] += 30.0
    progress.step("0005-b02-c16", "complete", 29.5)
    now[0] += 30.0
    progress.step("0006-b02-c64", "failed", 30.0)
    assert stream.getvalue().splitlines() == [
        "sweep x: 5/10 runs, 0005-b02-c16 complete (29.5 s); about 2 min 30 s left",
        "sweep x: 6/10 runs, 0006-b02-c64 failed (30.0 s); about 2 min 00 s left"]


def test_an_interval_of_a_change_that_reaches_minus_100_percent_is_unbounded_below():
    # issue 29: the seeds page printed "+127% [-100%, +370%]": an interval whose low end is
    # a value of 0 or less bounds nothing below, it measured no fall to zero
    from perfkit.formatting import change_ci, fmt_ci

    assert fmt_ci(127, -100, 370, "%") == "+127% [unbounded below, +370%]"
    assert fmt_ci(127, -140, 370, "%") == "+127% [unbounded below, +370%]"
    assert fmt_ci(-50, -99.5, -10, "%") == "-50% [-99.5%, -10%]"
    assert change_ci(1.5, 0.0, 2.0) == "+50.0% [unbounded below, +100%]"
    assert change_ci(1.5, 0.5, 2.0) == "+50.0% [-50.0%, +100%]"
