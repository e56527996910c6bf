"""Fixtures for the action's end-to-end tests: a real git repository and a fake GitHub."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.action.harness import (
    CALIBRATION,
    REPO,
    RUBRIC,
    TEXTS,
    VERDICTS,
    Git,
    Scenario,
    calibration_jsonl,
    rubric_yaml,
    verdicts_jsonl,
)
from tests.fakes.github import FakeGitHub, serve


@pytest.fixture
def scenario(tmp_path: Path) -> Iterator[Scenario]:
    """A repository with a 4-check rubric on `main` and a `pr` branch to commit heads on."""
    origin = tmp_path / "origin"
    origin.mkdir()
    (tmp_path / "home").mkdir()
    git = Git(origin)
    git("init", "-q", "-b", "main")
    base = git.commit({
        RUBRIC: rubric_yaml(["A", "B", "C", "D"]),
        CALIBRATION: calibration_jsonl(),
        VERDICTS: verdicts_jsonl(TEXTS),
        "README.md": "demo\n",
    }, "base")
    git("checkout", "-q", "-b", "pr")
    fake = FakeGitHub(REPO, origin, base_sha=base)
    server = serve(fake)
    try:
        yield Scenario(git, fake, tmp_path, base)
    finally:
        server.shutdown()
        server.server_close()
