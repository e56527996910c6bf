"""Every third-party module src/ imports comes from a distribution pyproject.toml declares.

A module that arrives only as another package's dependency (requests with PyGithub,
pydantic_core with pydantic) can be dropped or changed by that package's next release; declared,
it has a floor that `make test-lowest` installs and tests (constraints/lowest.txt).
"""

from __future__ import annotations

import ast
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
OWN = "rubric_gate"


def imported_modules(tree: ast.AST) -> set[str]:
    """The top-level names of the absolute imports anywhere in `tree`: at module level, inside
    functions (lazy imports) and under `if TYPE_CHECKING:` alike (mypy reads those)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.partition(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.partition(".")[0])
    return found


def third_party_imports(root: Path) -> dict[str, set[str]]:
    """Module -> the files under `root` importing it, for modules neither stdlib nor our own."""
    users: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*.py")):
        for module in imported_modules(ast.parse(path.read_text(), str(path))):
            if module not in sys.stdlib_module_names and module != OWN and module != "__future__":
                users.setdefault(module, set()).add(path.relative_to(root).as_posix())
    return users


def declared_distributions() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return {canonicalize_name(Requirement(text).name) for text in project["dependencies"]}


def undeclared(users: dict[str, set[str]], declared: set[str],
               providers: dict[str, list[str]]) -> dict[str, list[str]]:
    """Module -> the files importing it, for each module no declared distribution provides (a
    module no installed distribution provides counts as undeclared too)."""
    return {module: sorted(files) for module, files in sorted(users.items())
            if not {canonicalize_name(d) for d in providers.get(module, [])} & declared}


def test_imports_are_found_at_module_level_in_functions_and_under_type_checking() -> None:
    tree = ast.parse(
        "from __future__ import annotations\nimport os.path\nimport requests.adapters as a\n"
        "from . import x\nfrom .y import z\nfrom typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from urllib3.util import Retry\n"
        "def f():\n    import pydantic_core\n")
    assert imported_modules(tree) == {"__future__", "os", "requests", "typing", "urllib3", "pydantic_core"}


def test_a_module_only_a_transitive_dependency_provides_is_reported() -> None:
    users = {"github": {"a.py"}, "requests": {"b.py", "a.py"}, "yaml": {"c.py"}, "nowhere": {"d.py"}}
    providers = {"github": ["PyGithub"], "requests": ["requests"], "yaml": ["PyYAML"]}
    assert undeclared(users, {"pygithub", "pyyaml"}, providers) == {
        "nowhere": ["d.py"], "requests": ["a.py", "b.py"]}


# rubric_gate/integrations/<tool>.py imports its tool, declared as the extra of that name (not
# installed by `make install`: `make test-integrations` installs and tests them).
INTEGRATIONS = "rubric_gate/integrations/"


def declared_extras() -> dict[str, set[str]]:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    return {name: {canonicalize_name(Requirement(text).name) for text in texts} for name, texts in extras.items()}


def test_every_third_party_module_src_imports_is_a_declared_dependency() -> None:
    users = third_party_imports(SRC)
    assert {"github", "requests", "yaml"} <= users.keys()  # the walk sees the package's imports
    core = {m: {f for f in files if not f.startswith(INTEGRATIONS)} for m, files in users.items()}
    missing = undeclared({m: f for m, f in core.items() if f}, declared_distributions(), packages_distributions())
    assert not missing, f"imported by src/ but not in pyproject.toml's dependencies: {missing}"


def test_each_integration_imports_only_the_core_and_its_own_extra() -> None:
    extras = declared_extras()
    for module, files in third_party_imports(SRC).items():
        for file in (f for f in files if f.startswith(INTEGRATIONS)):
            tool = file.removeprefix(INTEGRATIONS).removesuffix(".py")
            own = {"inspect_ai": "inspect", "deepeval": "deepeval"}.get(tool)
            allowed = declared_distributions() | (extras[own] if own else set())
            # a module is allowed when a distribution that provides it is (yaml comes from PyYAML)
            provided_by = {canonicalize_name(d) for d in packages_distributions().get(module, [module])}
            assert provided_by & allowed, (file, module)
