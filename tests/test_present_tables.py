"""Paper-ready tables: the four renderers, and the LaTeX of real results compiling."""

from __future__ import annotations

import math
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from perfkit.analysis import compare_runs, load_experiment, metric
from perfkit.analysis.effects import factorial_effects
from perfkit.analysis.scaling import scaling_fits, slo_brackets
from perfkit.present import compare as present_compare
from perfkit.present import effects as present_effects
from perfkit.present import scaling as present_scaling
from perfkit.present.tables import Column, Table, latex_escape, render

#: the demo factorial as first recorded, with the upstream's queue of 100: its 1 s stalls
#: (tests/fixtures/stalls/README.md)
STALLS = Path(__file__).resolve().parent / "fixtures" / "stalls"
DATA = Path(__file__).resolve().parents[1] / "data"
TABLE = Table((Column("config"), Column("p99", "ms", right=True)),
              (("a_b & <c>", "1.5 [1.2, 1.9]"), ("50%|x", "10")), "p99 by config", ("# note ~",))


def test_text_aligns_numbers_right_and_lists_notes():
    lines = render(TABLE, "text").splitlines()
    assert lines[0] == "p99 by config" and lines[2].startswith("config")
    assert lines[2].endswith("p99 [ms]")
    assert lines[3].endswith("1.5 [1.2, 1.9]") and lines[4].endswith("            10")
    assert lines[-1] == "[1] # note ~"


def test_markdown_escapes_pipes_and_aligns():
    text = render(TABLE, "markdown")
    assert "| config | p99 [ms] |" in text and "|:---|---:|" in text
    assert "| 50%\\|x | 10 |" in text


def test_latex_is_booktabs_with_units_in_headers_and_escapes():
    text = render(TABLE, "latex")
    assert "\\toprule" in text and "\\midrule" in text and "\\bottomrule" in text
    assert "\\begin{tabular}{lr}" in text and "config & p99 [ms] \\\\" in text
    assert "a\\_b \\& <c> & 1.5 [1.2, 1.9] \\\\" in text and "50\\%|x" in text
    assert "[1] \\# note \\textasciitilde{}" in text
    assert latex_escape("± × ≥") == "$\\pm$ $\\times$ $\\geq$"


def test_latex_writes_text_pdflatex_cannot_typeset_as_code_points():
    # the seeds quote Japanese ('約3倍のRPS・ユーザ数'), which pdflatex's default fonts cannot set
    assert latex_escape("約3倍のRPS") == "[U+7D04]3[U+500D U+306E]RPS"
    assert latex_escape("café – naïve, 5 ± 1") == "café – naïve, 5 $\\pm$ 1"
    t = Table((Column("quote"),), (("'約3倍' (about 3x)",),), title="x_1: 倍")
    text = render(t, "latex")
    assert "[U+7D04]3[U+500D]" in text and "\\caption{x\\_1: [U+500D]}" in text
    assert all(ord(ch) < 0x180 or ch in "–" for ch in text)


def test_html_escapes_every_cell_and_scrolls():
    text = render(TABLE, "html")
    assert "a_b &amp; &lt;c&gt;" in text and 'class="perfkit-scroll"' in text
    with pytest.raises(ValueError, match="format must be one of"):
        render(TABLE, "rtf")
    with pytest.raises(ValueError, match="2 columns"):
        Table((Column("a"), Column("b")), (("1",),))


def _results():
    fact = load_experiment(STALLS / "factorial-upstream-backlog100").rows()
    aa = load_experiment(DATA / "demo-aa").rows()
    conns = load_experiment(DATA / "demo-wrk-connections").rows()
    sweep = load_experiment(DATA / "demo-wrk2-sweep").rows()
    p99 = metric("latency_p99_ms")
    return [
        present_compare.comparison(compare_runs(aa.where({"arm": "A"}), aa.where({"arm": "B"}), p99,
                                        exclude=["arm"]), aa.runs),
        *present_effects.factorial(factorial_effects(fact, ["keepalive", "cache"], p99)),
        *present_scaling.scaling(scaling_fits(conns, metric("throughput_rps"), by=["profile"],
                                      n_resamples=50)),
        *present_scaling.slo(slo_brackets(sweep, 5.0, by=["profile"], n_resamples=200)),
    ]


