"""Ingest: pure parsers (``text -> Run``) for wrk, wrk2, Locust and HdrHistogram logs, and the
loader that finds them on disk and merges in their manifests.

Internal: import from :mod:`perfkit` (its ``__all__``, documented in docs/api.md); the
modules here may change without notice.
"""

from perfkit.ingest.loader import LoadResult, load, scan, scan_many
from perfkit.ingest.sniffer import sniff

__all__ = ["LoadResult", "load", "scan", "scan_many", "sniff"]
