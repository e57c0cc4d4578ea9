"""A tool output's bytes as text, whatever encoding it was saved in, and how it was decoded.

Tools write their numbers in ASCII; names (a Locust request name in Chinese, a URL) and a pasted
preamble may be in any encoding. A file is decoded as UTF-8 (a UTF-8 byte-order mark dropped);
failing that as the encoding its byte-order mark names (UTF-16 or UTF-32, as Windows tools save
text); failing that as Latin-1, which reads every byte (a GBK name then reads wrong, its numbers
right). Every file not read as UTF-8 is said on each run it gives (:func:`noted`), never dropped
silently. A file with a NUL byte in its head and no byte-order mark is binary.
"""

from __future__ import annotations

import codecs
from typing import NamedTuple

from perfkit.model import Run, replaced_run
from perfkit.warning import Code, Warn

#: byte-order marks, longest first (UTF-32's starts as UTF-16's)
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


class Decoded(NamedTuple):
    text: str
    #: how the file was decoded when not as UTF-8 (None: UTF-8)
    note: Warn | None


def decode(data: bytes, head_bytes: int) -> Decoded | None:
    """``data`` as text, or None when it is binary (a NUL byte in its first ``head_bytes`` and
    no UTF-16/32 byte-order mark)."""
    for bom, codec in _BOMS:
        if data.startswith(bom):
            try:
                text = data.decode(codec)
            except UnicodeDecodeError:
                break
            return Decoded(text, Warn(Code.DECODED_BY_BOM, codec=codec))
    if data.find(b"\x00", 0, head_bytes) >= 0:
        return None
    try:
        return Decoded(data.decode("utf-8"), None)
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        return Decoded(data.decode("latin-1"),
                       Warn(Code.DECODED_LATIN1, byte=data[exc.start], line=line))


def noted(runs: list[Run], notes: dict[str, Warn]) -> list[Run]:
    """``runs`` with the decoding note of each file (``{path: note}``) they were read from
    (``run.source`` and, for Locust, ``extra['sources']``)."""
    if not notes:
        return runs
    out = []
    for run in runs:
        sources = run.extra.get("sources") or (run.source,)
        more = tuple(Warn(Code.IN_FILE, source=path, warning=notes[path]) for path in sources
                     if path in notes)
        out.append(replaced_run(run, {"notes": run.notes + more}) if more else run)
    return out
