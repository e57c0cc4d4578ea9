"""Subcommands of ``perfkit``: each module defines ``register(subparsers)``.

Internal: import from :mod:`perfkit` (its ``__all__``, documented in docs/api.md); the
modules here may change without notice.
"""
