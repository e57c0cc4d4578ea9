"""The one check of a notebook's parameters, however the notebook runs: ``perfkit report``
(before any kernel starts: :mod:`perfkit.report.params`), papermill's ``-p``/``-y``/``-f``
and an edit of the parameters cell in JupyterLab (in the notebook itself: its first code cell
after the parameters calls :func:`perfkit.report.nb.setup`, which calls
:func:`check_notebook`).

- Types: each value against the annotation of the ``parameters`` cell (``select: dict``,
  ``by: list[str]``, ``alpha: float``). A list or a mapping given as text (papermill's ``-p``
  gives text: ``-p select '{}'``, ``-p by '[keepalive, cache]'``) is read as YAML; a list of
  names also as one name or several separated by commas (``-p metrics throughput_rps``).
- Values: the rules by name (:data:`RULES`): alpha and confidence in (0, 1), percentiles on
  the 0-100 scale, positive times and rates, thresholds as ``0.05`` or ``5%``.

A wrong value is one line naming the parameter (``latency.ipynb: select: expected a mapping
(dict), found 'x' (str)``); in a notebook it is raised as :class:`ParameterError`, which
IPython (and so papermill) shows as that line alone, without a traceback.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import math
import re
from collections.abc import Callable, MutableMapping
from pathlib import Path
from typing import Any

import yaml

from perfkit.errors import PerfkitError
from perfkit.store import yamlread
from perfkit.units import FRACTION_WORDS, UnitError, fraction


class ParameterError(PerfkitError):
    """Parameters of a notebook that do not fit its declaration: one line per parameter."""

    def _render_traceback_(self) -> list[str]:
        """What IPython shows instead of a traceback (it calls this when it exists)."""
        return [f"perfkit: error: {line}" for line in str(self).splitlines()]


@dataclasses.dataclass(frozen=True)
class NotebookParameter:
    """One parameter declared in a notebook's ``parameters`` cell."""

    name: str
    type_name: str
    default: Any
    help: str




# -- type checking --------------------------------------------------------------------------------
def describe(value: Any) -> str:
    """A value as an error message quotes it: its repr (cut at 60 characters) and type."""
    if value is None:
        return "nothing (null)"
    text = repr(value)
    text = text if len(text) <= 60 else text[:57] + "..."
    return f"{text} ({type(value).__name__})"


def _split_union(type_name: str) -> list[str]:
    text = type_name.replace(" ", "")
    opt = re.fullmatch(r"Optional\[(.+)\]", text)
    if opt:
        return [opt.group(1), "None"]
    return text.split("|")


def _coerce(value: Any, type_name: str) -> tuple[bool, Any]:
    """(ok, value converted) for one YAML value against a Python annotation string."""
    for option in _split_union(type_name):
        if option == "None" and value is None:
            return True, None
        if option == "str" and isinstance(value, str):
            return True, value
        if option == "bool" and isinstance(value, bool):
            return True, value
        if option == "int" and isinstance(value, int) and not isinstance(value, bool):
            return True, value
        if option == "float" and isinstance(value, int | float) and not isinstance(value, bool):
            return True, float(value)
        inner = re.fullmatch(r"(?:list|List)\[(.+)\]", option)
        if inner and isinstance(value, list):
            items = [_coerce(v, inner.group(1)) for v in value]
            if all(ok for ok, _ in items):
                return True, [v for _, v in items]
        if option in ("list", "List") and isinstance(value, list):
            return True, value
        if re.fullmatch(r"(?:dict|Dict)(\[.+\])?", option) and isinstance(value, dict):
            return True, value
    return False, value


def _type_words(type_name: str) -> str:
    words = {"str": "a string", "int": "an integer", "float": "a number", "bool": "true or false",
             "None": "null", "dict": "a mapping", "list[str]": "a list of names",
             "list[float]": "a list of numbers", "list[int]": "a list of integers"}
    return " or ".join(words.get(o, o) for o in _split_union(type_name))


def _list_inner(option: str) -> str | None:
    """The item type of a list annotation (``"str"`` for ``list[str]``, ``""`` for a bare
    ``list``), None for any other."""
    found = re.fullmatch(r"(?:list|List)(?:\[(.+)\])?", option)
    return (found.group(1) or "") if found else None


def _from_text(value: Any, type_name: str) -> Any:
    """A list or a mapping given as text (``papermill -p by '[keepalive, cache]'``, ``-p
    select '{}'``, a string typed into a notebook's parameters cell) read as YAML; a list of
    names also as one name or several separated by commas (``-p metrics throughput_rps``).
    Any other value, and text that reads as neither, is returned as it is (the type check
    then names it)."""
    options = _split_union(type_name)
    lists = [inner for inner in map(_list_inner, options) if inner is not None]
    mapping = any(re.fullmatch(r"(?:dict|Dict)(\[.+\])?", o) for o in options)
    if not isinstance(value, str) or "str" in options or not (lists or mapping):
        return value
    try:
        parsed = yamlread.load(value)
    except yaml.YAMLError:
        return value
    if isinstance(parsed, list) and lists or isinstance(parsed, dict) and mapping:
        return parsed
    if "str" in lists and isinstance(parsed, str | int | float):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


