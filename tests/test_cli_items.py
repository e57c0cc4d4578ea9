"""The parameter, value and friction items of issue 22 (the exit statuses are in
test_cli_contract.py): each behaviour on real data, with the answer a user now gets."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import _cli_helpers as _cli
import pytest
import yaml

from perfkit.report import nb, nbparams
from perfkit.report.params import ParamsError, load_params
from perfkit.run import failure
from perfkit.run import plan as ex
from perfkit.store import yamlread
from perfkit.store.design import read_design

REPO = Path(__file__).resolve().parents[1]
FIX = REPO / "tests" / "fixtures"
WILD = FIX / "wild"
AA, AB = "data/demo-aa::arm=A", "data/demo-aa::arm=B"


def cli(*argv: str) -> tuple[int, str, str]:
    return _cli.run_cli(*argv, cwd=REPO)


# -- YAML: 1.2 booleans, bounded aliases ----------------------------------------------------
def test_on_off_yes_no_stay_the_words_written_and_true_false_are_booleans():
    assert yamlread.load("levels: [off, on, yes, no, Off, ON, y, n]") == {
        "levels": ["off", "on", "yes", "no", "Off", "ON", "y", "n"]}
    assert yamlread.load("a: true\nb: False\nc: TRUE") == {"a": True, "b": False, "c": True}
    assert yaml.safe_load("a: on")["a"] is True  # what PyYAML alone reads (YAML 1.1)


def test_a_design_with_off_and_on_levels_keeps_them(tmp_path):
    text = (REPO / "examples" / "keepalive-cache.yaml").read_text()
    path = tmp_path / "experiment.yaml"
    path.write_text(text.replace("cache: {none: proxy, ram: cache-ram}",
                                 "cache: {off: proxy, on: cache-ram}"))
    data, _ = read_design(path)
    spec = ex.validate(data, str(path), tmp_path)
    assert spec["factors"]["cache"]["levels"] == ["off", "on"]
    assert spec["factors"]["cache"]["profile_parts"] == {"off": "proxy", "on": "cache-ram"}


BOMB = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [{', '.join(['*' + p] * 10)}]\n"
    for p, c in zip("abcdefghi", "bcdefghij", strict=True))


def test_an_alias_bomb_is_refused_where_it_expands_and_small_aliases_still_work(tmp_path):
    with pytest.raises(yaml.YAMLError) as info:
        yamlread.load(BOMB)
    assert "more than 1,000,000 nodes" in str(info.value) and info.value.problem_mark.line == 5
    assert yamlread.load("x: &x {p: 1}\ny: [*x, *x]") == {"x": {"p": 1}, "y": [{"p": 1}] * 2}
    path = tmp_path / "p.yaml"
    path.write_text(BOMB + "notebooks: *j\n")
    with pytest.raises(ParamsError, match=r"p.yaml:6: expected valid YAML, found aliases that "):
        load_params(path)
    path.write_text(BOMB + (REPO / "examples" / "aa.yaml").read_text())
    with pytest.raises(ex.ExperimentError, match=r"expected valid YAML, found aliases that"):
        read_design(path)


# -- parameter files: fractions, the data root ------------------------------------------------
def params(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "p.yaml"
    path.write_text(f"data: {REPO / 'data'}\n" + textwrap.dedent(body))
    return path


@pytest.mark.parametrize("given", ["0.05", "'5%'", "5%"])
def test_a_threshold_is_5_percent_or_0_05_in_parameter_files(tmp_path, given):
    path = params(tmp_path, f"notebooks:\n  history: {{max_regression: {given}}}\n")
    [run] = load_params(path).notebooks
    assert run.parameters["max_regression"] == pytest.approx(0.05)


def test_a_threshold_is_5_percent_or_0_05_on_the_command_line():
    outs = [cli("gate", "data/demo-history::label=v07", "data/demo-history::label=v08",
                "--max-regression", given, "--format", "json") for given in ("5%", "0.05")]
    assert outs[0][0] == outs[1][0] == 1 and outs[0][1] == outs[1][1]
    assert json.loads(outs[0][1])["max_regression"] == pytest.approx(0.05)


def test_experiment_names_stay_under_the_data_root(tmp_path):
    for name in ("../tests", "/etc", "demo-aa/../../tests"):  # each exists
        path = params(tmp_path, f"notebooks:\n  latency: {{experiment: {name!r}}}\n")
        with pytest.raises(ParamsError, match="which leaves the data root"):
            load_params(path)
    path = params(tmp_path, "notebooks:\n  latency: {experiment: demo-wrk2-sweep}\n")
    assert load_params(path).notebooks[0].parameters["experiment"] == "demo-wrk2-sweep"


# -- output ------------------------------------------------------------------------------------
def test_markdown_shows_html_in_an_endpoint_name_as_text():
    run = str(FIX / "names" / "html_endpoint_name")  # a real Locust run, named with HTML
    code, out, _ = cli("compare", run, run, "--by", "endpoint", "--format", "markdown")
    assert code == 0
    assert "| &lt;img src=x onerror=alert(1)> &amp;amp; &lt;b>page&lt;/b> |" in out
    assert "<img" not in out and "<b>" not in out
    code, out, _ = cli("compare", run, run, "--by", "endpoint")  # the text table keeps it
    assert "<img src=x onerror=alert(1)> &amp; <b>page</b>" in out


def test_papermill_text_for_a_list_parameter_becomes_the_list(monkeypatch):
    # nb.setup sets PERFKIT_NO_PROGRESS=1 for the notebook's process: restored after the test
    monkeypatch.delenv("PERFKIT_NO_PROGRESS", raising=False)
    notebook = REPO / "notebooks" / "tuning-effects.ipynb"
    assert nbparams.list_parameters(notebook) == ["factors", "metrics", "aa_metrics"]
    namespace = {"nb": nb, "metrics": "throughput_rps", "factors": "keepalive, cache",
                 "aa_metrics": ["latency_p99_ms"]}
    exec('report = nb.setup("tuning-effects", "")', namespace)  # noqa: S102 - as the notebook
    assert namespace["metrics"] == ["throughput_rps"]
    assert namespace["factors"] == ["keepalive", "cache"]
    assert namespace["aa_metrics"] == ["latency_p99_ms"]


# -- runs: the reason in the tool's words ------------------------------------------------------
def test_a_refused_connection_is_named_in_the_tools_words():
    wrk = failure.reason("wrk", 1, WILD / "wrk" / "connection_refused")
    assert wrk == "wrk exit code 1: unable to connect to 127.0.0.1:27330 Connection refused"
    locust = failure.reason("locust", 1, WILD / "locust" / "connection_refused")
    assert locust.startswith("locust exit code 1: ") and "request(s) failed, most often GET "
    assert "ConnectionRefusedError(111, 'Connection refused')" in locust


def test_the_locust_example_uses_a_user_class_that_fetches_the_page():
    code, out, _ = cli("run", "--help")
    assert code == 0 and "--user-class PageUser" in out
    assert "MixedUser, which requests a 404" in out


def test_history_add_takes_a_selection(tmp_path):
    code, out, err = cli("history", "add", "data/demo-aa::arm=A", "--label", "a",
                         "--store", str(tmp_path / "h"))
    assert code == 0 and "added 'a': 10 runs" in out, err
    code, out, _ = cli("history", "show", "--store", str(tmp_path / "h"), "--format", "json")
    assert code == 0 and [r["n_runs"] for r in json.loads(out)["series"]] == [10]


def test_sweep_help_tells_how_to_confine_a_sweep():
    code, out, _ = cli("sweep", "--help")
    assert code == 0
    assert "--port N" in out and "--upstream-port N" in out and "--state-dir DIR" in out
    assert "refuses to touch one it did not start" in out
