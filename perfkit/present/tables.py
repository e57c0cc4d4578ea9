"""Paper-ready tables: one model, four renderers (plain text, Markdown, LaTeX, HTML).

A :class:`Table` holds formatted cells (text), column headers with their units, and numbered
notes; :func:`render` writes it as

- ``text``: aligned columns for a terminal (what ``perfkit compare`` prints);
- ``markdown``: a GitHub-flavoured table, fit for a CI job summary (HTML in a text escaped);
- ``latex``: a ``booktabs`` table (``\\toprule``/``\\midrule``/``\\bottomrule``), units in the
  headers, special characters escaped, text pdflatex cannot typeset (non-Latin scripts) as its
  code points, notes below;
- ``html``: a ``<table>`` in a horizontally scrolling box, every text escaped.

The CLI and the report render the same :class:`Table` built from the same analysis result
(:mod:`perfkit.present`), so a number reads the same in a terminal, a CI summary, a web page
and a paper.
"""

from __future__ import annotations

import dataclasses
import html
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from perfkit.safetext import csv_cell, csv_lines, terminal
from perfkit.warning import Warn

if TYPE_CHECKING:  # only csv_text takes a frame: rendering a Table needs no pandas
    import pandas as pd

FORMATS = ("text", "markdown", "latex", "html")
#: integers beyond this magnitude do not survive a float64 exactly
_EXACT_INT = 2 ** 53


def csv_text(frame: pd.DataFrame) -> str:
    """The tidy CSV of a result frame, as ``perfkit ... --format csv`` prints it and the report
    writes it (the one writer of both):

    - every float is rounded to :data:`CSV_DIGITS` significant digits, so arithmetic noise
      (``1.0950000000000002``) is written as ``1.095``;
    - missing stays empty, and so does an infinite value (an interval with no bound): a CSV
      cell never says ``inf`` for "missing" (the row's notes say why);
    - a float column whose values are all whole numbers (a rate of 5000 req/s, a run count with
      gaps) is written as integers (``5000``, not ``5000.0``);
    - a text cell a spreadsheet would run as a formula (a name beginning with ``=``, ``-``...)
      begins with ``'`` (:func:`perfkit.safetext.csv_cell`), and a cell holding a line break
      is quoted (:func:`perfkit.safetext.csv_lines`)."""
    out = frame.copy()
    for name in out.columns:
        col = out[name]
        if col.dtype.kind == "O":
            out[name] = col.astype(object).map(
                lambda v: _csv_float(v) if isinstance(v, float) else csv_cell(v))
            continue
        if col.dtype.kind != "f":
            continue
        col = col.map(_csv_float).astype(float)
        values = col.dropna().to_numpy()
        if len(values) and (np.abs(values) < _EXACT_INT).all() \
                and (values == np.round(values)).all():
            col = col.astype("Int64")
        out[name] = col
    return csv_lines(out.to_csv(index=False, lineterminator="\r\n"))


#: significant digits of a float written to CSV (float64 carries 15-17; the last are noise)
CSV_DIGITS = 12


def _csv_float(value: float) -> float:
    """``value`` rounded to :data:`CSV_DIGITS` significant digits; NaN when not finite."""
    if value != value or value in (np.inf, -np.inf):
        return np.nan
    return float(f"{value:.{CSV_DIGITS}g}")


@dataclasses.dataclass(frozen=True)
class Column:
    """A column: its header, unit (shown as ``header [unit]``) and alignment."""

    name: str
    unit: str = ""
    right: bool = False

    @property
    def header(self) -> str:
        return f"{self.name} [{self.unit}]" if self.unit else self.name


@dataclasses.dataclass(frozen=True)
class Table:
    """Formatted cells under headers, with a title above and numbered notes below: each note a
    coded warning (:class:`perfkit.warning.Warn`, worded when the table is rendered) or a
    text the presentation wrote."""

    columns: tuple[Column, ...]
    rows: tuple[tuple[str, ...], ...]
    title: str = ""
    notes: tuple[Warn | str, ...] = ()

    def __post_init__(self) -> None:
        for row in self.rows:
            if len(row) != len(self.columns):
                raise ValueError(f"a row has {len(row)} cells for {len(self.columns)} columns")


