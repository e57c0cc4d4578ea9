"""Each caveat once per page: a text already said is referred to, not repeated.

The analysis words a caveat in full wherever it applies: the 1 s SYN-timeout caveat of 8 runs
and of 5 of them share two long clauses and differ in their run lists. A page that showed
each in full would say those clauses again and again. :class:`Said` keeps what a page has
said, with how to refer to it (``"caveat 5"``); :meth:`Said.condense` returns a text with
every span of :data:`MIN_CHARS` or more that an earlier text holds replaced by a reference
to it, and a text said before as a whole by the reference alone. The files (CSV, Markdown,
LaTeX) keep every text in full: only the page condenses.

The page's text helpers live here too: :func:`condensed_table` (a table's notes and title
lines said before, referred to), :func:`fold_notes` (long notes collapsed), :func:`code`
(backquoted spans of prose as code), :func:`escape` (data text into HTML) and
:func:`opening` (the first words of a text).
"""

from __future__ import annotations

import dataclasses
import html
import re
from difflib import SequenceMatcher
from typing import Any

#: the shortest span worth replacing by a reference (characters)
MIN_CHARS = 80
#: the opening words of a text that are never replaced (they say what it is about)
KEEP_WORDS = 8
#: the first of the private-use characters that stand for the references put in a text
_TOKEN = 0xE000
#: caveats and table notes longer than this in all (characters) are shown collapsed
OPEN_NOTE_CHARS = 240


def _snap(text: str, start: int, end: int) -> tuple[int, int]:
    """``[start, end)`` shrunk to whole words (and spaces around them)."""
    if start > 0 and not text[start - 1].isspace():
        nxt = text.find(" ", start)
        start = end if nxt < 0 or nxt >= end else nxt + 1
    if end < len(text) and not text[end].isspace() and text[end] not in ",;:.)":
        prev = text.rfind(" ", start, end)
        end = start if prev < 0 else prev
    return start, end


@dataclasses.dataclass
class Said:
    """What a page has said so far: text -> how to refer to it."""

    refs: dict[str, str] = dataclasses.field(default_factory=dict)

    def add(self, text: str, ref: str) -> None:
        self.refs.setdefault(text, ref)

    def condense(self, text: str, min_chars: int = MIN_CHARS) -> str:
        """``text`` with the spans said before replaced by ``(as in REF)``; a text said
        before whole is ``as REF``."""
        if text in self.refs:
            return f"as {self.refs[text]}"
        out = text
        # a text keeps its opening words, so that it still says what it is about
        keep = len(" ".join(text.split(" ")[:KEEP_WORDS]))
        # a reference put in stands as one private-use character until the end, so that a
        # later pass never matches (and nests a reference in) the words a reference quotes
        inserted: list[str] = []
        for _ in range(8):  # each pass replaces the longest span left
            best = None
            for earlier, ref in self.refs.items():
                m = SequenceMatcher(None, out, earlier, autojunk=False).find_longest_match(
                    keep, len(out), 0, len(earlier))
                if m.size >= min_chars and (best is None or m.size > best[0].size):
                    best = (m, ref)
            if best is None:
                break
            m, ref = best
            start, end = _snap(out, m.a, m.a + m.size)
            if end - start < min_chars:
                break
            inserted.append(f"[... as in {ref} ...]")
            out = f"{out[:start]}{chr(_TOKEN + len(inserted) - 1)}{out[end:]}"
        for i, reference in enumerate(inserted):
            out = out.replace(chr(_TOKEN + i), reference)
        return out


def condensed_table(said: Said, table: Any, name: str) -> Any:
    """``table`` (a :class:`perfkit.present.tables.Table`) with each note said before on
    the page referred to rather than repeated (:class:`perfkit.report.condense.Said`);
    its notes are then said."""
    notes = []
    for i, n in enumerate(map(str, table.notes), 1):
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
