"""Report parameter files are checked against the notebooks' parameters before anything runs;
every problem is reported at once as FILE:LINE: KEY: expected ..., found ...."""

import io
import textwrap
from pathlib import Path

import pytest

from perfkit import paths
from perfkit.cli import main
from perfkit.report.params import ParamsError, load_params, notebook_parameters

ROOT = Path(__file__).resolve().parents[1]
FIX = ROOT / "tests" / "fixtures"
NOTEBOOKS = ROOT / "notebooks"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "report.yaml"
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path


def problems_of(path: Path) -> list[str]:
    with pytest.raises(ParamsError) as info:
        load_params(path, NOTEBOOKS)
    return info.value.problems


VALID = f"""
title: fixtures report
data: {FIX}
defaults:
  confidence: 0.9
notebooks:
  latency:
    experiment: wrk2/sweep
    select: {{target_rate_rps: 15000, connections: 16}}
    percentile: 99
  overview:
    experiments: [wrk2/sweep, wrk/sweep]
    locust_experiment: locust
"""


def test_a_valid_file_loads_with_types_converted_and_defaults_applied(tmp_path):
    params = load_params(write(tmp_path, VALID), NOTEBOOKS)
    assert params.title == "fixtures report"
    assert params.data_root == FIX
    assert [n.name for n in params.notebooks] == ["latency", "overview"]
    latency = params.notebooks[0].parameters
    assert latency["percentile"] == 99.0 and isinstance(latency["percentile"], float)
    assert latency["confidence"] == 0.9  # from defaults
    assert latency["data_root"] == str(FIX)
    assert "output_dir" not in latency  # perfkit report sets it


def test_every_notebook_parameter_is_typed_and_explained():
    for nb in sorted(NOTEBOOKS.glob("*.ipynb")):
        declared = notebook_parameters(nb)
        assert {"data_root", "output_dir"} <= set(declared), nb.name
        for p in declared.values():
            assert p.type_name not in ("None", ""), f"{nb.name}: {p.name} has no type"
            assert p.help, f"{nb.name}: {p.name} has no comment"


def test_unknown_names_wrong_types_and_ranges_are_all_reported_with_lines(tmp_path):
    path = write(tmp_path, f"""
        data: {FIX}
        colour: blue
        notebooks:
          latency:
            experiment: wrk2/sweep
            percentle: 99
            confidence: high
            alpha: 1.5
            percentile: 0.99
            n_resamples: -3
          scalling: {{}}
        """)
    found = problems_of(path)
    text = "\n".join(found)
    assert f"{path}:2: colour: expected one of title, data, defaults, notebooks" in text
    assert (f"{path}:6: notebooks.latency.percentle: expected one of the notebook's parameters"
            in text and "did you mean 'percentile'?" in text)
    assert f"{path}:7: notebooks.latency.confidence: expected a number (float), found 'high'" \
        in text
    assert f"{path}:9: notebooks.latency.percentile: expected a percentile in (1, 100]" in text
    assert f"{path}:10: notebooks.latency.n_resamples: expected a non-negative integer" in text
    assert f"{path}:11: notebooks.scalling: expected a notebook" in text
    assert "did you mean 'scaling'?" in text
    assert f"{path}:8: notebooks.latency.alpha: expected one of the notebook's parameters" in text
    assert len(found) == 7


def test_alpha_out_of_range_is_refused(tmp_path):
    path = write(tmp_path, f"""
        data: {FIX}
        notebooks:
          tuning-effects:
            experiment: wrk2/sweep
            alpha: 1.5
        """)
    assert problems_of(path) == [
        f"{path}:5: notebooks.tuning-effects.alpha: expected a number in (0, 1), "
        "found 1.5 (float)"]


def test_a_missing_experiment_names_the_ones_there_are(tmp_path):
    path = write(tmp_path, f"""
        data: {FIX}
        notebooks:
          scaling:
            experiment: wrk2/swep
            closed_experiment: ""
        """)
    (problem,) = problems_of(path)
    assert problem.startswith(f"{path}:4: notebooks.scaling.experiment: expected an experiment "
                              f"folder in {FIX}")
    assert "found 'wrk2/swep'" in problem


