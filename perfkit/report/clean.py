"""Notebooks are committed clean (the job of nbstripout, with its ``keep_output`` rule).

A committed notebook holds:

- no outputs, except in cells marked ``# NBVAL_CHECK_OUTPUT`` (nbval compares those against a
  fresh run, so they must be committed, with the execution count of a fresh run: nbval
  refuses a reference output whose cell has no count);
- no execution counts anywhere else;
- no volatile metadata: papermill's, execution timings, widget state, the kernel's version.

:func:`problems` lists what breaks these rules (used by ``tests/test_notebooks_clean.py``);
:func:`clean` fixes them; :func:`refresh_checked` executes a notebook with its default
parameters and keeps only the outputs nbval checks. From a checkout::

    python -m perfkit.report.clean notebooks/*.ipynb              # strip
    python -m perfkit.report.clean --refresh notebooks/*.ipynb    # re-run, keep checked outputs
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import nbformat

CHECK_MARK = "NBVAL_CHECK_OUTPUT"
VOLATILE_CELL_METADATA = ("execution", "papermill", "ExecuteTime", "collapsed", "scrolled",
                          "jupyter")
VOLATILE_NOTEBOOK_METADATA = ("papermill", "widgets", "toc", "varInspector", "vscode")
KEPT_LANGUAGE_INFO = ("name",)


def is_checked(cell: nbformat.NotebookNode) -> bool:
    """True for a code cell nbval output-checks (a ``# NBVAL_CHECK_OUTPUT`` comment line)."""
    return cell.cell_type == "code" and any(
        line.strip().lstrip("#").strip() == CHECK_MARK
        for line in cell.source.splitlines() if line.strip().startswith("#"))


def _volatile_output(output: nbformat.NotebookNode) -> bool:
    return "execution_count" in output and output["execution_count"] is not None


def problems(nb: nbformat.NotebookNode) -> list[str]:
    """Every violation of the rules in the module docstring, one readable line each."""
    found = []
    for i, cell in enumerate(nb.cells, start=1):
        where = f"cell {i}"
        if cell.cell_type != "code":
            continue
        checked = is_checked(cell)
        if cell.get("execution_count") is not None and not checked:
            found.append(f"{where}: execution count {cell.execution_count}")
        if checked and cell.outputs and cell.get("execution_count") is None:
            found.append(f"{where}: checked output without an execution count (nbval refuses it)")
        if cell.outputs and not checked:
            found.append(f"{where}: {len(cell.outputs)} output(s) in a cell nbval does not check")
        for out in cell.outputs:
            if _volatile_output(out):
                found.append(f"{where}: an output carries an execution count")
            if out.get("output_type") == "error":
                found.append(f"{where}: an error output")
        for key in VOLATILE_CELL_METADATA:
            if key in cell.metadata:
                found.append(f"{where}: volatile metadata {key!r}")
    for key in VOLATILE_NOTEBOOK_METADATA:
        if key in nb.metadata:
            found.append(f"notebook: volatile metadata {key!r}")
    extra = set(nb.metadata.get("language_info", {})) - set(KEPT_LANGUAGE_INFO)
    if extra:
        found.append(f"notebook: volatile language_info {sorted(extra)}")
    return found


def clean(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Strip ``nb`` in place (and return it) so that :func:`problems` finds nothing."""
    for cell in nb.cells:
        for key in VOLATILE_CELL_METADATA:
            cell.metadata.pop(key, None)
        if cell.cell_type != "code":
            continue
        if not is_checked(cell):
            cell.execution_count = None
            cell.outputs = []
        elif not cell.outputs:
            cell.execution_count = None
        for out in cell.outputs:
            if "execution_count" in out:
                out["execution_count"] = None
        cell.outputs = [o for o in cell.outputs if o.get("output_type") != "error"]
    for key in VOLATILE_NOTEBOOK_METADATA:
        nb.metadata.pop(key, None)
    if "language_info" in nb.metadata:
        info = nb.metadata["language_info"]
        nb.metadata["language_info"] = {k: info[k] for k in KEPT_LANGUAGE_INFO if k in info}
    return nb


def refresh_checked(path: Path) -> nbformat.NotebookNode:
    """Execute ``path`` with its default parameters; keep only the checked cells' outputs."""
    from perfkit.report.execute import execute_notebook

    source = nbformat.read(str(path), as_version=4)
    with tempfile.TemporaryDirectory() as tmp:
        executed = Path(tmp) / path.name
        result = execute_notebook(path, executed, {})
        if result.error is not None:
            raise result.error
        ran = nbformat.read(str(executed), as_version=4)
    outputs = {c.get("id"): c for c in ran.cells if c.cell_type == "code"}
    for cell in source.cells:
        if is_checked(cell) and cell.get("id") in outputs:
            cell.outputs = outputs[cell.id].outputs
            cell.execution_count = outputs[cell.id].execution_count
    return clean(source)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m perfkit.report.clean",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="+", type=Path)
    parser.add_argument("--refresh", action="store_true",
                        help="re-run each notebook and keep the outputs nbval checks")
    parser.add_argument("--check", action="store_true", help="only report problems")
    args = parser.parse_args(argv)
    status = 0
    for path in args.notebooks:
        if args.check:
            found = problems(nbformat.read(str(path), as_version=4))
            for p in found:
                print(f"{path}: {p}")
            status |= bool(found)
            continue
        nb = refresh_checked(path) if args.refresh else clean(
            nbformat.read(str(path), as_version=4))
        nbformat.write(nb, str(path))
    return status


if __name__ == "__main__":
    sys.exit(main())
