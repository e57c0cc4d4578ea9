"""The layout rule of docs/architecture.md: every module of perfkit sits in one layer, and
imports only from its own layer or lower ones; the front ends never reach past the analysis
layer into the statistics.

Read from the source with :mod:`ast` (module-level and function-level imports, ``import x``
and ``from x import y``, relative imports resolved), so nothing is imported to check it.
"""

from __future__ import annotations

import ast
from pathlib import Path

from _measure_asserts import named_after_history

PACKAGE = Path(__file__).resolve().parents[1] / "perfkit"

#: the top level is the foundation: these modules and nothing else (``vocabulary``: the verdict
#: and status words, defined once, which every layer above returns or shows; ``warning``: the
#: coded warnings every layer returns; ``wording``: their words, given once, which every
#: layer that shows a warning renders through; ``safetext``: a name made safe where it is
#: written, for a spreadsheet, a terminal or XML, once for every front end and store)
FOUNDATION = frozenset({
    "errors", "units", "formatting", "model", "histogram", "hdrcodec", "hdrlayout",
    "consistency", "frames", "_fsutil", "_lazy", "paths", "vocabulary", "safetext", "counters",
    "combine", "warning", "wording",
})
#: entry points, exempt from the rule (``__init__`` only re-exports)
ENTRY = frozenset({"perfkit", "perfkit.cli", "perfkit.__main__"})

#: package -> (layer name, rank); a module imports only from ranks <= its own
LAYERS = {
    "ingest": ("data", 1), "store": ("data", 1),
    "stats": ("stats", 2),
    "analysis": ("analysis", 3),
    "present": ("present", 4), "plots": ("plots", 4),
    "report": ("report", 5), "run": ("run", 5),
    "commands": ("commands", 6),
}
#: front ends: they get every number from perfkit.analysis, never from perfkit.stats
FRONT_ENDS = frozenset({"present", "plots", "report", "run", "commands"})

#: inside perfkit.analysis: feature subpackage (or module) -> rank. A module imports from its
#: own subpackage (its private modules directly) or from a lower rank's namespace (its
#: ``__init__``), never a private module of another subpackage, never one of its own rank
ANALYSIS_RANKS = {
    "core": 0,
    "context": 1,
    "compare": 2,
    "effects": 3, "scaling": 3, "history": 3, "latency": 3,
    "seeds": 4,
}
#: at most this many modules at the top of perfkit/analysis (``__init__`` included)
ANALYSIS_TOP_MAX = 12


def modules(package: Path = PACKAGE) -> dict[str, Path]:
    """Every module under ``package``: dotted name -> file."""
    out = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def layer(name: str, package: Path = PACKAGE) -> tuple[str, int] | None:
    """``(layer, rank)`` of a module; None for a package the rule does not know. Any module at
    the top level is ranked as the foundation (:func:`misplaced` says when it should not be
    there)."""
    if name in ENTRY:
        return ("entry", 99)
    top = name.split(".")[1]
    if (package / f"{top}.py").is_file() or top in FOUNDATION:
        return ("foundation", 0)
    return LAYERS.get(top)


def misplaced(name: str, package: Path = PACKAGE) -> bool:
    """A module at the top level that is neither the foundation nor an entry point."""
    if name in ENTRY:
        return False
    top = name.split(".")[1]
    return (package / f"{top}.py").is_file() and top not in FOUNDATION


def root_names(package: Path = PACKAGE) -> dict[str, str]:
    """Names ``perfkit/__init__.py`` re-exports -> the module they come from (a name defined
    there, ``__version__``, is metadata: importing it depends on no layer)."""
    tree = ast.parse((package / "__init__.py").read_text(encoding="utf-8"))
    out = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                out[alias.asname or alias.name] = node.module
        elif (isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict)
              and any(isinstance(t, ast.Name) and t.id == "_LAZY" for t in node.targets)):
            # the names imported on first use: {"name": ("perfkit.x.y", "attr"), ...}
            for key, value in zip(node.value.keys, node.value.values, strict=True):
                out[ast.literal_eval(key)] = ast.literal_eval(value)[0]
    return out


