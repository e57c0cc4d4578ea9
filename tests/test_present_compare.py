"""perfkit.present.compare: a comparison table's notes name only what the table shows (and
the SLO tables' notes likewise), on the demo sweep."""

from __future__ import annotations

import re

from perfkit.present import compare as present_compare
from perfkit.present import scaling as present_scaling
from perfkit.present.tables import render
from perfkit.warning import texts


def test_no_note_names_a_column_the_table_does_not_show(demo_sweep, demo_slo):
    from perfkit.analysis import metric
    from perfkit.analysis.compare import compare_runs

    notes = texts(w for b in demo_slo.brackets for w in b.warnings)
    notes += texts(n for t in present_scaling.slo(demo_slo) for n in t.notes)
    assert notes and not any("runs_needed" in n for n in notes)
    rows = demo_sweep.rows()
    table = compare_runs(rows.where({"profile": "default", "connections": 64}),
                         rows.where({"profile": "tuned", "connections": 64}),
                         metric("latency_p99_ms"), exclude=["profile"])
    (short,) = [r for r in table.rows if r.n_short_new]  # 5000 req/s: one run at 0.964 x
    assert short.sensitivity is not None and short.sensitivity.n_new == 2
    shown = present_compare.comparison(table)
    text = render(shown, "text")
    assert "_without_short" not in text
    (row,) = [r for r in shown.rows if r[0] == "5000"]
    marks = [int(m) for m in re.findall(r"\[(\d+)\]", row[-1])]
    assert any("5000 without its short runs (3 vs 2 runs)" in str(shown.notes[m - 1])
               for m in marks)
