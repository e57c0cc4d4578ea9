"""HdrHistogram's compressed V2 encoding ("HISTF..." base64), for sparse histograms, in numpy.

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
"""

from __future__ import annotations

import base64
import struct
import zlib

import numpy as np

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
