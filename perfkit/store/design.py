"""``experiment.yaml``: an experiment's design as the user writes it, and as perfkit checks it.

:class:`ExperimentYaml` lists the keys a user may write (every one but ``tool``, ``target``,
``duration`` and ``repetitions`` optional); :func:`perfkit.run.plan.validate` turns it
into a :class:`Design` (durations in seconds, lists everywhere), which the plan keeps as its
``design``. :func:`read_design` is the one reader (``perfkit sweep`` and the analysis loader);
:func:`write_design` the one writer, which copies the user's bytes unchanged (comments kept, and
the plan's sha256 of them stays true).

The YAML may state ``schema_version: 1``; a newer one is refused, and without it the file is
read as version 1 (the only one so far).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, TypedDict

import yaml

from perfkit._fsutil import write_bytes_atomic
from perfkit.errors import PerfkitError
from perfkit.store import yamlread
from perfkit.store.version import check_version

DESIGN_SCHEMA_VERSION = 1
DESIGN_NAME = "experiment.yaml"


class ExperimentError(PerfkitError):
    """experiment.yaml is not a valid design; lists every problem as ``path: key: ...``."""


class ExperimentYaml(TypedDict, total=False):
    """The keys of ``experiment.yaml`` (``imported``: a design imported from recorded runs,
    which documents them but cannot be swept again)."""

    schema_version: int
    name: str
    description: str
    tool: str
    target: dict[str, Any]
    factors: dict[str, Any]
    load: dict[str, Any]
    duration: str
    repetitions: int
    warmup: Any
    seed: int
    pause: str
    restart: str
    options: dict[str, Any]
    taskset: str
    grace: str
    imported: Any


class Design(TypedDict):
    """A checked design: durations in seconds, load levels as lists, factor levels with the
    testbed profile part each selects (None where a level only labels runs)."""

    tool: str
    name: str
    description: str | None
    target: dict[str, Any]
    factors: dict[str, dict[str, Any]]
    load: dict[str, list]
    duration_s: float
    repetitions: int
    warmup: dict[str, Any]
    seed: int
    pause_s: float
    grace_s: float
    restart: str
    taskset: str | None
    options: dict[str, Any]


YAML_KEYS = frozenset(ExperimentYaml.__annotations__)


def read_design(path: str | os.PathLike) -> tuple[ExperimentYaml, bytes]:
    """The parsed YAML and its exact bytes (hashed into the plan).

    Raises ExperimentError (unreadable, not YAML, not a mapping) or SchemaVersionError."""
    p = Path(path)
    try:
        raw = yamlread.read_file(p)  # a FIFO or a file above its size: refused unread
    except OSError as exc:
        raise ExperimentError(f"{p}: cannot read: {exc.strerror}") from exc
    try:
        data = yamlread.load(raw)  # YAML 1.2 booleans: a level 'off' stays 'off'
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{p}:{mark.line + 1}" if mark else str(p)
        found = getattr(exc, "problem", None) or str(exc)
        raise ExperimentError(f"{where}: expected valid YAML, found {found}") from exc
    if data is None:  # an empty file: no keys (the checks then say which are missing)
        data = {}
    if not isinstance(data, dict):
        raise ExperimentError(f"{p}: expected a mapping of experiment keys, found "
                              f"{type(data).__name__}")
    check_version(p, data, DESIGN_SCHEMA_VERSION, "an experiment design",
                  default=DESIGN_SCHEMA_VERSION)
    return data, raw  # type: ignore[return-value]


def write_design(path: str | os.PathLike, yaml_bytes: bytes) -> None:
    """Copy the design's bytes to ``path`` unchanged (atomically)."""
    write_bytes_atomic(path, yaml_bytes)
