"""perfkit's own files as typed records, each with one reader and one writer.

- :mod:`~perfkit.schemas.manifest`: a run's ``manifest.json`` (and the fixtures' ``meta.json``);
- :mod:`~perfkit.schemas.plan`: an experiment's ``plan.json``;
- :mod:`~perfkit.schemas.design`: an experiment's ``experiment.yaml``;
- :mod:`~perfkit.schemas.version`: the ``schema_version`` rule (older read, newer refused).
"""

from perfkit.schemas.design import (
    DESIGN_SCHEMA_VERSION,
    Design,
    ExperimentError,
    ExperimentYaml,
    read_design,
    write_design,
)
from perfkit.schemas.manifest import (
    SCHEMA_VERSION,
    FixtureMeta,
    RunManifest,
    read_run_manifest,
    write_manifest,
)
from perfkit.schemas.plan import PLAN_SCHEMA_VERSION, Plan, PlanCell, PlanRun, read_plan, write_plan
from perfkit.schemas.version import SchemaVersionError, check_version

__all__ = [
    "DESIGN_SCHEMA_VERSION", "PLAN_SCHEMA_VERSION", "SCHEMA_VERSION", "Design", "ExperimentError",
    "ExperimentYaml", "FixtureMeta", "Plan", "PlanCell", "PlanRun", "RunManifest",
    "SchemaVersionError", "check_version", "read_design", "read_plan", "read_run_manifest",
    "write_design", "write_manifest", "write_plan",
]
