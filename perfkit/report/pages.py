"""The page API: all a report notebook (``notebooks/*.ipynb``) calls of perfkit beyond its
public names (:mod:`perfkit`, :mod:`perfkit.plots`).

A notebook's second cell imports from here alone::

    from perfkit.report.pages import common, latency, setup
    report = setup("latency", output_dir)

- :func:`setup` checks the notebook's parameters and returns its :class:`Report`, through which
  the page shows and keeps everything: :meth:`Report.answers`, :meth:`Report.methods`,
  :meth:`Report.threats`, :meth:`Report.figure`, :meth:`Report.table`, :meth:`Report.note`,
  :meth:`Report.runs`, :meth:`Report.histograms`, and :meth:`Report.palette`, the colours a
  figure gives each configuration;
- :data:`THREATS_TITLE`, the heading of a page's threats to validity (a second list's title
  starts with it);
- one namespace per page module of :mod:`perfkit.report.sections` (``aa``, ``common``,
  ``effects``, ``history``, ``latency``, ``overview``, ``scaling``, ``seeds``), holding
  exactly the functions :data:`PAGES` lists for it, each documented by its docstring; any
  other name raises AttributeError.

A name a notebook needs is added to :data:`PAGES`, and one no notebook calls any more is taken
out: ``tests/test_api_docs.py`` fails on a notebook that imports anything else of perfkit or
calls a name not listed, ``tests/test_public_api.py`` on a listed name no notebook calls or
without a docstring. The namespaces are built on first use, so that a notebook's kernel imports
only the page modules it asks for.

>>> from perfkit.report.pages import latency
>>> latency.load_point({"target_rate_rps": 30000, "connections": 64})
'30000 req/s offered, 64 connections'
>>> latency.spectrum_frame  # doctest: +ELLIPSIS
Traceback (most recent call last):
AttributeError: perfkit.report.pages.latency.spectrum_frame is not in the page API ...
"""

from __future__ import annotations

import importlib
from types import ModuleType

from perfkit.report.nb import THREATS_TITLE as THREATS_TITLE
from perfkit.report.nb import Report as Report
from perfkit.report.nb import setup as setup

#: page -> the functions of ``perfkit.report.sections.<page>`` the notebooks call, as they run
PAGES: dict[str, tuple[str, ...]] = {
    "common": ("load_experiment", "methods", "threats", "calibration_threats", "text_table"),
    "overview": (
        "quality", "drift_frame", "drift_trend", "answers", "methods", "design_table",
        "levels_table", "manifest_table", "summary_with_total", "quality_figure",
        "quality_caption", "locust_experiment", "locust_series", "locust_figure",
        "drift_figure", "drift_caption"),
    "latency": (
        "co_experiment", "grouped_runs", "percentiles", "versus", "answers", "selection_table",
        "load_point", "spectrum", "spectrum_figure", "spectrum_caption", "present_percentiles",
        "within_run_table", "intervals_figure", "intervals_caption", "spread_summary",
        "corrected_vs_uncorrected", "co_figure", "co_caption", "co_missing", "co_audit_table",
        "co_audit_caption", "caveats"),
    "scaling": (
        "runs_with_config", "slo", "closed_experiment", "closed_models", "answers", "intro",
        "methods", "threats", "throughput_figure", "throughput_caption", "latency_figure",
        "latency_caption", "present_slo", "heatmap_text", "heatmap_figure", "heat_tables",
        "heat_marks", "heatmap_caption", "models_figure", "models_caption", "models_missing",
        "models_table", "present_models", "littles_text", "littles_figure", "littles_table",
        "present_littles"),
    "effects": (
        "ab_tables", "factorials", "others", "answers", "level_lines", "families_text",
        "methods", "present_table", "ab_caption", "notes_below", "forest_figure",
        "forest_caption", "present_factorial", "present_simple", "simple_frame",
        "simple_caption", "variation_figure", "variation_caption", "variation_table",
        "check_lines"),
    "aa": (
        "calibrate", "answers", "designed", "designed_caption", "present_designed", "rates",
        "rates_caption", "present_rates", "notes", "check_text"),
    "history": (
        "load", "analyse", "gates", "answers", "describe", "labels_table", "labels_caption",
        "series_figure", "series_caption", "series_alt", "series_tables",
        "series_table_caption", "change_text", "gates_caption", "gates_text"),
    "seeds": (
        "analyse", "answers", "methods", "threats", "verdict_table", "present_verdicts",
        "counts", "check_lines", "ratio_figure", "ratio_caption", "repeated", "runs_figure",
        "runs_caption", "replications", "table_caption", "present_table", "drift_table",
        "drift_caption", "assessment_table", "experiments"),
}

__all__ = sorted(["PAGES", "THREATS_TITLE", "Report", "page", "setup", *PAGES])


class Page(ModuleType):
    """A page's namespace: the functions :data:`PAGES` lists of its module, no other."""

    def __getattr__(self, name: str):
        raise AttributeError(f"{self.__name__}.{name} is not in the page API "
                             "(perfkit.report.pages.PAGES)")


def page(name: str) -> Page:
    """The namespace of page ``name`` (a key of :data:`PAGES`): the functions listed for it,
    taken from :mod:`perfkit.report.sections` ``.<name>``, under that module's docstring.

    >>> sorted(page("common").__all__)
    ['calibration_threats', 'load_experiment', 'methods', 'text_table', 'threats']
    """
    module = importlib.import_module(f"perfkit.report.sections.{name}")
    out = Page(f"{__name__}.{name}", module.__doc__)
    out.__dict__.update({n: getattr(module, n) for n in PAGES[name]})
    out.__dict__["__all__"] = sorted(PAGES[name])
    return out


def __getattr__(name: str) -> Page:
    if name not in PAGES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    built = globals()[name] = page(name)
    return built
