"""The package's shape: no import cycle among its modules, the action never imports the CLI nor
what its image leaves out, and docs/architecture.md names every package."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import grimp
import pytest

import rubric_gate

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = Path(rubric_gate.__file__).parent

# Cycles that exist today and are being removed (#22: the provider registry puts the protocols
# in leaf modules). Each entry must still be a cycle: when one disappears, delete it here.
KNOWN_CYCLES: dict[frozenset[str], str] = {}  # none left: the provider registry (#22) removed the last two


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    # Every import, a function's lazy ones too (they still tie the modules together), but not the
    # ones under `if TYPE_CHECKING:` (they never run).
    return grimp.build_graph("rubric_gate", cache_dir=None, exclude_type_checking_imports=True)


def cycles(graph: grimp.ImportGraph) -> set[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    edges = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in sorted(graph.modules)}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: set[frozenset[str]] = set()

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in edges[module]:
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == module:
                    break
            if len(component) > 1:
                found.add(frozenset(component))

    for module in edges:
        if module not in index:
            visit(module)
    return found


def test_cycles_finds_a_cycle_and_only_the_cycle() -> None:
    class Graph:
        def __init__(self, imports: dict[str, set[str]]) -> None:
            self.modules, self.imports = set(imports), imports

        def find_modules_directly_imported_by(self, module: str) -> set[str]:
            return self.imports[module]

    graph = Graph({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}})
    assert cycles(graph) == {frozenset("abc")}  # type: ignore[arg-type]


def test_no_import_cycle_beyond_the_known_ones(graph: grimp.ImportGraph) -> None:
    found = cycles(graph)
    new = [sorted(c) for c in found - KNOWN_CYCLES.keys()]
    gone = [sorted(c) for c in KNOWN_CYCLES.keys() - found]
    assert new == [], f"import cycles: {new}"
    assert gone == [], f"these cycles are gone: delete them from KNOWN_CYCLES: {gone}"


def test_the_action_does_not_import_the_cli(graph: grimp.ImportGraph) -> None:
    chain = graph.find_shortest_chains(importer="rubric_gate.action", imported="rubric_gate.cli")
    assert chain == set(), f"rubric_gate.action reaches rubric_gate.cli through {sorted(chain)}"


# What the action image runs (`rubric-gate action`) and what it leaves out (requirements/image.in).
IMAGE_ENTRY = ("rubric_gate.cli.main", "rubric_gate.cli.action_cmd", "rubric_gate.action")
NOT_IN_IMAGE = ("sklearn", "scipy", "joblib", "threadpoolctl")


def test_the_action_image_runs_without_what_it_leaves_out() -> None:
    graph = grimp.build_graph("rubric_gate", include_external_packages=True, cache_dir=None,
                              exclude_type_checking_imports=True)
    for importer in IMAGE_ENTRY:
        for left_out in NOT_IN_IMAGE:
            chain = graph.find_shortest_chain(importer=importer, imported=left_out) if left_out in graph.modules else None
            assert chain is None, f"{importer} reaches {left_out}, which the image leaves out: {chain}"
    # The probe sees such a chain: discover imports scikit-learn.
    assert graph.find_shortest_chain(importer="rubric_gate.cli.discover_cmd", imported="sklearn") is not None


def test_the_graph_sees_lazy_imports(graph: grimp.ImportGraph) -> None:
    """`rubric_gate.cli.main` imports its command group inside a function (fast start-up): the graph
    must count imports like that one, or it would miss cycles through them."""
    assert graph.direct_import_exists(importer="rubric_gate.cli.main", imported="rubric_gate.cli.lazy_group")


def test_architecture_doc_names_every_package() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    packages = sorted(p.parent.name for p in PACKAGE.glob("*/__init__.py"))
    missing = [name for name in packages if not re.search(rf"`{name}/?`", text)]
    assert missing == [], f"docs/architecture.md does not name these packages: {missing}"


def _foreign_exports(init: Path, package: str) -> list[str]:
    """Our modules outside `package` whose names its `__init__.py` re-exports, directly or through
    `lazy_exports`' name -> module table (`rubric_gate.lazy` itself is the mechanism)."""
    tree = ast.parse(init.read_text(encoding="utf-8"))
    sources = [n.module for n in tree.body if isinstance(n, ast.ImportFrom) and n.module]
    sources += [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    return sorted({s for s in sources if re.fullmatch(r"rubric_gate(\.\w+)+", s) and s != "rubric_gate.lazy"
                   and s != package and not s.startswith(f"{package}.")})


def _package(init: Path) -> str:
    return ".".join(("rubric_gate", *init.parent.relative_to(PACKAGE).parts))


def _only_reexports(module: Path) -> bool:
    body = [n for n in ast.parse(module.read_text(encoding="utf-8")).body
            if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))]  # docstrings
    return bool(body) and all(
        isinstance(n, ast.Import | ast.ImportFrom)
        or (isinstance(n, ast.Assign) and [getattr(t, "id", None) for t in n.targets] == ["__all__"])
        for n in body)


