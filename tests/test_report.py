"""The contract: ``perfkit report -p params/demo.yaml -o OUT`` exits 0 and writes OUT/index.html,
one self-contained HTML page per notebook, the executed notebooks, every figure as SVG and PNG
and every table as CSV; the figures pass their checks; the overview has the drift plot.

The report is built once per test session (:func:`demo_report`, shared with test_browser.py).
"""

from __future__ import annotations

import atexit
import functools
import io
import os
import shutil
import tempfile
from pathlib import Path

import nbformat
import pytest

from perfkit.cli import main
from perfkit.report import nb as nbhelp
from perfkit.report.export import remote_references

ROOT = Path(__file__).resolve().parents[1]
#: the report under test (PERFKIT_TEST_PARAMS points elsewhere while developing)
PARAMS = Path(os.environ.get("PERFKIT_TEST_PARAMS", ROOT / "params" / "demo.yaml"))
NOTEBOOKS = ("overview", "latency", "scaling", "tuning-effects")


@functools.lru_cache(maxsize=1)
def demo_report() -> Path:
    """Build the demo report into a temporary folder (once per process) and return it."""
    base = Path(tempfile.mkdtemp(prefix="perfkit-report-"))
    atexit.register(shutil.rmtree, base, True)
    out_dir = base / "demo"
    out, err = io.StringIO(), io.StringIO()
    status = main(["report", "-p", str(PARAMS), "-o", str(out_dir)], out, err)
    if status != 0:
        raise AssertionError(f"perfkit report exited {status}:\n{err.getvalue()}")
    return out_dir


@pytest.fixture(scope="module")
def report() -> Path:
    return demo_report()


@pytest.fixture(scope="module")
def executed(report) -> dict[str, nbformat.NotebookNode]:
    return {n: nbformat.read(str(report / f"{n}.ipynb"), as_version=4) for n in NOTEBOOKS}


def test_writes_index_pages_notebooks_figures_and_tables(report):
    assert (report / "index.html").is_file()
    for name in NOTEBOOKS:
        assert (report / f"{name}.html").stat().st_size > 0
        nbformat.validate(nbformat.read(str(report / f"{name}.ipynb"), as_version=4))
    svgs = sorted((report / "figures").glob("*.svg"))
    pngs = sorted((report / "figures").glob("*.png"))
    assert svgs and [p.stem for p in svgs] == [p.stem for p in pngs]
    for name in NOTEBOOKS:
        assert any(p.name.startswith(f"{name}-") for p in svgs), f"{name} has no figure"
    tables = sorted((report / "tables").glob("*.csv"))
    assert tables and all(p.read_text().count("\n") >= 2 for p in tables)


def test_pages_stand_alone_without_code(report, executed):
    for name in NOTEBOOKS:
        page = (report / f"{name}.html").read_text(encoding="utf-8")
        assert remote_references(page) == [], name
        assert "data:image/png;base64," in page
        assert "from perfkit" not in page and "report = nb.setup" not in page
    assert remote_references((report / "index.html").read_text()) == []


def test_every_figure_has_units_and_no_overlapping_or_cut_text(executed):
    figures = [f for nb in executed.values() for f in nbhelp.collect(nb)["figures"]]
    assert len(figures) >= 10
    for f in figures:
        for check in ("labels_without_units", "overlapping_text", "text_outside"):
            assert f[check] == [], f"{f['notebook']}/{f['figure']}: {check}: {f[check]}"


def test_overview_shows_the_drift_plot(report, executed):
    names = [f["figure"] for f in nbhelp.collect(executed["overview"])["figures"]]
    assert "drift" in names
    assert (report / "figures" / "overview-drift.svg").is_file()
    assert (report / "tables" / "overview-drift-trend.csv").is_file()


def test_notebooks_run_clean_without_warnings_or_progress_bars(executed):
    for name, nb in executed.items():
        for cell in nb.cells:
            for out in cell.get("outputs", []):
                assert out.output_type != "error", name
                assert out.get("name") != "stderr", f"{name}: {''.join(out.get('text', ''))}"
                assert "application/vnd.jupyter.widget-view+json" not in out.get("data", {})


def test_index_lists_headline_findings_of_every_notebook(report, executed):
    index = (report / "index.html").read_text(encoding="utf-8")
    for name, nb in executed.items():
        findings = nbhelp.collect(nb)["findings"]
        assert findings, f"{name} states no finding"
        assert f'href="{name}.html"' in index
    assert "This notebook failed" not in index


def test_rebuilding_clears_only_that_notebooks_old_files(tmp_path):
    from perfkit.report.build import _clear_previous

    for name in ("latency-old.png", "latency-old.svg", "overview-drift.png"):
        (tmp_path / "figures").mkdir(exist_ok=True)
        (tmp_path / "figures" / name).write_bytes(b"x")
    (tmp_path / "tables").mkdir()
    (tmp_path / "tables" / "latency-old.csv").write_text("a\n1\n")
    (tmp_path / "mine.txt").write_text("not perfkit's")
    _clear_previous(tmp_path, "latency")
    left = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    assert left == ["figures/overview-drift.png", "mine.txt"]
