"""HTML pages stand alone and work offline; data text is escaped; a failing notebook says which
cell failed and why (papermill execution of small notebooks built here)."""

import base64
import io
import re
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from perfkit.report import nb as nbhelp
from perfkit.report.execute import execute_notebook
from perfkit.report.export import notebook_to_html, remote_references
from perfkit.report.index import NotebookEntry, render_index

#: a 1x1 PNG
PIXEL = base64.b64encode(bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cfc00000030101007d3a9f2d0000000049454e44ae426082"
)).decode()


def executed_like_notebook() -> nbformat.NotebookNode:
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    params = new_code_cell('experiment: str = "x"  # folder')
    params.metadata["tags"] = ["parameters"]
    code = new_code_cell("secret_code_marker = plots.figure()")
    code.outputs = [new_output("display_data", data={"image/png": PIXEL,
                                                     "text/plain": "<figure>"})]
    nb.cells = [new_markdown_cell("# A title\n\n[a link](https://example.org/paper)"), params,
                code]
    return nb


def test_remote_references_finds_scripts_styles_and_imports_but_not_links():
    page = """
      <script src="https://cdn.example/require.js"></script>
      <link rel="stylesheet" href="//cdn.example/a.css">
      <style>@import url("https://fonts.example/x.css");
             .a { background: url(http://x/y.png) }</style>
      <script type="module">await import("https://cdn.example/mermaid.mjs")</script>
      <a href="https://example.org/paper">a paper</a>
      <img src="data:image/png;base64,AAAA">
    """
    assert sorted(remote_references(page)) == sorted([
        "https://cdn.example/require.js", "//cdn.example/a.css", "https://fonts.example/x.css",
        "http://x/y.png", "https://cdn.example/mermaid.mjs"])


def test_the_default_lab_template_would_load_from_the_network():
    from nbconvert import HTMLExporter

    body, _ = HTMLExporter(template_name="lab").from_notebook_node(executed_like_notebook())
    assert remote_references(body)  # what the perfkit template exists to avoid


def test_report_page_has_no_code_no_remote_loads_and_images_inline():
    page = notebook_to_html(executed_like_notebook(), "A title")
    assert remote_references(page) == []
    assert "secret_code_marker" not in page and "experiment: str" not in page
    assert f"data:image/png;base64,{PIXEL}" in page
    assert re.search(r"<title>A title</title>", page)
    assert 'href="https://example.org/paper"' in page  # plain links stay


def test_pages_of_one_thread_share_an_exporter_whose_templates_compile_once(monkeypatch):
    import copy

    import jinja2

    from perfkit.report import export

    nb = executed_like_notebook()  # its cells' ids are random: one notebook, copied
    first = notebook_to_html(copy.deepcopy(nb), "A title")
    compiled = []
    compile_template = jinja2.Environment.compile
    monkeypatch.setattr(jinja2.Environment, "compile", lambda self, *a, **kw: (
        compiled.append(a), compile_template(self, *a, **kw))[1])
    other = copy.deepcopy(nb)
    other.cells[0].source = "# Another title"
    second = notebook_to_html(other, "Another title")
    again = notebook_to_html(copy.deepcopy(nb), "A title")
    assert compiled == []  # the first page compiled them
    assert "<title>Another title</title>" in second and again == first  # nothing carried over
    fresh = copy.deepcopy(nb)
    fresh.metadata["title"] = "A title"
    assert export._new_exporter().from_notebook_node(fresh)[0] == first


def capture(monkeypatch) -> list:
    shown = []
    monkeypatch.setattr(nbhelp, "_display",
                        lambda data, metadata=None: shown.append((data, metadata or {})))
    return shown


