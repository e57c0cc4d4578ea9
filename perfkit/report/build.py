"""``perfkit report``: parameters -> executed notebooks -> HTML pages, figures, tables, index.

Output folder layout::

    OUT/index.html                 the answers first (by designed question, caveats numbered
                                   once), the threats common to every page, then the pages
    OUT/methods.md, methods.html   the Methods: what several experiments share said once, then
                                   each experiment's own paragraph
    OUT/<notebook>.html            one self-contained page per notebook (no code, images inline)
    OUT/<notebook>.ipynb           the executed notebook, to reopen in JupyterLab
    OUT/figures/<notebook>-<name>.svg|.png
    OUT/tables/<notebook>-<name>.csv

Parameters are checked before any notebook runs. A failing notebook does not stop the others;
its page and the index say which cell failed and why, and the report's exit status is 1.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

import nbformat

from perfkit.formatting import progress_disabled
from perfkit.report import methods, methods_page
from perfkit.report import nb as nbhelp
from perfkit.report.execute import Execution, NotebookError, execute_notebook
from perfkit.report.export import export_html
from perfkit.report.index import PAGE_CSS, NotebookEntry, is_wide, write_index
from perfkit.report.params import ReportParams, load_params
from perfkit.report.threats import common as threat_common
from perfkit.report.threats import page_records as page_threats
from perfkit.report.threats import rerender


@dataclasses.dataclass(frozen=True)
class ReportResult:
    """What a report run produced."""

    out_dir: Path
    index: Path
    executions: tuple[Execution, ...]
    entries: tuple[NotebookEntry, ...]

    @property
    def errors(self) -> list[NotebookError]:
        return [e.error for e in self.executions if e.error is not None]


def progress_enabled(stream: TextIO) -> bool:
    """Bars only on a terminal, and never when ``PERFKIT_NO_PROGRESS=1``."""
    if progress_disabled():
        return False
    return bool(getattr(stream, "isatty", lambda: False)())


def notebook_title(nb: nbformat.NotebookNode, fallback: str) -> str:
    """The first ``# heading`` of the notebook's markdown, or ``fallback``."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return fallback


def _clear_previous(out_dir: Path, name: str) -> None:
    """Remove the figures and tables an earlier run of this notebook left (only those)."""
    for kind in ("figures", "tables", "histograms"):
        folder = out_dir / kind
        if folder.is_dir():
            for old in folder.glob(f"{name}-*"):
                old.unlink()


def _files(out_dir: Path, kind: str, name: str, suffix: str) -> list[Path]:
    folder = out_dir / kind
    return sorted(folder.glob(f"{name}-*{suffix}")) if folder.is_dir() else []


def _entry(execution: Execution, out_dir: Path,
           common: Mapping[str, int] | None = None) -> NotebookEntry:
    """The index's record of one executed notebook, its page exported (``common``: the
    threats common to every page, linked to the index rather than repeated)."""
    name = execution.name
    answers, methods, alts, captions, threats = [], {}, {}, {}, []
    title = name
    html = out_dir / f"{name}.html"
    if execution.executed.exists():
        nb = nbformat.read(str(execution.executed), as_version=4)
        title = notebook_title(nb, name)
        found = nbhelp.collect(nb)
        answers, methods = found["answers"], found["methods"]
        threats = page_threats(nb, nbhelp.META_KEY)
        alts = {f"figures/{name}-{nbhelp.slug(f['figure'])}.png": f.get("alt", "")
                for f in found["figures"]}
        captions = {f"figures/{name}-{nbhelp.slug(f['figure'])}.png": f.get("caption", "")
                    for f in found["figures"]}
        try:
            export_html(execution.executed, html, title=title,
                        prepare=lambda node: rerender(node, common or {}, nbhelp.META_KEY))
        except Exception as exc:  # noqa: BLE001 - the index says the page is missing
            if execution.error is None:
                execution = dataclasses.replace(execution, error=NotebookError(
                    name, f"HTML export failed: {type(exc).__name__}: {exc}"))
    return NotebookEntry(
        name=name, title=title,
        html=html.name if html.exists() else None,
        ipynb=execution.executed.name if execution.executed.exists() else None,
        answers=tuple(answers), methods=methods, alts=alts, captions=captions,
        figures=tuple(str(p.relative_to(out_dir)) for p in _files(out_dir, "figures", name,
                                                                  ".png")),
        wide=tuple(str(p.relative_to(out_dir)) for p in _files(out_dir, "figures", name, ".png")
                   if is_wide(p, nbhelp.PNG_DPI)),
        tables=tuple(str(p.relative_to(out_dir)) for p in _files(out_dir, "tables", name,
                                                                 ".csv")),
        error=str(execution.error) if execution.error else None,
        seconds=execution.seconds, threats=tuple(threats),
    )


def common_threats(executions: list[Execution]) -> list[dict]:
    """The threats said on every page (:func:`perfkit.report.threats.common`)."""
    pages = [page_threats(nbformat.read(str(e.executed), as_version=4), nbhelp.META_KEY)
             for e in executions if e.executed.exists()]
    return threat_common(pages)


def merged_methods(entries: list[NotebookEntry]) -> dict[str, dict[str, list[str]]]:
    """Each experiment's Methods record, its analyses gathered from every notebook."""
    by_experiment: dict[str, list] = {}
    for e in entries:
        for name, records in e.methods.items():
            by_experiment.setdefault(name, []).extend(records)
    return {name: methods.merge(records) for name, records in by_experiment.items()}


def build_report(params: ReportParams, out_dir: Path, stream: TextIO | None = None,
                 kernel_name: str = "python3") -> ReportResult:
    """Execute every notebook of ``params`` into ``out_dir`` and write the index."""
    from tqdm.auto import tqdm

    stream = stream or sys.stderr
    out_dir = Path(out_dir).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    executions, entries = [], []
    bar = tqdm(params.notebooks, desc="report", unit="notebook", file=stream,
               disable=not progress_enabled(stream), leave=True)
    for run in bar:
        bar.set_postfix_str(run.name)
        _clear_previous(out_dir, run.name)
        parameters = {**run.parameters, "output_dir": str(out_dir)}
        executions.append(execute_notebook(run.path, out_dir / f"{run.name}.ipynb", parameters,
                                           kernel_name=kernel_name))
    bar.close()
    # the pages are exported once every notebook ran: a threat common to every page is said
    # once, on the index, and each page links to it
    common = common_threats(executions)
    numbers = {t["text"]: i for i, t in enumerate(common, 1)}
    for k, execution in enumerate(executions):
        entry = _entry(execution, out_dir, numbers)
        if entry.error and execution.error is None:
            executions[k] = dataclasses.replace(execution, error=NotebookError(execution.name,
                                                                               entry.error))
        entries.append(entry)
    records = merged_methods(entries)
    methods_page.write(out_dir, records, params.title, PAGE_CSS)
    index = write_index(out_dir, params.title, params.path.name, entries, common)
    return ReportResult(out_dir, index, tuple(executions), tuple(entries))


def run_report(params_path: str | os.PathLike, out_dir: str | os.PathLike,
               stream: TextIO | None = None) -> ReportResult:
    """Check the parameter file, then build the report (see :func:`build_report`)."""
    params = load_params(params_path)
    return build_report(params, Path(out_dir), stream)
