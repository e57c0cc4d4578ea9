"""What a report notebook calls to show and keep its results.

A notebook opens with (through the page API, :mod:`perfkit.report.pages`)::

    report = setup("latency", output_dir)

and then shows everything through ``report``:

- :meth:`Report.figure`: display a figure (PNG) and, under ``perfkit report``, save it as SVG
  and PNG in ``<output_dir>/figures/<notebook>-<name>.{svg,png}``; the figure's text layout is
  checked (units in axis labels, no overlapping text) and the result is kept in the output's
  metadata for the tests;
- :meth:`Report.table`: display a frame, save it as
  ``<output_dir>/tables/<notebook>-<name>.csv``;
- :meth:`Report.answers`: the answers, shown first (one row per designed question, grouped;
  each caveat numbered once with the rows it affects: :mod:`perfkit.report.answers`) and
  collected by the report's ``index.html``; every later note, table note and threat that
  is a caveat said before (the same code and fields, or the same text) refers to it instead
  (:mod:`perfkit.report.condense`);
- :meth:`Report.methods`: the Methods records of each experiment, written from its manifests,
  for the Methods page; the page shows a link to it and the backend its numbers depend on;
- :meth:`Report.note`: a caveat or warning, escaped (collapsed when long);
- :meth:`Report.threats`: the threats to validity, collapsed under a heading that counts them
  (:mod:`perfkit.report.threats`);
- :meth:`Report.runs`, :meth:`Report.histograms`: per-run CSVs and per-run histograms (interval
  logs), so that every figure can be rebuilt from the report's files
  (:mod:`perfkit.report.nb_files`).

All text that comes from data is escaped here with :func:`html.escape`.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import io
import json
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from perfkit._fsutil import flock, write_bytes_atomic
from perfkit.formatting import PROGRESS_ENV, fmt_num
from perfkit.present.tables import csv_text, render
from perfkit.report import order
from perfkit.report.answers import Answer, Caveat, answers_html, answers_text
from perfkit.report.condense import (
    OPEN_NOTE_CHARS,
    Said,
    code,
    condensed_table,
    escape,
    fold_notes,
    opening,
)
from perfkit.report.nb_files import META_KEY, Files, slug
from perfkit.warning import Warn

#: the most rows a table shows on a page; a longer one is written to CSV and linked
MAX_SHOWN_ROWS = 60
#: a table of more rows than this is shown collapsed under its caption
OPEN_ROWS = 20
#: resolution of the PNG files saved beside the SVG and PDF
PNG_DPI = 300
#: resolution of the image shown on the page
SCREEN_DPI = 150
#: colours of the image shown on the page (its PNG indexed: a quarter of the bytes)
SCREEN_COLOURS = 256


def screen_png(fig) -> bytes:
    """``fig`` as the page shows it: a PNG at :data:`SCREEN_DPI` with an indexed palette of
    :data:`SCREEN_COLOURS` (Pillow's octree; a channel off by at most about 15 of 255 in an
    antialiased edge), a quarter of the full-colour PNG's bytes: a 2^3 factorial's forest plot
    of 33 rows took 208 kB, 277 kB in base64, of a 400 kB page. The files saved beside the
    report (SVG, PDF, the 300 dpi PNG) keep every colour."""
    from PIL import Image

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=SCREEN_DPI, metadata={"Software": None})
    image = Image.open(io.BytesIO(buf.getvalue()))
    indexed = image.quantize(colors=SCREEN_COLOURS, method=Image.Quantize.FASTOCTREE)
    out = io.BytesIO()
    indexed.save(out, format="png", optimize=True)
    return out.getvalue()
#: on-screen width of a figure, in CSS pixels per inch of figure width
SCREEN_PX_PER_IN = 140
#: the heading of a page's list of threats to validity (:meth:`Report.threats`)
THREATS_TITLE = "Threats to validity"
#: the opening words of a threat another threat of the same list refers to
REF_WORDS = 6


@contextlib.contextmanager
def laid_out(fig):
    """Save ``fig`` in the layout it has: matplotlib lays a figure out again (a draw without
    rendering) on every ``savefig`` under a layout engine, a quarter of a saved figure's CPU;
    :func:`page_files` lays it out once, and every file keeps that layout (the same positions,
    as fractions of the figure, in every format). The engine is back on afterwards."""
    engine = fig.get_layout_engine()
    if engine is None:
        yield
        return
    fig.set_layout_engine("none")
    try:
        yield
    finally:
        fig.set_layout_engine(engine)


def looked(fig) -> dict[str, Any]:
    """What the page says of ``fig`` beside its image: the checks' ``problems``, the ``alt``
    text and the series' ``colours``, read from a draw without pixels at the figure's own dpi
    (the page's, on an Agg canvas kept on the figure), in the layout it has."""
    from perfkit.plots import checks, describe

    screen = fig.dpi == SCREEN_DPI
    if screen:
        fig.draw_without_rendering()
    return {"problems": checks.check(fig, drawn=screen),
            "alt": describe(fig, drawn=True),  # drawn at the figure's dpi just above
            "colours": checks.series_colours(fig)}


def page_files(fig, svg_path: Path | None) -> tuple[bytes, dict[str, Any]]:
    """The page's image of ``fig`` (:func:`screen_png`) and what the page says of it
    (:func:`looked`); with ``svg_path``, ``fig`` saved there and, beside it, as PDF and a
    :data:`PNG_DPI` PNG.

    Laid out once, at the page's dpi on an Agg canvas kept on the figure; every file keeps
    that layout. All but the SVG are copied from an earlier build's where the figure draws the
    same SVG (:mod:`perfkit.report.figcache`): a figure seen before is laid out and drawn
    once, as SVG."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from perfkit.report import figcache

    if fig.dpi == SCREEN_DPI and not hasattr(fig.canvas, "get_renderer"):
        FigureCanvasAgg(fig)
    if svg_path is None:
        look = looked(fig)  # the draw lays it out
        with laid_out(fig):
            return screen_png(fig), look
    engine = fig.get_layout_engine()
    if engine is not None:
        engine.execute(fig)  # at the figure's dpi: what its draw would do first, and no more
    with laid_out(fig):
        svg = figcache.svg_bytes(fig)
        write_bytes_atomic(svg_path, svg)

        def pdf() -> bytes:
            buf = io.BytesIO()
            fig.savefig(buf, format="pdf",
                        metadata={"CreationDate": None, "Creator": None, "Producer": None})
            return buf.getvalue()

        def png() -> bytes:
            buf = io.BytesIO()
            fig.savefig(buf, format="png", dpi=PNG_DPI, metadata={"Software": None})
            return buf.getvalue()

        out = figcache.files(fig, svg, {
            "look.json": lambda: json.dumps(looked(fig), sort_keys=True).encode(),
            "screen.png": lambda: screen_png(fig), "pdf": pdf, "png": png})
    for kind in ("pdf", "png"):
        write_bytes_atomic(svg_path.with_suffix(f".{kind}"), out[kind])
    return out["screen.png"], json.loads(out["look.json"])


def _display(data: Mapping[str, Any], metadata: Mapping[str, Any] | None = None) -> None:
    from IPython.display import publish_display_data

    publish_display_data(data=dict(data), metadata=dict(metadata or {}))


def format_number(value: float, digits: int = 3) -> str:
    """A number for a table cell: :func:`perfkit.formatting.fmt_num`, missing as blank."""
    return "" if pd.isna(value) else fmt_num(value, digits)


@dataclasses.dataclass
class Report(Files):
    """The output sink of one notebook (see the module docstring)."""

    name: str
    output_dir: Path | None = None
    figures: list[str] = dataclasses.field(default_factory=list)
    tables: list[str] = dataclasses.field(default_factory=list)
    #: the label -> configuration of every label a palette was asked for (the latest wins),
    #: recorded with each figure so that tests can check one colour per configuration
    shown: dict[str, str] = dataclasses.field(default_factory=dict)
    _palette: Any = dataclasses.field(default=None, repr=False)
    #: the caveats the page's answers number (caveat -> number): said once, linked after
    said: dict[Caveat, int] = dataclasses.field(default_factory=dict)
    #: every caveat and note the page has shown, to refer to rather than repeat
    page: Said = dataclasses.field(default_factory=Said)
    _gather: list = dataclasses.field(default_factory=list, repr=False)

    def _show(self, data: Mapping[str, Any], metadata: Mapping[str, Any] | None = None) -> None:
        """Display an output, or gather it for the :meth:`collapsed` block around it."""
        if self._gather:
            self._gather[-1].append((dict(data), dict(metadata or {})))
        else:
            _display(data, metadata)

    def palette(self, labels: Iterable[Any], by: Sequence[str] | None = None):
        """The report's :class:`perfkit.plots.style.Palette`, extended by ``labels``.

        ``by``: the columns each label joins (``["profile", "connections"]`` for ``"default,
        16"``), so that the configuration part takes the colour and a load column the marker
        (:mod:`perfkit.plots.palette`); without, a label is a configuration as a whole. A
        configuration keeps the colour it got the first time any figure of the report showed
        it: the palette is kept in ``<output_dir>/palette.json``, shared by every notebook of
        one ``perfkit report`` (in JupyterLab, by the notebook's figures); a file of an older
        format is replaced. The pages of a report execute in parallel: a page gives a new colour
        only when the pages before it have ended (:mod:`perfkit.report.order`), so the colours
        are those of executing them one after another, on every build."""
        labels = list(labels)
        path = self.output_dir / "palette.json" if self.output_dir is not None else None
        known = self._read_palette(path)
        pal = known.extend(labels, by)
        if path is not None and pal != known:
            order.wait_for_earlier_pages(self.output_dir)
            path.parent.mkdir(parents=True, exist_ok=True)
            with flock(path.with_name(".palette.json.lock")):
                known = self._read_palette(path)  # as the pages before this one left it
                pal = known.extend(labels, by)
                if pal != known:
                    write_bytes_atomic(path, json.dumps(pal.to_dict()).encode("utf-8"))
        self._palette = pal
        self.shown.update({str(v): pal.configuration(v) for v in labels})
        return pal

    def _read_palette(self, path: Path | None):
        from perfkit.plots.palette import Palette

        known = self._palette or Palette(())
        if path is not None and path.is_file():
            data = json.loads(path.read_text(encoding="utf-8"))
            known = Palette.from_dict(data) if isinstance(data, dict) else known
        return known

    def _path(self, kind: str, name: str, suffix: str) -> Path | None:
        if self.output_dir is None:
            return None
        folder = self.output_dir / kind
        folder.mkdir(parents=True, exist_ok=True)
        return folder / f"{self.name}-{slug(name)}{suffix}"

    def figure(self, fig, name: str, caption: str | None = None, alt: str | None = None,
               missing: str | None = None) -> None:
        """Show ``fig`` (a :class:`matplotlib.figure.Figure`) with its caption and alt text;
        under ``perfkit report`` save it as SVG, PDF and a 300 dpi PNG. A section that has
        nothing to draw returns None: then ``missing`` is shown as a note (nothing if None)."""
        if fig is None:
            if missing:
                self.note(missing)
            return
        png, look = page_files(fig, self._path("figures", name, ".svg"))
        problems, colours = look["problems"], look["colours"]
        alt = alt or look["alt"]
        width_px = int(round(fig.get_figwidth() * SCREEN_PX_PER_IN))
        data = base64.b64encode(png).decode("ascii")
        cap = f'<figcaption class="perfkit-caption">{escape(caption)}</figcaption>' \
            if caption else ""
        page = (f'<figure class="perfkit-figure"><img src="data:image/png;base64,{data}" '
                f'width="{width_px}" alt="{escape(alt)}">{cap}</figure>')
        meta = {META_KEY: {"figure": name, "notebook": self.name, "alt": alt,
                           "caption": caption or "", "colours": colours,
                           "configurations": {lbl: self.shown[lbl] for lbl in colours
                                              if self.shown.get(lbl)},
                           **problems}}
        self._show({"text/html": page, "text/plain": f"<figure {name}: {alt}>"}, meta)
        self.figures.append(name)

    def table(self, frame: pd.DataFrame | None, name: str, caption: str | None = None,
              digits: int = 3, index: bool = False, hide: Iterable[str] = ("warnings",),
              presentation: Any = None, show: bool | None = None) -> None:
        """Save ``frame`` in full as CSV (exactly as ``perfkit ... --format csv`` prints it) and
        its paper-ready ``presentation`` (a :class:`perfkit.present.tables.Table` or a list of them;
        by default the frame itself, units from its column names) as Markdown and LaTeX
        beside it; show the presentation, or with ``show=False`` only a link to the CSV. By
        default a table of more than :data:`MAX_SHOWN_ROWS` rows is linked, not shown. A
        section with no table to give returns None: nothing is shown."""
        from perfkit.present import frame as present_frame
        from perfkit.present.tables import render_all

        if frame is None:
            return
        if not len(frame):
            self._show({"text/html": f"<p><i>{escape(caption or name)}: none.</i></p>",
                      "text/plain": f"{caption or name}: none."})
            return
        if index:
            frame = frame.reset_index()
        tables = presentation if presentation is not None else present_frame.frame(
            frame, caption or "", digits, tuple(hide))
        tables = list(tables) if isinstance(tables, list | tuple) else [tables]
        if show is None:
            show = len(frame) <= MAX_SHOWN_ROWS
        csv_path = self._path("tables", name, ".csv")
        if csv_path is not None:
            csv_path.write_text(csv_text(frame), encoding="utf-8")
            csv_path.with_suffix(".md").write_text(render_all(tables, "markdown"))
            csv_path.with_suffix(".tex").write_text(render_all(tables, "latex"))
        head = f"<p><b>{escape(caption)}</b></p>" if caption and presentation is not None \
            and caption != (tables[0].title.splitlines() or [""])[0] else ""  # titled by it
        if show:
            body = head + "".join(fold_notes(render(condensed_table(self.page, t, name), "html"))
                                  for t in tables)
            if len(frame) > OPEN_ROWS:  # a long table: its caption shown, its rows one click
                body = (f'<details class="perfkit-more"><summary>{escape(caption or name)} '
                        f"({len(frame)} rows)</summary>{body}</details>")
        else:
            body = (f'<p class="perfkit-link">{escape(caption or name)}: {len(frame)} rows in '
                    f'<a href="tables/{escape(self.name)}-{escape(slug(name))}.csv">'
                    f'tables/{escape(self.name)}-{escape(slug(name))}.csv</a></p>')
        self._show({"text/html": body, "text/plain": render_all(tables, "text") if show
                  else f"{caption or name}: {len(frame)} rows (CSV)"},
                 {META_KEY: {"table": name, "notebook": self.name}})
        self.tables.append(name)

    def answers(self, items: Iterable[Answer]) -> None:
        """Show the answers first, under their own heading (:func:`perfkit.report.answers.
        answers_html`: rows by designed question, artefacts and untestable questions listed
        apart, each caveat numbered once with the rows it affects), and mark them for the
        index. Later notes and threats that repeat a caveat link to it instead."""
        items = list(items)
        if not items:
            return
        body, cav = answers_html(items, heading="h3")
        for i, t in enumerate(cav.notes, 1):
            self.said.setdefault(t, i)
            self.said.setdefault(str(t), i)  # the same words given as text are this caveat
            self.page.add(t, f"caveat {i}")
        self._show({"text/html": f'<div class="perfkit-answers"><h2>Answers</h2>{body}</div>',
                  "text/plain": answers_text(items)},
                 {META_KEY: {"answers": [a.to_dict() for a in items], "notebook": self.name}})

    def methods(self, records: Mapping[str, Mapping[str, list[str]]]) -> None:
        """Mark the Methods paragraph of each experiment (``records`` from
        :func:`perfkit.report.methods.record`) for the report's Methods page, and link to it;
        outside ``perfkit report`` (no Methods page) show the paragraphs, collapsed."""
        from perfkit.report.methods import BACKEND, PAGE, anchor, paragraph

        if not records:
            return
        names = [n for n, r in records.items() if "scope" not in r]
        if self.output_dir is not None:
            links = ", ".join(f'<a href="{PAGE}#{escape(anchor(n))}">{escape(n)}</a>'
                              for n in names)
            body = (f'<p class="perfkit-methods-link">How the runs were made and analysed: '
                    f'the <a href="{PAGE}">Methods</a> of {links or "this page"}.</p>')
        else:
            paras = "".join(f"<p>{escape(paragraph(r))}</p>" for r in records.values())
            body = (f'<details class="perfkit-methods"><summary><h2>Methods</h2></summary>'
                    f"{paras}</details>")
        backends: dict[str, list[str]] = {}  # what the server did: the numbers depend on it
        for n in names:
            for sentence in records[n].get("setup", ()):
                if sentence.startswith(BACKEND):
                    backends.setdefault(sentence[len(BACKEND):].rstrip("."), []).append(n)
        body += "".join(f'<p class="perfkit-backend">Backend of {escape(", ".join(ns))}: '
                        f"{escape(b)}.</p>" for b, ns in backends.items())
        self._show({"text/html": body,
                    "text/plain": "Methods: " + ", ".join(names)},
                 {META_KEY: {"methods": {k: dict(v) for k, v in records.items()},
                             "notebook": self.name}})

    def note(self, text: Caveat | Iterable[Caveat], kind: str = "warning",
             title: str | None = None) -> None:
        """Show a caveat (one paragraph, or a list when several lines are given); ``kind``
        ``"text"``: prose written from the data (paragraphs, no frame); ``title``: a heading
        above it, saying what the list is. A caveat already given among the page's answers
        is not repeated: a link to it stands in its place; caveats longer than
        :data:`OPEN_NOTE_CHARS` in all are collapsed."""
        given = [text] if isinstance(text, str | Warn) else list(text)
        if not given:
            return
        first = str(given[0])  # the summary opens with it in full, never with a reference
        lines = [str(t) for t in given]
        if kind == "warning":
            said = [self.said[t] for t in given if t in self.said]
            rest = [t for t in given if t not in self.said]
            first = str(rest[0]) if rest else first
            lines = []
            for t in rest:
                lines.append(self.page.condense(t))
                self.page.add(t, f"the note “{opening(str(t), 6)}”")
            refs = ("<p>" + ("As caveat " if len(said) == 1 else "As caveats ")
                    + ", ".join(f'<a href="#caveat-{n}">{n}</a>' for n in said)
                    + " of the answers.</p>") if said else ""
        else:
            refs = ""
        render = code if kind == "text" else escape
        inner = ("" if not lines else f"<p>{render(lines[0])}</p>" if len(lines) == 1 else
                 "".join(f"<p>{render(t)}</p>" for t in lines) if kind == "text" else
                 "<ul>" + "".join(f"<li>{escape(t)}</li>" for t in lines) + "</ul>") + refs
        if not inner:
            return
        css = {"warning": "perfkit-warning", "text": "perfkit-text"}.get(kind,
                                                                         "perfkit-findings")
        head = f"<h3>{escape(title)}</h3>" if title and kind == "text" else \
            f"<h2>{escape(title)}</h2>" if title else ""
        plain = "\n".join(lines) if not title else "\n".join([title, *(f"- {t}" for t in lines)])
        long = kind == "warning" and sum(len(t) for t in lines) > OPEN_NOTE_CHARS
        page = (f'<details class="{css}"><summary>{head or "Notes"} ({len(lines)}): '
                f"{escape(opening(first))}</summary>{inner}</details>" if long
                else f'<div class="{css}">{head}{inner}</div>')
        self._show({"text/html": page, "text/plain": plain})

    def threats(self, text: Iterable[str], title: str = THREATS_TITLE) -> None:
        """Show the threats to validity of the page's experiments (one sentence each, from
        :func:`perfkit.report.sections.common.threats`), collapsed under a heading that names
        and counts them, ``Threats to validity (3)``: those alike but for the experiment as
        one, those the answers give as caveats as links to them
        (:mod:`perfkit.report.threats`). Nothing without any."""
        from perfkit.report import threats as th

        records = th.merge(str(t) for t in text)
        if not records:
            return
        said = {t: self.said[t] for r in records for t in r["full"] if t in self.said}
        for r in records:
            r["shown"] = self.page.condense(th.sentence(r))
            # a reference within the list: its first words are enough (it is just above;
            # threats alike but for their experiments are one record)
            self.page.add(th.sentence(r), f"the threat “{th.short(r, REF_WORDS, False)}”")
        self._show({"text/html": th.records_html(title, records, said),
                  "text/plain": "\n".join([f"{title} ({len(records)})",
                                           *(f"- {th.sentence(r)}" for r in records)])},
                 {META_KEY: {th.META: {"title": title, "records": records, "said": said},
                             "notebook": self.name}})

def setup(name: str, output_dir: str | os.PathLike | None = "") -> Report:
    """Prepare a notebook: check its parameters, the figure style, quiet progress bars, and
    its :class:`Report`. Every notebook calls it in its first code cell after the parameters.

    Every parameter of the calling notebook's namespace is checked against the notebook's
    declaration, the same check as ``perfkit report``'s, whether the values came from
    papermill (``-p``, ``-y``, ``-f``), from an edit of the parameters cell or from ``perfkit
    report``: a list or mapping given as text (``-p select '{}'``, ``-p by '[a, b]'``,
    ``-p metrics throughput_rps``) becomes what it says; a wrong type or value stops the
    notebook with one line naming the parameter (:mod:`perfkit.report.nbparams`).

    Progress bars are off (``PERFKIT_NO_PROGRESS=1``) unless the environment says otherwise: they
    add volatile output, and their widgets load from a CDN.
    """
    from perfkit.plots import style
    from perfkit.report import nbparams

    nbparams.check_notebook(name, sys._getframe(1).f_globals)
    os.environ.setdefault(PROGRESS_ENV, "1")
    style.use()
    pd.set_option("display.max_rows", 200)
    pd.set_option("display.max_columns", 50)
    out = Path(output_dir).resolve() if output_dir else None
    return Report(name=name, output_dir=out)


def collect(nb: Any) -> dict[str, Any]:
    """Answers, Methods paragraphs, figures, tables and threat records
    (:meth:`Report.threats`) recorded in an executed notebook."""
    from perfkit.report import threats as th

    found: dict[str, Any] = {"answers": [], "methods": {}, "figures": [], "tables": [],
                             "threats": []}
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            meta = output.get("metadata", {}).get(META_KEY)
            if not meta:
                continue
            for inner in meta.get("gathered", ()):
                _collect_one(found, inner)
            _collect_one(found, meta)
            if meta.get(th.META):  # shown on the page itself, never gathered
                found["threats"] += meta[th.META]["records"]
    return found


def _collect_one(found: dict[str, Any], meta: Mapping[str, Any]) -> None:
    if "answers" in meta:
        found["answers"].extend(Answer.from_dict(a) for a in meta["answers"])
    if "methods" in meta:
        for name, rec in meta["methods"].items():
            found["methods"].setdefault(name, []).append(rec)
    if "figure" in meta:
        found["figures"].append(dict(meta))
    if "table" in meta:
        found["tables"].append(dict(meta))
