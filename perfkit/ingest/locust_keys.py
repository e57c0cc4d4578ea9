"""The maps of Locust's ``--json`` output keyed by numbers written as strings:
``response_times`` (a rounded time in ms -> count) and the per-second request and failure
counts (epoch s -> count). :func:`numeric_keys` reads one, keys as numbers, for
:mod:`perfkit.ingest.locust_json`.
"""

from __future__ import annotations

import math
import re

# ASCII only (re.ASCII): \d would admit any Unicode digit, which int() and float() then read
#: a key of ``response_times`` (a rounded time in ms) and of the per-second maps (epoch s)
_NUMBER_KEY = re.compile(r"(?:\d{1,300}(?:\.\d{0,300})?|\.\d{1,300})(?:[eE][-+]?\d{1,3})?",
                         re.ASCII)
_INT_KEY = re.compile(r"\d{1,18}", re.ASCII)
#: counts beyond this are damage (and would overflow numpy's int64 histograms)
MAX_COUNT = 2**62


def numeric_keys(mapping: dict, key: str, as_int: bool,
                 limit: float = math.inf) -> tuple[dict, str | None]:
    """``mapping`` with its keys as numbers (counts of keys that are the same number added),
    or ``({}, the first problem in words)``: a key that is no number in [0, ``limit``] or a
    count that is no whole number in [0, 2**62)."""
    out: dict = {}
    pattern = _INT_KEY if as_int else _NUMBER_KEY
    for k, v in mapping.items():
        if not pattern.fullmatch(k):  # not int()/float(): they take " 1_0 " and "\u0661"
            return {}, f"{key!r} has the key {k!r}"
        num = int(k) if as_int else float(k)
        if not 0 <= num <= limit:
            return {}, f"{key!r} has the key {k!r} (not a number in [0, {limit:g}])"
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < MAX_COUNT:
            return {}, f"{key!r} has the count {v!r}"
        out[num] = out.get(num, 0) + v
    return out, None
