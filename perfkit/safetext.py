"""Text that cannot be turned against its reader: every name perfkit writes comes from data a
user (or a tool) chose freely (a Locust request name, a factor level, a label), so it is made
safe where it is written, once, here:

- a CSV cell that begins with ``= + - @``, a tab or a carriage return is prefixed with ``'``,
  as OWASP recommends against CSV injection (a spreadsheet would run it as a formula); numbers,
  and text that is a plain number, keep their sign (:func:`csv_cell`, :func:`csv_frame`), and
  a line break inside a cell is always quoted (:func:`csv_lines`);
- text for a terminal has its control characters written as escapes (``\\x1b``, ``\\t``), so a
  name cannot move the cursor, recolour the screen, set its title or ring its bell
  (:func:`terminal`);
- text for XML 1.0 loses nothing but holds no character XML forbids: those are written as
  escapes too (:func:`xml_text`).

See https://owasp.org/www-community/attacks/CSV_Injection.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # only csv_frame takes a frame: the rest needs no pandas
    import pandas as pd

#: the first characters that make a spreadsheet read a cell as a formula (OWASP)
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
#: the prefix that makes a spreadsheet read such a cell as text
TEXT_PREFIX = "'"
#: a plain number written as text (its sign is no formula)
_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")
#: C0 controls, DEL and C1 controls: what a terminal obeys instead of printing
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
#: what XML 1.0 cannot hold (its Char production), surrogates and non-characters included:
#: the complement of ``[\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]``, spelled
#: out (the same characters; the negated ranges took 9 ms to compile on every start, issue 33)
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def csv_cell(value: Any) -> Any:
    """``value`` as a CSV cell may hold it: text beginning with one of
    :data:`FORMULA_STARTS` gets :data:`TEXT_PREFIX` (``'=1+1``); numbers and text that is a
    plain number (``-2.5``) are left as they are, and so is every other value."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS) \
            and not _NUMBER.fullmatch(value):
        return TEXT_PREFIX + value
    return value


def csv_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` whose text cells went through :func:`csv_cell` (number columns are
    left alone)."""
    out = frame.copy()
    for name in out.columns:
        if out[name].dtype.kind == "O":  # object, str and category columns
            out[name] = out[name].astype(object).map(csv_cell)
    return out


def csv_lines(text: str) -> str:
    """CSV written with ``\\r\\n`` between records (so that the csv module quotes every cell
    holding a CR or a LF), with ``\\n`` between records instead: a line break inside a quoted
    cell is kept as written."""
    pieces = text.split("\r\n")
    out = [pieces[0]]
    quotes = pieces[0].count('"')
    for piece in pieces[1:]:
        out.append("\r\n" if quotes % 2 else "\n")  # inside a quoted cell: the cell's own
        out.append(piece)
        quotes += piece.count('"')
    return "".join(out)


def _escape(match: re.Match[str]) -> str:
    ch = match.group()
    return _NAMED.get(ch) or (f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}")


def terminal(text: str) -> str:
    """``text`` with every control character (C0, DEL, C1; tab and line breaks too) written
    as its escape, ``\\x1b`` for ESC: what a terminal shows, it cannot obey."""
    return _CONTROL.sub(_escape, text)


def xml_text(text: str) -> str:
    """``text`` with every character XML 1.0 cannot hold written as its escape (``\\x1b``)."""
    return _NOT_XML.sub(_escape, text)
