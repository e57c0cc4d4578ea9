"""perfkit.report.execute: a notebook's kernel is shut down, never interrupted, once the
notebook has run (an interrupt at shutdown made ipykernel print ``[IPKernelApp] ERROR |
KeyboardInterrupt caught in kernel`` on the terminal of ``make demo``)."""

from __future__ import annotations

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from perfkit.report.execute import execute_notebook

#: a cell that makes its kernel keep, after the cell, a SIGINT handler that writes a file: the
#: kernel's own hook puts its handler back after each cell, so this one goes in that hook
CATCH_SIGINT = """\
import signal
kernel = get_ipython().kernel
def caught(signum, frame):
    open({path!r}, "w").write("SIGINT")
def keep_handler():
    signal.signal(signal.SIGINT, caught)
kernel.post_handler_hook = keep_handler
"""


@pytest.mark.slow  # a kernel starts: a few seconds
def test_the_kernel_of_a_notebook_that_ran_is_never_interrupted(tmp_path):
    marker = tmp_path / "interrupted"
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.cells = [new_code_cell(CATCH_SIGINT.format(path=str(marker))), new_code_cell("x = 1")]
    nbformat.write(nb, str(tmp_path / "quiet.ipynb"))
    result = execute_notebook(tmp_path / "quiet.ipynb", tmp_path / "out.ipynb", {},
                              timeout_s=120)
    assert result.error is None
    assert not marker.exists(), "the kernel got a SIGINT at shutdown"


def test_a_kernel_asked_to_end_is_terminated_after_a_second_not_two_and_a_half():
    """ipykernel sometimes hangs after answering the shutdown request (its control thread
    flushes stdout through the output thread it has just stopped); jupyter_client's default
    then waited 2.5 s before SIGTERM, a page's worker blocked all along."""
    from perfkit.report.execute import SHUTDOWN_WAIT_S, current_env_kernel_manager

    manager = current_env_kernel_manager()()
    assert manager.shutdown_wait_time == SHUTDOWN_WAIT_S == 2.0
