"""The tests are one package: every folder of test modules has an `__init__.py`, so a helper is
imported by its package path (`tests.action.harness`) and no test edits `sys.path`."""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path
from types import SimpleNamespace

from tests.support.kinds import DIRECTORY_KINDS, KINDS, MODULE_KINDS, give_kinds

TESTS = Path(__file__).resolve().parent


def test_every_test_folder_is_a_package() -> None:
    folders = sorted({p.parent for p in TESTS.rglob("*.py")})
    assert [str(f.relative_to(TESTS)) for f in folders if not (f / "__init__.py").exists()] == []


def _is_sys_path(node: ast.AST) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "path" and isinstance(node.value, ast.Name)
            and node.value.id == "sys")


def edits_sys_path(source: str) -> bool:
    """A call of `sys.path`'s insert, append or extend, or an assignment to it (`=`, `+=`)."""
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and _is_sys_path(node.func.value)
                and node.func.attr in ("insert", "append", "extend")):
            return True
        if isinstance(node, ast.Assign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(_is_sys_path(t) for t in targets):
                return True
    return False


def test_no_test_edits_sys_path() -> None:
    edits = [str(p.relative_to(TESTS)) for p in sorted(TESTS.rglob("*.py")) if edits_sys_path(p.read_text(encoding="utf-8"))]
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
    assert edits_sys_path('import sys\nsys.path.insert(0, str(Path(__file__).parent))\n')
    assert edits_sys_path("sys.path += ['x']\n")
    assert not edits_sys_path("paths = sys.path[:]\n")


def private_imports(source: str) -> list[str]:
    """Private names (`_x`) imported from another test module (`tests.<...>.test_<...>`)."""
    return sorted(f"{node.module}.{alias.name}" for node in ast.walk(ast.parse(source))
                  if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("tests.")
                  and node.module.rpartition(".")[2].startswith("test_")
                  for alias in node.names if alias.name.startswith("_"))


def test_no_test_module_imports_another_ones_private_helpers() -> None:
    """Shared helpers live in `tests/support/` or a package's harness, not in another test module."""
    found = {str(p.relative_to(TESTS)): private_imports(p.read_text(encoding="utf-8")) for p in sorted(TESTS.rglob("*.py"))}
    assert {k: v for k, v in found.items() if v} == {}


def test_the_probe_sees_a_private_import() -> None:
    source = "def f():\n    from tests.trust.test_boundary import _rubric, rubric\nfrom tests.support.values import _x\n"
    assert private_imports(source) == ["tests.trust.test_boundary._rubric"]


def test_every_test_directory_and_module_listed_has_one_kind() -> None:
    """Each folder of test modules has a kind; each module listed apart exists and is of another
    kind than its folder (tests/README.md defines the three)."""
    folders = {p.parent.relative_to(TESTS).as_posix() for p in TESTS.rglob("test_*.py")}
    assert sorted(f.replace(".", "") for f in folders if f.replace(".", "") not in DIRECTORY_KINDS) == []
    assert set(DIRECTORY_KINDS.values()) | set(MODULE_KINDS.values()) <= set(KINDS)
    assert [m for m in MODULE_KINDS if not (TESTS / m).is_file()] == []
    assert [m for m, kind in MODULE_KINDS.items() if DIRECTORY_KINDS[m.rpartition("/")[0]] == kind] == []


def test_a_test_gets_its_modules_kind_unless_it_has_exactly_one_of_its_own() -> None:
    class Item:
        def __init__(self, nodeid: str, *marks: str) -> None:
            self.nodeid, self.path, self.marks = nodeid, TESTS / nodeid.split("::")[0], list(marks)

        def iter_markers(self) -> list[SimpleNamespace]:
            return [SimpleNamespace(name=name) for name in self.marks]

        def add_marker(self, name: str) -> None:
            self.marks.append(name)

    plain, own, twice = (Item("action/test_decide.py::t"), Item("action/test_labels.py::t", "unit"),
                         Item("trust/test_labels.py::t", "unit", "integration"))
    nowhere = Item("nowhere/test_x.py::t")
    assert give_kinds([plain, own, twice, nowhere]) == [  # type: ignore[list-item]
        "trust/test_labels.py::t: unit, integration", "nowhere/test_x.py::t: no kind (its directory is not in "
        "DIRECTORY_KINDS)"]
    assert (plain.marks, own.marks) == (["unit"], ["unit"])


# What names a test module by when it was written rather than by what it protects: a red-team
# round or pass, an issue, a session.
HISTORY_NAME = re.compile(r"(^|_)(hostile|round\d*|issue\d*|pass\d+|newcomer|session|firstmonth)(_|$)")


def named_by_history(stem: str) -> bool:
    return HISTORY_NAME.search(stem.removeprefix("test_")) is not None


def test_no_test_module_is_named_by_the_round_or_issue_that_found_it() -> None:
    """A test module is named for the boundary it protects (labels, recorded answers, ids, ...)."""
    assert [str(p.relative_to(TESTS)) for p in sorted(TESTS.rglob("test_*.py")) if named_by_history(p.stem)] == []


def test_the_probe_sees_a_name_from_history() -> None:
    assert all(named_by_history(n) for n in ("test_hostile_round3", "test_issue17_routes", "test_newcomer",
                                             "test_hostile_pr", "test_round_2"))
    assert not any(named_by_history(n) for n in ("test_untrusted_input", "test_labels", "test_passes_through",
                                                 "test_compass"))


def reads_source(source: str) -> bool:
    """A call of `inspect.getsource` (or `getsourcelines`, `getsourcefile`): a test about source text."""
    return any(isinstance(node, ast.Attribute | ast.Name)
               and (node.attr if isinstance(node, ast.Attribute) else node.id).startswith("getsource")
               for node in ast.walk(ast.parse(source)))


def test_no_test_reads_the_code_it_tests_as_text() -> None:
    """Tests assert behaviour, structure and codes (tests/README.md), not what the source says."""
    assert [str(p.relative_to(TESTS)) for p in sorted(TESTS.rglob("*.py"))
            if p.name != "test_test_layout.py" and reads_source(p.read_text(encoding="utf-8"))] == []


def test_the_probe_sees_a_source_read() -> None:
    assert reads_source("import inspect\nassert 'x' in inspect.getsource(f)\n")
    assert reads_source("from inspect import getsource\ngetsource(f)\n")
    assert not reads_source("import inspect\ninspect.signature(f)\n")
