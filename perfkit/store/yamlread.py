"""The one YAML reader of perfkit's own files (experiment.yaml, report parameter files).

PyYAML reads YAML 1.1, where ``on``, ``off``, ``yes`` and ``no`` are booleans: a factor with
levels ``[off, on]`` would silently become ``[False, True]``. Here, as in YAML 1.2, only
``true`` and ``false`` (any case as YAML 1.2's core schema spells them) are booleans; every
other word stays the string that was written.

Aliases are bounded: a document whose aliases expand to more than :data:`MAX_EXPANDED` nodes
and characters (a "billion laughs" alias bomb) is refused before anything is built or
formatted, in time linear in the document's size, with a :class:`yaml.YAMLError` whose mark
says where; so is an alias that contains itself.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

#: the most nodes plus scalar characters a document may expand to (a parameter file or a
#: design is a few kilobytes; this is a hundred times the largest bundled one)
MAX_EXPANDED = 1_000_000

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


def compose(text: str | bytes) -> yaml.Node | None:
    """The node tree of one document, checked for alias expansion."""
    return _read(text, construct=False)


def load(text: str | bytes) -> Any:
    """One YAML document as Python values: YAML 1.2 booleans, aliases bounded. Raises
    :class:`yaml.YAMLError` (with ``problem_mark`` where known)."""
    return _read(text, construct=True)


def _read(text: str | bytes, construct: bool) -> Any:
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
