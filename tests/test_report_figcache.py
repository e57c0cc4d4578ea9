"""A report's figure files: laid out once, and copied from the cache where the figure draws
what it drew before (perfkit.report.figcache, issue 33)."""

from __future__ import annotations

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.layout_engine import ConstrainedLayoutEngine  # noqa: E402

from perfkit.plots import style  # noqa: E402
from perfkit.report import figcache, nb  # noqa: E402


@pytest.fixture(autouse=True)
def _styled(monkeypatch):
    monkeypatch.setattr(figcache, "_FOLDER", [])
    with matplotlib.rc_context(style.RC):
        yield


def _figure(scale: float = 1.0, antialiased: bool = True):
    fig, ax = style.figure()
    x = np.linspace(1, 10, 40)
    ax.plot(x, scale * np.log(x), label="tuned", antialiased=antialiased)
    ax.imshow(np.arange(12.0).reshape(3, 4), extent=(1, 3, 0, 1), aspect="auto")
    ax.set_xlabel("connections (count)")
    ax.set_ylabel("p99 latency (ms)")
    ax.legend()
    FigureCanvasAgg(fig)
    return fig


def _save(fig, folder):
    folder.mkdir(parents=True, exist_ok=True)
    svg = folder / "f.svg"
    screen, look = nb.page_files(fig, svg)
    return {"screen": screen, "look": look, **{s: svg.with_suffix(s).read_bytes()
                                               for s in (".svg", ".pdf", ".png")}}


class _Draws:
    """Counts the saves of the page's PNG, the PDF and the 300 dpi PNG (the SVG is always
    drawn: it is the key)."""

    def __init__(self, monkeypatch):
        self.formats: list[str] = []
        real = matplotlib.figure.Figure.savefig

        def savefig(fig, fname, *args, **kwargs):
            kind = kwargs.get("format", "")
            self.formats.append("screen" if kwargs.get("dpi") == nb.SCREEN_DPI else kind)
            return real(fig, fname, *args, **kwargs)

        monkeypatch.setattr(matplotlib.figure.Figure, "savefig", savefig)

    def files(self) -> list[str]:
        return [f for f in self.formats if f != "svg"]


def test_a_figure_drawn_before_is_copied_byte_for_byte(tmp_path, monkeypatch):
    figcache.keep_in(tmp_path / "cache")
    first = _save(_figure(), tmp_path / "build1")
    again, afresh = _figure(), _figure()
    draws = _Draws(monkeypatch)
    second = _save(again, tmp_path / "build2")
    assert draws.files() == []  # both from the cache
    assert second == first
    monkeypatch.setattr(figcache, "_FOLDER", [])  # no cache: drawn afresh, the same bytes
    fresh = _save(afresh, tmp_path / "fresh")
    assert draws.files() == ["screen", "pdf", "png"]
    assert fresh == first


def test_a_figure_that_draws_otherwise_is_drawn(tmp_path, monkeypatch):
    figcache.keep_in(tmp_path / "cache")
    usual = _save(_figure(), tmp_path / "a")
    other, plain, same = _figure(scale=1.001), _figure(antialiased=False), _figure()
    # antialiasing leaves the SVG alone and changes the PNG: part of the key
    assert figcache.svg_bytes(plain) == figcache.svg_bytes(same)
    draws = _Draws(monkeypatch)
    assert _save(other, tmp_path / "b")[".png"] != usual[".png"]
    assert draws.files() == ["screen", "pdf", "png"]
    assert _save(plain, tmp_path / "c")[".png"] != usual[".png"]
    assert draws.files() == ["screen", "pdf", "png"] * 2


def test_a_damaged_cache_file_is_drawn_again(tmp_path, monkeypatch):
    figcache.keep_in(tmp_path / "cache")
    good = _save(_figure(), tmp_path / "a")
    (pdf,) = (tmp_path / "cache").glob("*.pdf")
    pdf.write_bytes(pdf.read_bytes()[:1000])  # cut short
    fig = _figure()
    draws = _Draws(monkeypatch)
    assert _save(fig, tmp_path / "b") == good
    assert draws.files() == ["pdf"]  # the others kept whole
    assert pdf.read_bytes() == good[".pdf"]  # kept whole again


def test_the_cache_keeps_the_most_recently_used(tmp_path, monkeypatch):
    monkeypatch.setattr(figcache, "KEEP", 2)
    figcache.keep_in(tmp_path / "cache")
    for i in range(4):
        _save(_figure(scale=1 + i), tmp_path / f"b{i}")
    assert len(list((tmp_path / "cache").iterdir())) == 8  # two figures, four files each
    newest = _figure(scale=4)
    draws = _Draws(monkeypatch)
    _save(newest, tmp_path / "again")  # the newest is kept
    assert draws.files() == []


def test_without_a_folder_nothing_is_kept(tmp_path):
    files = _save(_figure(), tmp_path / "a")
    assert files[".pdf"].startswith(b"%PDF") and files[".png"].startswith(b"\x89PNG")
    assert files["screen"].startswith(b"\x89PNG")
    assert list(tmp_path.iterdir()) == [tmp_path / "a"]


def test_every_file_keeps_the_layout_of_the_pages_draw(tmp_path):
    page = _figure()
    page.draw_without_rendering()  # laid out at 150 dpi, as the page shows it
    laid = [ax.get_position().bounds for ax in page.axes]
    fig = _figure()
    files = _save(fig, tmp_path / "a")
    assert [ax.get_position().bounds for ax in fig.axes] == laid
    assert isinstance(fig.get_layout_engine(), ConstrainedLayoutEngine)  # back on
    with nb.laid_out(page):
        assert files[".svg"] == figcache.svg_bytes(page)
    # without a file (JupyterLab), the same image and the same words about it
    assert nb.page_files(_figure(), None) == (files["screen"], files["look"])


def test_a_figure_seen_before_says_the_same_of_itself(tmp_path, monkeypatch):
    figcache.keep_in(tmp_path / "cache")
    first = _save(_figure(), tmp_path / "a")
    assert first["look"]["alt"] and "tuned" in first["look"]["colours"]
    again = _figure()
    monkeypatch.setattr(nb, "looked", lambda fig: pytest.fail("looked at again"))
    assert _save(again, tmp_path / "b")["look"] == first["look"]


def test_a_report_page_keeps_figures_beside_its_first_experiment(tmp_path, monkeypatch):
    from perfkit.report.order import PAGE_ENV
    from perfkit.report.sections import common

    monkeypatch.setenv(PAGE_ENV, "p")
    monkeypatch.setenv("PERFKIT_CACHE", "1")
    monkeypatch.setattr(common, "_REMEMBERING", [])
    monkeypatch.setattr("perfkit.analysis.compare.remember_simulations_in", lambda d: None)
    (tmp_path / "exp").mkdir()
    common.remember_simulations(tmp_path / "exp")
    assert figcache.folder() == tmp_path / "exp" / ".perfkit" / "cache" / "figures"
    monkeypatch.setattr(figcache, "_FOLDER", [])
    monkeypatch.setattr(common, "_REMEMBERING", [])
    monkeypatch.setenv("PERFKIT_CACHE", "0")
    common.remember_simulations(tmp_path / "exp")
    assert figcache.folder() is None
