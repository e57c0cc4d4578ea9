"""A FrozenMap built on first use (run manifests, the run store's maps and percentiles).

Loading thousands of runs builds a manifest, an ``extra`` map and percentile maps for each;
most callers never look inside most of them. :class:`LazyMap` keeps its source (JSON text, a
list of pairs) and builds the entries the first time anything reads them; equality, pickling
and every Mapping method behave as the FrozenMap's.
"""

from __future__ import annotations

import functools
import json
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


def _frozen_list(items: list) -> tuple:
    return tuple(_frozen_list(x) if type(x) is list else x for x in items)


def _frozen_object(obj: dict) -> FrozenMap:
    """``json.loads`` object hook: objects as FrozenMap, arrays as tuples, in one pass."""
    for key, value in obj.items():
        if type(value) is list:
            obj[key] = _frozen_list(value)
    return FrozenMap(obj)


def frozen_json(text: str) -> FrozenMap:
    """A JSON object's text as a Run holds a map: objects FrozenMap, arrays tuples."""
    return json.loads(text, object_hook=_frozen_object)


class LazyJsonMap(LazyMap):
    """``decode(text)`` (a FrozenMap; default :func:`frozen_json`), with ``first`` entries put
    before its own, built on first use.

    :meth:`json_text` gives the map as JSON without building it (the run store writes a run's
    manifest so: re-encoding what was just decoded cost more than the parse)."""

    __slots__ = ("_text", "_first", "_plain")

    def __init__(self, text: str, decode: Callable[[str], FrozenMap] | None = None,
                 first: dict | None = None):
        super().__init__(text, functools.partial(_decoded, decode or frozen_json, first))
        self._text, self._first, self._plain = text, first, decode is None

    def json_text(self, encode: Callable[[Any], str]) -> str | None:
        """The map as the text of one JSON object whose ``json.loads`` (objects as maps,
        arrays as tuples) is this map: the source text with ``first``'s entries (written by
        ``encode``) spliced in front, a later duplicate key winning as it does here. None
        when that cannot be promised without reading the text: another decoder, a text with
        ``\\u`` escapes (they could spell a ``__map__`` tag), or a tag itself."""
        text = self._text
        if not self._plain or "\\u" in text or "__map__" in text:
            return None
        body = text.strip()
        if not body.startswith("{"):
            return None
        if not self._first:
            return body
        head = encode(dict(self._first))[:-1]  # '{"path":"..."' without its closing brace
        rest = body[1:].lstrip()
        return head + ("}" if rest.startswith("}") else "," + rest)
