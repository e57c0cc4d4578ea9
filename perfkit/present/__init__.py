"""Presentation: analysis results as paper-ready tables, one module per feature.

- :mod:`~perfkit.present.tables`: the :class:`~perfkit.present.tables.Table` and its renderers
  (text, Markdown, LaTeX, HTML, CSV), shared by the CLI and the report;
- :mod:`~perfkit.present.compare`, :mod:`~perfkit.present.effects`,
  :mod:`~perfkit.present.scaling`, :mod:`~perfkit.present.gate`,
  :mod:`~perfkit.present.history`, :mod:`~perfkit.present.plan`: each feature's results;
- :mod:`~perfkit.present.frame`: any tidy frame, with units from its column suffixes.

Formatting only: every number, verdict and warning comes from :mod:`perfkit.analysis`.

Internal: import from :mod:`perfkit` (its ``__all__``, documented in docs/api.md); the
modules here may change without notice.
"""
