"""scripts/import_wrk2_sweep.py reproduces the imported demo experiments byte for byte."""

import filecmp
import importlib.util
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FIX = REPO / "tests" / "fixtures" / "wrk2"


def _importer():
    spec = importlib.util.spec_from_file_location(
        "import_wrk2_sweep", REPO / "scripts" / "import_wrk2_sweep.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _same_tree(a: Path, b: Path) -> bool:
    cmp = filecmp.dircmp(a, b, ignore=[".perfkit"])  # the run store perfkit.load keeps
    if cmp.left_only or cmp.right_only or cmp.funny_files:
        return False
    _, mismatch, errors = filecmp.cmpfiles(a, b, cmp.common_files, shallow=False)
    return not mismatch and not errors and all(
        _same_tree(a / d, b / d) for d in cmp.common_dirs)


@pytest.mark.parametrize("name, source, single", [
    ("demo-wrk2-sweep", FIX / "sweep", None),
    ("demo-wrk2-uncorrected", FIX / "single", ["uncorrected_U_default_R20000_c50"]),
])
def test_import_reproduces_the_bundled_experiment(tmp_path, name, source, single):
    out = tmp_path / name
    _importer().convert(source, out, single)
    assert _same_tree(out, REPO / "data" / name)


def test_import_never_overwrites(tmp_path):
    with pytest.raises(SystemExit, match="exists"):
        _importer().convert(FIX / "sweep", tmp_path, None)
