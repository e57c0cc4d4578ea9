"""What a report notebook calls to show and keep its results.

A notebook opens with::

    report = nb.setup("latency", output_dir)

and then shows everything through ``report``:

- :meth:`Report.figure`: display a figure (PNG) and, under ``perfkit report``, save it as SVG
  and PNG in ``<output_dir>/figures/<notebook>-<name>.{svg,png}``; the figure's text layout is
  checked (units in axis labels, no overlapping text) and the result is kept in the output's
  metadata for the tests;
- :meth:`Report.table`: display a frame, save it as
  ``<output_dir>/tables/<notebook>-<name>.csv``;
- :meth:`Report.answers`: the headline answers (question, answer with its interval, verdict,
  runs; their caveats numbered below), shown in the notebook and collected by the report's
  ``index.html``;
- :meth:`Report.methods`: the Methods paragraph of each experiment, written from its manifests;
- :meth:`Report.note`: a caveat or warning, escaped.
- :meth:`Report.threats`: the threats to validity, a caveat list under its heading.

All text that comes from data is escaped here with :func:`html.escape`.
"""

from __future__ import annotations

import base64
import dataclasses
import html
import io
import json
import os
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from perfkit._fsutil import flock, write_bytes_atomic
from perfkit.formatting import PROGRESS_ENV, Footnotes, fmt_num
from perfkit.present.tables import csv_text, render
from perfkit.report import order

#: output metadata key under which the report finds figures, tables, answers and methods
META_KEY = "perfkit"
#: the most rows a table shows on a page; a longer one is written to CSV and linked
MAX_SHOWN_ROWS = 60
#: resolution of the PNG files saved beside the SVG and PDF
PNG_DPI = 300
#: resolution of the image shown on the page
SCREEN_DPI = 150
#: on-screen width of a figure, in CSS pixels per inch of figure width
SCREEN_PX_PER_IN = 140
#: the heading of a page's list of threats to validity (:meth:`Report.threats`)
THREATS_TITLE = "Threats to validity"
#: the answers table's column shares in % (question with its caveats' marks, answer, verdict,
#: n), on the pages and the index: the table is laid out fixed to the page width, so long
#: unbroken text wraps in its cell instead of widening it
ANSWER_WIDTHS_PCT = (28, 40, 18, 14)
ANSWER_COLUMNS = ("<colgroup>" + "".join(f'<col style="width:{w}%">' for w in ANSWER_WIDTHS_PCT)
                  + "</colgroup>")


def _display(data: Mapping[str, Any], metadata: Mapping[str, Any] | None = None) -> None:
    from IPython.display import publish_display_data

    publish_display_data(data=dict(data), metadata=dict(metadata or {}))


def escape(value: Any) -> str:
    """``html.escape`` of ``str(value)`` (quotes included): the one way data text enters HTML."""
    return html.escape(str(value), quote=True)


def slug(name: str) -> str:
    """A file-name-safe figure or table name: ``"usl-none, ram"`` -> ``"usl-none-ram"``."""
    return re.sub(r"[^A-Za-z0-9._]+", "-", name).strip("-") or "unnamed"


def format_number(value: float, digits: int = 3) -> str:
    """A number for a table cell: :func:`perfkit.formatting.fmt_num`, missing as blank."""
    return "" if pd.isna(value) else fmt_num(value, digits)


def format_frame(frame: pd.DataFrame, digits: int = 3) -> pd.DataFrame:
    """A copy for display: floats to ``digits`` significant digits, missing shown as blank."""
    out = frame.copy()
    for col in out.columns:
        if pd.api.types.is_float_dtype(out[col]):
            out[col] = [format_number(v, digits) for v in out[col]]
    return out