def _exported_imports(module: Path) -> list[str]:
    """Names a (non-package) module lists in `__all__` that it imports from another module."""
    tree = ast.parse(module.read_text(encoding="utf-8"))
    imported = {a.asname or a.name for n in tree.body if isinstance(n, ast.ImportFrom) for a in n.names}
    listed = [e.value for n in tree.body if isinstance(n, ast.Assign)
              and [getattr(t, "id", None) for t in n.targets] == ["__all__"]
              and isinstance(n.value, ast.List | ast.Tuple) for e in n.value.elts if isinstance(e, ast.Constant)]
    return sorted(name for name in listed if name in imported)


# Aliases kept while a module moves; each must still be one (delete it when gone).
KNOWN_ALIASES: dict[str, list[str]] = {}  # none left: CallBudget and UNREADABLE_BASE are imported from their homes


def test_every_name_has_one_home() -> None:
    """A name that moved leaves no alias behind: no package exports another package's names, no
    module only re-exports (judges/backend.py, spec.py and pricing.py did, after llm/ took them),
    and no module lists an imported name in `__all__`."""
    foreign = {str(p.relative_to(PACKAGE)): _foreign_exports(p, _package(p)) for p in sorted(PACKAGE.rglob("__init__.py"))}
    assert {k: v for k, v in foreign.items() if v} == {}
    modules = [p for p in sorted(PACKAGE.rglob("*.py")) if p.name != "__init__.py"]
    assert [str(p.relative_to(PACKAGE)) for p in modules if _only_reexports(p)] == []
    exported = {str(p.relative_to(PACKAGE)): _exported_imports(p) for p in modules}
    assert {k: v for k, v in exported.items() if v} == KNOWN_ALIASES


def test_the_one_home_probes_see_an_alias(tmp_path: Path) -> None:
    init = tmp_path / "__init__.py"
    init.write_text('from rubric_gate.lazy import lazy_exports\nfrom rubric_gate.judges.api import judge_missing\n'
                    '_EXPORTS = {"JudgeSpec": "rubric_gate.llm.spec", "prompt_version": "rubric_gate.judges.prompt"}\n')
    assert _foreign_exports(init, "rubric_gate.judges") == ["rubric_gate.llm.spec"]
    alias = tmp_path / "spec.py"
    alias.write_text('"""Moved."""\n\nfrom rubric_gate.llm.spec import JudgeSpec\n\n__all__ = ["JudgeSpec"]\n')
    assert _only_reexports(alias)
    alias.write_text('from rubric_gate.llm.spec import JudgeSpec\n\n\ndef f() -> None: ...\n\n\n__all__ = ["JudgeSpec", "f"]\n')
    assert not _only_reexports(alias) and _exported_imports(alias) == ["JudgeSpec"]


def _lazy_tables(init: Path) -> tuple[dict[str, str], dict[str, str]]:
    """A lazy package's name -> module table, and the names its `if TYPE_CHECKING:` block imports."""
    tree = ast.parse(init.read_text(encoding="utf-8"))
    table: dict[str, str] = {}
    typed: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["_EXPORTS"]:
            table = ast.literal_eval(node.value)
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            typed = {a.asname or a.name: n.module for n in node.body if isinstance(n, ast.ImportFrom) and n.module
                     for a in n.names}
    return table, typed


def test_lazy_packages_show_the_type_checker_the_names_they_export() -> None:
    """A name a package loads on first use is, to mypy, whatever its module defines (not Any)."""
    lazy = [p for p in sorted(PACKAGE.rglob("__init__.py")) if "lazy_exports(" in p.read_text(encoding="utf-8")]
    assert len(lazy) >= 4
    for init in lazy:
        table, typed = _lazy_tables(init)
        assert table and typed == table, init.relative_to(PACKAGE)