def imports(name: str, path: Path, known: set[str], roots: dict[str, str]) -> set[str]:
    """The perfkit modules ``name`` imports, anywhere in its source (``from perfkit.x import
    y`` counts as ``perfkit.x.y`` when that is a module, else as ``perfkit.x``)."""
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
                and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module"
                and node.args[0].value.split(".")[0] == "perfkit"):
            found.add(node.args[0].value)  # importlib.import_module("perfkit.x.y"), on first use
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "perfkit")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            if source.split(".")[0] != "perfkit":
                continue
            for alias in node.names:
                full = f"{source}.{alias.name}"
                if full in known:
                    found.add(full)
                elif source == "perfkit":
                    if alias.name in roots:  # else defined there: __version__, metadata
                        found.add(roots[alias.name])
                else:
                    found.add(source)
    found.discard(name)
    return found


def violations(package: Path = PACKAGE) -> list[str]:
    """``module -> imported (layer a -> layer b)`` for every import that breaks the rule, and
    every module outside a layer."""
    found = modules(package)
    known, roots = set(found), root_names(package)
    out = []
    for name, path in found.items():
        mine = layer(name, package)
        if misplaced(name, package):
            out.append(f"{name}: a top-level module outside the foundation")
        if mine is None:
            out.append(f"{name}: in no layer")
            continue
        if mine[0] == "entry":
            continue
        for target in sorted(imports(name, path, known, roots)):
            theirs = layer(target, package)
            if theirs is None or theirs[0] == "entry":
                out.append(f"{name} -> {target} ({mine[0]} -> "
                           f"{'no layer' if theirs is None else 'entry point'})")
            elif theirs[1] > mine[1]:
                out.append(f"{name} -> {target} ({mine[0]} -> {theirs[0]}: upward)")
            elif name.split(".")[1] in FRONT_ENDS and theirs[0] == "stats":
                out.append(f"{name} -> {target} ({mine[0]} -> stats: past the analysis "
                           "layer)")
            else:
                out += analysis_violation(name, target)
    return out


def package_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Package of perfkit (``ingest``, ``store``, ...) -> the other packages its modules
    import; the foundation's modules and the entry points are left out."""
    found = modules(package)
    known, roots = set(found), root_names(package)
    out: dict[str, set[str]] = {}
    for name, path in found.items():
        mine = name.split(".")[1] if "." in name else None
        if mine is None or not (package / mine).is_dir() or name in ENTRY:
            continue
        for target in imports(name, path, known, roots):
            theirs = target.split(".")[1] if "." in target else None
            if theirs and theirs != mine and (package / theirs).is_dir():
                out.setdefault(mine, set()).add(theirs)
    return out


def mutual(package: Path = PACKAGE) -> list[str]:
    """``a <-> b`` for every two packages of perfkit that import each other."""
    graph = package_graph(package)
    return sorted(f"{a} <-> {b}" for a, targets in graph.items() for b in targets
                  if a < b and a in graph.get(b, set()))


def test_no_two_packages_import_each_other():
    """docs/architecture.md: within a layer too, the packages are ranked (``store`` below
    ``ingest``): no two packages of perfkit import each other."""
    both = mutual()
    assert not both, f"packages that import each other: {both}"


def test_the_package_rule_fails_on_a_tree_that_breaks_it(tmp_path):
    files = {
        "__init__.py": "",
        "ingest/__init__.py": "",
        "ingest/loader.py": ("import importlib\n"
                             "def f():\n    return importlib.import_module('perfkit.store.c')\n"),
        "store/__init__.py": "",
        "store/c.py": "from perfkit.ingest.loader import f\n",
        "stats/__init__.py": "",
        "stats/t.py": "from perfkit.store import c\n",
    }
    package = tmp_path / "perfkit"
    for name, text in files.items():
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text(text, encoding="utf-8")
    assert mutual(package) == ["ingest <-> store"]


def feature(name: str) -> str | None:
    """The feature of ``perfkit.analysis``'s module ``name`` (its subpackage, or the module at
    the top); None outside the analysis or for its ``__init__``."""
    parts = name.split(".")
    return parts[2] if len(parts) > 2 and parts[1] == "analysis" else None


