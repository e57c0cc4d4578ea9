"""Everything perfkit itself writes on disk: its own files as typed records, each with one
reader and one writer, and its stores.

- :mod:`~perfkit.store.runtable`: runs <-> an Arrow table, losslessly (the stores' format);
- :mod:`~perfkit.store.runcache`: the run store of a directory (``.perfkit/cache/``);
- :mod:`~perfkit.store.history`: a performance history (``perfkit history add``);
- :mod:`~perfkit.store.manifest`: a run's ``manifest.json`` (and the fixtures' ``meta.json``);
- :mod:`~perfkit.store.plan`: an experiment's ``plan.json``;
- :mod:`~perfkit.store.design`: an experiment's ``experiment.yaml``;
- :mod:`~perfkit.store.version`: the ``schema_version`` rule (older read, newer refused).

Internal: import from :mod:`perfkit` (its ``__all__``, documented in docs/api.md); the
modules here may change without notice.
"""

from perfkit.store.design import (
    DESIGN_SCHEMA_VERSION,
    Design,
    ExperimentError,
    ExperimentYaml,
    read_design,
    write_design,
)
from perfkit.store.manifest import (
    SCHEMA_VERSION,
    FixtureMeta,
    RunManifest,
    read_run_manifest,
    write_manifest,
)
from perfkit.store.plan import PLAN_SCHEMA_VERSION, Plan, PlanCell, PlanRun, read_plan, write_plan
from perfkit.store.version import SchemaVersionError, check_version

__all__ = [
    "DESIGN_SCHEMA_VERSION", "PLAN_SCHEMA_VERSION", "SCHEMA_VERSION", "Design", "ExperimentError",
    "ExperimentYaml", "FixtureMeta", "Plan", "PlanCell", "PlanRun", "RunManifest",
    "SchemaVersionError", "check_version", "read_design", "read_plan", "read_run_manifest",
    "write_design", "write_manifest", "write_plan",
]
