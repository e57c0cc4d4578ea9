"""Running load for real: the local nginx testbed (and the runners built on it).

Internal: import from :mod:`perfkit` (its ``__all__``, documented in docs/api.md); the
modules here may change without notice.

The names below are imported on first use, so ``perfkit --help`` (which reads the profiles'
names from :mod:`perfkit.run.profiles`) does not import the testbed, psutil and subprocess.
"""

import importlib

_EXPORTS = {name: "perfkit.run.testbed" for name in (
    "PROFILES", "ReloadDisturbance", "Testbed", "TestbedInfo", "parse_profile", "render_config")}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'perfkit.run' has no attribute {name!r}")
