"""One vocabulary: every verdict and status word is typed once, in perfkit/vocabulary.py, and
kept as the plain word wherever it is written (CSV, JSON, pandas frames).

Read from the source with :mod:`ast`: a string constant that *is* one of the words (not a
docstring, not a longer sentence holding it) anywhere under perfkit/ outside
perfkit/vocabulary.py fails.
"""

from __future__ import annotations

import ast
import io
import json
from enum import StrEnum
from pathlib import Path

import pandas as pd

from perfkit import vocabulary
from perfkit.vocabulary import (
    FAILED_STATUSES,
    ClaimVerdict,
    DriftVerdict,
    GateStatus,
    ManifestStatus,
    NoteKind,
    RunStatus,
    Verdict,
)

PACKAGE = Path(__file__).resolve().parents[1] / "perfkit"
HOME = PACKAGE / "vocabulary.py"
#: the words of issue 23, each a string literal in one module only
WORDS = frozenset({"better", "worse", "inconclusive", "not testable", "~", "no data", "failed",
                   "saturated", "short"})
#: string constants that are one of the words but not the word: (file, word) -> why
NOT_THE_WORD = {
    ("perfkit/present/tables.py", "~"): "the LaTeX escape of the tilde character",
    ("perfkit/analysis/context/_levels.py", "~"):
        "nginx's regex location modifier (location ~ ...)",
}


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def literals(path: Path, words: frozenset[str] = WORDS) -> list[tuple[int, str]]:
    """(line, word) of every string constant of ``path`` that is one of ``words``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    docs = _docstrings(tree)
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and node.value in words and id(node) not in docs]


def offenders(package: Path = PACKAGE) -> list[str]:
    """``path:line: 'word'`` for every word typed outside perfkit/vocabulary.py."""
    out = []
    for path in sorted(package.rglob("*.py")):
        if path.resolve() == HOME.resolve():
            continue
        name = path.relative_to(package.parent).as_posix()
        out += [f"{name}:{line}: {word!r}" for line, word in literals(path)
                if (name, word) not in NOT_THE_WORD]
    return out


def test_each_word_is_typed_in_vocabulary_only():
    bad = offenders()
    assert not bad, (f"{len(bad)} verdict/status word(s) typed outside perfkit/vocabulary.py "
                     "(use its enums):\n" + "\n".join(bad))


def test_the_exceptions_are_still_there():
    """An exception that no longer matches anything is removed, not kept as a loophole."""
    for (name, word), _why in NOT_THE_WORD.items():
        assert word in {w for _, w in literals(PACKAGE.parent / name)}, name


def test_every_word_is_defined_in_vocabulary():
    assert {w for _, w in literals(HOME)} == WORDS


def test_the_check_finds_a_word_and_skips_docstrings_and_sentences(tmp_path):
    (tmp_path / "a.py").write_text('"""better"""\n\ndef f():\n    """worse"""\n'
                                   '    return "not testable" if x else "~ better"\n',
                                   encoding="utf-8")
    assert offenders(tmp_path) == [f"{tmp_path.name}/a.py:5: 'not testable'"]


def test_members_are_their_plain_words_in_csv_json_and_frames():
    frame = pd.DataFrame({"verdict": [Verdict.BETTER, Verdict.NO_CHANGE],
                          "status": [RunStatus.SHORT, RunStatus.FAILED]})
    buf = io.StringIO()
    frame.to_csv(buf, index=False)
    assert buf.getvalue() == "verdict,status\nbetter,short\n~,failed\n"
    assert json.dumps({"gate": GateStatus.INCONCLUSIVE, Verdict.NO_DATA: 1}) \
        == '{"gate": "inconclusive", "no data": 1}'
    assert f"{Verdict.NOT_TESTABLE}|{ClaimVerdict.NOT_TESTABLE_N1}" \
        == "not testable|not-testable-n1"  # an identity; its words are wording's
    assert type(str(Verdict.WORSE)) is str and str(Verdict.WORSE) == "worse"
    assert frame["verdict"].eq("better").tolist() == [True, False]


def test_failed_statuses_are_what_the_runner_writes():
    assert FAILED_STATUSES == {"failed", "killed", "aborted"}
    assert "timeout" not in FAILED_STATUSES  # nothing writes it
    assert ManifestStatus.COMPLETE not in FAILED_STATUSES


def test_gate_exit_statuses_and_worst_first_order():
    assert [(s.value, s.exit_status) for s in GateStatus] == [
        ("error", 2), ("regression", 1), ("inconclusive", 3), ("no data", 3), ("pass", 0)]
    assert RunStatus.SATURATED.counts_as_failed and not RunStatus.SHORT.counts_as_failed
    assert set(vocabulary.__all__) <= set(dir(vocabulary))


def test_values_are_identities_worded_once_with_their_tunables():
    """A value is a short identity (no sentence, no tunable baked in); the words of those
    that are not their own word are :func:`perfkit.wording.verdict_words`'."""
    from perfkit.wording import DRIFT_TOLERANCE_PCT, VERDICT_WORDS, verdict_words

    for enum in (DriftVerdict, ClaimVerdict, NoteKind):
        for member in enum:
            assert len(member.value) <= 22 and not any(c in member.value for c in "()%;±")
    assert DriftVerdict.STABLE == "stable"
    assert verdict_words(DriftVerdict.STABLE) == f"no drift beyond ±{DRIFT_TOLERANCE_PCT:g}%"
    assert verdict_words("stable") == verdict_words(DriftVerdict.STABLE)  # read back from JSON
    assert verdict_words(ClaimVerdict.SUPPORTED_DIRECTION) == (
        "supported in direction; size not comparable")
    assert verdict_words(Verdict.NO_CHANGE) == "~" and verdict_words("a factor level") == \
        "a factor level"
    assert all(isinstance(k, StrEnum) for k in VERDICT_WORDS)
