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


def test_a_page_written_as_its_notebook_ends_is_written_again_only_if_its_threats_change(
        tmp_path, monkeypatch):
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

    from perfkit.report import build, nb
    from perfkit.report.execute import Execution

    def executed(name: str, threats: list[str]) -> Execution:
        shown = []
        monkeypatch.setattr(nb, "_display", lambda data, meta=None: shown.append((data, meta)))
        nb.Report(name, None).threats(threats)
        notebook = new_notebook()
        cell = new_code_cell("report.threats(...)")
        cell.outputs = [new_output("display_data", data=d, metadata=m) for d, m in shown]
        notebook.cells = [new_markdown_cell(f"# {name}"), cell]
        path = tmp_path / f"{name}.ipynb"
        nbformat.write(notebook, str(path))
        return Execution(name, path, 1.0)

    runs = {"a": executed("a", ["x: same host", "x: short runs"]),
            "b": executed("b", ["y: same host", "y: drifted"]),
            "c": executed("c", ["z: same host", "z: drifted"])}
    early = build._Early(list(runs))
    for name in ("b", "c", "a"):  # the order they end in
        build._export_early(runs[name], tmp_path, early)
    # b, alone, linked nothing; c linked "drifted" too, which a then took away
    assert set(early.written) == {"a", "b", "c"}
    pages = [early.pages[n] for n in runs]
    common = build.threat_common([p[1]["threats"] for p in pages])
    assert [t["text"] for t in common] == ["same host"]
    numbers = {t["text"]: i for i, t in enumerate(common, 1)}
    rewritten = []
    write_page = build.write_page
    monkeypatch.setattr(build, "write_page", lambda n, html, title=None: (
        rewritten.append(html.stem), write_page(n, html, title))[1])
    for name, page in zip(runs, pages, strict=True):
        build._export(runs[name], tmp_path, numbers, page, early.written[name])
    assert sorted(rewritten) == ["b", "c"]  # a ended last: its early page was already right
    (tmp_path / "again").mkdir()
    for name in runs:  # each page as the export after the last notebook alone writes it
        alone = tmp_path / "again" / f"{name}.html"
        build._export(runs[name], tmp_path / "again", numbers, build._read_page(runs[name]))
        assert (tmp_path / f"{name}.html").read_text() == alone.read_text()
