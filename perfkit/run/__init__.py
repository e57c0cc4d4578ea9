"""Running load for real: the local nginx testbed (and the runners built on it)."""

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
