"""The code's shape at one or more git revisions, for issue 32's before/after table.

    .venv/bin/python scripts/code_figures.py e6ec2cb main HEAD

reads each revision's files from git (no checkout) and prints, one column per revision:

- lines (every line, blank and comment included, as ``wc -l``) of ``perfkit/`` and of each of
  its packages (the top-level modules as ``foundation``), and of each subpackage of
  ``analysis/``;
- modules (``.py`` files) per folder of ``perfkit/``;
- modules, and modules private by name (a part of the dotted name starting with ``_``, as
  ``tests/test_public_api.py`` has it);
- public-looking names: the top-level names (``def``, ``class``, assignments; not imports) not
  starting with ``_`` in the modules not private by name, and of them the ``def`` and ``class``
  names;
- dead functions: top-level functions of ``perfkit/`` whose name occurs nowhere else as a word
  in the revision's Python, notebooks, Markdown and templates (a grep-based check: a name
  also used for something else counts as used, so this is a lower bound), and those used only
  by ``tests/``;
- test files not named after a module they test, by ``tests/test_layout.py``'s rule
  (``test_<layer>_<module>[_<aspect>]``, a private module without its underscore, the
  subcommands as ``cli_<command>``), its cross-cutting files (``CROSS_CUTTING``) taken from
  the working tree's ``tests/test_layout.py``.

``--dead`` lists the dead functions of the last revision.
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
from collections import Counter
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parents[1]
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: the files a use of a name is looked for in
SEARCHED = (".py", ".ipynb", ".md", ".j2", ".yaml", ".toml", ".cfg", ".sh")


def git(*args: str, root: Path = ROOT) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True,
                          text=True).stdout


def files(rev: str, root: Path = ROOT) -> dict[str, str]:
    """Every searched text file of the revision: path -> text."""
    out = {}
    for path in git("ls-tree", "-r", "--name-only", rev, root=root).splitlines():
        if path.endswith(SEARCHED) and not path.startswith(("data/", "tests/fixtures/")):
            out[path] = git("show", f"{rev}:{path}", root=root)
    return out


def package_of(path: PurePosixPath) -> str:
    parts = path.parts[1:]
    return "foundation" if len(parts) == 1 else parts[0]


def dotted(path: PurePosixPath) -> str:
    parts = list(path.with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_private(name: str) -> bool:
    return any(p.startswith("_") and not p.startswith("__") for p in name.split("."))


def top_names(tree: ast.Module) -> list[str]:
    out: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out.append(node.name)
        elif isinstance(node, ast.Assign):
            out += [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out.append(node.target.id)
    return out


def cross_cutting(root: Path = ROOT) -> set[str]:
    layout = root / "tests" / "test_layout.py"
    if not layout.is_file():
        return set()
    tree = ast.parse(layout.read_text(encoding="utf-8"))
    for node in tree.body:
        if (isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id == "CROSS_CUTTING"):
            return set(ast.literal_eval(node.value))
    return set()


def module_stems(modules: list[PurePosixPath], scripts: list[PurePosixPath]) -> set[str]:
    out = set()
    for path in modules:
        parts = [p.lstrip("_") for p in path.relative_to("perfkit").with_suffix("").parts
                 if p != "__init__"]
        if parts and parts[0] == "commands":
            parts[0] = "cli"
        if parts:
            out.add("_".join(parts))
    return out | {f"scripts_{p.stem}" for p in scripts}


def figures(rev: str, root: Path = ROOT) -> tuple[dict[str, int | str], list[str]]:
    """The figures of revision ``rev`` of the repository at ``root`` (see the module's
    docstring), and its dead functions by dotted name."""
    text = files(rev, root)
    modules = sorted(PurePosixPath(p) for p in text
                     if p.startswith("perfkit/") and p.endswith(".py"))
    out: dict[str, int | str] = {}
    lines = Counter[str]()
    folders = Counter[str]()
    for path in modules:
        n = text[str(path)].count("\n")
        lines["perfkit/ (all)"] += n
        lines[f"  {package_of(path)}"] += n
        if path.parts[1] == "analysis" and len(path.parts) > 3:
            lines[f"    analysis/{path.parts[2]}"] += n
        folders[str(path.parent)] += 1
    out |= {f"lines: {k}": v for k, v in sorted(lines.items(), key=lambda kv: kv[0].strip())}
    out |= {f"modules in {k}/": v for k, v in sorted(folders.items())}
    names = [dotted(p) for p in modules]
    out["modules"] = len(names)
    out["modules private by name"] = sum(map(is_private, names))
    out["modules not private by name"] = len(names) - sum(map(is_private, names))
    trees = {p: ast.parse(text[str(p)]) for p in modules}
    public = [n for p, tree in trees.items() if not is_private(dotted(p))
              for n in top_names(tree) if not n.startswith("_")]
    out["public-looking names"] = len(public)
    out["  of them def and class"] = sum(
        1 for p, tree in trees.items() if not is_private(dotted(p)) for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        and not node.name.startswith("_"))
    words = Counter[str]()
    test_words = Counter[str]()
    for path, body in text.items():
        found = Counter(WORD.findall(body))
        words.update(found)
        if path.startswith("tests/"):
            test_words.update(found)
    defs = Counter(node.name for tree in trees.values() for node in tree.body
                   if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef))
    dead = sorted(f"{dotted(p)}.{node.name}" for p, tree in trees.items() for node in tree.body
                  if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                  and not node.name.startswith("__") and words[node.name] <= defs[node.name])
    only_tests = [n for n in (node.name for tree in trees.values() for node in tree.body
                              if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef))
                  if words[n] > defs[n] and words[n] - test_words[n] <= defs[n]]
    out["top-level functions"] = sum(defs.values())
    out["dead functions (named nowhere else)"] = len(dead)
    out["functions named only in tests/"] = len(only_tests)
    tests = sorted(PurePosixPath(p) for p in text
                   if re.fullmatch(r"tests/test_[^/]*\.py", p))
    scripts = [PurePosixPath(p) for p in text if re.fullmatch(r"scripts/[^/]*\.py", p)]
    known, cross = module_stems(modules, scripts), cross_cutting(root)
    bad = [p for p in tests if p.stem not in cross and not any(
        p.stem.removeprefix("test_") == m or p.stem.removeprefix("test_").startswith(m + "_")
        for m in known)]
    out["test files"] = len(tests)
    out["test files misnamed"] = len(bad)
    return out, dead


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("revs", nargs="+", help="git revisions (a commit, a branch, HEAD)")
    parser.add_argument("--dead", action="store_true", help="list the last revision's dead "
                        "functions")
    args = parser.parse_args(argv)
    columns = []
    for rev in args.revs:
        found, dead = figures(rev)
        columns.append(found)
    rows = list(dict.fromkeys(k for c in columns for k in c))
    heads = [git("rev-parse", "--short", r).strip() + f" ({r})" if r[:7] not in git(
        "rev-parse", "--short", r) else r for r in args.revs]
    width = max(map(len, rows))
    print("| " + "figure".ljust(width) + " | " + " | ".join(heads) + " |")
    print("|" + "-" * (width + 2) + "|" + "|".join("-" * (len(h) + 2) for h in heads) + "|")
    for row in rows:
        print(f"| {row.ljust(width)} | " + " | ".join(
            str(c.get(row, "")).rjust(len(h)) for c, h in zip(columns, heads, strict=True))
            + " |")
    if args.dead:
        print("\n".join(["", f"dead functions at {args.revs[-1]}:", *dead]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
