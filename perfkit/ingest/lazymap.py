"""A FrozenMap parsed from JSON text on first use (run manifests, the run store's maps).

Loading thousands of runs builds a manifest and an ``extra`` map for each; most callers never
look inside them. :class:`LazyJsonMap` keeps the text and decodes it, frozen, the first time
anything reads it; equality, pickling and every Mapping method behave as the FrozenMap's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from perfkit.model import FrozenMap


class LazyJsonMap(FrozenMap):
    """``decode(text)`` (a FrozenMap), with ``first`` entries put before its own, on first use."""

    __slots__ = ("_text", "_decode", "_first")

    def __init__(self, text: str, decode: Callable[[str], FrozenMap],
                 first: dict | None = None):  # FrozenMap's constructor is not called
        object.__setattr__(self, "_text", text)
        object.__setattr__(self, "_decode", decode)
        object.__setattr__(self, "_first", first)

    def __getattr__(self, name: str) -> Any:
        if name != "_data":
            raise AttributeError(name)
        decoded = self._decode(self._text)
        data = dict(decoded._data) if self._first is None else {**self._first,
                                                               **decoded._data}
        object.__setattr__(self, "_data", data)
        return data
