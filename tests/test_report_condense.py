"""perfkit.report.condense: a text said before is referred to, and a reference is never
referred to in turn."""

from __future__ import annotations

from perfkit.report.condense import Said

HOST = ("the host's CPU averaged >= 90% in {n} runs (client and server together, "
        "cpu.host_cpu_mean_percent as the testbed sampled it): every number is the box's, "
        "the load generator's share included, not the server's alone")


def test_a_span_said_before_is_a_reference():
    said = Said()
    said.add("seeds-backlog: " + HOST.format(n="30 of 30"), "threat 1")
    text = "seeds-keepalive: " + HOST.format(n="40 of 40")
    shown = said.condense(text)
    assert shown.endswith(" (the rest as in threat 1)") and len(shown) < len(text)
    assert "[..." not in shown  # issue 29: no text spliced as "[... as in caveat 1 ...]"
    assert shown.startswith("seeds-keepalive: the host's CPU")  # its opening words kept


def test_a_reference_that_quotes_the_text_is_not_nested():
    # before: the reference quoted the earlier text's opening words, the next pass matched
    # them, and the seeds page showed '[... as in the threat “..., [... as in the threat ...'
    # eight deep
    said = Said()
    first = "seeds-backlog, seeds-worker-connections: " + HOST.format(n="30 of 30")
    said.add(first, f"the threat “{first[:110]} ...”")
    shown = said.condense("seeds-keepalive: " + HOST.format(n="40 of 40"))
    assert shown.count("as in the threat") == 1, shown
