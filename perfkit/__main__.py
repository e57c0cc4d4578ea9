"""``python -m perfkit`` is the same program as ``perfkit``."""

from perfkit.cli import entry_point

entry_point()
