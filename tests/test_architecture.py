"""The package's shape: its imports follow the layers docs/architecture.md lists (grimp's layer
contract), no import cycle among its modules, the action never imports the CLI nor what its image
leaves out, and the doc names every package. Every import counts: inside a function, and under
`if TYPE_CHECKING:` (a cycle hidden there is still one the next refactor trips over)."""

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
    # Every import: a function's lazy ones and those under `if TYPE_CHECKING:` too (they still tie
    # the modules together).
    return grimp.build_graph("rubric_gate", cache_dir=None, exclude_type_checking_imports=False)


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
    must count imports like that one, or it would miss cycles through them. So with those only the
    type checker reads (a lazy package's names)."""
    assert graph.direct_import_exists(importer="rubric_gate.cli.main", imported="rubric_gate.cli.lazy_group")
    assert graph.direct_import_exists(importer="rubric_gate.batch", imported="rubric_gate.batch.runner")


def documented_layers(text: str) -> list[tuple[str, list[str]]]:
    """docs/architecture.md's layers, top first: each numbered item under `## Layers` as (its title,
    its members: the packages and modules named in the parentheses after the title)."""
    section = text.split("## Layers", 1)[1].split("\n## ", 1)[0]
    items = re.findall(r"^\d+\. \*\*([^*]+)\*\*([^(]*)\(([^)]*)\)", section, re.MULTILINE)
    return [(title + rest.rstrip(" ,"), [name.removesuffix("/").removesuffix(".py")
                                         for name in re.findall(r"`([\w.]+/?)`", members)])
            for title, rest, members in items]


def layer_contract(layers: list[tuple[str, list[str]]]) -> list[grimp.Layer]:
    """grimp's layers: each documented layer one whose members may import each other, except one
    "in this order", whose members are layers of their own."""
    out = []
    for title, members in layers:
        if "in this order" in title:
            out += [grimp.Layer(member) for member in members]
        else:
            out.append(grimp.Layer(*members, independent=False))
    return out


@pytest.fixture(scope="module")
def layers() -> list[tuple[str, list[str]]]:
    return documented_layers((ROOT / "docs" / "architecture.md").read_text(encoding="utf-8"))


def test_every_module_of_the_package_is_in_one_layer(layers: list[tuple[str, list[str]]]) -> None:
    named = [member for _, members in layers for member in members]
    top = sorted(p.stem if p.is_file() else p.name for p in PACKAGE.iterdir()
                 if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").exists())
    assert sorted(set(top) - set(named)) == [], "docs/architecture.md's layers do not place these"
    assert sorted(set(named) - set(top)) == [], "docs/architecture.md's layers name modules that do not exist"
    assert len(named) == len(set(named)), "a module in two layers"


def test_imports_point_down_the_layers(graph: grimp.ImportGraph, layers: list[tuple[str, list[str]]]) -> None:
    illegal = graph.find_illegal_dependencies_for_layers(layers=layer_contract(layers), containers={"rubric_gate"})
    found = sorted(f"{d.importer} -> {d.imported} (via {sorted(r.heads)[0]})" for d in illegal for r in d.routes)
    assert found == [], "imports that point up docs/architecture.md's layers"


def test_the_layer_reader_reads_the_contract() -> None:
    text = ("# A\n\n## Layers\n\nIntro (`not/`, `this/`).\n\n1. **Top** (`cli/`, `main.py`): reads `llm/`.\n"
            "2. **Pure logic**, in this order (`trust/`, `gate/`): text\n   (`more/`).\n\n## Packages\n\n1. **X** (`y/`)\n")
    layers = documented_layers(text)
    assert layers == [("Top", ["cli", "main"]), ("Pure logic, in this order", ["trust", "gate"])]
    contract = layer_contract(layers)
    assert [sorted(layer.module_tails) for layer in contract] == [["cli", "main"], ["trust"], ["gate"]]
    assert [layer.independent for layer in contract] == [False, True, True]


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


def _calls_lazy_exports(init: Path) -> bool:
    return any(isinstance(n, ast.Call) and getattr(n.func, "id", None) == "lazy_exports"
               for n in ast.walk(ast.parse(init.read_text(encoding="utf-8"))))


def test_lazy_packages_show_the_type_checker_the_names_they_export() -> None:
    """A name a package loads on first use is, to mypy, whatever its module defines (not Any)."""
    lazy = [p for p in sorted(PACKAGE.rglob("__init__.py")) if _calls_lazy_exports(p)]
    assert len(lazy) >= 4
    for init in lazy:
        table, typed = _lazy_tables(init)
        assert table and typed == table, init.relative_to(PACKAGE)


MAX_LINES = 400  # a module a newcomer reads in one sitting
MAX_ACTION_MODULES = 12  # `action/`'s top level: the run and its decision; the rest by concern in subpackages


def long_modules(package: Path, limit: int = MAX_LINES) -> list[str]:
    """The modules under `package` with more than `limit` lines."""
    return sorted(str(p.relative_to(package)) for p in package.rglob("*.py")
                  if len(p.read_text(encoding="utf-8").splitlines()) > limit)


def top_level_modules(package: Path) -> list[str]:
    """The modules directly in `package` (its `__init__.py` too), not in its subpackages."""
    return sorted(p.name for p in package.glob("*.py"))


def test_no_module_is_over_400_lines() -> None:
    """Split a module that grows past the limit by concern (one module per concern)."""
    assert long_modules(PACKAGE) == [], f"modules over {MAX_LINES} lines"


def test_the_action_keeps_at_most_12_top_level_modules() -> None:
    """`action/` by concern: reading commits, talking to GitHub, the cache and gating each have a
    subpackage (docs/architecture.md lists them); a new module goes into one of them."""
    modules = top_level_modules(PACKAGE / "action")
    assert "run.py" in modules and len(modules) <= MAX_ACTION_MODULES, modules


def test_the_limits_see_a_long_module_and_a_crowded_package(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "long.py").write_text("x = 1\n" * (MAX_LINES + 1), encoding="utf-8")
    (tmp_path / "short.py").write_text("x = 1\n" * MAX_LINES, encoding="utf-8")
    for i in range(MAX_ACTION_MODULES):
        (tmp_path / f"m{i}.py").write_text("", encoding="utf-8")
    assert long_modules(tmp_path) == ["sub/long.py"]
    assert len(top_level_modules(tmp_path)) == MAX_ACTION_MODULES + 1  # m0..m11 and short.py: one too many
