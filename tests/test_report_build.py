"""``perfkit report``'s build (perfkit.report.build): the palette each report starts from.

A report gives each configuration one colour on every page (perfkit.plots.palette). Two
reports built from one folder of parameter files (params/demo.yaml, params/seeds.yaml) share
that folder's ``palette.yaml``, so a configuration has the same colour in both and no colour
stands for two configurations; a previous build's ``palette.json`` never leaks into the next.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from perfkit.errors import PerfkitError
from perfkit.plots.palette import PALETTE_COLORS
from perfkit.report.build import PALETTE_FILE, seed_palette
from perfkit.report.params import ReportParams

ROOT = Path(__file__).resolve().parents[1]


def _params(folder: Path) -> ReportParams:
    return ReportParams(path=folder / "report.yaml", title="t", data_root=ROOT / "data",
                        notebooks=())


def test_the_palette_file_fixes_the_colour_order_and_a_stale_palette_goes(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "palette.json").write_text('{"configurations": ["stale", "default"]}')
    seed_palette(_params(tmp_path), out)  # no palette.yaml: start empty
    assert not (out / "palette.json").exists()
    (tmp_path / PALETTE_FILE).write_text("configurations: [tuned, default, cache-ram]\n")
    seed_palette(_params(tmp_path), out)
    colours = json.loads((out / "palette.json").read_text())["colours"]
    assert colours == {"default": PALETTE_COLORS[0], "tuned": PALETTE_COLORS[1],
                       "cache-ram": PALETTE_COLORS[2]}


@pytest.mark.parametrize("text", ["configurations: default\n", "configurations: [a, a]\n",
                                  "[a, b]\n"])
def test_a_palette_file_that_is_not_a_list_of_distinct_names_is_refused(tmp_path, text):
    (tmp_path / PALETTE_FILE).write_text(text)
    with pytest.raises(PerfkitError, match=PALETTE_FILE):
        seed_palette(_params(tmp_path), tmp_path)


def test_the_bundled_palette_gives_every_configuration_its_own_colour():
    from perfkit.store import yamlread

    names = yamlread.load((ROOT / "params" / PALETTE_FILE).read_bytes())["configurations"]
    assert len(set(names)) == len(names) <= len(PALETTE_COLORS)


def test_no_colour_stands_for_two_configurations_in_or_across_the_bundled_reports(
        demo_report, seeds_report):
    found: dict[str, str] = {}
    for report in (demo_report, seeds_report):
        colours = json.loads((report / "palette.json").read_text())["colours"]
        assert len(set(colours.values())) == len(colours), colours
        for config, colour in colours.items():
            assert found.setdefault(config, colour) == colour, config
    assert len(set(found.values())) == len(found), found