def test_tables_notes_answers_and_methods_escape_data_text(monkeypatch, tmp_path):
    import pandas as pd

    shown = capture(monkeypatch)
    report = nbhelp.Report("t", tmp_path)
    evil = "<script>alert(1)</script>"
    report.table(pd.DataFrame({"endpoint": [evil], "p99_ms": [1.23456]}), "tab", caption=evil)
    report.note([evil, "second"])
    report.methods({evil: {"setup": [evil], "analyses": [], "closing": []}})
    report.answers([nbhelp.Answer(evil, evil, evil, evil, (evil,))])
    html = "".join(d.get("text/html", "") for d, _ in shown)
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert (tmp_path / "tables" / "t-tab.csv").read_text().splitlines()[1].startswith(evil)
    assert "p99 [ms]" in (tmp_path / "tables" / "t-tab.md").read_text()
    assert "\\textless{}" not in (tmp_path / "tables" / "t-tab.tex").read_text()
    assert shown[-1][1]["perfkit"]["answers"][0]["question"] == evil


def test_threats_to_validity_show_collapsed_under_a_heading_with_their_count(monkeypatch):
    shown = capture(monkeypatch)
    report = nbhelp.Report("t", None)
    report.threats(["a: shared host", "a: <drift>", "b: shared host"])
    report.threats(["b: one threat"], f"{nbhelp.THREATS_TITLE} of the A/A calibration")
    report.threats([])
    assert len(shown) == 2  # none: nothing shown
    (first, meta), (second, _) = shown
    # alike but for the experiment: one item naming both
    assert first["text/html"] == (
        '<details class="perfkit-warning perfkit-threats"><summary><h2>Threats to validity (2)'
        "</h2></summary><ul><li>a, b: shared host</li><li>a: &lt;drift&gt;</li></ul></details>")
    assert first["text/plain"] == "Threats to validity (2)\n- a, b: shared host\n- a: <drift>"
    assert meta["perfkit"]["threats"]["records"][0]["experiments"] == ["a", "b"]
    assert "Threats to validity of the A/A calibration (1)</h2>" in second["text/html"]
    assert second["text/plain"].splitlines()[0] == "Threats to validity of the A/A calibration (1)"


def test_a_threat_the_answers_give_or_every_page_shares_is_a_link_not_a_repeat(monkeypatch):
    from perfkit.report import threats

    shown = capture(monkeypatch)
    report = nbhelp.Report("t", None)
    report.answers([nbhelp.Answer("q", "x1.1 [1.0, 1.2], +10%", "better", "5 runs",
                                  ("a: drifted during the experiment",))])
    report.threats(["a: drifted during the experiment", "a: same host", "a: short runs"])
    page = shown[-1][0]["text/html"]
    assert '<a href="#caveat-1">caveat 1</a> of the answers' in page
    assert page.count("drifted during the experiment") == 1  # its opening words, linked
    records = shown[-1][1]["perfkit"]["threats"]
    again = threats.records_html(records["title"], records["records"], records["said"],
                                 {"same host": 1})
    assert 'href="index.html#threats-1"' in again and "<li>a: short runs</li>" in again


def test_figures_are_saved_as_svg_and_png_and_checked(monkeypatch, tmp_path):
    from perfkit import plots

    shown = capture(monkeypatch)
    fig, ax = plots.figure()
    ax.plot([1, 2], [3, 4])
    ax.set_xlabel("connections")
    nbhelp.Report("t", tmp_path).figure(fig, "f")
    assert (tmp_path / "figures" / "t-f.svg").read_text().lstrip().startswith("<?xml")
    assert (tmp_path / "figures" / "t-f.png").read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / "figures" / "t-f.pdf").read_bytes()[:4] == b"%PDF"
    meta = shown[0][1]["perfkit"]
    assert meta["figure"] == "f"
    assert any("'connections' has no unit" in p for p in meta["labels_without_units"])


