"""The public surface: ``perfkit.__all__``, documented in docs/api.md, whose examples run here.

- every ```python block of docs/api.md runs, in order, in one session, from the repository's
  top folder (the examples are the documentation: one that breaks fails the suite);
- every public name is documented there, and resolves;
- the Python of README.md, docs/*.md and the notebooks imports only public names and
  ``perfkit.plots``; the notebooks also the one page API, ``perfkit.report.pages``, and of it
  only what it lists (``PAGES``), which is exactly what they call;
- ``import perfkit`` loads no pandas, scipy or matplotlib (they load on first use).
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import perfkit

ROOT = Path(__file__).resolve().parents[1]
API = ROOT / "docs" / "api.md"
README = ROOT / "README.md"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
#: the figure namespace, public as a namespace (``from perfkit.plots import style``)
PLOTS = frozenset({"perfkit.plots", "perfkit.plots.alt", "perfkit.plots.checks",
                   "perfkit.plots.style"})
#: the page API: what a notebook may import beyond the public names (:mod:`perfkit.report.pages`)
PAGE_API = "perfkit.report.pages"
NOTEBOOK_MODULES = PLOTS | {PAGE_API}


def python_blocks(path: Path) -> list[str]:
    """The ```python blocks of a Markdown file, in order."""
    return re.findall(r"^```python\n(.*?)^```", path.read_text(encoding="utf-8"),
                      flags=re.M | re.S)


def notebook_code(path: Path) -> list[str]:
    """A notebook's code cells, IPython magics and shell lines left out."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    out = []
    for cell in cells:
        if cell["cell_type"] == "code":
            lines = "".join(cell["source"]).splitlines()
            out.append("\n".join(ln for ln in lines if not ln.lstrip().startswith(("%", "!"))))
    return out


def private_uses(code: str, allowed_modules: frozenset[str] = PLOTS) -> list[str]:
    """Each import of, or attribute taken from, perfkit that is not a public name."""
    public = set(perfkit.__all__)
    out: list[tuple[int, int, str]] = []
    for node in ast.walk(ast.parse(code)):
        where = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
        if isinstance(node, ast.Import):
            out += [(*where, a.name) for a in node.names
                    if a.name.startswith("perfkit") and a.name != "perfkit"
                    and a.name not in allowed_modules]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("perfkit"):
            if node.module == "perfkit":
                out += [(*where, f"perfkit.{a.name}") for a in node.names
                        if a.name not in public]
            elif node.module not in allowed_modules:
                out.append((*where, node.module))
        elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
              and node.value.id == "perfkit" and node.attr not in public):
            out.append((*where, f"perfkit.{node.attr}"))
    return [name for *_, name in sorted(out)]


def page_uses(code: str) -> tuple[list[str], set[str]]:
    """A notebook cell's uses of the page API: the names it takes that
    :data:`perfkit.report.pages.PAGES` does not list (``from perfkit.report.pages import x``
    with x not in its ``__all__``, ``latency.f`` with f not listed for ``latency``), and every
    ``page.function`` it calls."""
    from perfkit.report import pages

    bound: dict[str, str] = {}  # local name -> page
    bad: list[str] = []
    tree = ast.parse(code)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == PAGE_API:
            for a in node.names:
                if a.name not in pages.__all__:
                    bad.append(f"{PAGE_API}.{a.name}")
                elif a.name in pages.PAGES:
                    bound[a.asname or a.name] = a.name
    used = set()
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in bound):
            name = f"{bound[node.value.id]}.{node.attr}"
            used.add(name)
            if node.attr not in pages.PAGES[bound[node.value.id]]:
                bad.append(f"{PAGE_API}.{name}")
    return bad, used


def notebook_page_uses() -> tuple[dict[str, list[str]], set[str]]:
    found: dict[str, list[str]] = {}
    used: set[str] = set()
    for path in NOTEBOOKS:  # the cells as one program: a name imported in one, used in others
        bad, names = page_uses("\n".join(notebook_code(path)))
        used |= names
        if bad:
            found[path.name] = bad
    return found, used


def test_the_notebooks_call_only_what_the_page_api_lists_and_it_lists_only_that():
    from perfkit.report import pages

    found, used = notebook_page_uses()
    assert not found, f"names the page API does not list (perfkit.report.pages.PAGES): {found}"
    listed = {f"{p}.{n}" for p, names in pages.PAGES.items() for n in names}
    assert not listed - used, f"listed in perfkit.report.pages.PAGES, called by no notebook: " \
        f"{sorted(listed - used)}"
    assert len(listed) == sum(map(len, pages.PAGES.values())), "a name listed twice"


def test_the_page_check_finds_names_not_listed():
    code = ("from perfkit.report.pages import common, setup, within_run\n"
            "from perfkit.report.pages import latency as lat\n"
            "lat.load_point({})\nlat.spectrum_frame(x)\ncommon.text_table(t)\nsetup.x\n")
    bad, used = page_uses(code)
    assert bad == ["perfkit.report.pages.within_run", "perfkit.report.pages.latency.spectrum_frame"]
    assert used == {"latency.load_point", "latency.spectrum_frame", "common.text_table"}


@pytest.mark.slow  # every example of docs/api.md, on the bundled data
def test_the_api_examples_run(monkeypatch, capsys):
    blocks = python_blocks(API)
    assert len(blocks) >= 10
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    namespace: dict = {"__name__": "api_md"}
    for i, block in enumerate(blocks, 1):
        try:
            exec(compile(block, f"docs/api.md block {i}", "exec"), namespace)  # noqa: S102
        except Exception as exc:
            pytest.fail(f"docs/api.md block {i} fails: {exc!r}\n{block}")
    assert "not testable" in capsys.readouterr().out


def test_the_readme_python_example_runs(monkeypatch):
    blocks = python_blocks(README)
    assert blocks, "README.md has a Python example"
    monkeypatch.chdir(ROOT)
    namespace: dict = {"__name__": "readme"}
    for block in blocks:
        exec(compile(block, "README.md", "exec"), namespace)  # noqa: S102


def test_every_public_name_resolves_and_is_documented():
    text = API.read_text(encoding="utf-8")
    undocumented = [n for n in perfkit.__all__ if n != "__version__"
                    and not re.search(rf"`(perfkit\.)?{re.escape(n)}[`(.]", text)]
    assert not undocumented, f"public names missing from docs/api.md: {undocumented}"
    for name in perfkit.__all__:
        assert getattr(perfkit, name) is not None, name
    assert sorted(perfkit.__all__) == sorted(set(perfkit.__all__))
    with pytest.raises(AttributeError):
        perfkit.no_such_name  # noqa: B018


def test_the_examples_and_notebooks_use_the_public_surface_only():
    found = {}
    for path in (README, *sorted((ROOT / "docs").glob("*.md"))):
        for block in python_blocks(path):
            if bad := private_uses(block):
                found.setdefault(path.name, []).extend(bad)
    for path in NOTEBOOKS:
        for code in notebook_code(path):
            if bad := private_uses(code, NOTEBOOK_MODULES):
                found.setdefault(path.name, []).extend(bad)
    assert not found, f"non-public perfkit names: {found}"


def test_the_check_finds_private_imports():
    code = ("import perfkit\nfrom perfkit import load, _LAZY\nfrom perfkit.stats import compare\n"
            "import perfkit.analysis\nx = perfkit.frames.runs_frame\ny = perfkit.load\n"
            "from perfkit.report import nb\nfrom perfkit.report.sections import latency\n"
            "from perfkit.report.pages import latency\nfrom perfkit.plots import style\n")
    assert private_uses(code) == ["perfkit._LAZY", "perfkit.stats", "perfkit.analysis",
                                  "perfkit.frames", "perfkit.report", "perfkit.report.sections",
                                  "perfkit.report.pages"]
    assert private_uses(code, NOTEBOOK_MODULES) == [
        "perfkit._LAZY", "perfkit.stats", "perfkit.analysis", "perfkit.frames",
        "perfkit.report", "perfkit.report.sections"]


def test_import_perfkit_loads_no_pandas_scipy_or_matplotlib():
    code = ("import sys, perfkit\n"
            "print(sorted(m for m in ('pandas', 'scipy', 'matplotlib') if m in sys.modules))")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=env, cwd=ROOT).stdout.strip()
    assert out == "[]"