@pytest.mark.skipif(shutil.which("pdflatex") is None,
                    reason="pdflatex not installed (Debian: texlive-latex-recommended); the "
                           "structural test below still runs")
def test_latex_of_real_results_compiles(tmp_path):
    body = "\n".join(render(t, "latex") for t in _results())
    doc = ("\\documentclass{article}\n\\usepackage{booktabs}\n\\usepackage[T1]{fontenc}\n"
           "\\usepackage[utf8]{inputenc}\n\\usepackage[margin=1cm,landscape]{geometry}\n"
           "\\begin{document}\n" + body + "\\end{document}\n")
    (tmp_path / "t.tex").write_text(doc, encoding="utf-8")
    run = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "t.tex"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout[-2000:]
    assert (tmp_path / "t.pdf").stat().st_size > 1000


def test_latex_of_real_results_is_balanced():
    for table in _results():
        text = render(table, "latex")
        assert text.count("\\begin{") == text.count("\\end{") == 2
        depth = 0
        for ch in text.replace("\\{", "").replace("\\}", ""):
            depth += {"{": 1, "}": -1}.get(ch, 0)
            assert depth >= 0
        assert depth == 0
        rows = [ln for ln in text.splitlines() if ln.endswith("\\\\")]
        cols = len(table.columns)
        assert all(ln.replace("\\&", "").count("&") == cols - 1 for ln in rows)


def test_csv_rounds_float_noise_writes_no_infinity_and_keeps_integers():
    import pandas as pd

    from perfkit.present.tables import csv_text

    frame = pd.DataFrame({"ratio": [1.0950000000000002, 0.80632183908046],
                          "ci_low_ms": [-math.inf, 2.5], "ci_high_ms": [math.inf, math.nan],
                          "rate_rps": [5000.0, 15000.0000000000002], "n": [5, 6],
                          "mixed": [0.1 + 0.2, "text"], "flag": [True, False]})
    lines = csv_text(frame).splitlines()
    assert lines[1] == "1.095,,,5000,5,0.3,True"
    assert lines[2] == "0.80632183908,2.5,,15000,6,text,False"
    assert "inf" not in csv_text(frame)


def test_a_title_of_several_lines_keeps_its_lines_in_html_and_markdown():
    t = Table((Column("a"),), (("1",),), "p99: medians\nbase: A (15 runs; 5 per row)\nnew:  B")
    html_title = render(t, "html").split("<div")[0]
    assert html_title == ('<p class="perfkit-caption"><b>p99: medians</b><br>base: A (15 runs; '
                          "5 per row)<br>new: B</p>")
    assert render(t, "markdown").startswith("**p99: medians**  \nbase: A (15 runs; 5 per row)  "
                                            "\nnew: B\n")
    assert "\\caption{p99: medians. base: A (15 runs; 5 per row). new: B}" in render(t, "latex")


def test_number_cells_stay_on_one_line_text_cells_may_wrap():
    from perfkit.present.tables import Column, Table
    from perfkit.present.tables import render as render_table

    page = render_table(Table((Column("config"), Column("p99", "ms", True)),
                              (("a long text cell that may wrap", "3.03 [1.77, 6.77]"),)), "html")
    assert '<td style="text-align:right" class="nowrap">3.03 [1.77, 6.77]</td>' in page
    assert '<td style="text-align:left">a long text cell' in page
    template = (Path(__file__).resolve().parents[1] / "perfkit" / "report" / "templates"
                / "nbconvert" / "perfkit" / "index.html.j2").read_text()
    cells = re.search(r"table\.perfkit-table th, table\.perfkit-table td \{[^}]*\}", template)
    assert cells and "white-space: normal" in cells.group(0)
    assert re.search(r"table\.perfkit-table \.nowrap \{ white-space: nowrap; \}", template)


