"""Dependency floors, the image lock and the package metadata agree with each other."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
import zipfile
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
# Never imported by the action (tests/test_architecture.py): requirements/image.in leaves it out.
IMAGE_LEAVES_OUT = {"scikit-learn"}


def _pins(path: Path) -> dict[str, str]:
    """name -> version of each `name==version` line (comments, hashes and markers aside)."""
    found = {}
    for line in path.read_text().splitlines():
        match = re.match(r"^([A-Za-z0-9_.-]+)==([^\s;\\]+)", line)
        if match:
            found[canonicalize_name(match[1])] = match[2]
    return found


def _floors() -> dict[str, str]:
    floors = {}
    for text in PROJECT["dependencies"]:
        requirement = Requirement(text)
        [spec] = [s for s in requirement.specifier if s.operator == ">="]
        floors[canonicalize_name(requirement.name)] = spec.version
    return floors


def _same_version(a: str, b: str) -> bool:
    return a.split(".") + ["0"] * (3 - len(a.split("."))) == b.split(".") + ["0"] * (3 - len(b.split(".")))


def test_every_dependency_has_a_floor_and_the_lowest_constraints_are_those_floors() -> None:
    floors, lowest = _floors(), _pins(ROOT / "constraints" / "lowest.txt")
    assert set(lowest) == set(floors)
    assert all(_same_version(lowest[name], floors[name]) for name in floors), (lowest, floors)


def test_the_image_lock_pins_every_dependency_with_hashes_inside_the_declared_ranges() -> None:
    lock = ROOT / "requirements" / "image.txt"
    pins = _pins(lock)
    for text in PROJECT["dependencies"]:
        requirement = Requirement(text)
        name = canonicalize_name(requirement.name)
        if name in IMAGE_LEAVES_OUT:
            assert name not in pins, name
            continue
        assert name in pins and requirement.specifier.contains(pins[name]), (name, pins.get(name))
    assert "setuptools" in pins  # the package builds without an unhashed download
    # Every pinned requirement carries at least one hash (pip's --require-hashes demands it).
    entries = re.split(r"\n(?=[A-Za-z0-9])", lock.read_text().split("\n", 2)[2])
    assert all("--hash=sha256:" in entry for entry in entries if "==" in entry)
    direct = _pins(ROOT / "requirements" / "image.in")
    assert all(pins[name] == version for name, version in direct.items())


def test_the_version_lives_in_one_place() -> None:
    import rubric_gate

    assert "version" not in PROJECT and PROJECT["dynamic"] == ["version"]
    assert metadata.version("rubric-gate") == rubric_gate.__version__
    release = (ROOT / ".github" / "workflows" / "release.yml").read_text()
    assert "src/rubric_gate/__init__.py" in release  # the tag check reads the same line


def _tool(name: str) -> str:
    path = Path(sys.executable).parent / name
    if not path.exists():
        pytest.skip(f"{name} is not installed (pip install -e '.[dev]')")
    return str(path)


def test_the_built_distributions_pass_twine_and_ship_license_types_and_data(tmp_path: Path) -> None:
    _tool("twine")
    try:
        import build  # noqa: F401
    except ImportError:
        pytest.skip("build is not installed (pip install -e '.[dev]')")
    proc = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(tmp_path), str(ROOT)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    [wheel] = tmp_path.glob("*.whl")
    [sdist] = tmp_path.glob("*.tar.gz")
    twine = subprocess.run([_tool("twine"), "check", "--strict", str(wheel), str(sdist)],
                           capture_output=True, text=True, check=False)
    assert twine.returncode == 0, twine.stdout + twine.stderr
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        [meta] = [n for n in names if n.endswith(".dist-info/METADATA")]
        text = archive.read(meta).decode()
    assert "rubric_gate/py.typed" in names and any(n.endswith("licenses/LICENSE") for n in names)
    assert {"rubric_gate/schema/rubric.schema.json", "rubric_gate/scaffold/files/rubric-gate.yml"} <= names
    assert "License-Expression: Apache-2.0" in text and "Classifier: Typing :: Typed" in text
    assert re.search(r"^Project-URL: Source, https://", text, re.M)
    assert f"Version: {metadata.version('rubric-gate')}" in text
