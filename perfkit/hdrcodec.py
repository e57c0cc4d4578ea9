"""HdrHistogram's compressed encodings: V2 written and read for sparse histograms in numpy, V0
to V2 decoded into ``hdrh`` histograms.

The run store keeps every histogram as its standard encoded string, which any HdrHistogram
library reads. hdrh's ``encode``/``decode`` take ~0.6 ms each (a dense 28,672-count array
walked per call); a run store of 10,000 runs would spend 6 s on each. This module writes and
reads the same bytes from the sparse (index, count) arrays perfkit holds, with a few numpy
operations. The format (HdrHistogram V2, as HdrHistogram_c ``hdr_log_encode`` and hdrh write
it):

- base64 of: big-endian ``int32 cookie 0x1c849314, int32 length``, then zlib of
- a 40-byte big-endian header: ``int32 cookie 0x1c849313, int32 payload length, int32
  normalizing index offset (0), int32 significant figures, int64 lowest, int64 highest,
  float64 integer-to-double ratio (1.0)``, then
- the counts from index 0 to the last non-zero one as ZigZag LEB128 varints, a run of k zero
  counts written as the single value ``-k``.

``tests/test_hdrcodec.py`` checks the output byte for byte against hdrh's own encoder and the
decoder against hdrh-written strings. Anything this decoder does not expect (another layout,
a normalizing offset, a 9-byte varint) is handed to hdrh itself.

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

from perfkit.hdrlayout import HIGHEST_US, LAYOUT, LOWEST_US, SIGNIFICANT_FIGURES

COMPRESSION_COOKIE = 0x1C849304 | 0x10
ENCODING_COOKIE = 0x1C849303 | 0x10
_EXTERNAL = struct.Struct(">II")
_PAYLOAD = struct.Struct(">IIIIQQd")


_SHIFTS = (7 * np.arange(8)).astype(np.uint64)
_LIMITS = (np.uint64(1) << _SHIFTS[1:])


def _varints(values: np.ndarray) -> bytes:
    """ZigZag LEB128 of int64 ``values`` (each below 2**55 in magnitude): one row of up to 8
    bytes per value, the bytes each value needs kept in order."""
    zz = ((values << 1) ^ (values >> 63)).astype(np.uint64)
    nbytes = 1 + (zz[:, None] >= _LIMITS[None, :]).sum(axis=1)
    groups = ((zz[:, None] >> _SHIFTS[None, :]) & np.uint64(0x7F)).astype(np.uint8)
    position = np.arange(8)[None, :]
    groups |= (position < nbytes[:, None] - 1).astype(np.uint8) << 7
    return groups[position < nbytes[:, None]].tobytes()


def encode_sparse(idx: np.ndarray, cnt: np.ndarray) -> str:
    """The HdrHistogram V2 string of counts ``cnt`` at sorted layout indexes ``idx``."""
    idx = np.asarray(idx, dtype=np.int64)
    cnt = np.asarray(cnt, dtype=np.int64)
    if len(idx):
        gaps = np.diff(idx, prepend=-1) - 1
        tokens = np.empty(2 * len(idx), dtype=np.int64)
        tokens[0::2] = -gaps
        tokens[1::2] = cnt
        tokens = tokens[tokens != 0]  # no gap: no zero-run token
        body = _varints(tokens)
    else:
        body = b""
    header = _PAYLOAD.pack(ENCODING_COOKIE, len(body), 0, SIGNIFICANT_FIGURES, LOWEST_US,
                           HIGHEST_US, 1.0)
    compressed = zlib.compress(header + body)
    return base64.b64encode(_EXTERNAL.pack(COMPRESSION_COOKIE, len(compressed))
                            + compressed).decode("ascii")


def _tokens(body: bytes) -> np.ndarray | None:
    """Signed values of a ZigZag LEB128 stream; None for what this decoder leaves to hdrh."""
    b = np.frombuffer(body, dtype=np.uint8)
    if not len(b) or b[-1] & 0x80:
        return None if len(b) else np.zeros(0, dtype=np.int64)
    ends = np.flatnonzero(b < 0x80)
    starts = np.concatenate(([0], ends[:-1] + 1))
    if (ends - starts).max() >= 8:  # a 9-byte varint (counts >= 2**56): hdrh's business
        return None
    pos = np.arange(len(b)) - np.repeat(starts, ends - starts + 1)
    parts = (b & 0x7F).astype(np.uint64) << (7 * pos).astype(np.uint64)
    zz = np.add.reduceat(parts, starts)
    return (zz >> np.uint64(1)).astype(np.int64) ^ -(zz & np.uint64(1)).astype(np.int64)


def decode_sparse(encoded: str | bytes) -> tuple[np.ndarray, np.ndarray] | None:
    """(indexes, counts) of an encoded histogram in perfkit's layout, or None when it is not
    one this decoder reads (then decode it with hdrh). Raises ValueError on damage."""
    try:
        raw = base64.b64decode(encoded, validate=True)
        cookie, length = _EXTERNAL.unpack_from(raw)
        if cookie != COMPRESSION_COOKIE or length != len(raw) - _EXTERNAL.size:
            return None
        payload = zlib.decompress(raw[_EXTERNAL.size:])
        head = _PAYLOAD.unpack_from(payload)
    except (ValueError, struct.error, zlib.error, TypeError) as exc:
        raise ValueError(f"not an encoded HdrHistogram: {exc}") from None
    cookie, body_len, offset, figures, lowest, highest, ratio = head
    if (cookie, offset, figures, lowest, highest, ratio) != (
            ENCODING_COOKIE, 0, SIGNIFICANT_FIGURES, LOWEST_US, HIGHEST_US, 1.0):
        return None
    body = payload[_PAYLOAD.size:]
    if len(body) != body_len:
        raise ValueError("encoded HdrHistogram: payload length does not match its header")
    tokens = _tokens(body)
    if tokens is None:
        return None
    step = np.where(tokens < 0, -tokens, 1)
    at = np.cumsum(step) - step
    counted = tokens > 0
    idx, cnt = at[counted], tokens[counted]
    if len(idx) and idx[-1] >= LAYOUT.counts_len:
        raise ValueError("encoded HdrHistogram: an index beyond the layout")
    return idx.astype(np.int64), cnt.astype(np.int64)


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
