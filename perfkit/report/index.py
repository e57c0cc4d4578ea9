"""The report's ``index.html``: the answers first, then what a reader opens when they need it.

Visible without opening anything: the answers table (one row per designed question, grouped,
each caveat numbered once below it: :mod:`perfkit.report.answers`), the short list of
artefacts and untestable questions, and one line per page. Collapsed: the caveats, the
threats common to every page (said here once; each page links to them) and each page's
figures and files. The Methods are a page of their own (``methods.html``).

Rendered with Jinja2 with autoescaping on, so every string from data (endpoint names, labels,
error messages) is HTML-escaped; links are percent-encoded. The page loads nothing from the
network: inline CSS, and images by relative path from ``figures/``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import quote

from markupsafe import Markup

from perfkit import __version__
from perfkit.report.answers import answers_html
from perfkit.report.export import TEMPLATES
from perfkit.report.methods import PAGE as METHODS_PAGE
from perfkit.report.threats import INDEX_ANCHOR, sentence


@dataclasses.dataclass(frozen=True)
class NotebookEntry:
    """One notebook as the index shows it (paths relative to the report folder)."""

    name: str
    title: str
    html: str | None
    ipynb: str | None
    answers: tuple = ()
    alts: Mapping[str, str] = dataclasses.field(default_factory=dict)
    #: each figure's caption on its page (by PNG path), carried under it on the index
    captions: Mapping[str, str] = dataclasses.field(default_factory=dict)
    methods: Mapping[str, list] = dataclasses.field(default_factory=dict)
    figures: tuple[str, ...] = ()
    tables: tuple[str, ...] = ()
    error: str | None = None
    seconds: float | None = None
    #: the figures wider than a page column (a history over its labels): shown across the
    #: index's whole width, so that their text stays legible (:func:`is_wide`)
    wide: tuple[str, ...] = ()


#: a page's title longer than this links a group of answers to it as "page"
LINK_TITLE_CHARS = 30

#: the look of the index and the Methods page (the notebook pages carry the same in their
#: nbconvert template)
PAGE_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #222;
       max-width: 64rem; margin: 0 auto; padding: 1.5rem; line-height: 1.45; }
h1 { font-size: 1.6rem; margin-bottom: 0.2rem; }
h2 { font-size: 1.2rem; margin: 0.4rem 0; }
summary h2 { display: inline; }
.meta, .perfkit-nav { color: #555; font-size: 0.9rem; }
section { border-top: 1px solid #ddd; margin-top: 1.2rem; padding-top: 0.5rem; }
code { font-size: 0.85rem; }
main p { font-size: 0.92rem; }
"""


#: a figure wider than this (inches) spans the index's whole width instead of one grid cell
WIDE_IN = 4.5


def is_wide(png: Path, dpi: int = 300) -> bool:
    """Whether the PNG at ``png`` (saved at ``dpi``) is wider than :data:`WIDE_IN`: read from
    its header (the IHDR width, bytes 16-19)."""
    try:
        with open(png, "rb") as f:
            head = f.read(24)
    except OSError:
        return False
    if len(head) < 24 or head[:8] != b"\x89PNG\r\n\x1a\n":
        return False
    return int.from_bytes(head[16:20], "big") > WIDE_IN * dpi


def _environment():
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=True, undefined=jinja2.StrictUndefined,
        trim_blocks=True, lstrip_blocks=True)
    env.filters["url"] = lambda path: quote(str(path))
    env.filters["stem"] = lambda path: Path(str(path)).stem
    env.filters["with_suffix"] = lambda path, s: str(Path(str(path)).with_suffix(s))
    return env


def render_index(title: str, params_name: str, entries: list[NotebookEntry],
                 common: list[dict] | None = None, histograms: bool = False) -> str:
    """The index page as a string (see the module docstring); ``common``: the threats said
    on every page (:func:`perfkit.report.threats.common`); ``histograms``: whether the
    report wrote per-run histograms (its footer names the folder only then)."""
    items = [a for e in entries for a in e.answers]
    links = {a.group: (e.html, e.title if len(e.title) <= LINK_TITLE_CHARS else "page")
             for e in entries if e.html for a in e.answers if a.group}
    body, _ = answers_html(items, links=links)
    template = _environment().get_template("index.html.j2")
    return template.render(title=title, params_name=params_name, entries=entries,
                           answers=Markup(body) if items else "", css=Markup(PAGE_CSS),
                           threats=[sentence(t) for t in common or ()],
                           anchor=INDEX_ANCHOR, methods_page=METHODS_PAGE,
                           version=__version__, histograms=histograms)


def write_index(out_dir: Path, title: str, params_name: str, entries: list[NotebookEntry],
                common: list[dict] | None = None) -> Path:
    """Write ``out_dir/index.html``."""
    path = out_dir / "index.html"
    folder = out_dir / "histograms"
    written = folder.is_dir() and any(folder.iterdir())
    path.write_text(render_index(title, params_name, entries, common, written),
                    encoding="utf-8")
    return path
