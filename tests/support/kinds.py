"""Each test's kind (unit, integration, e2e: tests/README.md): by its directory, by its module where
that differs, or by its own marker. tests/conftest.py gives every test exactly one."""

from __future__ import annotations

from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
KINDS = ("unit", "integration", "e2e")

# The kind of each test directory's tests (relative to tests/, "" for tests/ itself), and of each
# module that is of another kind than its directory. A test of another kind than its module says
# so with its own marker. Every test has exactly one kind.
DIRECTORY_KINDS = {
    "": "unit", "action": "e2e", "attribution": "unit", "audit": "integration", "batch": "integration",
    "calibration": "unit", "cli": "e2e", "comparison": "unit", "discover": "integration", "drift": "integration",
    "ensemble": "integration", "fakes": "integration", "gate": "unit", "history": "integration",
    "integrations": "integration", "judges": "integration", "lint": "integration", "llm": "integration",
    "paraphrase": "integration", "preference": "integration", "preview": "e2e", "rejudge": "integration",
    "reliability": "unit", "repair": "integration", "report": "unit", "repository": "integration",
    "results": "unit", "rubric": "integration", "scaffold": "integration", "schema": "unit", "service": "unit",
    "sources": "unit", "teach": "integration", "trust": "unit", "verdicts": "unit",
}
MODULE_KINDS = {
    "action/test_decide.py": "unit", "action/test_units.py": "unit", "action/test_gate_file.py": "unit", "action/test_snapshot.py": "integration",
    "action/test_blob_cache.py": "integration", "action/test_rest_blobs.py": "integration",
    "batch/test_streaming.py": "unit", "calibration/test_meta.py": "integration",
    "comparison/test_check_comparisons.py": "integration", "discover/test_select.py": "unit",
    "judges/test_units.py": "unit", "judges/test_lazy_prompts.py": "unit", "llm/test_units.py": "unit",
    "llm/test_strict_schemas.py": "unit", "llm/test_import_cycles.py": "unit", "repair/test_units.py": "unit",
    "repair/test_hunks.py": "unit", "report/test_terminal.py": "integration", "report/test_html_report.py": "integration",
    "repository/test_docs.py": "unit", "repository/test_wheel_install.py": "e2e",
    "repository/test_readme_first_edit.py": "e2e", "results/test_layer.py": "integration",
    "verdicts/test_not_applicable.py": "integration",
}


def kind_of(path: Path) -> str | None:
    """The kind a test in the module at `path` has unless it says otherwise (None: its directory
    has none)."""
    relative = path.resolve().relative_to(TESTS)
    folder = relative.parent.as_posix()
    return MODULE_KINDS.get(relative.as_posix()) or DIRECTORY_KINDS.get("" if folder == "." else folder)


def kinds_marked(item: pytest.Item) -> list[str]:
    return [mark.name for mark in item.iter_markers() if mark.name in KINDS]


def give_kinds(items: list[pytest.Item]) -> list[str]:
    """Give each unmarked test its module's kind; the tests that end with none or more than one."""
    problems = []
    for item in items:
        marked = kinds_marked(item)
        if len(marked) > 1:
            problems.append(f"{item.nodeid}: {', '.join(marked)}")
        elif not marked:
            kind = kind_of(item.path)
            if kind is None:
                problems.append(f"{item.nodeid}: no kind (its directory is not in DIRECTORY_KINDS)")
            else:
                item.add_marker(kind)
    return problems
