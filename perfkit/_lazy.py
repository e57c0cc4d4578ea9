"""A package's public names, imported when first asked for (PEP 562).

A package that re-exports its submodules' names would import every one of them the moment any
one is imported (the package file runs first): ``perfkit --help`` would import the testbed, a
command the change-point search, a report's palette matplotlib. Such a package maps each
public name to where it lives and defines::

    def __getattr__(name: str) -> Any:
        return _lazy.attribute(globals(), _EXPORTS, name)

keeping the imports under ``if TYPE_CHECKING:`` for type checkers where it has them.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from importlib import import_module
from typing import Any

#: public name -> (module, its name there; None: the module itself)
Exports = Mapping[str, tuple[str, "str | None"]]


def attribute(namespace: MutableMapping[str, Any], exports: Exports, name: str) -> Any:
    """``name`` of the package whose globals are ``namespace``, imported from where
    ``exports`` says and kept there (asked once); AttributeError for a name it does not
    export, as for any module."""
    try:
        module, attr = exports[name]
    except KeyError:
        raise AttributeError(
            f"module {namespace['__name__']!r} has no attribute {name!r}") from None
    value = import_module(module) if attr is None else getattr(import_module(module), attr)
    namespace[name] = value
    return value


def names(namespace: Mapping[str, Any], exports: Exports) -> list[str]:
    """The package's ``dir()``: what it holds and what it exports (completion in JupyterLab)."""
    return sorted({*namespace, *exports})


def same_name(module: str, *attrs: str) -> dict[str, tuple[str, str | None]]:
    """``{attr: (module, attr)}``: names exported as they are called in ``module``."""
    return {attr: (module, attr) for attr in attrs}
