"""Running load for real: the local nginx testbed (and the runners built on it).

Internal: import from :mod:`perfkit` (its ``__all__``, documented in docs/api.md); the
modules here may change without notice.

The names below are imported on first use, so ``perfkit --help`` (which reads the profiles'
names from :mod:`perfkit.run.profiles`) does not import the testbed, psutil and subprocess.
"""

from typing import Any

from perfkit import _lazy

_EXPORTS = _lazy.same_name("perfkit.run.testbed", "PROFILES", "ReloadDisturbance", "Testbed",
                           "TestbedInfo", "parse_profile", "render_config")

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    return _lazy.attribute(globals(), _EXPORTS, name)
