"""perfkit.store.yamlread, the one YAML reader of perfkit's files: YAML 1.2 booleans (off, on,
yes, no stay the words written), and aliases bounded where they expand."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml
from _unblocked import unblocked

from perfkit.report.params import ParamsError, load_params
from perfkit.run import plan as ex
from perfkit.store import yamlread
from perfkit.store.design import read_design

REPO = Path(__file__).resolve().parents[1]


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


def _big(path: Path, n_bytes: int) -> Path:
    """A valid YAML design of ``n_bytes``: a long description, no alias."""
    head = (REPO / "examples" / "aa.yaml").read_text() + "description: |\n"
    line = "  " + "x" * 97 + "\n"
    path.write_text(head + line * ((n_bytes - len(head)) // len(line)))
    return path


def test_a_yaml_file_above_its_limit_is_refused_by_its_size_before_it_is_parsed(
        tmp_path, monkeypatch):
    """A 50 MB design was parsed for 29 s, then called "an alias bomb?"; its size is known
    before a byte is read."""
    path = _big(tmp_path / "experiment.yaml", 5 * 2**20)
    size = f"{path.stat().st_size:,} bytes"

    def parsed(*args, **kwargs):
        raise AssertionError("the file was parsed")

    monkeypatch.setattr(yamlread.Loader, "__init__", parsed)
    with pytest.raises(ex.ExperimentError) as info:
        read_design(path)
    assert f"{path}: cannot read: {size} (5.0 MiB), more than the 524,288 bytes" in str(
        info.value)
    assert "alias" not in str(info.value)
    with pytest.raises(ParamsError) as info:
        load_params(path)
    assert f"found {size} (5.0 MiB), more than" in str(info.value)
    with pytest.raises(yaml.YAMLError, match=f"{size} .5.0 MiB. of YAML, more than"):
        yamlread.load(path.read_bytes())


def test_a_yaml_file_within_the_limit_is_read(tmp_path):
    path = _big(tmp_path / "experiment.yaml", yamlread.MAX_FILE_BYTES - 200)
    data, raw = read_design(path)
    assert data["name"] and len(raw) == path.stat().st_size


def test_a_fifo_given_as_a_design_is_refused_at_once(tmp_path):
    fifo = tmp_path / "experiment.yaml"
    os.mkfifo(fifo)
    with unblocked(), pytest.raises(ex.ExperimentError, match="not a regular file but a FIFO"):
        read_design(fifo)
