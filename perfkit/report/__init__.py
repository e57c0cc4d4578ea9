"""Reports: parameterized notebooks executed by papermill into a self-contained HTML report.

- :mod:`perfkit.report.params`: the parameter files (``params/*.yaml``), checked up front;
- :mod:`perfkit.report.execute`: papermill execution, failures reported by cell;
- :mod:`perfkit.report.export`: nbconvert HTML without code, images inline, nothing remote;
- :mod:`perfkit.report.index`: the index page with the headline findings;
- :mod:`perfkit.report.build`: all of it, for ``perfkit report``;
- :mod:`perfkit.report.nb`: what the notebooks call to show figures, tables and findings;
- :mod:`perfkit.report.sections`: the analysis behind each notebook;
- :mod:`perfkit.report.pages`: the page API, all the notebooks import of the two above.

``data_dir``, ``data_root`` and ``notebooks_dir`` are :mod:`perfkit.paths`'s (the data and
notebook folders, independent of the working directory). The names below are imported on first
use, so a notebook kernel that only needs :mod:`perfkit.report.nb` does not pay for papermill,
nbformat and nbconvert.

Internal: import from :mod:`perfkit` (its ``__all__``, documented in docs/api.md); the
modules here may change without notice.
"""

import importlib

_EXPORTS = {
    "ReportResult": "perfkit.report.build", "build_report": "perfkit.report.build",
    "run_report": "perfkit.report.build", "ParamsError": "perfkit.report.params",
    "ReportParams": "perfkit.report.params", "load_params": "perfkit.report.params",
    "data_dir": "perfkit.paths", "data_root": "perfkit.paths", "notebooks_dir": "perfkit.paths",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'perfkit.report' has no attribute {name!r}")