def analysis_violation(name: str, target: str) -> list[str]:
    """The rank rule inside perfkit.analysis (:data:`ANALYSIS_RANKS`), and no module outside a
    feature subpackage reaching into its private modules."""
    mine, theirs = feature(name), feature(target)
    if theirs is None:
        if mine is not None and target == "perfkit.analysis":
            return [f"{name} -> {target} (analysis.{mine} -> the analysis namespace: import "
                    "from the feature subpackage)"]
        return []
    private = any(part.startswith("_") and part != "__init__"
                  for part in target.split(".")[3:])
    if mine == theirs:
        return []
    if private:
        return [f"{name} -> {target} (a private module of analysis.{theirs}: import from "
                f"perfkit.analysis.{theirs})"]
    if mine is None:
        return []
    rank, their_rank = ANALYSIS_RANKS.get(mine), ANALYSIS_RANKS.get(theirs)
    if rank is None or their_rank is None:
        return [f"{name}: analysis.{mine if rank is None else theirs} has no rank"]
    if their_rank >= rank:
        way = "upward" if their_rank > rank else "sideways"
        return [f"{name} -> {target} (analysis.{mine} -> analysis.{theirs}: {way})"]
    return []


def test_every_import_points_down_and_front_ends_stop_at_analysis():
    bad = violations()
    assert not bad, f"{len(bad)} import(s) break docs/architecture.md:\n" + "\n".join(bad)


def test_the_analysis_is_feature_subpackages_over_a_core():
    """docs/architecture.md: at most :data:`ANALYSIS_TOP_MAX` modules at the top of
    perfkit/analysis, every other one in a ranked feature subpackage whose modules are private
    (``_name.py``) behind its ``__init__``."""
    top = sorted(p.name for p in (PACKAGE / "analysis").glob("*.py"))
    assert len(top) <= ANALYSIS_TOP_MAX, top
    for sub in sorted(p for p in (PACKAGE / "analysis").iterdir() if p.is_dir()
                      and p.name != "__pycache__"):
        assert sub.name in ANALYSIS_RANKS, f"analysis/{sub.name} has no rank"
        public = [p.name for p in sub.glob("*.py")
                  if not p.name.startswith("_")]
        assert not public, f"analysis/{sub.name}: modules not private: {public}"


def test_the_analysis_rank_rule_fails_on_a_tree_that_breaks_it(tmp_path):
    files = {
        "__init__.py": "",
        "analysis/__init__.py": "",
        "analysis/core/__init__.py": "from perfkit.analysis.core._a import x\n",
        "analysis/core/_a.py": "from perfkit.analysis.compare import y\n",
        "analysis/compare/__init__.py": "from perfkit.analysis.compare._b import y\n",
        "analysis/compare/_b.py": "from perfkit.analysis.core._a import x\n",
        "analysis/effects/__init__.py": "",
        "analysis/effects/_c.py": ("from perfkit.analysis.core import x\n"
                                   "from perfkit.analysis.scaling import z\n"
                                   "from perfkit.analysis import w\n"),
        "analysis/scaling/__init__.py": "",
        "present/__init__.py": "",
        "present/t.py": "from perfkit.analysis.compare._b import y\n",
    }
    package = tmp_path / "perfkit"
    for name, text in files.items():
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text(text, encoding="utf-8")
    assert violations(package) == [
        "perfkit.analysis.compare._b -> perfkit.analysis.core._a (a private module of "
        "analysis.core: import from perfkit.analysis.core)",
        "perfkit.analysis.core._a -> perfkit.analysis.compare (analysis.core -> "
        "analysis.compare: upward)",
        "perfkit.analysis.effects._c -> perfkit.analysis (analysis.effects -> the analysis "
        "namespace: import from the feature subpackage)",
        "perfkit.analysis.effects._c -> perfkit.analysis.scaling (analysis.effects -> "
        "analysis.scaling: sideways)",
        "perfkit.present.t -> perfkit.analysis.compare._b (a private module of "
        "analysis.compare: import from perfkit.analysis.compare)",
    ]


