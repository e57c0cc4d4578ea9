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

The notebooks execute in parallel, one kernel computing per core (a kernel waiting for the pages
before it to give it a colour leaves its core to the next notebook). A threat common to every page
is said once, on the index, and each page links to it: known only once every notebook ended. Each
page is written as soon as its notebook ends, while the others still run, with the threats common
to the pages ended so far, and written again at the end only if those differ from the ones common
to every page (:func:`_export_early`); the index waits for them all. Before the first kernel
starts, the run store of every experiment the parameters name is brought up to date
(:func:`warm_stores`), so the kernels read parsed runs instead of parsing them each. What the
pages share, the palette, is given in the parameter file's order whatever the order they end
in (:mod:`perfkit.report.order`).
"""

from __future__ import annotations

import dataclasses
import os
import sys
import typing
from collections.abc import Iterator, Mapping
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any, TextIO

import nbformat

from perfkit import paths
from perfkit.errors import PerfkitError
from perfkit.formatting import Progress, progress_disabled
from perfkit.report import methods, methods_page, order
from perfkit.report import nb as nbhelp
from perfkit.report.execute import Execution, NotebookError, execute_notebook
from perfkit.report.export import write_page
from perfkit.report.index import PAGE_CSS, NotebookEntry, is_wide, write_index
from perfkit.report.params import NotebookRun, ReportParams, load_params, notebook_parameters
from perfkit.report.threats import META as THREATS_META
from perfkit.report.threats import common as threat_common
from perfkit.report.threats import rerender
from perfkit.vocabulary import RunStatus


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


#: an executed notebook read once (:func:`_read_page`): the notebook and what it recorded
#: (:func:`perfkit.report.nb.collect`), or None when it was not written
Page = tuple[Any, dict[str, Any]] | None
_READ = object()


def _read_page(execution: Execution) -> Page:
    if not execution.executed.exists():
        return None
    nb = nbformat.read(str(execution.executed), as_version=4)
    return nb, nbhelp.collect(nb)


def _threats_html(nb: Any) -> list[str]:
    """The HTML of every threats output of ``nb``, as :func:`rerender` left it."""
    return [o["data"]["text/html"] for cell in nb.cells for o in cell.get("outputs", [])
            if ((o.get("metadata") or {}).get(nbhelp.META_KEY) or {}).get(THREATS_META)
            and "text/html" in o.get("data", {})]


def _entry(execution: Execution, out_dir: Path, common: Mapping[str, int] | None = None,
           page: Page | object = _READ, written: list[str] | None = None) -> NotebookEntry:
    """The index's record of one executed notebook, its page exported (``common``: the
    threats common to every page, linked to the index rather than repeated; ``page``: the
    notebook as :func:`_read_page` read it, read here if not given; ``written``: the threats
    of the page already written from it by :func:`_export_early`, None if none was: the page
    is written again only if its threats differ)."""
    name = execution.name
    answers, methods, alts, captions = [], {}, {}, {}
    title = name
    html = out_dir / f"{name}.html"
    read = typing.cast(Page, _read_page(execution) if page is _READ else page)
    if read is not None:
        nb, found = read
        title = notebook_title(nb, name)
        answers, methods = found["answers"], found["methods"]
        alts = {f"figures/{name}-{nbhelp.slug(f['figure'])}.png": f.get("alt", "")
                for f in found["figures"]}
        captions = {f"figures/{name}-{nbhelp.slug(f['figure'])}.png": f.get("caption", "")
                    for f in found["figures"]}
        try:
            rerender(nb, common or {}, nbhelp.META_KEY)
            if written is None or _threats_html(nb) != written:
                write_page(nb, html, title=title)
        except Exception as exc:  # noqa: BLE001 - the index says the page is missing
            html.unlink(missing_ok=True)  # not the page written early, whose threats differ
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
        seconds=execution.seconds,
    )


def merged_methods(entries: list[NotebookEntry]) -> dict[str, dict[str, list[str]]]:
    """Each experiment's Methods record, its analyses gathered from every notebook."""
    by_experiment: dict[str, list] = {}
    for e in entries:
        for name, records in e.methods.items():
            by_experiment.setdefault(name, []).extend(records)
    return {name: methods.merge(records) for name, records in by_experiment.items()}