def check_value(name: str, value: Any, param: NotebookParameter) -> tuple[Any, str | None, str]:
    """One parameter's value against its notebook's declaration, the one check of every way
    a notebook runs (``perfkit report``, papermill ``-p``/``-y``/``-f``, a JupyterLab edit of
    the parameters cell): ``(value converted, None, "")`` when it fits, else ``(value,
    expected, found)`` in words.

    Text is read as a list or mapping where one is declared (:func:`_from_text`), a threshold
    may be written ``5%`` (:data:`FRACTIONS`), and the rules by name (:data:`RULES`: alpha in
    (0, 1), percentiles on the 0-100 scale, positive times and rates) apply after the type."""
    type_name = _infer_type(param)
    if name in FRACTIONS and isinstance(value, str) and _fraction(value):
        value = fraction(value)  # "5%" -> 0.05
    ok, value = _coerce(_from_text(value, type_name), type_name)
    if not ok:
        return value, f"{_type_words(type_name)} ({type_name})", describe(value)
    for applies, check, words in RULES:
        if applies(name) and value is not None and not check(value):
            return value, words, describe(value)
    return value, None, ""


def _infer_type(param: NotebookParameter) -> str:
    if param.type_name not in ("None", ""):
        return param.type_name
    return type(param.default).__name__ if param.default is not None else "str | None"


# -- value rules (by parameter name) ---------------------------------------------------------------
def _in_open_unit(x: Any) -> bool:
    return isinstance(x, float) and 0 < x < 1


def _positive(x: Any) -> bool:
    return x is None or (isinstance(x, int | float) and math.isfinite(x) and x > 0)


def _percentile(x: Any) -> bool:
    items = x if isinstance(x, list) else [x]
    return all(isinstance(v, int | float) and 1 < v <= 100 for v in items)


#: parameters that are a share (a threshold): written 0.05 or "5%", as on the command line
FRACTIONS = ("max_regression", "threshold")


def _fraction(x: Any) -> bool:
    try:
        fraction(x)
    except UnitError:
        return False
    return True


RULES: tuple[tuple[Callable[[str], bool], Callable[[Any], bool], str], ...] = (
    (lambda n: n in FRACTIONS, _fraction, FRACTION_WORDS),
    (lambda n: n in ("alpha", "confidence"), _in_open_unit, "a number in (0, 1)"),
    (lambda n: n.startswith("percentile"), _percentile,
     "a percentile in (1, 100] (99 for p99, not 0.99)"),
    (lambda n: n.endswith(("_ms", "_rps", "_s")), _positive, "a positive number"),
    (lambda n: n in ("n_resamples", "seed") or n.startswith("min_"),
     lambda x: isinstance(x, int) and x >= 0, "a non-negative integer"),
)


# -- a notebook's own check ---------------------------------------------------------------------
def declared(notebook: Path) -> dict[str, NotebookParameter]:
    """The parameters a notebook's ``parameters`` cell declares (read with :mod:`ast`, as
    papermill reads them; their comments are not kept)."""
    try:
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    except (OSError, ValueError, KeyError):
        return {}
    found: dict[str, NotebookParameter] = {}
    for cell in cells:
        if "parameters" not in cell.get("metadata", {}).get("tags", []):
            continue
        try:
            tree = ast.parse("".join(cell.get("source", "")))
        except SyntaxError:
            return {}
        for node in tree.body:
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                try:
                    default = ast.literal_eval(node.value) if node.value else None
                except ValueError:
                    default = None
                found[node.target.id] = NotebookParameter(
                    node.target.id, ast.unparse(node.annotation).replace(" ", ""), default, "")
        break
    return found


def check_parameters(notebook: Path, namespace: MutableMapping[str, Any]) -> list[str]:
    """Check every parameter ``notebook`` declares against its value in ``namespace`` (a
    notebook's globals) and put the converted values back (``"[a, b]"`` becomes the list);
    return the names changed. Raises :class:`ParameterError`, one line per wrong parameter."""
    changed, problems = [], []
    for name, param in declared(notebook).items():
        if name not in namespace:
            continue
        given = namespace[name]
        value, expected, found = check_value(name, given, param)
        if expected is not None:
            problems.append(f"{notebook.name}: {name}: expected {expected}, found {found}")
            continue
        if type(value) is not type(given) or value != given:
            changed.append(name)
        namespace[name] = value
    if problems:
        raise ParameterError("\n".join(problems))
    return changed


def check_notebook(name: str, namespace: MutableMapping[str, Any]) -> list[str]:
    """:func:`check_parameters` for the report notebook ``name`` (nothing when it is not
    one)."""
    from perfkit import paths

    try:
        notebook = paths.notebooks_dir() / f"{name}.ipynb"
    except PerfkitError:
        return []
    return check_parameters(notebook, namespace)
