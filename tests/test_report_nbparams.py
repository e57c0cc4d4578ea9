"""perfkit.report.nbparams: one check of a notebook's parameters for every way it runs
(perfkit report, papermill -p/-y/-f, an edit of the parameters cell in JupyterLab), in the
notebook's first code cell after the parameters. Text for a list or a mapping is read as YAML;
a wrong type is one line naming the parameter."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from perfkit.report import nbparams
from perfkit.report.params import ParamsError, load_params, notebook_parameters

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
LATENCY = REPO / "notebooks" / "latency.ipynb"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_the_notebook_reads_its_declarations_as_papermill_does(path):
    ours = {n: p.type_name for n, p in nbparams.declared(path).items()}
    theirs = {n: p.type_name.replace(" ", "") for n, p in notebook_parameters(path).items()}
    assert ours == theirs and ours


@pytest.mark.parametrize(("given", "expected"), [
    ({"select": "{}"}, {"select": {}}),  # papermill -p select '{}'
    ({"select": "{connections: 64}"}, {"select": {"connections": 64}}),
    ({"by": '["keepalive","cache"]'}, {"by": ["keepalive", "cache"]}),  # -p by '[...]'
    ({"by": "keepalive, cache"}, {"by": ["keepalive", "cache"]}),
    ({"by": "profile"}, {"by": ["profile"]}),  # -p by profile
    ({"percentile": 99, "n_resamples": 500}, {"percentile": 99.0, "n_resamples": 500}),
    ({"select": {"connections": 64}, "by": ["profile"]},
     {"select": {"connections": 64}, "by": ["profile"]}),  # -y / -f give typed values
])
def test_text_for_a_list_or_a_mapping_becomes_what_it_says(given, expected):
    namespace = dict(given)
    nbparams.check_parameters(LATENCY, namespace)
    assert namespace == expected
    assert all(type(namespace[k]) is type(v) for k, v in expected.items())


def test_a_wrong_value_is_one_line_naming_the_parameter_and_no_traceback():
    namespace = {"select": "abc", "by": 5, "confidence": 95, "experiment": "demo-aa"}
    with pytest.raises(nbparams.ParameterError) as info:
        nbparams.check_parameters(LATENCY, namespace)
    assert str(info.value).splitlines() == [
        "latency.ipynb: by: expected a list of names (list[str]), found 5 (int)",
        "latency.ipynb: select: expected a mapping (dict), found 'abc' (str)",
        "latency.ipynb: confidence: expected a number in (0, 1), found 95.0 (float)"]
    # what IPython shows (and papermill prints) instead of a traceback
    assert info.value._render_traceback_() == [
        f"perfkit: error: {line}" for line in str(info.value).splitlines()]


def test_perfkit_report_gives_the_same_words_for_the_same_value(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("notebooks:\n  latency:\n    select: abc\n    by: '[profile]'\n")
    with pytest.raises(ParamsError) as info:
        load_params(path)
    assert info.value.problems == [
        f"{path}:3: notebooks.latency.select: expected a mapping (dict), found 'abc' (str)"]
    path.write_text("notebooks:\n  latency:\n    select: '{connections: 64}'\n"
                    "    by: keepalive, cache\n")
    (run,) = load_params(path).notebooks
    assert {k: run.parameters[k] for k in ("select", "by")} == {
        "select": {"connections": 64}, "by": ["keepalive", "cache"]}


# -- the notebook itself, as papermill and JupyterLab run it ---------------------------------
def papermill(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "papermill", str(LATENCY),
                           str(cwd / "out.ipynb"), "--no-progress-bar", *args],
                          capture_output=True, text=True, timeout=300, cwd=cwd)


def errors(notebook: Path) -> list[dict]:
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    return [o for c in cells for o in c.get("outputs", []) if o["output_type"] == "error"]


@pytest.mark.slow
def test_papermill_text_parameters_run_the_notebook(tmp_path):
    # the commands: -p select '{}' ended in AttributeError, a list passed as its text
    run = papermill("-p", "select", "{}", "-p", "by", '["profile"]', cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    assert errors(tmp_path / "out.ipynb") == []


@pytest.mark.slow
@pytest.mark.parametrize("how", ["-p", "-y", "-f"])
def test_papermill_stops_a_wrong_type_at_the_first_cell_with_one_line(tmp_path, how):
    if how == "-p":
        args = ["-p", "select", "abc"]
    elif how == "-y":
        args = ["-y", "select: abc"]
    else:
        (tmp_path / "p.yaml").write_text("select: abc\n")
        args = ["-f", str(tmp_path / "p.yaml")]
    run = papermill(*args, cwd=tmp_path)
    assert run.returncode != 0
    (error,) = errors(tmp_path / "out.ipynb")
    line = "latency.ipynb: select: expected a mapping (dict), found 'abc' (str)"
    assert error["ename"] == "ParameterError" and error["evalue"] == line
    assert error["traceback"] == [f"perfkit: error: {line}"]  # no wall of frames
    assert f"perfkit: error: {line}" in run.stderr


@pytest.mark.slow
def test_an_edit_of_the_parameters_cell_is_checked_as_papermill_values_are(tmp_path):
    """JupyterLab: the user edits the parameters cell (a mapping typed as text, which is
    read as YAML; a p99 written 0.99, which is refused) and runs every cell."""
    from perfkit.report.execute import execute_notebook

    nb = json.loads(LATENCY.read_text(encoding="utf-8"))
    params = next(c for c in nb["cells"] if "parameters" in c["metadata"].get("tags", []))
    source = "".join(params["source"])
    edited = (source.replace('select: dict = {"target_rate_rps": 30000, "connections": 64}',
                             'select: dict = "{target_rate_rps: 30000, connections: 64}"')
              .replace("percentile: float = 99.0", "percentile: float = 0.99"))
    assert edited.count('"{target_rate_rps') == 1 and "= 0.99" in edited
    params["source"] = edited
    (tmp_path / "latency.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    result = execute_notebook(tmp_path / "latency.ipynb", tmp_path / "out.ipynb", {},
                              timeout_s=300)
    assert result.error is not None and result.error.cell == 3  # the cell after parameters
    (error,) = errors(tmp_path / "out.ipynb")
    assert error["evalue"] == ("latency.ipynb: percentile: expected a percentile in (1, 100] "
                               "(99 for p99, not 0.99), found 0.99 (float)")
