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
#: every key of a map at once, joined by newlines
_NUMBER_KEYS = re.compile(rf"{_NUMBER_KEY.pattern}(?:\n{_NUMBER_KEY.pattern})*", re.ASCII)
_INT_KEYS = re.compile(rf"{_INT_KEY.pattern}(?:\n{_INT_KEY.pattern})*", re.ASCII)
#: counts beyond this are damage (and would overflow numpy's int64 histograms)
MAX_COUNT = 2**62


def numeric_keys(mapping: dict, key: str, as_int: bool,
                 limit: float = math.inf) -> tuple[dict, str | None]:
    """``mapping`` with its keys as numbers (counts of keys that are the same number added),
    or the first problem in words. All keys at once when they pass (:func:`_keys_in_bulk`),
    else one by one, for the problem of the first bad key or count."""
    converted = _keys_in_bulk(mapping, as_int, limit)
    return (converted, None) if converted is not None else _keys_one_by_one(
        mapping, key, as_int, limit)


def _keys_in_bulk(mapping: dict, as_int: bool, limit: float) -> dict | None:
    """What :func:`_keys_one_by_one` gives when no key or count is refused and no two keys are
    the same number; None otherwise (or when in doubt)."""
    keys, counts = list(mapping), list(mapping.values())
    if not keys:
        return {}
    if not {str}.issuperset(map(type, keys)):  # JSON's keys are; a caller's may not be
        return None
    text = "\n".join(keys)
    pattern = _INT_KEYS if as_int else _NUMBER_KEYS
    if text.count("\n") != len(keys) - 1 or not pattern.fullmatch(text):
        return None
    numbers = list(map(int if as_int else float, keys))
    if (not 0 <= min(numbers) <= max(numbers) <= limit or not {int}.issuperset(map(type, counts))
            or not 0 <= min(counts) <= max(counts) < MAX_COUNT
            or len(set(numbers)) != len(numbers)):
        return None
    return dict(zip(numbers, counts, strict=True))


def _keys_one_by_one(mapping: dict, key: str, as_int: bool,
                     limit: float) -> tuple[dict, str | None]:
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
