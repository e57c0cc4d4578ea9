"""Report parameter files (``params/*.yaml``): load, check against the notebooks, explain errors.

A parameter file names the notebooks to run, in order, with their parameters::

    title: perfkit demo report          # shown on index.html
    data: ../data                       # optional: experiments folder, relative to this file
    defaults:                           # optional: given to every notebook that declares them
      alpha: 0.05
    notebooks:
      latency:
        experiment: wrk2-sweep
        slo_ms: 10.0

Every value is checked before any notebook runs, against the typed ``parameters`` cell of its
notebook (as ``papermill --help-notebook`` shows it): unknown names, wrong types, values out of
range and experiment folders that do not exist are all reported at once, one per line, as
``FILE:LINE: KEY: expected ..., found ...``. Types and ranges are the check every notebook
makes of its own parameters however it runs (:func:`perfkit.report.nbparams.check_value`).
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from perfkit import paths
from perfkit.errors import PerfkitError
from perfkit.report.nbparams import NotebookParameter, check_value, describe
from perfkit.store import yamlread

#: parameters ``perfkit report`` sets itself; a parameter file may not
RESERVED = ("output_dir", "data_root")
TOP_LEVEL = ("title", "data", "defaults", "notebooks")


class ParamsError(PerfkitError):
    """One or more problems in a parameter file, each as ``FILE:LINE: KEY: expected X, found Y``."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__("invalid report parameters:\n  " + "\n  ".join(self.problems))


@dataclasses.dataclass(frozen=True)
class NotebookRun:
    """A notebook to execute and the parameters the file gives it (defaults are not repeated)."""

    name: str
    path: Path
    parameters: Mapping[str, Any]


@dataclasses.dataclass(frozen=True)
class ReportParams:
    """A validated parameter file."""

    path: Path
    title: str
    data_root: Path
    notebooks: tuple[NotebookRun, ...]


def notebook_parameters(path: Path) -> dict[str, NotebookParameter]:
    """The typed parameters of a notebook, read as ``papermill --help-notebook`` reads them."""
    from papermill.inspection import inspect_notebook

    found = {}
    for name, p in inspect_notebook(str(path)).items():
        try:
            default = ast.literal_eval(p["default"])
        except (ValueError, SyntaxError):
            default = p["default"]
        found[name] = NotebookParameter(name, p["inferred_type_name"], default, p["help"])
    return found


def _is_experiment_param(name: str) -> bool:
    return (name in ("experiment", "experiments", "history")
            or name.endswith(("_experiment", "_experiments")))


# -- locating keys in the YAML text ----------------------------------------------------------------
def _key_lines(text: str) -> dict[tuple[str, ...], int]:
    """1-based line of every mapping key, by its path of keys."""
    lines: dict[tuple[str, ...], int] = {}

    def walk(node: yaml.Node, prefix: tuple[str, ...]) -> None:
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                path = prefix + (str(key.value),)
                lines[path] = key.start_mark.line + 1
                walk(value, path)

    try:
        root = yamlread.compose(text)
    except yaml.YAMLError:
        return lines
    if root is not None:
        walk(root, ())
    return lines


class _Problems:
    def __init__(self, path: Path, lines: dict[tuple[str, ...], int]):
        self.path, self.lines = path, lines
        self.items: list[str] = []

    def add(self, keys: tuple[str, ...], expected: str, found: str) -> None:
        line = None
        for n in range(len(keys), 0, -1):
            line = self.lines.get(keys[:n])
            if line is not None:
                break
        where = f"{self.path}:{line}" if line else str(self.path)
        key = ".".join(keys) if keys else "(top level)"
        self.items.append(f"{where}: {key}: expected {expected}, found {found}")


# -- loading ---------------------------------------------------------------------------------------
def _read_yaml(path: Path) -> tuple[Any, str]:
    try:
        raw = yamlread.read_file(path)  # a FIFO or a file above its size: refused unread
    except FileNotFoundError:
        raise ParamsError([f"{path}: expected a parameter file, found no such file"]) from None
    except IsADirectoryError:
        raise ParamsError([f"{path}: expected a parameter file (YAML), found a folder"]
                          ) from None
    except OSError as exc:
        why = exc.strerror or str(exc)
        raise ParamsError([f"{path}: expected a readable parameter file, found "
                           f"{why[:1].lower()}{why[1:]}"]) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise ParamsError([f"{path}:{line}: expected a parameter file (UTF-8 YAML text), found "
                           "binary data"]) from None
    if "\0" in text:
        line = text.count("\n", 0, text.index("\0")) + 1
        raise ParamsError([f"{path}:{line}: expected a parameter file (YAML text), found "
                           "binary data (a NUL byte)"])
    try:
        return yamlread.load(text), text
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark else str(path)
        problem = getattr(exc, "problem", None) or str(exc)
        found = (problem if isinstance(exc, yamlread.ExpansionError)
                 else f"a syntax error ({problem})")
        raise ParamsError([f"{where}: expected valid YAML, found {found}"]) from None