def render(table: Table, fmt: str = "text") -> str:
    """``table`` as ``text``, ``markdown``, ``latex`` or ``html`` (see the module docstring)."""
    renderers = {"text": _text, "markdown": _markdown, "latex": _latex, "html": _html}
    if fmt not in renderers:
        raise ValueError(f"format must be one of {FORMATS}, got {fmt!r}")
    return renderers[fmt](table)


def render_all(tables: Sequence[Table], fmt: str = "text") -> str:
    return "\n".join(render(t, fmt) for t in tables)


def _text(t: Table) -> str:
    """Aligned columns for a terminal; a control character in any text (ESC, BEL, a line
    break in a name) is written as its escape, never obeyed (:func:`perfkit.safetext.
    terminal`)."""
    header = [terminal(c.header) for c in t.columns]
    rows = [[terminal(c) for c in row] for row in t.rows]
    widths = [len(h) for h in header]
    for row in rows:
        widths = [max(w, len(c)) for w, c in zip(widths, row, strict=True)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.rjust(w) if col.right else c.ljust(w)
                         for c, w, col in zip(cells, widths, t.columns, strict=True)).rstrip()

    out = [*(terminal(x) for x in t.title.split("\n")), ""] if t.title else []
    out += [line(header), *(line(r) for r in rows)]
    if t.notes:
        out += [""] + [f"[{i}] {terminal(str(n))}" for i, n in enumerate(t.notes, 1)]
    return "\n".join(out) + "\n"


def _md_text(text: str) -> str:
    """Text as Markdown shows it: an HTML tag or entity in a name (a Locust endpoint may be
    called anything) is escaped, never rendered (``&`` and ``<``; a ``>`` opens nothing)."""
    return text.replace("&", "&amp;").replace("<", "&lt;")


def _md_cell(text: str) -> str:
    r"""A cell that keeps its column: a backslash is escaped (``\\``) before a pipe is
    (``\|``), so that a name holding ``\|`` cannot end the cell, and a control character
    (a line break ends the row) is written as its escape."""
    return terminal(_md_text(text).replace("\\", "\\\\").replace("|", "\\|")) or " "


def _title_lines(t: Table) -> list[str]:
    """The title's lines: the first is the caption, the next ones (what the arms are, the
    coding) are lines of their own in every format."""
    return [" ".join(line.split()) for line in t.title.splitlines() if line.strip()]


def _markdown(t: Table) -> str:
    first, *rest = _title_lines(t) or [""]
    out = [f"**{_md_cell(first)}**" + "".join(f"  \n{_md_cell(x)}" for x in rest), ""] \
        if t.title else []
    out.append("| " + " | ".join(_md_cell(c.header) for c in t.columns) + " |")
    out.append("|" + "|".join("---:" if c.right else ":---" for c in t.columns) + "|")
    out += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in t.rows]
    if t.notes:
        out += [""] + [f"[{i}] {_md_text(str(n))}  " for i, n in enumerate(t.notes, 1)]
    return "\n".join(out) + "\n"


_LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
          "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
          "^": r"\textasciicircum{}", "±": r"$\pm$", "×": r"$\times$", "−": "-", "≥": r"$\geq$",
          "≤": r"$\leq$", "μ": r"$\mu$", "σ": r"$\sigma$", "κ": r"$\kappa$", "γ": r"$\gamma$"}


#: :data:`_LATEX`'s ASCII characters, for ``str.translate``
_LATEX_ASCII = str.maketrans({ch: esc for ch, esc in _LATEX.items() if ch.isascii()})


#: characters pdflatex's ``utf8`` input encoding typesets with T1 fonts as they are, beyond
#: ASCII: Latin-1, Latin Extended-A and the common typographic punctuation
_LATIN = (range(0xA0, 0x180), (0x2013, 0x2014, 0x2018, 0x2019, 0x201C, 0x201D, 0x2026))


def _typesettable(ch: str) -> bool:
    code = ord(ch)
    return 0x20 <= code < 0x7F or any(code in r for r in _LATIN)