def test_the_rule_fails_on_a_tree_that_breaks_it(tmp_path):
    """The check itself, on a small tree: an upward import (function-level and relative), a
    front end importing stats, a module left at the top level, a package in no layer; the
    imports that keep the rule pass."""
    files = {
        "__init__.py": "from perfkit.units import parse\n__version__ = '0'\n",
        "units.py": "def f():\n    from .analysis import metrics\n",
        "errors.py": "from perfkit import __version__\n",
        "analysis/__init__.py": "",
        "analysis/metrics.py": "import perfkit.stats.power\nfrom perfkit import units\n",
        "stats/__init__.py": "",
        "stats/power.py": "from ..units import parse\n",
        "present/__init__.py": "",
        "present/table.py": ("from perfkit.analysis import metrics\n"
                             "from perfkit.stats import power\n"),
        "tables.py": "",
        "scaling/__init__.py": "",
    }
    package = tmp_path / "perfkit"
    for name, text in files.items():
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text(text, encoding="utf-8")
    assert violations(package) == [
        "perfkit.present.table -> perfkit.stats.power (present -> stats: past the analysis "
        "layer)",
        "perfkit.scaling: in no layer",
        "perfkit.tables: a top-level module outside the foundation",
        "perfkit.units -> perfkit.analysis.metrics (foundation -> analysis: upward)",
    ]


#: test files about the project as a whole, not one module: name -> what they check
CROSS_CUTTING = {
    "test_api_docs": "docs/api.md's examples run",
    "test_ci_recipe": "docs/ci.md's GitHub Actions job runs",
    "test_environment": "environment.yml and pyproject.toml agree",
    "test_layout": "this rule and the layers",
    "test_notebooks_clean": "notebooks/ committed without outputs",
    "test_public_api": "the public surface and the private interior",
    "test_same_verdict": "the CLI and the report print the same answer",
}


def module_stems(package: Path = PACKAGE) -> set[str]:
    """What a test file may be named after: every module and package of perfkit as
    ``<layer>_<module>`` with a private module's underscore dropped
    (``analysis/compare/_gate.py`` -> ``analysis_compare_gate``), the subcommands as
    ``cli_<command>``, and the scripts as ``scripts_<script>``."""
    out = set()
    for path in package.rglob("*.py"):
        parts = [p.lstrip("_") for p in path.relative_to(package).with_suffix("").parts
                 if p != "__init__"]
        if parts and parts[0] == "commands":
            parts[0] = "cli"
        if parts:
            out.add("_".join(parts))
    out |= {f"scripts_{p.stem}" for p in (package.parent / "scripts").glob("*.py")}
    return out


def named_after_module(stem: str, known: set[str]) -> bool:
    """``test_<module>`` or ``test_<module>_<aspect>`` for a module of :func:`module_stems`
    (``test_ingest_wrk_malformed``: the wrk parser on malformed outputs)."""
    name = stem.removeprefix("test_")
    return any(name == m or name.startswith(m + "_") for m in known)


def test_every_test_file_is_named_after_the_module_it_tests():
    """docs/architecture.md: ``tests/test_<layer>_<module>.py`` (an aspect may follow); a
    name after a package that does not exist (``test_scaling_usl.py``: the USL is
    ``stats/usl``) fails, and so does any file not in :data:`CROSS_CUTTING`."""
    known = module_stems()
    tests = Path(__file__).resolve().parent
    bad = [p.name for p in sorted(tests.glob("test_*.py"))
           if p.stem not in CROSS_CUTTING and not named_after_module(p.stem, known)]
    assert not bad, f"test files not named after a module of perfkit: {bad}"
    assert not any(named_after_module(n, known) for n in (
        "test_scaling_usl", "test_schemas", "test_drift", "test_gate"))
    assert all(named_after_module(n, known) for n in (
        "test_stats_usl", "test_analysis_compare_gate", "test_cli_gate",
        "test_ingest_wrk_malformed", "test_units"))


def test_no_test_file_is_named_after_a_review_round_or_an_issue():
    """docs/architecture.md: a test goes in the file of the module it tests
    (``tests/test_<layer>_<module>.py``), never in one named after the review or the issue
    that asked for it. The rule itself fails on such names."""
    tests = Path(__file__).resolve().parent
    named = [p.name for p in sorted(tests.glob("test_*.py")) if named_after_history(p.name)]
    assert not named, f"test files named after a review round or an issue: {named}"
    assert all(named_after_history(n) for n in (
        "test_review_items.py", "test_seeds_review.py", "test_cli_items.py",
        "test_round5.py", "test_issue_22.py"))
    assert not any(named_after_history(n) for n in (
        "test_report_sections_history.py", "test_analysis_effects.py", "test_cli_gate.py"))
