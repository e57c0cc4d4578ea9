"""Subcommands of ``perfkit``: each module defines ``register(subparsers)``."""