def load_params(path: str | os.PathLike, notebooks_dir: Path | None = None) -> ReportParams:
    """Read and check a report parameter file; raise :class:`ParamsError` listing every problem.

    Parameters
    ----------
    path : path-like
        The YAML file.
    notebooks_dir : Path, optional
        Where the notebooks are (default :func:`perfkit.paths.notebooks_dir`).
    """
    path = Path(path)
    data, text = _read_yaml(path)
    problems = _Problems(path, _key_lines(text))
    if not isinstance(data, dict):
        problems.add((), "a mapping with a 'notebooks' key", describe(data))
        raise ParamsError(problems.items)
    for key in data:
        if key not in TOP_LEVEL:
            problems.add((str(key),), f"one of {', '.join(TOP_LEVEL)}", "an unknown key")
    title = data.get("title", "perfkit report")
    if not isinstance(title, str):
        problems.add(("title",), "a string", describe(title))
    root = _data_root(data.get("data"), path, problems)
    nb_dir = notebooks_dir or paths.notebooks_dir()
    runs = _check_notebooks(data, nb_dir, root, problems)
    if problems.items:
        raise ParamsError(problems.items)
    return ReportParams(path=path, title=str(title), data_root=root, notebooks=tuple(runs))


def _data_root(value: Any, path: Path, problems: _Problems) -> Path:
    if value is None:
        return paths.data_root()
    if not isinstance(value, str):
        problems.add(("data",), "a folder path (string)", describe(value))
        return paths.data_root()
    root = Path(value).expanduser()
    root = (root if root.is_absolute() else path.parent / root).resolve()
    if not root.is_dir():
        problems.add(("data",), "an existing folder of experiments", f"{value!r} ({root})")
    return root


def _check_notebooks(data: dict, nb_dir: Path, root: Path, problems: _Problems
                     ) -> list[NotebookRun]:
    notebooks = data.get("notebooks")
    available = sorted(p.stem for p in nb_dir.glob("*.ipynb"))
    if not isinstance(notebooks, dict) or not notebooks:
        problems.add(("notebooks",), f"a mapping of notebook name ({', '.join(available)}) "
                     "to its parameters", describe(notebooks))
        return []
    declared = {name: notebook_parameters(nb_dir / f"{name}.ipynb")
                for name in notebooks if name in available}
    defaults = data.get("defaults") or {}
    if not isinstance(defaults, dict):
        problems.add(("defaults",), "a mapping of parameter name to value", describe(defaults))
        defaults = {}
    for key in defaults:
        if not any(key in d for d in declared.values()):
            problems.add(("defaults", str(key)), "a parameter of one of the notebooks",
                         "a name no notebook declares")
    runs = []
    for name, given in notebooks.items():
        keys = ("notebooks", str(name))
        if name not in declared:
            problems.add(keys, f"a notebook in {nb_dir} ({', '.join(available)})",
                         f"{name!r}{_suggest(str(name), available)}")
            continue
        if given is not None and not isinstance(given, dict):
            problems.add(keys, "a mapping of parameter name to value", describe(given))
            continue
        merged = {k: v for k, v in defaults.items() if k in declared[name]}
        merged.update(given or {})
        values = _check_values(merged, declared[name], keys, root, problems)
        if "data_root" in declared[name]:
            values["data_root"] = str(root)
        runs.append(NotebookRun(name, nb_dir / f"{name}.ipynb", values))
    return runs


def _suggest(word: str, options: list[str]) -> str:
    close = difflib.get_close_matches(word, options, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _check_values(given: dict, declared: dict[str, NotebookParameter], keys: tuple[str, ...],
                  root: Path, problems: _Problems) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for key, value in given.items():
        where = keys + (str(key),)
        if key in RESERVED:
            problems.add(where, "a parameter you may set", f"{key!r}, which perfkit report sets")
            continue
        if key not in declared:
            names = sorted(n for n in declared if n not in RESERVED)
            problems.add(where, f"one of the notebook's parameters ({', '.join(names)})",
                         f"{key!r}{_suggest(str(key), names)}")
            continue
        value, expected, found = check_value(str(key), value, declared[key])
        if expected is not None:
            problems.add(where, expected, found)
            continue
        if _is_experiment_param(str(key)):
            _check_experiments(value, where, root, problems)
        values[key] = value
    return values


def _check_experiments(value: Any, where: tuple[str, ...], root: Path,
                       problems: _Problems) -> None:
    names = value if isinstance(value, list) else [value]
    known = paths.available_experiments(root)
    for name in names:
        if not name:
            continue  # an empty name means "none" for optional experiments
        expected = f"an experiment folder in {root} ({', '.join(known) or 'none'})"
        try:
            found = paths.data_dir(name, root).resolve()
        except PerfkitError:
            problems.add(where, expected, f"{name!r}{_suggest(str(name), known)}")
            continue
        if not found.is_relative_to(root.resolve()):
            problems.add(where, expected, f"{name!r}, which leaves the data root (to read "
                         "experiments elsewhere, set 'data:' to their folder)")
