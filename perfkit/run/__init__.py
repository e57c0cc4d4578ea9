"""Running load for real: the local nginx testbed (and the runners built on it).

Internal: import from :mod:`perfkit` (its ``__all__``, documented in docs/api.md); the
modules here may change without notice.
"""

from perfkit.run.testbed import (
    PROFILES,
    ReloadDisturbance,
    Testbed,
    TestbedInfo,
    parse_profile,
    render_config,
)

__all__ = ["PROFILES", "ReloadDisturbance", "Testbed", "TestbedInfo", "parse_profile",
           "render_config"]