def workers_default() -> int:
    """One kernel per core this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _names(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _names(item)


def experiment_dirs(params: ReportParams) -> list[Path]:
    """The folders of the experiments the notebooks will load: every string parameter (given,
    or the notebook's default) that names a folder of the data root, and the job folders of a
    history (``labels.csv``)."""
    from perfkit.analysis.history import job_dirs

    found: dict[Path, None] = {}
    for run in params.notebooks:
        values = {name: p.default for name, p in notebook_parameters(run.path).items()}
        values.update(run.parameters)
        root = values.pop("data_root", None) or params.data_root
        values.pop("output_dir", None)
        for name in _names(list(values.values())):
            try:
                folder = paths.data_dir(name, root)
            except (PerfkitError, OSError, ValueError):
                continue
            if folder.resolve() == paths.data_root(root):
                continue
            for d in job_dirs(folder) or [folder]:
                found.setdefault(d)
    return list(found)


def warm_stores(params: ReportParams) -> dict[Path, list[PerfkitError]]:
    """Bring the run store of every experiment of the report up to date, once, here: the
    kernels then read the parsed runs (a run store is per folder: ``DIR/.perfkit/cache``).
    Returns the errors of the files that could not be read, by experiment folder (``perfkit
    report`` refuses a report with any, unless ``--skip-unreadable``)."""
    from perfkit.ingest.loader import scan
    from perfkit.store.runcache import flush

    unread = {}
    for folder in experiment_dirs(params):
        errors = scan(folder).errors
        if errors:
            unread[folder] = errors
    flush()  # each store on disk before a kernel looks for it
    return unread


def _execute(run: NotebookRun, out_dir: Path, kernel_name: str) -> Execution:
    """Execute one notebook (in a worker thread); its page is exported later
    (:func:`_export`)."""
    parameters = {**run.parameters, "output_dir": str(out_dir)}
    try:
        return execute_notebook(run.path, out_dir / f"{run.name}.ipynb", parameters,
                                kernel_name=kernel_name, env={order.PAGE_ENV: run.name})
    finally:
        order.ended(out_dir, run.name)


def _export(execution: Execution, out_dir: Path, common: Mapping[str, int], page: Page,
            written: list[str] | None = None) -> tuple[Execution, NotebookEntry]:
    """Export one executed notebook's page (``common``: the threats common to every page,
    linked to the index; ``page``: as :func:`_read_page` read it; ``written``: see
    :func:`_entry`) and make its index entry; a failed export is the notebook's error."""
    entry = _entry(execution, out_dir, common, page, written)
    if entry.error and execution.error is None:
        execution = dataclasses.replace(execution, error=NotebookError(execution.name,
                                                                       entry.error))
    return execution, entry


@dataclasses.dataclass
class _Early:
    """The pages read as their notebooks ended, and those written then (:func:`_export_early`)."""

    order: list[str]
    pages: dict[str, Page] = dataclasses.field(default_factory=dict)
    written: dict[str, list[str]] = dataclasses.field(default_factory=dict)


def _export_early(execution: Execution, out_dir: Path, early: _Early) -> None:
    """Read a page as soon as its notebook ended and write its HTML while other notebooks
    still run, linking the threats common to every page read so far (a superset of those
    common to every page in the end: the pages that end later can only take some away); the
    export after the last notebook writes the page again only if its threats then differ
    (:func:`_entry`). Called from one thread, in the order the notebooks end."""
    page = early.pages[execution.name] = _read_page(execution)
    if page is None:
        return
    nb, _ = page
    read = [early.pages[n] for n in early.order if early.pages.get(n) is not None]
    guess = threat_common([typing.cast(tuple, p)[1]["threats"] for p in read])
    try:
        rerender(nb, {t["text"]: i for i, t in enumerate(guess, 1)}, nbhelp.META_KEY)
        write_page(nb, out_dir / f"{execution.name}.html",
                   title=notebook_title(nb, execution.name))
    except Exception:  # noqa: BLE001 - written again, or its error said, after the last one
        return
    early.written[execution.name] = _threats_html(nb)


#: the file beside a report's parameter file that fixes the order of the configurations'
#: colours (:mod:`perfkit.plots.palette`, rule 6)
PALETTE_FILE = "palette.yaml"


