"""perfkit: turn wrk, wrk2 and Locust load tests into trustworthy, publishable answers."""

import importlib

__version__ = "0.1.0"

# Imported on first use (PEP 562): ``perfkit --help`` and ``perfkit --version`` import
# ``perfkit`` for its version and must not pay for numpy, hdrh and the parsers.
_EXPORTS = {
    "LatencyHistogram": "perfkit.histogram",
    "LoadError": "perfkit.errors",
    "ParseError": "perfkit.errors",
    "PerfkitError": "perfkit.errors",
    "Run": "perfkit.model",
    "UnknownFormatError": "perfkit.errors",
    "load": "perfkit.ingest.loader",
    "scan": "perfkit.ingest.loader",
}

__all__ = sorted([*_EXPORTS, "__version__"])


def __getattr__(name: str):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value  # once: later lookups find it without this function
        return value
    raise AttributeError(f"module 'perfkit' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
