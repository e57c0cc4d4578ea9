"""HdrHistogram's compressed histogram encodings, V0 to V2, decoded into ``hdrh`` histograms.

``hdrh`` (HdrHistogram_py) decodes only the V2 encoding (``HISTF...``, cookie ``0x1c849304``).
The Java and C libraries also read the two before it, which older logs hold (jHiccup 2.0.1
wrote V0, 2.0.6 V1). Their layout, as HdrHistogram's encoding specification and the Java
``AbstractHistogram.decodeFromByteBuffer`` give it (all integers big-endian)::

    compressed:  cookie (4) | length of the deflated payload (4) | zlib(payload)
    V0 payload:  cookie (4) | significant digits (4) | lowest (8) | highest (8) | total (8)
                 | counts, one word each, of the whole counts array
    V1 payload:  cookie (4) | payload length (4) | normalizing index offset (4)
                 | significant digits (4) | lowest (8) | highest (8) | conversion ratio (8)
                 | counts, one word each, up to the payload length

The word size (2, 4 or 8 bytes) is the cookie's second nibble (``cookie & 0xf0 >> 4``). The
counts are those of the histogram's own counts array, so they are set, index for index, on an
``hdrh`` histogram of the same lowest, highest and significant digits.
"""

from __future__ import annotations

import base64
import binascii
import struct
import zlib

import numpy as np
from hdrh.histogram import HdrHistogram

V0_COMPRESSED = 0x1C849309
V0_ENCODING = 0x1C849308
V1_COMPRESSED = 0x1C849302
V1_ENCODING = 0x1C849301
V2_COMPRESSED = 0x1C849304
_WORD = {2: ">i2", 4: ">i4", 8: ">i8"}


class CodecError(ValueError):
    """A payload that is not a histogram of a known encoding."""


def _base(cookie: int) -> int:
    return cookie & ~0xF0


def decode(payload: str) -> HdrHistogram:
    """The histogram of one log line's base64 payload (V0, V1 or V2)."""
    try:
        raw = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise CodecError(f"not base64: {exc}") from None
    if len(raw) < 8:
        raise CodecError("shorter than a compressed histogram's header")
    cookie, length = struct.unpack(">Ii", raw[:8])
    if _base(cookie) == V2_COMPRESSED:
        return HdrHistogram.decode(payload.encode("ascii"))
    if _base(cookie) not in (V0_COMPRESSED, V1_COMPRESSED):
        raise CodecError(f"an unknown cookie {cookie:#x}")
    if length < 0 or length > len(raw) - 8:
        raise CodecError(f"a deflated length of {length} bytes in a payload of {len(raw) - 8}")
    try:
        inner = zlib.decompress(raw[8:8 + length])
    except zlib.error as exc:
        raise CodecError(f"zlib: {exc}") from None
    if _base(cookie) == V0_COMPRESSED:
        return _v0(inner)
    return _v1(inner)


def _histogram(lowest: int, highest: int, digits: int) -> HdrHistogram:
    if not (1 <= lowest and 2 * lowest <= highest and 0 <= digits <= 5):
        raise CodecError(f"an impossible layout (lowest {lowest}, highest {highest}, "
                         f"{digits} significant digits)")
    return HdrHistogram(lowest, highest, digits)


def _v0(inner: bytes) -> HdrHistogram:
    if len(inner) < 32:
        raise CodecError("a V0 header cut short")
    cookie, digits, lowest, highest, _total = struct.unpack(">Iiqqq", inner[:32])
    if _base(cookie) != V0_ENCODING:
        raise CodecError(f"a V0 payload cookie, not {cookie:#x}")
    return _filled(_histogram(lowest, highest, digits), inner[32:], cookie)


def _v1(inner: bytes) -> HdrHistogram:
    if len(inner) < 40:
        raise CodecError("a V1 header cut short")
    cookie, length, offset, digits, lowest, highest, _ratio = struct.unpack(
        ">IiiiqqQ", inner[:40])
    if _base(cookie) != V1_ENCODING:
        raise CodecError(f"a V1 payload cookie, not {cookie:#x}")
    if offset != 0:
        raise CodecError(f"a normalizing index offset of 0, not {offset}")
    if length < 0 or length > len(inner) - 40:
        raise CodecError(f"a payload of {length} bytes, {len(inner) - 40} present")
    return _filled(_histogram(lowest, highest, digits), inner[40:40 + length], cookie)


def _filled(hist: HdrHistogram, data: bytes, cookie: int) -> HdrHistogram:
    word = (cookie & 0xF0) >> 4
    if word not in _WORD:
        raise CodecError(f"a word size of 2, 4 or 8 bytes, not {word}")
    n = min(len(data) // word, hist.counts_len)
    counts = np.frombuffer(data[:n * word], dtype=_WORD[word]).astype(np.int64)
    if len(counts) and counts.min() < 0:
        raise CodecError("non-negative counts")
    view = np.frombuffer(hist.counts, dtype=np.uint64)
    view[:n] = counts
    used = np.flatnonzero(counts)
    if len(used):
        hist.set_internal_tacking_values(int(used[0]), int(used[-1]), int(counts.sum()))
        hist.min_value = hist.get_value_from_index(int(used[0]))
        hist.max_value = hist.get_value_from_index(int(used[-1]))
    return hist
