"""scripts/code_figures.py: the figures of issue 32's before/after table, on a small repository
made here (one commit) where each figure is known."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import code_figures  # noqa: E402

FILES = {
    "perfkit/__init__.py": "from perfkit.model import used\n__all__ = ['used']\n",
    "perfkit/model.py": ("LIMIT = 3\n\n\ndef used():\n    return LIMIT\n\n\n"
                         "def never_named_again():\n    return 1\n\n\n"
                         "def _private():\n    return tested()\n\n\ndef tested():\n"
                         "    return 2\n\n\ndef only_tested():\n    return 3\n"),
    "perfkit/stats/__init__.py": "",
    "perfkit/stats/_fit.py": "def fit():\n    return 0\n",
    "perfkit/stats/usl.py": "from perfkit.stats._fit import fit\n\n\nclass Usl:\n    pass\n",
    "tests/test_model.py": "from perfkit.model import only_tested, tested\n",
    "tests/test_stats_usl.py": "",
    "tests/test_scaling_usl.py": "",
    "tests/test_round5.py": "",
}


def test_each_figure_of_a_known_tree(tmp_path):
    for name, text in FILES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    for args in (["init", "-q"], ["add", "."],
                 ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "tree"]):
        subprocess.run(["git", *args], cwd=tmp_path, check=True)
    found, dead = code_figures.figures("HEAD", tmp_path)
    assert found["lines: perfkit/ (all)"] == sum(t.count("\n") for n, t in FILES.items()
                                                 if n.startswith("perfkit/"))
    assert found["lines:   stats"] == 7
    assert found["modules in perfkit/"] == 2 and found["modules in perfkit/stats/"] == 3
    assert found["modules"] == 5 and found["modules private by name"] == 1
    # model's LIMIT, used, never_named_again, tested, only_tested and usl's Usl; not __all__,
    # _private, nor stats/_fit's fit
    assert found["public-looking names"] == 6 and found["  of them def and class"] == 5
    assert dead == ["perfkit.model._private", "perfkit.model.never_named_again"]
    assert found["functions named only in tests/"] == 1  # only_tested (tested: by _private)
    assert found["test files"] == 4 and found["test files misnamed"] == 2
