"""The report's index (perfkit.report.index, from the entries perfkit.report.build makes):
each figure shown with its caption, and wide figures spanning the index."""

from __future__ import annotations

from pathlib import Path

import nbformat

from perfkit.report import build, nb
from perfkit.report.execute import Execution
from perfkit.report.index import render_index

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


def test_wide_figures_span_the_index(tmp_path):
    from perfkit.plots import style
    from perfkit.report import nb
    from perfkit.report.index import is_wide

    for width_in, wide in ((style.WIDTH_IN, False), (style.WIDTH_IN * 1.6, True)):
        fig, _ = style.figure(width_in=width_in)
        path = tmp_path / f"f{width_in}.png"
        fig.savefig(path, dpi=nb.PNG_DPI)
        assert is_wide(path, nb.PNG_DPI) is wide
    template = (Path(__file__).resolve().parents[1] / "perfkit" / "report" / "templates"
                / "index.html.j2").read_text()
    assert ".figures figure.wide { grid-column: 1 / -1; }" in template
