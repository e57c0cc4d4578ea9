"""The A/A page (perfkit.report.sections.aa): its rates read the same on the page and on the
index, with the rule in the verdict's own words."""

from __future__ import annotations

import re

from perfkit.report.sections import aa as aa_section


def test_aa_rates_read_the_same_on_the_page_and_the_index(demo_aa_calibration):
    page = aa_section.present_rates(demo_aa_calibration, 0.05)
    names = [c.name for c in page.columns]
    shown = {r[names.index("metric")]: r[names.index("rate")] for r in page.rows}
    found = aa_section.answers(demo_aa_calibration)
    text = "; ".join(a.answer for a in found)
    for rate in demo_aa_calibration.result.rates:
        assert shown[rate.metric] == f"{rate.significant / rate.comparisons:.3g}"
        assert f"{rate.metric} {shown[rate.metric]} ({rate.significant}/" in text
    assert shown["latency_p50_ms"] == "0.055"  # 11/200: the index said 0.06
    for a in found:  # the rule in the verdict's own words, and that it is not a test
        # against the size the test has (the exact 5 vs 5 test's 0.0317, not alpha 0.05)
        assert re.fullmatch(r"(holds its size \(rate <=|exceeds its size \(rate >) 2 x "
                            r"(0\.0317|0\.05)\)", a.verdict), a.verdict
        assert any("descriptive" in w and "not a test" in w and "0.0317" in w
                   for w in a.warnings)