@dataclasses.dataclass(frozen=True)
class Answer:
    """One headline answer: the question, the answer with its interval, the verdict, the runs
    it rests on (``n``) and the warnings that travel with it."""

    question: str
    answer: str
    verdict: str = ""
    n: str = ""
    warnings: tuple[str, ...] = ()
    #: what the server and the kernel counted beside the answer (an effect's mechanism:
    #: :meth:`perfkit.analysis.mechanism.Mechanism.text`), empty when nothing was recorded
    mechanism: str = ""

    @property
    def shown(self) -> str:
        """The answer with its mechanism, as the answers tables show it."""
        return f"{self.answer}; counted: {self.mechanism}" if self.mechanism else self.answer

    def text(self) -> str:
        parts = [p for p in (self.verdict, f"n = {self.n}" if self.n else "") if p]
        extra = f" ({'; '.join(parts)})" if parts else ""
        return f"{self.question}: {self.shown}{extra}" + "".join(
            f"\n  - {w}" for w in self.warnings)

    def to_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "warnings": list(self.warnings)}


def numbered_caveats(items: Iterable[Answer]) -> tuple[list[list[int]], list[str]]:
    """The caveats of answers as numbered notes (:class:`perfkit.formatting.Footnotes`), as
    the pages' and the index's answers tables give them: per answer the numbers of its
    caveats, and the notes, each distinct text once in order of first use. A caveat shared by
    many answers (a drift note, a cap note) is listed once below the table, not in each row."""
    notes = Footnotes()
    marks = [notes.numbers(a.warnings) for a in items]
    return marks, notes.texts


