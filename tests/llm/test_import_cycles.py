"""No import cycle among the model-calling modules (llm/, judges/, batch/): provider modules
import the leaf protocols and errors, and are found through the registry by name, so no module
of judges/ or batch/ imports a provider module back.

Every import counts, also one inside a function (the old cycles were such); only imports under
`if TYPE_CHECKING:` do not, since they never run.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import rubric_gate

SRC = Path(rubric_gate.__file__).parent
PACKAGES = ("llm", "judges", "batch")


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST, module: str, is_package: bool) -> set[str]:
    """Absolute names of the modules `tree` imports (a `from X import y` names X.y when that is
    a module of ours, else X)."""
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".") if is_package else module.split(".")[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def import_graph(root: Path, packages: tuple[str, ...]) -> dict[str, set[str]]:
    """module -> the modules of `packages` (under `root`, a package directory) it imports."""
    files = {_module_name(p, root): p for pkg in packages for p in sorted((root / pkg).rglob("*.py"))}
    graph = {}
    for name, path in files.items():
        imported = _imports(ast.parse(path.read_text("utf-8")), name, path.name == "__init__.py")
        graph[name] = {m for m in imported if m in files and m != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module, each sorted: the one Tarjan of
    tests/test_architecture.py, over this module's AST-built graph."""
    from tests.test_architecture import cycles as components

    modules = set(graph) | {m for imported in graph.values() for m in imported}

    class _Graph:
        def __init__(self) -> None:
            self.modules = modules

        def find_modules_directly_imported_by(self, module: str) -> set[str]:
            return graph.get(module, set())

    return sorted(sorted(c) for c in components(_Graph()))  # type: ignore[arg-type]


def test_no_import_cycle_among_the_model_calling_modules() -> None:
    graph = import_graph(SRC, PACKAGES)
    assert "rubric_gate.llm.providers.anthropic" in graph  # the walk sees the provider modules
    assert "rubric_gate.llm.protocols" in graph["rubric_gate.llm.providers.openai"]
    assert cycles(graph) == []


def test_provider_modules_are_reached_only_through_the_registry() -> None:
    graph = import_graph(SRC, PACKAGES)
    providers = {m for m in graph if m.startswith("rubric_gate.llm.providers.")}
    importers = {m for m, imported in graph.items() if imported & providers and m not in providers}
    assert importers == set()


@pytest.mark.parametrize("inner", [True, False])
def test_the_detector_finds_the_old_shape_of_cycle(tmp_path: Path, inner: bool) -> None:
    """The shape the registry removed: a factory importing a backend that imports the factory's
    module back (inside a function, as judges/backend.py did, or at the top)."""
    pkg = tmp_path / "pkg" / "judges"
    pkg.mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    body = "    from pkg.judges.anthropic_backend import Backend\n" if inner else ""
    top = "" if inner else "from pkg.judges.anthropic_backend import Backend\n"
    (pkg / "backend.py").write_text(f"{top}def make():\n{body or '    pass'}\n")
    (pkg / "anthropic_backend.py").write_text(
        "from typing import TYPE_CHECKING\nfrom pkg.judges.backend import make\n"
        "if TYPE_CHECKING:\n    from pkg.judges import other\n")
    (pkg / "other.py").write_text("from pkg.judges import anthropic_backend\n")
    graph = import_graph(tmp_path / "pkg", ("judges",))
    assert cycles(graph) == [["pkg.judges.anthropic_backend", "pkg.judges.backend"]]
