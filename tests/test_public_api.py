"""The public surface and the private interior, in the manner of scipy's
``scipy/_lib/tests/test_public_api.py``.

The surface is ``perfkit`` (its ``__all__``, documented in docs/api.md) and the figure namespace
``perfkit.plots`` (its ``__all__``, with the three modules it names: ``alt``, ``checks``,
``style``). Every other module of perfkit is either private by name (a part of its dotted name
starts with ``_``: ``perfkit.analysis.compare._gate``) or listed below as internal with what it
is for; a new module that is neither fails here, so that "internal" is a fact of the code, not a
sentence in the docs. The notebooks have one more surface, the page API
(``perfkit.report.pages``, :data:`PAGE_MODULES`): every name it lists is documented here, and
test_api_docs.py checks the other side: that README, docs and notebooks use only the surface
(the notebooks also the page API, and of it only what it lists).

Read from the file tree (nothing is imported to list the modules); the surface's names are
imported and resolved.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import perfkit

PACKAGE = Path(perfkit.__file__).resolve().parent

#: the public modules: their ``__all__`` is the surface
PUBLIC_MODULES = frozenset({
    "perfkit", "perfkit.plots", "perfkit.plots.alt", "perfkit.plots.checks",
    "perfkit.plots.style",
})

#: the page API: what the notebooks import beyond the public surface -> what it is
PAGE_MODULES = {
    "perfkit.report.pages": "setup, Report, THREATS_TITLE and one namespace per page, holding "
                            "the functions of report.sections the notebooks call (PAGES)",
}

#: internal packages (every module in them, at any depth, is internal) -> what they are for
INTERNAL_PACKAGES = {
    "perfkit.analysis": "every decision; feature subpackages with private modules",
    "perfkit.commands": "one module per CLI subcommand",
    "perfkit.ingest": "the parsers of tool outputs and the loader",
    "perfkit.plots": "the figure functions' modules (the namespace is public)",
    "perfkit.present": "results as tables",
    "perfkit.report": "the report build; its page API for the notebooks is report.pages",
    "perfkit.run": "the testbed, the runner and sweeps",
    "perfkit.stats": "the statistics",
    "perfkit.store": "perfkit's own files",
}

#: internal modules at the top level (the foundation and the entry points) -> what they are for
INTERNAL_MODULES = {
    "perfkit.__main__": "python -m perfkit",
    "perfkit.cli": "the CLI entry point",
    "perfkit.combine": "several clients' runs as one Run (public through perfkit)",
    "perfkit.consistency": "contradiction checks of a run's printed numbers",
    "perfkit.counters": "the counters sub-record of a Run (run.counters)",
    "perfkit.errors": "the exceptions (public through perfkit)",
    "perfkit.formatting": "number printing",
    "perfkit.frames": "tidy frames of runs (runs_frame is public through perfkit)",
    "perfkit.hdrcodec": "HdrHistogram's compressed encoding",
    "perfkit.hdrlayout": "HdrHistogram's bucket layout",
    "perfkit.histogram": "LatencyHistogram (public through perfkit)",
    "perfkit.model": "the Run record (public through perfkit)",
    "perfkit.paths": "where data, notebooks and params live",
    "perfkit.safetext": "text made safe for CSV, XML, LaTeX, Markdown and terminals",
    "perfkit.units": "the one parser of numbers with units",
    "perfkit.vocabulary": "every verdict and status word (public through perfkit)",
    "perfkit.warning": "a warning as a value: its code and fields (Warn, Code)",
    "perfkit.wording": "the words of every warning and verdict, given once",
}


def all_modules(package: Path = PACKAGE) -> list[str]:
    """Every module of perfkit by dotted name (packages by their ``__init__``)."""
    out = []
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        out.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return out


def is_private(name: str) -> bool:
    return any(part.startswith("_") and not part.startswith("__")
               for part in name.split("."))


def unlisted(modules: list[str]) -> list[str]:
    """The modules that are neither public, private by name, nor listed as internal."""
    def listed(name: str) -> bool:
        return name in INTERNAL_MODULES or any(
            name == p or name.startswith(p + ".") for p in INTERNAL_PACKAGES)

    return [m for m in modules
            if m not in PUBLIC_MODULES and not is_private(m) and not listed(m)]


def test_every_module_is_public_private_by_name_or_listed():
    bad = unlisted(all_modules())
    assert not bad, ("modules that look public but are not listed in tests/test_public_api.py "
                     f"(make them private, _name.py, or list them with a reason): {bad}")


def test_the_rule_fails_on_a_module_nobody_listed():
    assert unlisted(["perfkit", "perfkit.analysis.core._caps", "perfkit.ingest.wrk",
                     "perfkit.newthing", "perfkit.newpkg.mod"]) == [
        "perfkit.newthing", "perfkit.newpkg.mod"]


def test_the_listed_modules_exist():
    """A listed module or package that is gone is a stale entry."""
    modules = set(all_modules())
    stale = [m for m in [*INTERNAL_MODULES, *INTERNAL_PACKAGES, *PUBLIC_MODULES, *PAGE_MODULES]
             if m not in modules]
    assert not stale, stale


def test_the_public_names_resolve_and_none_is_private():
    for module in sorted(PUBLIC_MODULES):
        mod = importlib.import_module(module)
        names = getattr(mod, "__all__", None)
        if module in ("perfkit.plots.alt", "perfkit.plots.checks", "perfkit.plots.style"):
            continue  # modules the plots namespace names; their functions are its surface
        assert names, f"{module} has no __all__"
        assert not [n for n in names if n.startswith("_") and n != "__version__"], module
        for name in names:
            assert getattr(mod, name) is not None, f"{module}.{name}"
    assert sorted(perfkit.__all__) == sorted(set(perfkit.__all__))


def test_the_analysis_namespaces_expose_only_what_other_packages_use():
    """Each analysis feature subpackage's ``__all__`` is what its ``__init__`` imports: a name
    is exported on purpose, and every exported name resolves."""
    for sub in sorted(p.name for p in (PACKAGE / "analysis").iterdir()
                      if (p / "__init__.py").is_file()):
        mod = importlib.import_module(f"perfkit.analysis.{sub}")
        assert mod.__all__, sub
        for name in mod.__all__:
            assert hasattr(mod, name), f"perfkit.analysis.{sub}.{name}"


def page_surface() -> dict[str, object]:
    """Every name of the page API by its dotted name: the module's ``__all__`` and each page's
    listed functions."""
    from perfkit.report import pages

    out: dict[str, object] = {f"pages.{n}": getattr(pages, n) for n in pages.__all__}
    for page, names in pages.PAGES.items():
        out.update({f"pages.{page}.{n}": getattr(getattr(pages, page), n) for n in names})
    out.update({f"pages.Report.{n}": getattr(pages.Report, n) for n in dir(pages.Report)
                if not n.startswith("_") and callable(getattr(pages.Report, n))})
    return out


def test_the_page_api_is_documented_and_its_examples_run():
    """Each function, class and page of the page API has its docstring (its documentation: the
    notebooks' calls are read there); THREATS_TITLE and PAGES are data, documented in the
    module's; the module's examples run."""
    import doctest

    from perfkit.report import pages

    surface = page_surface()
    assert len(surface) > 100
    undocumented = [n for n, obj in surface.items()
                    if not isinstance(obj, str | dict) and not (obj.__doc__ or "").strip()]
    assert not undocumented, f"page API names without a docstring: {undocumented}"
    for name in ("THREATS_TITLE", "PAGES", *pages.PAGES):
        assert f":data:`{name}`" in pages.__doc__ or f"``{name}``" in pages.__doc__, name
    result = doctest.testmod(pages, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 3 and not result.failed


def test_a_page_refuses_a_name_it_does_not_list():
    import pytest

    from perfkit.report import pages
    from perfkit.report.sections import latency

    assert callable(latency.spectrum_frame)  # in the module, not in the page API
    with pytest.raises(AttributeError, match="not in the page API"):
        pages.latency.spectrum_frame  # noqa: B018
    with pytest.raises(AttributeError):
        pages.no_such_page  # noqa: B018
    assert pages.latency.load_point is latency.load_point
