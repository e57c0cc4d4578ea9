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

from typing import Any

from perfkit import _lazy

_EXPORTS = {
    **_lazy.same_name("perfkit.report.build", "ReportResult", "build_report", "run_report"),
    **_lazy.same_name("perfkit.report.params", "ParamsError", "ReportParams", "load_params"),
    **_lazy.same_name("perfkit.paths", "data_dir", "data_root", "notebooks_dir"),
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    return _lazy.attribute(globals(), _EXPORTS, name)
