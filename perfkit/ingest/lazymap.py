"""A FrozenMap built on first use (run manifests, the run store's maps and percentiles).

Loading thousands of runs builds a manifest, an ``extra`` map and percentile maps for each;
most callers never look inside most of them. :class:`LazyMap` keeps its source (JSON text, a
list of pairs) and builds the entries the first time anything reads them; equality, pickling
and every Mapping method behave as the FrozenMap's.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from perfkit.model import FrozenMap


class LazyMap(FrozenMap):
    """The dict ``make(source)``, built on first use."""

    __slots__ = ("_source", "_make")

    def __init__(self, source: Any, make: Callable[[Any], dict]):  # FrozenMap's is not called
        # plain slot stores (FrozenMap has no __setattr__ of its own): half the cost of
        # object.__setattr__, and the run store builds one per run and map
        self._source = source
        self._make = make

    def __getattr__(self, name: str) -> Any:
        if name != "_data":
            raise AttributeError(name)
        data = self._make(self._source)
        object.__setattr__(self, "_data", data)
        return data


def _decoded(decode: Callable[[str], FrozenMap], first: dict | None, text: str) -> dict:
    decoded = decode(text)
    return dict(decoded._data) if first is None else {**first, **decoded._data}


def LazyJsonMap(text: str, decode: Callable[[str], FrozenMap],  # noqa: N802 - a constructor
                first: dict | None = None) -> LazyMap:
    """``decode(text)`` (a FrozenMap), with ``first`` entries put before its own, on first
    use."""
    return LazyMap(text, functools.partial(_decoded, decode, first))
