"""Where notebooks, parameter files and bundled data live, independent of the working directory.

nbval runs a notebook with the notebook's folder as working directory, papermill with the
caller's; a notebook that opened ``../data`` would work in one and break in the other. Every path
a notebook needs is therefore resolved here, relative to the perfkit package (a repository
checkout: ``perfkit/`` sits beside ``data/``, ``notebooks/`` and ``params/``), with an
environment override for installed copies:

- ``PERFKIT_DATA``: the folder holding the experiments (default ``<repo>/data``);
- ``PERFKIT_NOTEBOOKS``: the folder holding the report notebooks (default ``<repo>/notebooks``).
"""

from __future__ import annotations

import os
from pathlib import Path

from perfkit.errors import PerfkitError

DATA_ENV = "PERFKIT_DATA"
NOTEBOOKS_ENV = "PERFKIT_NOTEBOOKS"
#: the history store's folder when none is given, relative to the current directory
#: (:mod:`perfkit.store.history`)
HISTORY_STORE = Path(".perfkit") / "history"


def repo_root() -> Path:
    """The folder that holds the ``perfkit`` package (the repository root in a checkout)."""
    return Path(__file__).resolve().parents[1]


def data_root(root: str | os.PathLike | None = None) -> Path:
    """The experiments folder: ``root`` if given, else ``$PERFKIT_DATA``, else ``<repo>/data``."""
    if root:
        return Path(root).expanduser().resolve()
    env = os.environ.get(DATA_ENV)
    if env:
        return Path(env).expanduser().resolve()
    return repo_root() / "data"


def notebooks_dir() -> Path:
    """The folder of report notebooks: ``$PERFKIT_NOTEBOOKS`` or ``<repo>/notebooks``."""
    env = os.environ.get(NOTEBOOKS_ENV)
    path = Path(env).expanduser().resolve() if env else repo_root() / "notebooks"
    if not path.is_dir():
        raise PerfkitError(
            f"{path}: notebooks folder not found; run from a perfkit checkout or set "
            f"{NOTEBOOKS_ENV} to the folder holding latency.ipynb, scaling.ipynb, ...")
    return path


def available_experiments(root: str | os.PathLike | None = None) -> list[str]:
    """Names of the experiment folders under :func:`data_root` (hidden folders excluded)."""
    base = data_root(root)
    if not base.is_dir():
        return []
    return sorted(p.name for p in base.iterdir() if p.is_dir() and not p.name.startswith("."))


def data_dir(name: str, root: str | os.PathLike | None = None) -> Path:
    """The folder of experiment ``name``: ``<data_root>/<name>``, or ``name`` itself if absolute.

    Raises
    ------
    PerfkitError
        When the folder does not exist; the message lists the experiments that do.
    """
    if not name:
        raise PerfkitError("experiment name is empty")
    candidate = Path(name).expanduser()
    path = candidate if candidate.is_absolute() else data_root(root) / name
    if path.is_dir():
        return path
    known = ", ".join(available_experiments(root)) or "none"
    raise PerfkitError(f"experiment {name!r} not found: no folder {path} "
                       f"(experiments in {data_root(root)}: {known})")
