"""The tests are one package: every folder of test modules has an `__init__.py`, so a helper is
imported by its package path (`tests.action.harness`) and no test edits `sys.path`."""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent
SYS_PATH_EDIT = re.compile(r"^\s*sys\.path\.(insert|append|extend)\(|^\s*sys\.path\s*[+]?=", re.MULTILINE)


def test_every_test_folder_is_a_package() -> None:
    folders = sorted({p.parent for p in TESTS.rglob("*.py")})
    assert [str(f.relative_to(TESTS)) for f in folders if not (f / "__init__.py").exists()] == []


def test_no_test_edits_sys_path() -> None:
    edits = [str(p.relative_to(TESTS)) for p in sorted(TESTS.rglob("*.py"))
             if p != Path(__file__).resolve() and SYS_PATH_EDIT.search(p.read_text(encoding="utf-8"))]
    assert edits == []


def _bare_imports(source: str, local: set[str]) -> list[str]:
    """Modules imported by a name that only a `sys.path` edit could find: a test module or helper
    of ours named without its `tests.` package path (also inside a function, where collection
    would not notice)."""
    names = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
        elif isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
    return sorted({n for n in names if n.partition(".")[0] in local})


def _local_names() -> set[str]:
    """Our test modules' and folders' names that no installed package also has (tests/fakes/github.py
    is ours, `github` is PyGithub's)."""
    names = {p.stem for p in TESTS.rglob("*.py")} - {"__init__"} | {p.name for p in TESTS.iterdir() if p.is_dir()}
    return {name for name in names if importlib.util.find_spec(name) is None}


def test_helpers_are_imported_by_their_package_path() -> None:
    local = _local_names()
    bare = {str(p.relative_to(TESTS)): _bare_imports(p.read_text(encoding="utf-8"), local)
            for p in sorted(TESTS.rglob("*.py"))}
    assert {k: v for k, v in bare.items() if v} == {}


def test_the_probe_sees_a_bare_import() -> None:
    local = _local_names()
    assert "harness" in local and "test_integrity" in local
    source = "def f():\n    from harness import Scenario\n    import test_integrity\nfrom tests.action.harness import REPO\n"
    assert _bare_imports(source, local) == ["harness", "test_integrity"]


def test_the_probe_sees_a_sys_path_edit() -> None:
    assert SYS_PATH_EDIT.search('import sys\nsys.path.insert(0, str(Path(__file__).parent))\n')
    assert SYS_PATH_EDIT.search("sys.path += ['x']\n")
    assert not SYS_PATH_EDIT.search("paths = sys.path[:]\n")
