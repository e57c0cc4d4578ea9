"""Committed notebooks are clean and thin (nbstripout's keep_output rule, checked here).

- no outputs except in cells nbval checks (``# NBVAL_CHECK_OUTPUT``), no execution counts, no
  volatile metadata;
- the first code cell is tagged ``parameters``, every parameter typed and commented; the
  second holds the imports and ``report = nb.setup(NAME, output_dir)``, which checks every
  parameter (however the notebook runs: perfkit report, papermill, JupyterLab) before any
  other cell uses one; every later cell is short and calls perfkit.
"""

import ast
import copy
from pathlib import Path

import nbformat
import pytest

from perfkit.report import clean

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
EXPECTED = {"latency", "scaling", "tuning-effects", "overview", "history", "seeds"}
#: the longest a notebook cell may be (logic longer than this belongs in perfkit)
MAX_CELL_LINES = 12


def code_cells(nb):
    return [c for c in nb.cells if c.cell_type == "code"]


def test_the_four_report_notebooks_exist():
    assert {p.stem for p in NOTEBOOKS} == EXPECTED


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_committed_without_volatile_outputs(path):
    nb = nbformat.read(str(path), as_version=4)
    assert clean.problems(nb) == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_checked_cells_hold_their_expected_output(path):
    nb = nbformat.read(str(path), as_version=4)
    checked = [c for c in code_cells(nb) if clean.is_checked(c)]
    assert checked, "at least one key result is output-checked by nbval"
    for cell in checked:
        assert cell.outputs, f"checked cell without committed output: {cell.source[:60]!r}"
        assert cell.execution_count is not None  # nbval skips a reference cell without one
        text = "".join(o.get("text", "") for o in cell.outputs)
        assert "Traceback" not in text


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_parameters_first_then_imports_then_thin_cells(path):
    nb = nbformat.read(str(path), as_version=4)
    cells = code_cells(nb)
    assert "parameters" in cells[0].metadata.get("tags", [])
    for node in ast.parse(cells[0].source).body:
        assert isinstance(node, ast.AnnAssign), "parameters are typed: name: type = value"
    for line in cells[0].source.splitlines():
        if line.strip() and not line.startswith("#"):
            assert "  # " in line, f"parameter without a comment: {line}"
    *imports, check = ast.parse(cells[1].source).body
    assert imports and all(isinstance(n, ast.ImportFrom) and n.module.startswith("perfkit")
                           for n in imports)
    assert ast.unparse(check) == f"report = setup('{path.stem}', output_dir)", \
        "the first code cell after the parameters checks them (perfkit.report.pages.setup)"
    names = {a.asname or a.name for n in imports for a in n.names} | {"report"}
    for cell in cells[2:]:
        lines = [ln for ln in cell.source.splitlines() if ln.strip()]
        assert len(lines) <= MAX_CELL_LINES, f"cell too long ({len(lines)} lines)"
        used = {n.value.id for n in ast.walk(ast.parse(cell.source))
                if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)}
        assert used & names, f"cell does not call perfkit: {cell.source[:60]!r}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_wall_clock_or_unseeded_randomness(path):
    nb = nbformat.read(str(path), as_version=4)
    source = "\n".join(c.source for c in code_cells(nb))
    for word in ("datetime", "time.time", "random.", "np.random", "now("):
        assert word not in source


def test_the_check_finds_what_a_notebook_must_not_carry():
    nb = nbformat.read(str(NOTEBOOKS[0]), as_version=4)
    dirty = copy.deepcopy(nb)
    cell = code_cells(dirty)[2]
    cell.execution_count = 7
    cell.outputs = [nbformat.v4.new_output("execute_result", data={"text/plain": "1"},
                                           execution_count=7)]
    cell.metadata["execution"] = {"iopub.execute_input": "2026-01-01T00:00:00Z"}
    dirty.metadata["papermill"] = {"duration": 1.0}
    dirty.metadata["language_info"] = {"name": "python", "version": "3.11.7"}
    found = "\n".join(clean.problems(dirty))
    for expected in ("execution count 7", "output(s) in a cell nbval does not check",
                     "an output carries an execution count", "volatile metadata 'execution'",
                     "volatile metadata 'papermill'", "volatile language_info"):
        assert expected in found
    assert clean.problems(clean.clean(dirty)) == []


def test_clean_keeps_the_outputs_of_checked_cells():
    nb = nbformat.v4.new_notebook()
    checked = nbformat.v4.new_code_cell("# NBVAL_CHECK_OUTPUT\nprint(1)")
    other = nbformat.v4.new_code_cell("print(2)")
    for cell, text in ((checked, "1\n"), (other, "2\n")):
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)]
        cell.execution_count = 3
    nb.cells = [checked, other]
    clean.clean(nb)
    assert checked.outputs[0]["text"] == "1\n" and other.outputs == []
    assert checked.execution_count == 3 and other.execution_count is None
    checked.execution_count = None
    assert any("without an execution count" in p for p in clean.problems(nb))


#: notebooks whose cells hold no decision (issue 9: the analysis layer decides what to show)
DECISION_FREE = ("latency", "overview", "scaling")


@pytest.mark.parametrize("name", DECISION_FREE)
def test_cells_are_calls_and_displays_without_decisions(name):
    nb = nbformat.read(str(ROOT / "notebooks" / f"{name}.ipynb"), as_version=4)
    for cell in code_cells(nb)[2:]:
        decisions = [ast.get_source_segment(cell.source, n) for n in ast.walk(
            ast.parse(cell.source)) if isinstance(n, ast.If | ast.IfExp | ast.BoolOp)]
        assert decisions == [], f"{name}: a cell decides what to show: {decisions[0]!r}"