def latex_escape(text: str) -> str:
    """``text`` safe in LaTeX body text under pdflatex (special characters escaped, a few
    symbols as math). Characters pdflatex cannot typeset with its default fonts (Japanese,
    Chinese, Cyrillic...) and control characters (ESC, BEL, tab, line breaks) are written as
    their code points, each run in brackets: ``'約3倍'`` becomes ``[U+7D04]3[U+500D]``, so the
    table compiles and the text can be recovered (the CSV keeps it as written)."""
    if text.isascii() and text.isprintable():  # most cells: each character as it is, or escaped
        return text.translate(_LATEX_ASCII)
    out: list[str] = []
    foreign: list[str] = []
    for ch in text:
        if ch in _LATEX or _typesettable(ch):
            if foreign:
                out.append("[" + " ".join(foreign) + "]")
                foreign = []
            out.append(_LATEX.get(ch, ch))
        else:
            foreign.append(f"U+{ord(ch):04X}")
    if foreign:
        out.append("[" + " ".join(foreign) + "]")
    return "".join(out)


def _latex_row(cells: Iterable[str]) -> str:
    """One row of the tabular. A row that begins with ``[`` (a name such as ``[draft]``, or
    one written as its code points, ``[U+7D04]...``) begins with ``{}``: after ``\\\\`` or a
    booktabs rule, a bare ``[`` would be read as their optional argument."""
    line = " & ".join(latex_escape(c) for c in cells)
    return ("{}" if line.lstrip().startswith("[") else "") + line + r" \\"


def _latex(t: Table) -> str:
    spec = "".join("r" if c.right else "l" for c in t.columns)
    lines = [r"\begin{table}[htbp]", r"\centering", r"\small"]
    if t.title:
        lines.append(r"\caption{" + latex_escape(". ".join(_title_lines(t))) + "}")
    lines += [r"\begin{tabular}{" + spec + "}", r"\toprule",
              _latex_row(c.header for c in t.columns), r"\midrule"]
    lines += [_latex_row(row) for row in t.rows]
    lines += [r"\bottomrule", r"\end{tabular}"]
    if t.notes:
        lines.append(r"\par\smallskip\footnotesize")
        lines += [f"[{i}] " + latex_escape(str(n)) + r"\par" for i, n in enumerate(t.notes, 1)]
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


def _cell_attrs(c: Column, head: bool = False, min_width: str = "") -> str:
    """A number column is right-aligned and its cells kept on one line (``nowrap``); a text
    column is left-aligned and may wrap, and so may every header, when the table is wider
    than the page; ``min_width`` (:func:`_min_width`, a header's) opens the style."""
    align = f' style="{min_width}text-align:{"right" if c.right else "left"}"'
    return align + (' class="nowrap"' if c.right and not head else "")


#: a text column's cells wrap to about this many lines at most (its header's min-width)
WRAP_LINES = 3
#: the widest a text column is made to keep to :data:`WRAP_LINES` (em)
WRAP_MAX_EM = 30


def _min_width(t: Table, i: int) -> str:
    """A text column's ``min-width`` for its longest cell to wrap to :data:`WRAP_LINES` lines
    at most (half an em a character, capped at :data:`WRAP_MAX_EM`): in a table wider than
    the page a long cell scrolled out of view otherwise wraps a word a line and makes its
    row tall (a 2^3 factorial's counters: 13 lines)."""
    longest = max((len(row[i]) for row in t.rows), default=0)
    if t.columns[i].right or longest <= 40:
        return ""
    return f"min-width:{min(WRAP_MAX_EM, -(-longest // WRAP_LINES) // 2)}em;"


def _html(t: Table) -> str:
    esc = html.escape
    head = "".join(f"<th{_cell_attrs(c, True, _min_width(t, i))}>{esc(c.header)}</th>"
                   for i, c in enumerate(t.columns))
    body = "".join("<tr>" + "".join(
        f"<td{_cell_attrs(c)}>{esc(v)}</td>"
        for v, c in zip(row, t.columns, strict=True)) + "</tr>" for row in t.rows)
    first, *rest = _title_lines(t) or [""]
    title = (f'<p class="perfkit-caption"><b>{esc(first)}</b>'
             + "".join(f"<br>{esc(x)}" for x in rest) + "</p>") if t.title else ""
    notes = ("<ol class=\"perfkit-notes\">" + "".join(f"<li>{esc(str(n))}</li>" for n in t.notes)
             + "</ol>") if t.notes else ""
    return (f'{title}<div class="perfkit-scroll"><table class="perfkit-table"><thead><tr>{head}'
            f"</tr></thead><tbody>{body}</tbody></table></div>{notes}")
