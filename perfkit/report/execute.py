"""Execute one report notebook with papermill, and say which cell failed and why when it does.

The kernel gets ``PERFKIT_NO_PROGRESS=1`` (progress bars add volatile output and their widgets
load from a CDN) and runs in the notebooks' folder, as under nbval, so a notebook behaves the same
in CI, under ``perfkit report`` and in JupyterLab. Both are given to the kernel alone (its
environment and working directory at launch), never set on this process: ``perfkit report``
executes several notebooks at once, from threads of one process.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from perfkit.errors import PerfkitError
from perfkit.formatting import PROGRESS_ENV

KERNEL_ENV = {
    PROGRESS_ENV: "1",
    # ipykernel's debugger warns about frozen modules on stderr at every start
    "PYDEVD_DISABLE_FILE_VALIDATION": "1",
}

#: seconds a kernel is given to end once asked to (SIGTERM at half of it, SIGKILL at the end)
SHUTDOWN_WAIT_S = 2.0
#: the kernel logs only errors (ipykernel 7 warns about TCP transport at every start) and keeps
#: no input history: the notebooks of a report run at once, and IPython's history is one SQLite
#: file they would all write
KERNEL_ARGS = ["--IPKernelApp.log_level=ERROR", "--HistoryManager.enabled=False"]


class NotebookError(PerfkitError):
    """A notebook failed: where (notebook, cell), what (exception) and where to look further."""

    def __init__(self, notebook: str, message: str, executed: Path | None = None,
                 cell: int | None = None):
        self.notebook, self.cell, self.executed = notebook, cell, executed
        where = f"{notebook}" + (f", cell {cell}" if cell is not None else "")
        tail = f"\n  the executed notebook, with the traceback: {executed}" if executed else ""
        super().__init__(f"{where}: {message}{tail}")


@dataclasses.dataclass(frozen=True)
class Execution:
    """The outcome of one notebook: the executed file, the time it took, the error if any."""

    name: str
    executed: Path
    seconds: float
    error: NotebookError | None = None


def _cell_number(nb_path: Path, cell_index: int) -> int:
    """1-based number of the failing cell in the notebook as written (without the injected cell)."""
    import nbformat

    try:
        nb = nbformat.read(str(nb_path), as_version=4)
    except (OSError, ValueError):
        return cell_index + 1
    injected = sum(1 for c in nb.cells[:cell_index]
                   if "injected-parameters" in c.get("metadata", {}).get("tags", []))
    return cell_index + 1 - injected


def _describe_failure(exc: Exception, executed: Path, name: str) -> NotebookError:
    from papermill.exceptions import PapermillExecutionError

    if isinstance(exc, PapermillExecutionError):
        first = next((ln for ln in str(exc.source).splitlines() if ln.strip()), "")
        number = _cell_number(executed, exc.cell_index)
        message = f"{exc.ename}: {exc.evalue}\n  in: {first.strip()}"
        return NotebookError(name, message, executed, cell=number)
    return NotebookError(name, f"{type(exc).__name__}: {exc}", executed if executed.exists()
                         else None)


def current_env_kernel_manager(env: Mapping[str, str] | None = None):
    """A kernel manager class whose kernels run in this Python (as nbval's --current-env),
    with this process's environment plus :data:`KERNEL_ENV` and ``env``.

    A ``python3`` kernelspec installed elsewhere (``~/.local/share/jupyter/kernels``) would
    otherwise start another interpreter, without this perfkit.
    """
    import ipykernel.kernelspec
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager
    from traitlets import Float

    class CurrentEnvSpecs(KernelSpecManager):
        def get_kernel_spec(self, kernel_name):
            return self.kernel_spec_class(resource_dir=ipykernel.kernelspec.RESOURCES,
                                          **ipykernel.kernelspec.get_kernel_dict())

    kernel_env = {**KERNEL_ENV, **(env or {})}

    class CurrentEnvKernelManager(AsyncKernelManager):
        # ipykernel answers a shutdown request and ends in about 0.5 s; about one time in
        # two its control thread then waits on the output thread it has just stopped (its
        # stdout flush, 10 s), until jupyter_client sends SIGTERM at half of this wait (5 s
        # by default: 2.5 s on every such page, blocking a worker; a floor page took 5.0 s
        # where its cells took 1.7). Half of this: time enough to end on its own.
        shutdown_wait_time = Float(SHUTDOWN_WAIT_S, config=True)

        def _kernel_spec_manager_default(self):
            return CurrentEnvSpecs(data_dir=self.data_dir)

        # the ignore: jupyter_client declares the synchronous KernelManager's signature
        async def start_kernel(self, **kw):  # type: ignore[override]
            kw["env"] = {**os.environ, **kw.get("env", {}), **kernel_env}
            return await super().start_kernel(**kw)

        async def _async_interrupt_kernel(self) -> None:
            # jupyter_client interrupts every kernel it shuts down (SIGINT), to stop code still
            # running; a notebook's kernel is shut down once its cells ended (or timed out:
            # nbclient interrupts it itself then), and a SIGINT landing while the kernel
            # finishes its last reply makes ipykernel print "[IPKernelApp] ERROR |
            # KeyboardInterrupt caught in kernel" on the user's terminal. The shutdown request
            # that follows, and the kill after it if need be, end the kernel without it.
            if self.shutting_down:
                return
            await super()._async_interrupt_kernel()

    return CurrentEnvKernelManager


def execute_notebook(source: Path, executed: Path, parameters: Mapping[str, Any],
                     kernel_name: str = "python3", timeout_s: float = 600.0,
                     env: Mapping[str, str] | None = None) -> Execution:
    """Run ``source`` with ``parameters`` and write the executed notebook to ``executed``.

    The kernel is this Python (:func:`current_env_kernel_manager`), with ``env`` added to its
    environment. Never raises for a failure inside the notebook: the error (notebook, cell,
    exception) comes back in :attr:`Execution.error`, and the executed notebook keeps the
    traceback. Safe to call from several threads at once.
    """
    import papermill

    name = source.stem
    start = time.perf_counter()
    error = None
    try:
        # the kernel's working directory through nbclient's resources: papermill's cwd= would
        # chdir this whole process, under the other threads' feet
        papermill.execute_notebook(
            str(source), str(executed), parameters=dict(parameters),
            kernel_name=kernel_name, progress_bar=False, log_output=False,
            resources={"metadata": {"path": str(source.parent)}},
            request_save_on_cell_execute=False,
            execution_timeout=timeout_s, extra_arguments=KERNEL_ARGS,
            kernel_manager_class=current_env_kernel_manager(env))
    except Exception as exc:  # noqa: BLE001 - every failure is reported, none is swallowed
        error = _describe_failure(exc, executed, name)
    return Execution(name, executed, time.perf_counter() - start, error)