def test_a_long_text_column_sets_its_header_min_width_in_its_style():
    """The header of a text column whose longest cell passes 40 characters opens its style with
    the min-width that wraps that cell to 3 lines (half an em a character); a number column's
    header and a short text column's keep their alignment alone."""
    long_cell = "x" * 120
    page = render(Table((Column("counters"), Column("config"), Column("p99", "ms", True)),
                        ((long_cell, "a", "1"),)), "html")
    assert '<th style="min-width:20em;text-align:left">counters</th>' in page
    assert '<th style="text-align:left">config</th>' in page
    assert '<th style="text-align:right">p99 [ms]</th>' in page
    assert f'<td style="text-align:left">{long_cell}</td>' in page


def test_a_frame_words_its_verdict_identities_even_as_plain_text():
    """A verdict column holds identities (``stable``, ``not-testable-n1``), as plain str once
    read back from a CSV or made text on the way; a page shows their words."""
    import pandas as pd

    from perfkit.present.frame import frame

    table = pd.DataFrame({"experiment": ["stable", "a"], "verdict": ["stable", "not-testable-n1"],
                          "kind": ["on-cap", "failed"]})
    rows = frame(table).rows
    assert [r[0] for r in rows] == ["stable", "a"]  # a level, not a verdict: as it is
    assert [r[1] for r in rows] == ["no drift beyond ±10%", "not testable (n = 1)"]
    assert [r[2] for r in rows] == ["on a timeout cap", "failed"]


# -- names a reader's tools misread (real Locust runs: tests/fixtures/names/README.md) ---------
def _hostile_tables(fmt: str) -> str:
    """``perfkit compare`` of the two arms of the hostile-names experiment, endpoint by
    endpoint, in ``fmt``: every request name is a row, both arms' levels are in the title."""
    from _cli_helpers import HOSTILE_ARMS, run_cli

    code, out, _ = run_cli("compare", *HOSTILE_ARMS, "--by", "endpoint", "--metric",
                           "latency_p50_ms", "--format", fmt)
    assert code == 0
    return out


def test_markdown_keeps_its_columns_for_every_name():
    import html

    import mistune
    from _cli_helpers import hostile_names

    text = _hostile_tables("markdown")
    page = mistune.create_markdown(plugins=["table"])(text)
    head = re.findall(r"<th[ >]", page)
    rows = re.findall(r"<tr>(.*?)</tr>", page, re.S)[1:]
    assert len(head) == 9 and len(rows) == 10  # nine names and the Aggregated row
    shown = []
    for row in rows:
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
        assert len(cells) == len(head), row
        shown.append(html.unescape(cells[0]))
    assert "a\\|b pipe" in shown and "約3倍 page" in shown
    assert "esc \\x1b[31mred\\x1b[0m bel \\x07 page" in shown and "\\rCR=1+1" in shown
    assert len(shown) == len(set(shown)) == len(hostile_names()) - 1


@pytest.mark.skipif(shutil.which("pdflatex") is None,
                    reason="pdflatex not installed (Debian: texlive-latex-recommended)")
def test_latex_compiles_for_every_name(tmp_path):
    body = _hostile_tables("latex")
    assert "\n{}[U+7D04]3[U+500D] page &" in body  # a row that begins with a bracket
    doc = ("\\documentclass{article}\n\\usepackage{booktabs}\n\\usepackage[T1]{fontenc}\n"
           "\\usepackage[utf8]{inputenc}\n\\usepackage[margin=1cm,landscape]{geometry}\n"
           "\\begin{document}\n" + body + "\\end{document}\n")
    (tmp_path / "t.tex").write_text(doc, encoding="utf-8")
    run = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "t.tex"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout[-2000:]
    assert (tmp_path / "t.pdf").stat().st_size > 1000


def test_latex_braces_a_bracket_that_begins_a_row():
    t = Table((Column("name"), Column("n", right=True)),
              (("[draft] run", "1"), (" [x]", "2"), ("a [b]", "3")))
    rows = [ln for ln in render(t, "latex").splitlines() if ln.endswith("\\\\")]
    assert rows[1:] == ["{}[draft] run & 1 \\\\", "{} [x] & 2 \\\\", "a [b] & 3 \\\\"]
