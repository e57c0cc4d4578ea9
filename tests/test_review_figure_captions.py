"""Figures carry their caption to the index, and the latency figures name their load point in
the image itself, not only in the page's caption (review 3, item 2)."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from perfkit.analysis import load_experiment
from perfkit.report import build, nb
from perfkit.report.execute import Execution
from perfkit.report.index import render_index
from perfkit.report.sections import latency

ROOT = Path(__file__).resolve().parents[1]
AT = {"target_rate_rps": 30000, "connections": 64}
POINT = "30000 req/s offered, 64 connections"


def _executed(tmp_path: Path) -> Path:
    """A notebook whose one output is a figure shown by :meth:`Report.figure`."""
    meta = {nb.META_KEY: {"figure": "spectrum", "notebook": "latency", "alt": "an alt text",
                          "caption": f"Percentile spectrum per configuration at {POINT}"}}
    out = nbformat.v4.new_output("display_data", data={"text/plain": "<figure>"},
                                 metadata=meta)
    cell = nbformat.v4.new_code_cell("report.figure(...)", outputs=[out])
    path = tmp_path / "latency.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# L"), cell]),
                   str(path))
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "latency-spectrum.png").write_bytes(b"")
    return path


def test_the_index_shows_each_figures_caption_not_its_file_name(tmp_path):
    entry = build._entry(Execution("latency", _executed(tmp_path), 0.1), tmp_path)
    assert entry.captions["figures/latency-spectrum.png"].endswith(POINT)
    page = render_index("t", "p", [entry])
    assert f"<figcaption>Percentile spectrum per configuration at {POINT} (" in page


@pytest.fixture(scope="module")
def cell():
    sweep = load_experiment(ROOT / "data" / "demo-wrk2-sweep")
    groups = latency.grouped_runs(sweep, ["profile"], AT)
    return groups, latency.percentiles(groups, (99.0,), seed=1, n_resamples=50)


def _texts(fig) -> str:
    return " ".join(t.get_text() for ax in fig.axes for t in (ax.title, ax._left_title))


def test_the_spectrum_and_within_vs_across_images_name_their_load_point(cell):
    groups, table = cell
    spectrum = latency.spectrum(groups, n_resamples=50)
    fig = latency.spectrum_figure(spectrum, ["profile"], None, AT)
    assert POINT in _texts(fig)
    within = latency.within_run_table(groups, 99.0)
    fig = latency.intervals_figure(within, table, 99.0, ["profile"], None, 0.95, AT)
    assert POINT in _texts(fig)
