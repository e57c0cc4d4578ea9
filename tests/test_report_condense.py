"""perfkit.report.condense: a caveat said before is referred to as a whole, by its identity (a
warning's code and fields, a text's words), and nothing is spliced into another caveat."""

from __future__ import annotations

from perfkit.report.condense import Said
from perfkit.warning import Code, Warn

HOST = ("the host's CPU averaged >= 90% in {n} runs (client and server together, "
        "cpu.host_cpu_mean_percent as the testbed sampled it): every number is the box's, "
        "the load generator's share included, not the server's alone")


def test_a_caveat_said_before_is_referred_to_as_a_whole():
    said = Said()
    first = "seeds-backlog: " + HOST.format(n="30 of 30")
    said.add(first, "threat 1")
    assert said.condense(first) == "as threat 1"


def test_a_caveat_alike_but_not_the_same_is_said_in_full_never_spliced():
    # before: difflib replaced the spans an earlier text held by '[... as in threat 1 ...]'
    said = Said()
    said.add("seeds-backlog: " + HOST.format(n="30 of 30"), "threat 1")
    text = "seeds-keepalive: " + HOST.format(n="40 of 40")
    assert said.condense(text) == text


def test_a_warning_is_the_same_caveat_by_its_code_and_fields():
    said = Said()
    four = Warn(Code.HISTOGRAM_PARTIAL, held=974, requests=10994)
    said.add(four, "caveat 2")
    assert said.condense(Warn(Code.HISTOGRAM_PARTIAL, requests=10994, held=974)) == \
        "as caveat 2"
    other = Warn(Code.HISTOGRAM_PARTIAL, held=975, requests=10994)
    assert said.condense(other) == str(other)  # other fields: another caveat, in full
    assert said.condense(four.text) == "as caveat 2"  # its words given as text: the same