@dataclasses.dataclass
class Report:
    """The output sink of one notebook (see the module docstring)."""

    name: str
    output_dir: Path | None = None
    figures: list[str] = dataclasses.field(default_factory=list)
    tables: list[str] = dataclasses.field(default_factory=list)
    #: the label -> configuration of every label a palette was asked for (the latest wins),
    #: recorded with each figure so that tests can check one colour per configuration
    shown: dict[str, str] = dataclasses.field(default_factory=dict)
    _palette: Any = dataclasses.field(default=None, repr=False)

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
        from perfkit.plots.style import Palette

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
        from perfkit.plots import checks, describe

        if fig is None:
            if missing:
                self.note(missing)
            return
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=SCREEN_DPI, metadata={"Software": None})
        svg_path = self._path("figures", name, ".svg")
        if svg_path is not None:
            fig.savefig(svg_path, format="svg", metadata={"Date": None, "Creator": None})
            fig.savefig(svg_path.with_suffix(".pdf"), format="pdf",
                        metadata={"CreationDate": None, "Creator": None, "Producer": None})
            fig.savefig(svg_path.with_suffix(".png"), format="png", dpi=PNG_DPI,
                        metadata={"Software": None})
        problems = checks.check(fig)
        alt = alt or describe(fig, drawn=True)  # check() has just drawn it: once is enough
        width_px = int(round(fig.get_figwidth() * SCREEN_PX_PER_IN))
        data = base64.b64encode(buf.getvalue()).decode("ascii")
        cap = f'<figcaption class="perfkit-caption">{escape(caption)}</figcaption>' \
            if caption else ""
        page = (f'<figure class="perfkit-figure"><img src="data:image/png;base64,{data}" '
                f'width="{width_px}" alt="{escape(alt)}">{cap}</figure>')
        colours = checks.series_colours(fig)
        meta = {META_KEY: {"figure": name, "notebook": self.name, "alt": alt,
                           "caption": caption or "", "colours": colours,
                           "configurations": {lbl: self.shown[lbl] for lbl in colours
                                              if self.shown.get(lbl)},
                           **problems}}
        _display({"text/html": page, "text/plain": f"<figure {name}: {alt}>"}, meta)
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
            _display({"text/html": f"<p><i>{escape(caption or name)}: none.</i></p>",
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
            and caption != tables[0].title else ""  # a presentation titled by it shows it
        if show:
            body = head + "".join(render(t, "html") for t in tables)
        else:
            body = (f'<p class="perfkit-link">{escape(caption or name)}: {len(frame)} rows in '
                    f'<a href="tables/{escape(self.name)}-{escape(slug(name))}.csv">'
                    f'tables/{escape(self.name)}-{escape(slug(name))}.csv</a></p>')
        _display({"text/html": body, "text/plain": render_all(tables, "text") if show
                  else f"{caption or name}: {len(frame)} rows (CSV)"},
                 {META_KEY: {"table": name, "notebook": self.name}})
        self.tables.append(name)

    def answers(self, items: Iterable[Answer]) -> None:
        """Show the headline answers under their own heading (every page ends with them) and
        mark them for the index's answers table."""
        items = list(items)
        if not items:
            return
        marks, notes = numbered_caveats(items)
        rows = "".join(f'<tr><td class="question">{escape(a.question)}'
                       + "".join(f"<sup>[{m}]</sup>" for m in ms) + "</td>"
                       f'<td class="answer">{escape(a.shown)}</td>'
                       f'<td class="verdict">{escape(a.verdict)}</td>'
                       f'<td class="n">{escape(a.n)}</td></tr>'
                       for a, ms in zip(items, marks, strict=True))
        listed = ('<ol class="perfkit-notes">' + "".join(f"<li>{escape(n)}</li>" for n in notes)
                  + "</ol>") if notes else ""
        html_ = ('<div class="perfkit-answers"><h2>Answers</h2>'
                 '<div class="perfkit-findings perfkit-scroll"><table class="perfkit-table">'
                 f"{ANSWER_COLUMNS}<thead><tr><th>question</th><th>answer</th><th>verdict</th>"
                 f"<th>n</th></tr></thead><tbody>{rows}</tbody></table>{listed}</div></div>")
        plain = [dataclasses.replace(a, question=a.question + "".join(f"[{m}]" for m in ms),
                                     warnings=()).text() for a, ms in zip(items, marks,
                                                                          strict=True)]
        _display({"text/html": html_,
                  "text/plain": "Answers\n" + "\n".join(plain)
                  + "".join(f"\n[{i}] {n}" for i, n in enumerate(notes, 1))},
                 {META_KEY: {"answers": [a.to_dict() for a in items], "notebook": self.name}})

    def methods(self, records: Mapping[str, Mapping[str, list[str]]]) -> None:
        """Show the Methods paragraph of each experiment (``records`` from
        :func:`perfkit.report.methods.record`) and mark them for the index and methods.md."""
        from perfkit.report.methods import paragraph

        if not records:
            return
        texts = [paragraph(r) for r in records.values()]
        body = "".join(f"<p>{escape(t)}</p>" for t in texts)
        _display({"text/html": f'<div class="perfkit-methods"><h2>Methods</h2>{body}</div>',
                  "text/plain": "\n\n".join(texts)},
                 {META_KEY: {"methods": {k: dict(v) for k, v in records.items()},
                             "notebook": self.name}})

    def runs(self, rows: Any, name: str, where: str = "") -> None:
        """Save the per-run metrics and the per-run warnings of ``rows`` (a
        :class:`perfkit.analysis.RunSet`) as CSV, so every figure can be rebuilt from the
        report's files; show links only, named by the load point ``where`` when given."""
        from perfkit.report.sections.common import runs_table

        frame, warnings = runs_table(rows)
        at = f" at {where}" if where else ""
        self.table(frame, f"runs-{name}", caption=f"Per-run metrics of {name}{at}", show=False)
        self.table(warnings, f"warnings-{name}", caption=f"Per-run warnings of {name}{at}",
                   show=False)

    def histograms(self, hists: Mapping[str, Any], name: str, where: str = "") -> None:
        """Save merged latency histograms (label -> LatencyHistogram) as HdrHistogram
        percentile-distribution files (``.hgrm``) under ``histograms/``, each named and headed
        (``#`` lines, which HdrHistogram's plotter skips) by its configuration and its load
        point ``where`` (e.g. ``"30000 req/s offered, 64 connections"``), and link them on the
        page."""
        if self.output_dir is None:
            return
        folder = self.output_dir / "histograms"
        folder.mkdir(parents=True, exist_ok=True)
        links = []
        for label, hist in hists.items():
            if hist is not None and hist.total_count:
                stem = "-".join(slug(p) for p in (self.name, name, str(label), where) if p)
                head = (f"# {name}: {label}, the merged latency histogram of its runs"
                        + (f" at {where}" if where else "") + f" ({hist.total_count} "
                        "requests); values in ms\n#\n")
                (folder / f"{stem}.hgrm").write_text(head + hist.spectrum_text(),
                                                     encoding="utf-8")
                links.append((str(label), f"histograms/{stem}.hgrm"))
        if links:
            at = f" at {where}" if where else ""
            body = ", ".join(f'<a href="{escape(path)}">{escape(label)}</a>'
                             for label, path in links)
            _display({"text/html": f'<p class="perfkit-link">Merged latency histograms{at} '
                                   f"(HdrHistogram .hgrm, one per configuration; every run's "
                                   "requests pooled, to rebuild the spectrum figure: the "
                                   "estimates above come from the runs, not from these): "
                                   f"{body}</p>",
                      "text/plain": f"Merged latency histograms{at}: "
                                    + ", ".join(p for _, p in links)})

    def note(self, text: str | Iterable[str], kind: str = "warning",
             title: str | None = None) -> None:
        """Show a caveat (one paragraph, or a list when several lines are given); ``kind``
        ``"text"``: prose written from the data (paragraphs, no frame); ``title``: a heading
        above it, saying what the list is."""
        lines = [text] if isinstance(text, str) else [str(t) for t in text]
        if not lines:
            return
        inner = (f"<p>{escape(lines[0])}</p>" if len(lines) == 1 else
                 "".join(f"<p>{escape(t)}</p>" for t in lines) if kind == "text" else
                 "<ul>" + "".join(f"<li>{escape(t)}</li>" for t in lines) + "</ul>")
        css = {"warning": "perfkit-warning", "text": "perfkit-text"}.get(kind,
                                                                         "perfkit-findings")
        head = f"<h2>{escape(title)}</h2>" if title else ""
        plain = "\n".join(lines) if not title else "\n".join([title, *(f"- {t}" for t in lines)])
        _display({"text/html": f'<div class="{css}">{head}{inner}</div>', "text/plain": plain})

    def threats(self, text: Iterable[str], title: str = THREATS_TITLE) -> None:
        """Show the threats to validity of the page's experiments (one sentence each, from
        :func:`perfkit.report.sections.common.threats`) as a caveat list under a heading that
        names it and counts them: ``Threats to validity (3)``. Nothing without any."""
        lines = [str(t) for t in text]
        if lines:
            self.note(lines, title=f"{title} ({len(lines)})")


def setup(name: str, output_dir: str | os.PathLike | None = "") -> Report:
    """Prepare a notebook: the figure style, quiet progress bars, and its :class:`Report`.

    A ``list[str]`` parameter given as text (``papermill -p metrics throughput_rps``) becomes
    the list it names in the calling notebook's namespace (:mod:`perfkit.report.nbparams`).

    Progress bars are off (``PERFKIT_NO_PROGRESS=1``) unless the environment says otherwise: they
    add volatile output, and their widgets load from a CDN.
    """
    from perfkit.plots import style

    os.environ.setdefault(PROGRESS_ENV, "1")
    from perfkit.report import nbparams

    nbparams.coerce_notebook(name, sys._getframe(1).f_globals)
    style.use()
    pd.set_option("display.max_rows", 200)
    pd.set_option("display.max_columns", 50)
    out = Path(output_dir).resolve() if output_dir else None
    return Report(name=name, output_dir=out)


def collect(nb: Any) -> dict[str, Any]:
    """Answers, Methods paragraphs, figures and tables recorded in an executed notebook."""
    found: dict[str, Any] = {"answers": [], "methods": {}, "figures": [], "tables": []}
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            meta = output.get("metadata", {}).get(META_KEY)
            if not meta:
                continue
            if "answers" in meta:
                found["answers"].extend(Answer(**{**a, "warnings": tuple(a["warnings"])})
                                        for a in meta["answers"])
            if "methods" in meta:
                for name, rec in meta["methods"].items():
                    found["methods"].setdefault(name, []).append(rec)
            if "figure" in meta:
                found["figures"].append(dict(meta))
            if "table" in meta:
                found["tables"].append(dict(meta))
    return found
