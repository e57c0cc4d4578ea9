"""``plan.json``: every run of a designed experiment, in the order ``perfkit sweep`` runs them.

:func:`perfkit.run.plan.make_plan` makes a :class:`Plan`, :func:`write_plan` writes it
once (when the sweep starts) and :func:`read_plan` reads it back when the sweep resumes. Version
1 is the only one so far; a plan newer than :data:`PLAN_SCHEMA_VERSION` is refused with
:class:`~perfkit.store.version.SchemaVersionError`. Keys the records do not list are kept as
read.
"""

from __future__ import annotations

import os
import typing
from pathlib import Path
from typing import Any, TypedDict

from perfkit._fsutil import read_bytes, write_json_atomic
from perfkit.errors import ParseError
from perfkit.store.manifest import decode
from perfkit.store.version import check_version

PLAN_SCHEMA_VERSION = 1
PLAN_NAME = "plan.json"


class PlanCell(TypedDict):
    """One combination of factor levels and load levels, and the testbed profile it needs."""

    index: int
    factors: dict[str, Any]
    load: dict[str, Any]
    profile: str | None
    slug: str


class PlanRun(TypedDict):
    """One run: its cell in block ``block`` (= ``repetition``), at ``position_in_block``."""

    seq: int
    run_id: str
    block: int
    repetition: int
    position_in_block: int
    cell: int
    factors: dict[str, Any]
    load: dict[str, Any]
    profile: str | None


class Plan(TypedDict, total=False):
    """``plan.json``, schema version 1; ``design`` is the validated experiment.yaml
    (:class:`perfkit.store.design.Design`), ``created_utc`` is added when it is written."""

    schema_version: int
    experiment: str
    experiment_sha256: str
    randomization: str
    design: dict[str, Any]
    cells: list[PlanCell]
    runs: list[PlanRun]
    created_utc: str


PLAN_KEYS: tuple[str, ...] = tuple(Plan.__annotations__)
PLAN_RUN_KEYS: tuple[str, ...] = tuple(PlanRun.__annotations__)


def read_plan(path: str | os.PathLike) -> Plan:
    """``plan.json`` as written by :func:`write_plan`.

    Raises ParseError (not a JSON object, no ``schema_version``, no list of runs each with a
    ``run_id``) or SchemaVersionError (written by a newer perfkit)."""
    p = Path(path)
    text, data = decode(p, read_bytes(p), "a JSON object (experiment plan)")
    check_version(p, data, PLAN_SCHEMA_VERSION, "an experiment plan")
    runs = data.get("runs")
    if not isinstance(runs, list) or not all(isinstance(r, dict) and isinstance(
            r.get("run_id"), str) for r in runs):
        at = text.find('"runs"')
        raise ParseError(str(p), text.count("\n", 0, at) + 1 if at >= 0 else None,
                         '"runs" to be a list of objects with a "run_id"', repr(runs)[:80])
    return typing.cast(Plan, data)


def write_plan(path: str | os.PathLike, plan: Plan) -> None:
    """Write ``plan`` atomically, as indented JSON."""
    write_json_atomic(path, plan)
