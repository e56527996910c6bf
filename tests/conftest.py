"""Shared test setup: the opt-in `live` marker for tests that call real provider APIs."""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--live", action="store_true", default=False,
                     help="run tests marked `live` (they call real provider APIs and need API keys)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--live"):
        return
    skip_live = pytest.mark.skip(reason="live API test: pass --live (and set API keys) to run")
    for item in items:
        if "live" in item.keywords:
            item.add_marker(skip_live)


@pytest.fixture(autouse=True)
def _verdict_index_in_tmp(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Verdict indexes go to a per-session temp dir, never the user's cache."""
    monkeypatch.setenv("RUBRIC_GATE_INDEX_DIR", str(tmp_path_factory.getbasetemp() / "verdict-index"))


# Shared by many packages' tests; a directory's conftest may define its own of the same name.
from tests.support.git_repo import repo  # noqa: E402, F401  (a committed demo rubric in a git repository)
from tests.support.project import project  # noqa: E402, F401  (the paper's four-check example as files)