def test_index_escapes_everything_from_data():
    evil = '<img src=x onerror="alert(1)">'
    entry = NotebookEntry(name="latency", title=evil, html="latency.html", ipynb="latency.ipynb",
                          answers=(nbhelp.Answer(evil, evil, evil, evil, (evil,)),),
                          figures=("figures/latency-a b.png",),
                          alts={"figures/latency-a b.png": evil},
                          tables=("tables/latency-t.csv",), error=evil)
    page = render_index(evil, evil, [entry], [{"experiments": [evil], "text": evil}])
    assert "<img src=x" not in page and "&lt;img src=x onerror=&#34;alert(1)&#34;&gt;" in page
    assert 'src="figures/latency-a%20b.png"' in page
    assert remote_references(page) == []


@pytest.fixture
def broken_notebook(tmp_path) -> Path:
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    params = new_code_cell("divisor: int = 1  # what to divide by")
    params.metadata["tags"] = ["parameters"]
    nb.cells = [new_markdown_cell("# Broken"), params, new_code_cell("x = 1"),
                new_code_cell("y = 10 / divisor")]
    path = tmp_path / "broken.ipynb"
    nbformat.write(nb, str(path))
    return path


def test_a_failing_cell_is_named_with_its_exception(broken_notebook, tmp_path):
    result = execute_notebook(broken_notebook, tmp_path / "out.ipynb", {"divisor": 0},
                              timeout_s=120)
    assert result.error is not None
    assert result.error.cell == 4  # counted in the notebook as written (markdown included)
    message = str(result.error)
    assert "ZeroDivisionError: division by zero" in message
    assert "in: y = 10 / divisor" in message
    assert str(tmp_path / "out.ipynb") in message


def test_a_failing_notebook_fails_the_report_and_the_index_says_why(
        broken_notebook, tmp_path, monkeypatch):
    from perfkit.cli import main

    monkeypatch.setenv("PERFKIT_NOTEBOOKS", str(broken_notebook.parent))
    params = tmp_path / "p.yaml"
    params.write_text(f"data: {tmp_path}\nnotebooks:\n  broken: {{divisor: 0}}\n")
    out, err = io.StringIO(), io.StringIO()
    status = main(["report", "-p", str(params), "-o", str(tmp_path / "rep")], out, err)
    assert status == 2
    assert "perfkit: error: broken, cell 4: ZeroDivisionError" in err.getvalue()
    index = (tmp_path / "rep" / "index.html").read_text()
    assert "This notebook failed: broken, cell 4: ZeroDivisionError" in index
    assert (tmp_path / "rep" / "broken.ipynb").exists()
    assert sys.executable  # the kernel is the current environment's python


@pytest.mark.parametrize(("value", "text"), [
    (4987.2, "4987"), (45000.0, "45000"), (0.01234, "0.0123"), (1.2345, "1.23"),
    (1.234e-05, "1.23e-05"), (float("nan"), ""), (float("inf"), "inf"), (0.0, "0"),
])
def test_tables_show_three_significant_digits_without_needless_exponents(value, text):
    assert nbhelp.format_number(value) == text


def test_progress_bar_only_on_a_terminal_and_never_when_turned_off(monkeypatch):
    from perfkit.report.build import progress_enabled

    class Tty(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.delenv("PERFKIT_NO_PROGRESS", raising=False)
    assert progress_enabled(Tty()) and not progress_enabled(io.StringIO())
    monkeypatch.setenv("PERFKIT_NO_PROGRESS", "1")
    assert not progress_enabled(Tty())


def test_kernels_run_without_progress_bars_in_this_python(tmp_path, monkeypatch):
    monkeypatch.delenv("PERFKIT_NO_PROGRESS", raising=False)
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.cells = [new_code_cell("import os, sys\nprint(os.environ.get('PERFKIT_NO_PROGRESS'), "
                              "sys.executable)")]
    nbformat.write(nb, str(tmp_path / "env.ipynb"))
    result = execute_notebook(tmp_path / "env.ipynb", tmp_path / "out.ipynb", {})
    assert result.error is None
    ran = nbformat.read(str(tmp_path / "out.ipynb"), as_version=4)
    assert ran.cells[0].outputs[0]["text"].split() == ["1", sys.executable]
