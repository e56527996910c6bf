"""The tests are one package: every folder of test modules has an `__init__.py`, so a helper is
imported by its package path (`tests.action.harness`) and no test edits `sys.path`."""

from __future__ import annotations

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


def test_the_probe_sees_a_sys_path_edit() -> None:
    assert SYS_PATH_EDIT.search('import sys\nsys.path.insert(0, str(Path(__file__).parent))\n')
    assert SYS_PATH_EDIT.search("sys.path += ['x']\n")
    assert not SYS_PATH_EDIT.search("paths = sys.path[:]\n")
