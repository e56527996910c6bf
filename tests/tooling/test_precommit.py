"""The pre-commit hooks: the manifest validates, and `check-staged` gates what is staged."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml

from rubric_gate.cli.main import COMMAND_MODULES, cli
from tests.tooling.conftest import CHECKS, Repo, rubric_text, run_cli

ROOT = Path(__file__).resolve().parents[2]


def test_hooks_manifest_validates_with_pre_commit() -> None:
    clientlib = pytest.importorskip("pre_commit.clientlib")
    hooks = clientlib.load_manifest(str(ROOT / ".pre-commit-hooks.yaml"))
    assert {h["id"] for h in hooks} == {"rubric-gate-lint", "rubric-gate-check"}
    assert len(COMMAND_MODULES) == len(cli.commands)
    for hook in hooks:
        program, command, *_ = hook["entry"].split()
        assert program == "rubric-gate" and command in cli.commands
        assert re.search(hook["files"], "rubrics/team/review.yaml")
        assert not re.search(hook["files"], "calibration/review.jsonl")


def test_hooks_manifest_validation_can_fail(tmp_path: Path) -> None:
    clientlib = pytest.importorskip("pre_commit.clientlib")
    bad = tmp_path / ".pre-commit-hooks.yaml"
    bad.write_text(yaml.safe_dump([{"id": "x", "name": "x", "entry": "x", "language": "no-such-language"}]))
    with pytest.raises(clientlib.InvalidManifestError):
        clientlib.load_manifest(str(bad))


@pytest.fixture
def pushed(repo: Repo, tmp_path: Path) -> Repo:
    """The demo repo with an `origin` remote holding main, as after a clone."""
    subprocess.run(["git", "init", "-q", "--bare", str(tmp_path / "origin.git")], check=True)
    repo.git("remote", "add", "origin", str(tmp_path / "origin.git"))
    repo.git("push", "-q", "origin", "main")
    repo.git("fetch", "-q", "origin")
    return repo


def test_staged_deletion_of_a_unique_catch_is_rejected(pushed: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    pushed.write("rubrics/demo.yaml", rubric_text({"B": CHECKS["B"]}, version="2"))
    pushed.git("add", "rubrics/demo.yaml")
    code, out, _ = run_cli(capsys, "check-staged", "rubrics/demo.yaml")
    assert code == 1
    assert "rubric-gate: FAIL" in out and "REJECTED deleted  A" in out


def test_the_index_is_gated_not_the_work_tree(pushed: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    added = {**CHECKS, "C": "The output is in English."}
    pushed.write("calibration/demo.verdicts.jsonl", pushed.verdicts(added))
    pushed.write("rubrics/demo.yaml", rubric_text(added, version="2"))
    pushed.git("add", "-A")
    pushed.write("rubrics/demo.yaml", rubric_text({"B": CHECKS["B"]}, version="3"))  # unstaged: not gated
    code, out, _ = run_cli(capsys, "check-staged", "rubrics/demo.yaml")
    assert code == 0, out
    assert "rubric-gate: PASS" in out and "accepted added    C" in out


def test_new_rubric_missing_verdicts_and_missing_base(pushed: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    pushed.write("rubrics/other.yaml", rubric_text(CHECKS, rubric_id="other"))
    pushed.write("rubrics/demo.yaml", rubric_text({**CHECKS, "C": "Never judged."}, version="2"))
    pushed.git("add", "-A")
    code, out, err = run_cli(capsys, "check-staged", "rubrics/other.yaml", "rubrics/demo.yaml")
    assert code == 2
    assert "rubrics/other.yaml: new rubric (not in origin/main): nothing to gate" in out
    assert "no recorded verdict for checks C (4/4 items)" in err
    code, _, err = run_cli(capsys, "check-staged", "--base-ref", "origin/nope", "rubrics/demo.yaml")
    assert code == 2 and "origin/nope: no such git ref" in err
