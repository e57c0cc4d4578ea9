"""How many tests assert on English wording: a measuring script (issue 23, item 7).

Run it as ``python tests/_measure_asserts.py [--files]``; it imports nothing of perfkit and
reads the test files with :mod:`ast` only. Over ``tests/*.py`` it counts

- test functions (``def test_*`` in a ``test_*.py`` file, a parametrized one once);
- assert statements (anywhere in a file, helpers too);
- English-substring asserts: an assert whose test holds a string literal of two words or more
  (an f-string counts by its literal parts) compared with text: ``"..." in x``, ``not in``,
  ``x == "..."``, ``!=``, or given to ``x.startswith(...)`` / ``x.endswith(...)``;

and prints the share of asserts that are English-substring checks, and the share of tests
holding at least one, by two readings of "two words":

- *wording* (the one to watch): words are separated by white space, and a word holds two
  letters in a row: ``"30000 req/s offered"`` has two, ``"p99.9 [ms]"`` one; an identifier
  (``"median_base"``, ``"same-host"``: a column, a threat's kind) is one word, a name;
- *letters* (the issue's 36%): any two runs of two letters or more, so ``"median_base"`` counts.

``--files`` adds one line per file.
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

TESTS = Path(__file__).resolve().parent
LETTERS = re.compile(r"[A-Za-z]{2,}")
#: the words a test file named after a review round or an issue carries
HISTORY_WORDS = ("review", "items", "round", "issue")
#: the readings of "a literal of two words or more": name -> predicate on its text
READINGS = {
    "wording": lambda text: sum(bool(LETTERS.search(w)) for w in text.split()) >= 2,
    "letters": lambda text: len(LETTERS.findall(text)) >= 2,
}


def _literal_text(node: ast.AST) -> str | None:
    """The text of a string literal (an f-string: its literal parts), else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return " ".join(v.value for v in node.values
                        if isinstance(v, ast.Constant) and isinstance(v.value, str))
    return None


def _is_words(node: ast.AST, reading: str) -> bool:
    """A string literal of two words or more, by ``reading``."""
    text = _literal_text(node)
    return text is not None and READINGS[reading](text)


def _is_text_check(node: ast.AST, reading: str) -> bool:
    """One comparison or call that checks text against an English literal."""
    if isinstance(node, ast.Compare):
        sides = [node.left, *node.comparators]
        for op, (left, right) in zip(node.ops, zip(sides, sides[1:], strict=False),
                                     strict=True):
            if isinstance(op, ast.In | ast.NotIn) and _is_words(left, reading):
                return True
            if isinstance(op, ast.Eq | ast.NotEq) and (_is_words(left, reading)
                                                       or _is_words(right, reading)):
                return True
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("startswith", "endswith") and node.args):
        arg = node.args[0]
        parts = arg.elts if isinstance(arg, ast.Tuple) else [arg]
        return any(_is_words(p, reading) for p in parts)
    return False


def english_assert(node: ast.Assert, reading: str = "wording") -> bool:
    """An assert whose test holds an English-substring check anywhere in it."""
    return any(_is_text_check(n, reading) for n in ast.walk(node.test))


@dataclass
class Counts:
    """The counts of one file, or of all of them: asserts and tests on English, per reading."""

    tests: int = 0
    asserts: int = 0
    english: dict[str, int] = field(default_factory=lambda: dict.fromkeys(READINGS, 0))
    tests_english: dict[str, int] = field(default_factory=lambda: dict.fromkeys(READINGS, 0))

    def add(self, other: Counts) -> None:
        self.tests += other.tests
        self.asserts += other.asserts
        for reading in READINGS:
            self.english[reading] += other.english[reading]
            self.tests_english[reading] += other.tests_english[reading]


def measure(path: Path) -> Counts:
    """The counts of one file (its test functions only if pytest collects it, ``test_*.py``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    out = Counts()
    collected = path.name.startswith("test_")
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert):
            out.asserts += 1
            for reading in READINGS:
                out.english[reading] += english_assert(node, reading)
        elif (collected and isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
              and node.name.startswith("test")):
            out.tests += 1
            asserts = [n for n in ast.walk(node) if isinstance(n, ast.Assert)]
            for reading in READINGS:
                out.tests_english[reading] += any(english_assert(a, reading) for a in asserts)
    return out


def named_after_history(name: str) -> bool:
    """A test file named after a review round or an issue (``test_review_items.py``)."""
    return name.startswith("test_") and any(w in name for w in HISTORY_WORDS)


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def main(argv: list[str]) -> int:
    total = Counts()
    rows = []
    for path in sorted(TESTS.glob("*.py")):
        if path.name == Path(__file__).name:
            continue
        counts = measure(path)
        total.add(counts)
        rows.append((path.name, counts))
    if "--files" in argv:
        for name, c in rows:
            print(f"{name:42s} tests {c.tests:4d}  asserts {c.asserts:5d}  English "
                  f"{c.english['wording']:4d} ({_pct(c.english['wording'], c.asserts)})")
    history = [(n, c) for n, c in rows if named_after_history(n)]
    print(f"files: {len(rows)}  test functions: {total.tests}  asserts: {total.asserts}")
    for reading in READINGS:
        print(f"{reading}: English-substring asserts {total.english[reading]} of "
              f"{total.asserts} ({_pct(total.english[reading], total.asserts)}); tests with "
              f"one {total.tests_english[reading]} of {total.tests} "
              f"({_pct(total.tests_english[reading], total.tests)})")
    print(f"files named after a review round or issue: {len(history)} "
          f"({sum(c.tests for _, c in history)} test functions)"
          + "".join(f"\n  {n}" for n, _ in history))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
