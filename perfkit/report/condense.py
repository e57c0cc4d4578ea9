"""Each caveat once per page: a caveat already said is referred to by number, not repeated.

A caveat is a coded warning (:class:`perfkit.warning.Warn`) or a text (a threat to validity, a
page's own prose). Its identity is its code and fields, or its text: two caveats are the same
when they are equal, never because their words look alike. :class:`Said` keeps what a page has
said, with how to refer to it (``"caveat 5"``); :meth:`Said.condense` returns a caveat's words,
or ``"as caveat 5"`` when the page said that caveat before. A caveat is said in full or
referred to as a whole: nothing is spliced into another. The files (CSV, Markdown, LaTeX) keep
every caveat in full: only the page refers.

The page's text helpers live here too: :func:`condensed_table` (a table's notes and title
lines said before, referred to), :func:`fold_notes` (long notes collapsed), :func:`code`
(backquoted spans of prose as code), :func:`escape` (data text into HTML) and
:func:`opening` (the first words of a text).
"""

from __future__ import annotations

import dataclasses
import html
import re
from typing import Any

from perfkit.warning import Warn

#: a long cell a table repeats (characters): referred to rather than shown again
MIN_CHARS = 80
#: caveats and table notes longer than this in all (characters) are shown collapsed
OPEN_NOTE_CHARS = 240


@dataclasses.dataclass
class Said:
    """What a page has said so far: caveat (a warning, or a text) -> how to refer to it."""

    refs: dict[Warn | str, str] = dataclasses.field(default_factory=dict)
    #: the words of the warnings said, so that the same words given as text are known too
    words: dict[str, str] = dataclasses.field(default_factory=dict)

    def add(self, caveat: Warn | str, ref: str) -> None:
        self.refs.setdefault(caveat, ref)
        if isinstance(caveat, Warn):
            self.words.setdefault(caveat.text, ref)

    def ref(self, caveat: Warn | str) -> str | None:
        """How to refer to ``caveat`` when the page said it before, else None."""
        found = self.refs.get(caveat)
        if found is None and isinstance(caveat, str):
            found = self.words.get(caveat)
        return found

    def condense(self, caveat: Warn | str) -> str:
        """The words of ``caveat``, or ``as REF`` when the page said it before."""
        found = self.ref(caveat)
        return str(caveat) if found is None else f"as {found}"


def condensed_table(said: Said, table: Any, name: str) -> Any:
    """``table`` (a :class:`perfkit.present.tables.Table`) with each note said before on
    the page referred to rather than repeated (:class:`perfkit.report.condense.Said`);
    its notes are then said."""
    notes = []
    for i, n in enumerate(table.notes, 1):
        notes.append(said.condense(n))
        said.add(n, f"note {i} of the table “{name}”")
    first, *rest = [" ".join(x.split()) for x in table.title.splitlines() if x.strip()] \
        or [""]
    if len(first) >= 80 and first in said.refs:  # e.g. one caption per metric
        first = " ".join(first.split()[:8]) + " ... (as in the table above)"
    else:
        said.add(first, f"the table “{name}”")
    kept = [x for x in rest if x not in said.refs]
    for x in rest:
        said.add(x, f"the table “{name}”")
    if len(kept) < len(rest):  # lines a table above gave (what the arms are, the coding)
        kept.append(f"({len(rest) - len(kept)} more line(s) as in the tables above)")
    title = "\n".join([first, *kept]) if table.title else ""
    rows = []
    for row in _dittoed(table.rows):  # a long cell another table gave: referred to
        rows.append(tuple(f"(as in {said.refs[c]})" if len(c) >= MIN_CHARS and c in said.refs
                          else c for c in row))
        for c in row:
            if len(c) >= MIN_CHARS:
                said.add(c, f"the table “{name}”")
    return dataclasses.replace(table, notes=tuple(notes), title=title, rows=tuple(rows))


#: what stands for a long cell that repeats the one above it
DITTO = "(as above)"


def _dittoed(rows: tuple[tuple[str, ...], ...]) -> tuple[tuple[str, ...], ...]:
    """A cell of :data:`MIN_CHARS` or more that repeats the cell above it (the setting of a
    claim, per claim of one write-up) as :data:`DITTO`."""
    out, above = [], None
    for row in rows:
        out.append(tuple(DITTO if above is not None and len(c) >= MIN_CHARS and c == above[i]
                         else c for i, c in enumerate(row)))
        above = row
    return tuple(out)


def escape(value: Any) -> str:
    """``html.escape`` of ``str(value)`` (quotes included): the one way data text enters HTML."""
    return html.escape(str(value), quote=True)


def code(text: str) -> str:
    """Prose from data, escaped, its backquoted spans (configuration lines) as code."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", escape(text))


_NOTES = re.compile(r'<ol class="perfkit-notes">(.*?)</ol>', re.S)


def fold_notes(page: str) -> str:
    """A table's notes collapsed under ``Notes (n)`` when they are longer than
    :data:`OPEN_NOTE_CHARS` in all (their marks in the cells stay)."""
    def fold(m: re.Match) -> str:
        n = m.group(1).count("<li>")
        if len(re.sub(r"<[^>]+>", "", m.group(1))) <= OPEN_NOTE_CHARS:
            return m.group(0)
        return (f'<details class="perfkit-table-notes"><summary>Notes to the table ({n})'
                f"</summary>{m.group(0)}</details>")

    return _NOTES.sub(fold, page)


def opening(text: str, words: int = 10) -> str:
    """The first ``words`` words of ``text`` (``...`` when there are more)."""
    parts = text.split()
    return " ".join(parts[:words]) + (" ..." if len(parts) > words else "")
