"""perfkit: turn wrk, wrk2 and Locust load tests into trustworthy, publishable answers."""

from perfkit.errors import LoadError, ParseError, PerfkitError, UnknownFormatError
from perfkit.histogram import LatencyHistogram
from perfkit.ingest import load, scan
from perfkit.model import Run

__version__ = "0.1.0"

__all__ = [
    "LatencyHistogram",
    "LoadError",
    "ParseError",
    "PerfkitError",
    "Run",
    "UnknownFormatError",
    "__version__",
    "load",
    "scan",
]
