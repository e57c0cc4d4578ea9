"""Executed notebook -> one self-contained HTML file (no code, images embedded, nothing remote).

nbconvert's ``lab`` and ``classic`` templates load require.js, MathJax and mermaid from a CDN, so
a report built with them breaks offline and leaks its reader's address. The ``perfkit`` template
(``templates/nbconvert/perfkit``) extends ``lab`` and empties every block that loads a script;
:func:`remote_references` checks the result, and :func:`export_html` refuses to write a page that
would load anything from the network.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from pathlib import Path

import nbformat

from perfkit.errors import PerfkitError

TEMPLATES = Path(__file__).resolve().parent / "templates"
#: cells never shown in a report (papermill's parameter cells, cells a user hid)
HIDDEN_TAGS = ("parameters", "injected-parameters", "remove-cell")
#: output-checked cells (nbval): their plain-text dump of a table shown above stays off the page
CHECK_CELL = r"# NBVAL_CHECK_OUTPUT[\s\S]*"

_REMOTE_PATTERNS = (
    # <script src=...>, <link href=...>, <img src=...>, <iframe src=...> with a remote URL
    re.compile(r"<(?:script|link|img|iframe|source|embed)\b[^>]*?\b(?:src|href)\s*=\s*"
               r"[\"']?\s*((?:https?:)?//[^\"'\s>]+)", re.IGNORECASE),
    # CSS imports and url(...) loading from the network
    re.compile(r"@import\s+(?:url\()?\s*[\"']?((?:https?:)?//[^\"')\s]+)", re.IGNORECASE),
    re.compile(r"url\(\s*[\"']?((?:https?:)?//[^\"')\s]+)", re.IGNORECASE),
    # ES module imports of remote code
    re.compile(r"import\s*\(\s*[\"']((?:https?:)?//[^\"']+)", re.IGNORECASE),
)


def remote_references(html: str) -> list[str]:
    """Every URL the page would fetch from the network (scripts, styles, images, frames).

    Plain links (``<a href="https://...">``) are not fetched and are not listed.
    """
    found: dict[str, None] = {}
    for pattern in _REMOTE_PATTERNS:
        found.update((m.group(1), None) for m in pattern.finditer(html))
    return list(found)


#: one exporter per thread (:func:`_exporter`)
_LOCAL = threading.local()


def _exporter():
    """This thread's exporter, made on its first page: its templates are compiled once, not
    once per page (a fresh exporter compiled eleven Jinja templates, a third of a page's
    conversion); nbconvert reuses an exporter across notebooks too, but not across threads
    (each conversion registers its filters on the exporter's environment)."""
    exporter = getattr(_LOCAL, "exporter", None)
    if exporter is None:
        exporter = _LOCAL.exporter = _new_exporter()
    return exporter


def _new_exporter():
    from nbconvert import HTMLExporter
    from traitlets.config import Config

    config = Config()
    config.TagRemovePreprocessor.enabled = True
    config.TagRemovePreprocessor.remove_cell_tags = set(HIDDEN_TAGS)
    # cells whose printed text nbval checks: the same numbers are on the page already
    config.RegexRemovePreprocessor.enabled = True
    config.RegexRemovePreprocessor.patterns = [CHECK_CELL]
    config.HTMLExporter.exclude_input = True
    config.HTMLExporter.exclude_input_prompt = True
    config.HTMLExporter.exclude_output_prompt = True
    # markdown cells hold no images; with embed_images nbconvert parses each HTML block of a
    # markdown cell alone, which closes a <details> before the content it folds
    config.HTMLExporter.embed_images = False
    return HTMLExporter(config=config, template_name="perfkit",
                        extra_template_basedirs=[str(TEMPLATES / "nbconvert")])


def notebook_to_html(nb: nbformat.NotebookNode, title: str | None = None) -> str:
    """The HTML page of an executed notebook: outputs and markdown only, images inline."""
    if title:
        nb.metadata["title"] = title
    body, _ = _exporter().from_notebook_node(nb)
    return body


def export_html(ipynb: Path, html: Path, title: str | None = None,
                prepare: Callable[[nbformat.NotebookNode], None] | None = None) -> Path:
    """Write ``html`` from the executed notebook ``ipynb`` (``prepare``: a change made to the
    notebook in memory first, e.g. the threats common to every page linked to the index);
    refuse pages that load remote files."""
    nb = nbformat.read(str(ipynb), as_version=4)
    if prepare is not None:
        prepare(nb)
    return write_page(nb, html, title)


def write_page(nb: nbformat.NotebookNode, html: Path, title: str | None = None) -> Path:
    """Write ``html`` from an executed notebook already in memory (see :func:`export_html`)."""
    page = notebook_to_html(nb, title)
    remote = remote_references(page)
    if remote:
        raise PerfkitError(f"{html}: the page would load {len(remote)} file(s) from the "
                           f"network ({', '.join(sorted(set(remote))[:3])}); a report must "
                           "work offline")
    html.write_text(page, encoding="utf-8")
    return html
