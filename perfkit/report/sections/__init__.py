"""The analysis behind each report notebook (one module per notebook, plus ``common``).

Notebooks stay thin: each cell calls one of these functions and a plot from
:mod:`perfkit.plots`; everything here is tested like the rest of perfkit. The notebooks reach
them through the page API, :mod:`perfkit.report.pages`, which lists the functions they call.

Internal: import from :mod:`perfkit` (its ``__all__``, documented in docs/api.md); the
modules here may change without notice.
"""
