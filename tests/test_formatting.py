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
