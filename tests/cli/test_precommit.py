"""The pre-commit hooks: the manifest validates, and `check-staged` gates what is staged."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from rubric_gate.cli.main import COMMAND_MODULES, cli
from tests.support.cli import run_cli
from tests.support.git_repo import CHECKS, Repo, rubric_text

ROOT = Path(__file__).resolve().parents[2]


def test_hooks_manifest_validates_with_pre_commit() -> None:
    clientlib = pytest.importorskip("pre_commit.clientlib")
    hooks = clientlib.load_manifest(str(ROOT / ".pre-commit-hooks.yaml"))
    assert {h["id"] for h in hooks} == {"rubric-gate-lint", "rubric-gate-check"}
    assert len(COMMAND_MODULES) == len(cli.list_commands(None))
    for hook in hooks:
        program, command, *_ = hook["entry"].split()
        assert program == "rubric-gate" and cli.get_command(None, command) is not None
        assert re.search(hook["files"], "rubrics/team/review.yaml")
        assert re.search(hook["files"], "calibration/review.jsonl")  # a relabel runs the hooks too
        assert not re.search(hook["files"], "docs/review.md")


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
    assert "rubrics/demo.yaml (staged): no recorded verdict in calibration/demo.verdicts.jsonl for check C (4/4 items, e.g." in err
    assert "--judge PROVIDER:MODEL to judge them" not in err  # check-staged takes no --judge
    assert "rubric-gate judge --rubric rubrics/demo.yaml --verdicts VERDICT_FILE --judge PROVIDER:MODEL" in err
    code, _, err = run_cli(capsys, "check-staged", "--base-ref", "origin/nope", "rubrics/demo.yaml")
    assert code == 2 and "origin/nope: no such git ref" in err


def test_git_commit_runs_both_hooks_through_pre_commit(pushed: Repo, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The manifest's hooks, installed as a local (system) hook so no environment is built:
    a commit deleting a check that holds a unique catch is stopped, a sound one goes through."""
    pytest.importorskip("pre_commit")
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    local = [{**hook, "language": "system"} for hook in hooks]
    pushed.write(".pre-commit-config.yaml", yaml.safe_dump({"repos": [{"repo": "local", "hooks": local}]}))
    pushed.commit("hooks")
    bin_dir = str(Path(sys.executable).parent)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("PRE_COMMIT_HOME", str(tmp_path / "pre-commit-home"))
    subprocess.run([f"{bin_dir}/pre-commit", "install"], cwd=pushed.root, check=True, capture_output=True)

    pushed.write("rubrics/demo.yaml", rubric_text({"B": CHECKS["B"]}, version="2"))
    pushed.git("add", "-A")
    blocked = subprocess.run(["git", "commit", "-m", "drop A"], cwd=pushed.root, capture_output=True, text=True)
    output = blocked.stdout + blocked.stderr  # git shows hook output on stderr
    assert blocked.returncode == 1  # the failing hook stops the commit
    assert re.search(r"rubric-gate lint\.+Passed", output) and re.search(r"rubric-gate check.*\.+Failed", output)
    assert "REJECTED deleted  A" in output
    assert pushed.git("log", "-1", "--format=%s").strip() == "hooks"  # nothing committed

    added = {**CHECKS, "C": "The output is in English."}
    pushed.write("calibration/demo.verdicts.jsonl", pushed.verdicts(added))
    pushed.write("rubrics/demo.yaml", rubric_text(added, version="2"))
    pushed.git("add", "-A")
    passed = subprocess.run(["git", "commit", "-m", "add C"], cwd=pushed.root, capture_output=True, text=True)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert pushed.git("log", "-1", "--format=%s").strip() == "add C"


def test_a_staged_calibration_or_verdict_file_gates_the_rubrics_reading_it(
        pushed: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert all(re.match(hook["files"], "calibration/demo.jsonl") and "types" not in hook for hook in hooks)
    path = pushed.root / "calibration/demo.jsonl"
    path.write_text(path.read_text().replace('"label": "pass"', '"label": "fail"', 1))
    pushed.git("add", "-A")
    code, out, _ = run_cli(capsys, "check-staged", "calibration/demo.jsonl")
    assert code == 0 and "== rubrics/demo.yaml against origin/main" in out
    code, out, _ = run_cli(capsys, "lint", "calibration/demo.jsonl")
    assert code == 0


def test_check_staged_outside_a_repository_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    code, _, err = run_cli(capsys, "check-staged", "rubrics/demo.yaml")
    assert code == 2 and "not a git repository" in err and "origin/main" not in err


def test_a_repository_without_origin_is_told_how_to_point_the_hook_at_main(repo: Repo,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    # A repository made with `git init` has no `origin` to fetch: the error says which ref to pass.
    code, _, err = run_cli(capsys, "check-staged", "rubrics/demo.yaml")
    assert code == 2
    assert ("origin/main: no such git ref (this repository has no remote `origin`: pass --base-ref main (in "
            ".pre-commit-config.yaml: `args: [--base-ref, main]`))") in err
    assert run_cli(capsys, "check-staged", "--base-ref", "main", "rubrics/demo.yaml")[0] == 0
