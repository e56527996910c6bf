"""Fixtures for the action's end-to-end tests: a real git repository and a fake GitHub."""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
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


@functools.cache
def _base_repository() -> tuple[Path, str]:
    """The scenario's starting repository, built once per session (git init and the base commit
    cost a scenario more than its run did) and copied into each test's own directory."""
    template = Path(tempfile.mkdtemp(prefix="rubric-gate-scenario-")) / "origin"
    atexit.register(shutil.rmtree, template.parent, True)
    template.mkdir()
    git = Git(template)
    git("init", "-q", "-b", "main")
    base = git.commit({
        RUBRIC: rubric_yaml(["A", "B", "C", "D"]),
        CALIBRATION: calibration_jsonl(),
        VERDICTS: verdicts_jsonl(TEXTS),
        "README.md": "demo\n",
    }, "base")
    git("checkout", "-q", "-b", "pr")
    return template, base


@pytest.fixture
def scenario(tmp_path: Path) -> Iterator[Scenario]:
    """A repository with a 4-check rubric on `main` and a `pr` branch to commit heads on (a copy
    of one built once: each test has its own, with the same base commit)."""
    template, base = _base_repository()
    origin = tmp_path / "origin"
    shutil.copytree(template, origin, symlinks=True)
    (tmp_path / "home").mkdir()
    git = Git(origin)
    fake = FakeGitHub(REPO, origin, base_sha=base)
    server = serve(fake)
    try:
        yield Scenario(git, fake, tmp_path, base)
    finally:
        server.shutdown()
        server.server_close()
