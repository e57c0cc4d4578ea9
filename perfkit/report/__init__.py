"""Reports: parameterized notebooks executed by papermill into a self-contained HTML report.

- :mod:`perfkit.report.params`: the parameter files (``params/*.yaml``), checked up front;
- :mod:`perfkit.report.execute`: papermill execution, failures reported by cell;
- :mod:`perfkit.report.export`: nbconvert HTML without code, images inline, nothing remote;
- :mod:`perfkit.report.index`: the index page with the headline findings;
- :mod:`perfkit.report.build`: all of it, for ``perfkit report``;
- :mod:`perfkit.report.nb`: what the notebooks call to show figures, tables and findings;
- :mod:`perfkit.report.paths`: data and notebook folders, independent of the working directory.
"""

from perfkit.report.build import ReportResult, build_report, run_report
from perfkit.report.params import ParamsError, ReportParams, load_params
from perfkit.report.paths import data_dir, data_root, notebooks_dir

__all__ = [
    "ParamsError", "ReportParams", "ReportResult", "build_report", "data_dir", "data_root",
    "load_params", "notebooks_dir", "run_report",
]