def test_parameters_perfkit_report_sets_are_refused(tmp_path):
    path = write(tmp_path, f"""
        data: {FIX}
        notebooks:
          latency: {{experiment: wrk2/sweep, output_dir: /tmp/x}}
        """)
    (problem,) = problems_of(path)
    assert "notebooks.latency.output_dir: expected a parameter you may set" in problem


@pytest.mark.parametrize(("text", "expected"), [
    ("notebooks: [latency]\n", "notebooks: expected a mapping of notebook name"),
    ("- just a list\n", "(top level): expected a mapping with a 'notebooks' key"),
    ("notebooks:\n  latency: {experiment: [unclosed\n", ":3: expected valid YAML, found a "
     "syntax error (expected ',' or ']'"),
    ("data: /nonexistent/folder\nnotebooks: {latency: {}}\n",
     "data: expected an existing folder of experiments"),
])
def test_malformed_files_say_what_was_expected(tmp_path, text, expected):
    path = tmp_path / "bad.yaml"
    path.write_text(text, encoding="utf-8")
    assert any(expected in p for p in problems_of(path))


def test_a_missing_file_is_an_error(tmp_path):
    assert problems_of(tmp_path / "nope.yaml") == [
        f"{tmp_path / 'nope.yaml'}: expected a parameter file, found no such file"]


def test_cli_reports_bad_parameters_before_executing_anything(tmp_path):
    path = write(tmp_path, f"""
        data: {FIX}
        notebooks:
          latency: {{experiment: wrk2/sweep, confidence: 2}}
        """)
    out_dir = tmp_path / "out"
    out, err = io.StringIO(), io.StringIO()
    status = main(["report", "-p", str(path), "-o", str(out_dir)], out, err)
    assert status == 2
    assert "notebooks.latency.confidence: expected a number in (0, 1)" in err.getvalue()
    assert not out_dir.exists()  # nothing executed, nothing written


def test_cli_check_only_validates(tmp_path):
    out, err = io.StringIO(), io.StringIO()
    assert main(["report", "-p", str(write(tmp_path, VALID)), "--check"], out, err) == 0
    assert out.getvalue().strip().endswith("ok (latency, overview)")


def test_shipped_parameter_files_are_valid():
    from perfkit.report.build import PALETTE_FILE  # the colours beside them, not a report

    for path in sorted((ROOT / "params").glob("*.yaml")):
        if path.name != PALETTE_FILE:
            load_params(path, NOTEBOOKS)


def test_data_dir_resolves_inside_perfkit_not_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(paths.DATA_ENV, raising=False)
    assert paths.data_root() == ROOT / "data"
    monkeypatch.setenv(paths.DATA_ENV, str(FIX))
    assert paths.data_dir("wrk2/sweep") == FIX / "wrk2" / "sweep"
    with pytest.raises(Exception, match="experiment 'nope' not found"):
        paths.data_dir("nope")


def data_params(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "p.yaml"
    path.write_text(f"data: {ROOT / 'data'}\n" + textwrap.dedent(body))
    return path


@pytest.mark.parametrize("given", ["0.05", "'5%'", "5%"])
def test_a_threshold_is_5_percent_or_0_05_in_parameter_files(tmp_path, given):
    path = data_params(tmp_path, f"notebooks:\n  history: {{max_regression: {given}}}\n")
    [run] = load_params(path).notebooks
    assert run.parameters["max_regression"] == pytest.approx(0.05)


def test_experiment_names_stay_under_the_data_root(tmp_path):
    for name in ("../tests", "/etc", "demo-aa/../../tests"):  # each exists
        path = data_params(tmp_path, f"notebooks:\n  latency: {{experiment: {name!r}}}\n")
        with pytest.raises(ParamsError, match="which leaves the data root"):
            load_params(path)
    path = data_params(tmp_path, "notebooks:\n  latency: {experiment: demo-wrk2-sweep}\n")
    assert load_params(path).notebooks[0].parameters["experiment"] == "demo-wrk2-sweep"