def seed_palette(params: ReportParams, out_dir: Path) -> None:
    """Start the report's ``palette.json`` afresh (a previous build's would give its colours to
    this one): from :data:`PALETTE_FILE` beside the parameter file when there is one
    (``configurations:``, a list of names, in colour order), else empty."""
    import json

    from perfkit._fsutil import write_bytes_atomic
    from perfkit.plots.palette import Palette
    from perfkit.store import yamlread

    target = out_dir / "palette.json"
    source = params.path.parent / PALETTE_FILE
    if not source.is_file():
        target.unlink(missing_ok=True)
        return
    data = yamlread.load(yamlread.read_file(source))
    names = data.get("configurations") if isinstance(data, dict) else None
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names) \
            or len(set(names)) != len(names):
        raise PerfkitError(f"{source}: expected 'configurations:' with a list of distinct "
                           f"names, found {type(names).__name__ if names is None else names!r}")
    write_bytes_atomic(target, json.dumps(Palette(tuple(names)).to_dict()).encode("utf-8"))


def build_report(params: ReportParams, out_dir: Path, stream: TextIO | None = None,
                 kernel_name: str = "python3", workers: int | None = None) -> ReportResult:
    """Execute every notebook of ``params`` into ``out_dir`` and write the index.

    ``workers``: notebooks executed at once (default: one per core, :func:`workers_default`).
    """
    stream = stream or sys.stderr
    out_dir = Path(out_dir).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    runs = list(params.notebooks)
    workers = max(1, min(len(runs), workers or workers_default()))
    # a line per page as it ends, in the order they end (a bar above them on a terminal)
    progress = Progress(stream, "report", len(runs), unit="page",
                        bar=progress_enabled(stream))
    warm_stores(params)
    seed_palette(params, out_dir)
    for run in runs:
        _clear_previous(out_dir, run.name)
    order.begin(out_dir, [run.name for run in runs])
    done: dict[str, Execution] = {}
    running: dict[Any, str] = {}
    todo = list(runs)  # started in the parameter file's order
    early = _Early([run.name for run in runs])
    try:
        # a thread per notebook, at most ``workers`` kernels computing: a kernel waiting for
        # the pages before it (order.py) leaves its core to the next notebook; each page is
        # written as its notebook ends, by one more thread (:func:`_export_early`)
        with ThreadPoolExecutor(max_workers=len(runs), thread_name_prefix="notebook") as pool, \
                ThreadPoolExecutor(max_workers=1, thread_name_prefix="early-page") as writer:
            while todo or running:
                paused = order.waiting(out_dir)
                busy = sum(1 for f, name in running.items() if name not in paused)
                while todo and busy < workers:
                    run = todo.pop(0)
                    running[pool.submit(_execute, run, out_dir, kernel_name)] = run.name
                    busy += 1
                progress.note("running: " + ", ".join(running.values()))
                finished, _ = wait(running, timeout=0.2, return_when=FIRST_COMPLETED)
                for future in finished:
                    name = running.pop(future)
                    done[name] = execution = future.result()
                    status = RunStatus.FAILED if execution.error else RunStatus.OK
                    progress.step(name, status, execution.seconds)
                    writer.submit(_export_early, execution, out_dir, early)
    finally:
        order.finish(out_dir)
        progress.close()
    # a threat common to every page is said once, on the index, and each page links to it:
    # known now that every notebook ended; a page written early is written again only if
    # its threats differ
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="page") as pool:
        pages = [early.pages[run.name] if run.name in early.pages else _read_page(done[run.name])
                 for run in runs]
        common = threat_common([page[1]["threats"] for page in pages if page is not None])
        numbers = {t["text"]: i for i, t in enumerate(common, 1)}
        exported = list(pool.map(lambda run, page: _export(
            done[run.name], out_dir, numbers, page, early.written.get(run.name)), runs, pages))
    executions = [e for e, _ in exported]
    entries = [entry for _, entry in exported]
    records = merged_methods(entries)
    methods_page.write(out_dir, records, params.title, PAGE_CSS)
    index = write_index(out_dir, params.title, params.path.name, entries, common)
    return ReportResult(out_dir, index, tuple(executions), tuple(entries))


def run_report(params_path: str | os.PathLike, out_dir: str | os.PathLike,
               stream: TextIO | None = None) -> ReportResult:
    """Check the parameter file, then build the report (see :func:`build_report`)."""
    params = load_params(params_path)
    return build_report(params, Path(out_dir), stream)
