"""The words of every warning are given once (perfkit/wording/): every code has a wording,
and a template names only fields."""

from __future__ import annotations

import string

from perfkit import wording
from perfkit.warning import Code, Warn


def test_every_code_has_a_wording_and_every_wording_a_code():
    assert set(wording.WORDING) == set(Code), set(Code) ^ set(wording.WORDING)


def test_each_code_is_worded_in_one_family_only():
    from perfkit.wording import _analysis, _run, _statistics

    families = (_run.RUN, _statistics.STATISTICS, _analysis.ANALYSIS)
    assert sum(map(len, families)) == len(wording.WORDING)


def test_codes_are_identities_not_sentences():
    for code in Code:
        assert code.value == code.value.strip().lower() and " " not in code.value, code
        assert code.name.lower().replace("_", "-") == code.value, code


def test_templates_are_over_fields():
    for code, how in wording.WORDING.items():
        if isinstance(how, str):
            names = [f for _, f, _, _ in string.Formatter().parse(how) if f is not None]
            assert all(n.isidentifier() for n in names), (code, names)
        else:
            assert callable(how), code


def test_a_template_and_a_function_give_the_words_of_the_sentence():
    assert str(Warn(Code.ERRORS_HIGH, ratio=0.0712)) == (
        "7.1% of requests failed (errors or non-2xx/3xx): throughput and latency describe a "
        "failing server")
    assert str(Warn(Code.PASTED_BLANK_LINES, lines=1)) == (
        "pasted: 1 blank line skipped where the tool prints none")
    assert str(Warn(Code.PASTED_BLANK_LINES, lines=3)).startswith("pasted: 3 blank lines ")
    assert str(Warn(Code.RECORDED, text="as an earlier perfkit wrote it")) == (
        "as an earlier perfkit wrote it")
