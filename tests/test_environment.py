"""environment.yml (conda) and pyproject.toml must list the same packages."""

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def _name(requirement: str) -> str:
    name = re.split(r"[\s<>=!~;\[]", requirement.strip(), maxsplit=1)[0]
    return re.sub(r"[-_.]+", "-", name).lower()


def pyproject_packages() -> set[str]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    project = data["project"]
    reqs = list(project["dependencies"]) + list(project["optional-dependencies"]["test"])
    return {_name(r) for r in reqs}


def environment_packages() -> tuple[set[str], dict]:
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    names: set[str] = set()
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            names.update(_name(p) for p in dep.get("pip", []))
        else:
            names.add(_name(dep))
    return names, env


def test_environment_lists_the_same_packages_as_pyproject():
    env_names, _ = environment_packages()
    env_names -= {"python", "pip"}
    assert env_names == pyproject_packages()


def test_environment_pins_python_311_and_pip():
    _, env = environment_packages()
    deps = [d for d in env["dependencies"] if isinstance(d, str)]
    python = [d for d in deps if _name(d) == "python"]
    assert python and re.search(r">=\s*3\.(1[1-9]|[2-9]\d)", python[0])
    assert "pip" in deps
    assert env["channels"]


def test_dependencies_of_record_are_present():
    required = {"jupyterlab", "papermill", "pandas", "numpy", "matplotlib", "hdrhistogram",
                "scipy", "nbval"}
    assert required <= pyproject_packages()
