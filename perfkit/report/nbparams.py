"""Parameters as papermill's command line gives them: ``papermill -p metrics throughput_rps``
sets ``metrics = "throughput_rps"``, a string where the notebook declares ``list[str]``.

:func:`coerce_lists` turns such a string into the list it names (one name, or several
separated by commas), reading the declared types from the notebook's ``parameters`` cell, so
that the notebook runs as asked instead of iterating over the letters of a name.
:func:`perfkit.report.nb.setup` calls :func:`coerce_notebook` on the notebook's namespace.
"""

from __future__ import annotations

import ast
import json
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

#: the annotations of a list of names in a parameters cell
LIST_TYPES = ("list[str]", "List[str]")


def list_parameters(notebook: Path) -> list[str]:
    """The parameters a notebook's ``parameters`` cell declares as ``list[str]``."""
    try:
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    except (OSError, ValueError, KeyError):
        return []
    found = []
    for cell in cells:
        if "parameters" not in cell.get("metadata", {}).get("tags", []):
            continue
        try:
            tree = ast.parse("".join(cell.get("source", "")))
        except SyntaxError:
            return []
        for node in tree.body:
            if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
                    and ast.unparse(node.annotation).replace(" ", "") in LIST_TYPES):
                found.append(node.target.id)
    return found


def coerce_lists(notebook: Path, namespace: MutableMapping[str, Any]) -> list[str]:
    """Replace each ``list[str]`` parameter given as a string by its list; return their
    names."""
    changed = []
    for name in list_parameters(notebook):
        value = namespace.get(name)
        if isinstance(value, str):
            namespace[name] = [part.strip() for part in value.split(",") if part.strip()]
            changed.append(name)
    return changed


def coerce_notebook(name: str, namespace: MutableMapping[str, Any]) -> list[str]:
    """:func:`coerce_lists` for the report notebook ``name`` (nothing when it is not one)."""
    from perfkit import paths
    from perfkit.errors import PerfkitError

    try:
        notebook = paths.notebooks_dir() / f"{name}.ipynb"
    except PerfkitError:
        return []
    return coerce_lists(notebook, namespace)
