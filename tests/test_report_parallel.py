"""``perfkit report`` executes its notebooks at once, one kernel per core (issue 24).

Each test runs small real notebooks in real kernels. None measures time: concurrency is shown
by notebooks that can only finish if another one runs at the same moment, and the palette's
order by a page that asks for its colour while the page before it still runs.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from perfkit.report.build import build_report
from perfkit.report.params import load_params

#: a notebook waits this long for another one before it fails (only when they do not overlap)
PATIENCE_S = 120
#: each test builds a report whose notebooks run on two kernels at once
pytestmark = pytest.mark.slow

WAIT_FOR = """
import pathlib, time
marks = pathlib.Path(marks)
(marks / "{me}").touch()
deadline = time.monotonic() + {patience}
while not (marks / "{other}").exists():
    assert time.monotonic() < deadline, "{other} never ran while {me} ran"
    time.sleep(0.05)
"""


def _notebook(folder: Path, name: str, body: str) -> None:
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    params = new_code_cell('output_dir: str = ""  # set by perfkit report\n'
                           'marks: str = ""  # the folder of the markers')
    params.metadata["tags"] = ["parameters"]
    nb.cells = [new_markdown_cell(f"# {name}"), params, new_code_cell(body)]
    nbformat.write(nb, str(folder / f"{name}.ipynb"))


def _params(tmp_path: Path, names: list[str], marks: Path) -> Path:
    path = tmp_path / "p.yaml"
    lines = [f"data: {tmp_path}", "notebooks:"]
    lines += [f"  {n}: {{marks: {json.dumps(str(marks))}}}" for n in names]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def setup(tmp_path, monkeypatch):
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    marks = tmp_path / "marks"
    marks.mkdir()
    monkeypatch.setenv("PERFKIT_NOTEBOOKS", str(notebooks))
    return tmp_path, notebooks, marks


def test_notebooks_execute_at_once_and_the_index_waits_for_them(setup):
    tmp_path, notebooks, marks = setup
    _notebook(notebooks, "first", WAIT_FOR.format(me="first", other="second",
                                                  patience=PATIENCE_S))
    _notebook(notebooks, "second", WAIT_FOR.format(me="second", other="first",
                                                   patience=PATIENCE_S))
    _notebook(notebooks, "broken", "1 / 0")
    params = load_params(_params(tmp_path, ["first", "second", "broken"], marks))
    result = build_report(params, tmp_path / "out", io.StringIO(), workers=2)
    # each waited for the other: they ran at the same time; the failing one stopped nothing
    assert [e.name for e in result.executions] == ["first", "second", "broken"]
    assert [e.error is None for e in result.executions] == [True, True, False]
    index = (tmp_path / "out" / "index.html").read_text()
    pages = [index.index(f'href="{n}.html"') for n in ("first", "second", "broken")]
    assert pages == sorted(pages)  # the parameter file's order, not the order they ended in
    assert "This notebook failed: broken" in index
    assert not (tmp_path / "out" / ".perfkit-report").exists()


PAGE = """
import pathlib, time
from perfkit.report import nb
report = nb.setup("{me}", output_dir)
marks = pathlib.Path(marks)
{before}
report.palette(["{config}"])
(marks / "{me}-coloured").touch()
"""


def test_colours_are_given_in_the_pages_order_whatever_order_they_run_in(setup):
    """``late`` asks for its colour first in time, while ``early`` (before it in the
    parameter file) still runs: it waits, so ``x`` gets the first colour as it would one
    page after another."""
    tmp_path, notebooks, marks = setup
    wait_for_late = (WAIT_FOR.format(me="early", other="late", patience=PATIENCE_S)
                     + "time.sleep(1.0)  # late is now inside report.palette")
    _notebook(notebooks, "early", PAGE.format(me="early", config="x", before=wait_for_late))
    _notebook(notebooks, "late", PAGE.format(me="late", config="y",
                                             before='(marks / "late").touch()'))
    params = load_params(_params(tmp_path, ["early", "late"], marks))
    result = build_report(params, tmp_path / "out", io.StringIO(), workers=2)
    assert [e.error for e in result.executions] == [None, None]
    palette = json.loads((tmp_path / "out" / "palette.json").read_text())
    assert palette["configurations"] == ["x", "y"]


def test_progress_names_each_page_as_it_ends(setup, monkeypatch):
    monkeypatch.delenv("PERFKIT_NO_PROGRESS", raising=False)  # bars on, whatever ran before
    tmp_path, notebooks, marks = setup
    _notebook(notebooks, "one", "x = 1")
    _notebook(notebooks, "two", "1 / 0")

    class Tty(io.StringIO):
        def isatty(self):
            return True

    stream = Tty()
    params = load_params(_params(tmp_path, ["one", "two"], marks))
    build_report(params, tmp_path / "out", stream, workers=2)
    text = stream.getvalue()
    assert "\r" in text  # the bar, redrawn
    ended = re.findall(r"^report: (\d)/2 pages, (\w+) (ok|failed) \(\d+\.\d s\); ",
                       text.replace("\r", "\n"), re.M)
    assert [n for n, _, _ in ended] == ["1", "2"]
    assert sorted((name, status) for _, name, status in ended) == [("one", "ok"),
                                                                   ("two", "failed")]


def test_without_a_terminal_each_page_is_one_line_with_the_count_and_the_time_left(
        setup, monkeypatch):
    # a CI log or a file: no bar, one line per page as it ends, the last one says all is done
    monkeypatch.delenv("PERFKIT_NO_PROGRESS", raising=False)
    tmp_path, notebooks, marks = setup
    for name in ("one", "two", "three"):
        _notebook(notebooks, name, "x = 1")
    params = load_params(_params(tmp_path, ["one", "two", "three"], marks))
    stream = io.StringIO()
    build_report(params, tmp_path / "out", stream, workers=1)
    lines = stream.getvalue().splitlines()
    assert "\r" not in stream.getvalue() and len(lines) == 3
    for i, (line, name) in enumerate(zip(lines, ("one", "two", "three"), strict=True), 1):
        assert re.fullmatch(rf"report: {i}/3 pages, {name} ok \(\d+\.\d s\); "
                            + (r"about \d+ s left" if i < 3 else r"all done in \d+ s"), line)
    monkeypatch.setenv("PERFKIT_NO_PROGRESS", "1")  # turned off: nothing at all
    quiet = io.StringIO()
    build_report(params, tmp_path / "again", quiet, workers=1)
    assert quiet.getvalue() == ""


def test_a_page_waiting_for_the_pages_before_it_leaves_its_core_to_the_next(setup):
    """Two cores: ``first`` can only end once ``third`` has run, and ``second`` waits for
    ``first`` to give a colour. Were the waiting kernel counted as computing, ``third`` would
    never start and ``first`` would fail."""
    tmp_path, notebooks, marks = setup
    _notebook(notebooks, "first", WAIT_FOR.format(me="first", other="third",
                                                  patience=PATIENCE_S))
    _notebook(notebooks, "second", PAGE.format(me="second", config="x", before=""))
    _notebook(notebooks, "third", '(__import__("pathlib").Path(marks) / "third").touch()')
    params = load_params(_params(tmp_path, ["first", "second", "third"], marks))
    result = build_report(params, tmp_path / "out", io.StringIO(), workers=2)
    assert [e.error for e in result.executions] == [None, None, None]
