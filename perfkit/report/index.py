"""The report's ``index.html``: the headline answers first, then Methods, then each notebook.

Rendered with Jinja2 with autoescaping on, so every string from data (endpoint names, labels,
error messages) is HTML-escaped; links are percent-encoded. The page loads nothing from the
network: inline CSS, and images by relative path from ``figures/``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import quote

from perfkit import __version__
from perfkit.report.export import TEMPLATES
from perfkit.report.nb import ANSWER_WIDTHS_PCT, numbered_caveats


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
                 methods: Mapping[str, str] | None = None) -> str:
    """The index page as a string: one table of headline answers (each caveat numbered), the
    Methods paragraph of each experiment, then each notebook's figures and files."""
    shown = [(e, a) for e in entries for a in e.answers]
    marks, notes = numbered_caveats(a for _, a in shown)
    answers = [(e, a, m) for (e, a), m in zip(shown, marks, strict=True)]
    template = _environment().get_template("index.html.j2")
    return template.render(title=title, params_name=params_name, entries=entries,
                           answers=answers, notes=notes, widths=ANSWER_WIDTHS_PCT,
                           methods=methods or {}, version=__version__)


def write_index(out_dir: Path, title: str, params_name: str, entries: list[NotebookEntry],
                methods: Mapping[str, str] | None = None) -> Path:
    """Write ``out_dir/index.html``."""
    path = out_dir / "index.html"
    path.write_text(render_index(title, params_name, entries, methods), encoding="utf-8")
    return path
