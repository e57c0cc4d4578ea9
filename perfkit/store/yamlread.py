"""The one YAML reader of perfkit's own files (experiment.yaml, report parameter files).

PyYAML reads YAML 1.1, where ``on``, ``off``, ``yes`` and ``no`` are booleans: a factor with
levels ``[off, on]`` would silently become ``[False, True]``. Here, as in YAML 1.2, only
``true`` and ``false`` (any case as YAML 1.2's core schema spells them) are booleans; every
other word stays the string that was written.

Aliases are bounded: a document whose aliases expand to more than :data:`MAX_EXPANDED` nodes
and characters (a "billion laughs" alias bomb) is refused before anything is built or
formatted, in time linear in the document's size, with a :class:`yaml.YAMLError` whose mark
says where; so is an alias that contains itself.

Size is bounded first: a file above :data:`MAX_FILE_BYTES` is refused from its size, before a
byte of it is read or parsed (:func:`read_file`; :func:`load` of a longer text likewise), with
the size in the message; so is a FIFO or a device, which could block or never end.
"""

from __future__ import annotations

import os
import re
from typing import Any

import yaml

from perfkit._fsutil import read_bytes, size_text

#: the most nodes plus scalar characters a document may expand to (a parameter file or a
#: design is a few kilobytes; this is a hundred times the largest bundled one)
MAX_EXPANDED = 1_000_000
#: the largest YAML file read, in bytes (the largest bundled one is under 4 KiB): half of
#: MAX_EXPANDED, so that a file within it never passes MAX_EXPANDED without an alias (a node
#: takes at least a character of the text, an implicit null's half of one)
MAX_FILE_BYTES = 1 << 19

_BOOL_1_2 = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_BOOL_TAG = "tag:yaml.org,2002:bool"


class Loader(yaml.SafeLoader):
    """``yaml.SafeLoader`` with YAML 1.2 booleans: ``on``/``off``/``yes``/``no`` stay strings."""


Loader.yaml_implicit_resolvers = {
    first: [(tag, _BOOL_1_2 if tag == _BOOL_TAG else regexp) for tag, regexp in resolvers]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
for _first in "oOyYnN":  # the YAML 1.1 boolean words start with these letters only
    Loader.yaml_implicit_resolvers[_first] = [
        (tag, regexp) for tag, regexp in Loader.yaml_implicit_resolvers.get(_first, [])
        if tag != _BOOL_TAG]


class ExpansionError(yaml.YAMLError):
    """A document too large once its aliases are expanded, or an alias inside itself. Carries
    ``problem`` and ``problem_mark`` as PyYAML's own errors do."""

    def __init__(self, problem: str, mark: yaml.Mark | None):
        self.problem = problem
        self.problem_mark = mark
        super().__init__(f"{problem} ({mark})" if mark else problem)


def _expanded_size(root: yaml.Node) -> int:
    """Nodes plus scalar characters of ``root`` with every alias expanded, memoized per node
    (an alias is the same node object), so the cost is linear in the document."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if key in sizes:
            continue
        children = _children(node)
        if not children_done:
            if key in open_nodes:
                raise ExpansionError("an alias that contains itself", node.start_mark)
            open_nodes.add(key)
            stack.append((node, True))
            for child in children:
                if id(child) in open_nodes:
                    raise ExpansionError("an alias that contains itself", child.start_mark)
                if id(child) not in sizes:
                    stack.append((child, False))
            continue
        size = 1 + (len(str(node.value)) if isinstance(node, yaml.ScalarNode) else 0)
        size += sum(sizes[id(c)] for c in children)
        if size > MAX_EXPANDED:
            raise ExpansionError(f"aliases that expand to more than {MAX_EXPANDED:,} nodes and "
                                 "characters (an alias bomb?)", node.start_mark)
        sizes[key] = size
        open_nodes.discard(key)
    return sizes[id(root)]


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return []


def read_file(path: str | os.PathLike) -> bytes:
    """The bytes of the YAML file ``path``: OSError as reading gives it, with
    :class:`~perfkit._fsutil.NotRegularFileError` for a FIFO or a device and
    :class:`~perfkit._fsutil.FileTooLargeError` for a file above :data:`MAX_FILE_BYTES`, whose
    ``strerror`` names its size (both judged before anything is read)."""
    return read_bytes(path, limit_bytes=MAX_FILE_BYTES)


class TooLargeError(yaml.YAMLError):
    """A YAML text above :data:`MAX_FILE_BYTES`, refused before it is parsed. Carries
    ``problem`` (naming its size) and ``problem_mark`` (None) as PyYAML's own errors do."""

    def __init__(self, n_bytes: int):
        self.problem = (f"{size_text(n_bytes)} of YAML, more than the {size_text(MAX_FILE_BYTES)}"
                        " a design or parameter file may have")
        self.problem_mark = None
        super().__init__(self.problem)


def compose(text: str | bytes) -> yaml.Node | None:
    """The node tree of one document, checked for alias expansion."""
    return _read(text, construct=False)


def load(text: str | bytes) -> Any:
    """One YAML document as Python values: YAML 1.2 booleans, aliases bounded. Raises
    :class:`yaml.YAMLError` (with ``problem_mark`` where known)."""
    return _read(text, construct=True)


def _read(text: str | bytes, construct: bool) -> Any:
    if len(text) > MAX_FILE_BYTES:  # characters: at most as many as the bytes they came from
        raise TooLargeError(len(text.encode("utf-8") if isinstance(text, str) else text))
    loader = Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _expanded_size(node)
        return loader.construct_document(node) if construct else node
    except RecursionError:  # PyYAML composes and builds recursively
        raise ExpansionError("nesting too deep to read", None) from None
    finally:
        loader.dispose()
