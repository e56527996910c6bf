"""A tiny rubric project in a real git repository, and the CLI run in-process."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from rubric_gate.cli.main import main

ITEMS = {"i1": "fail", "i2": "fail", "i3": "pass", "i4": "pass"}
FAILED_BY = {"i1": "A", "i2": "B", "i3": "", "i4": ""}


def rubric_text(checks: dict[str, str], *, rubric_id: str = "demo", version: str = "1") -> str:
    lines = [f"id: {json.dumps(rubric_id)}", f"version: {json.dumps(version)}", "task: Summarize the incident.",
             "calibration: calibration/demo.jsonl", "verdicts: calibration/demo.verdicts.jsonl", "checks:"]
    for check_id, text in checks.items():
        lines += [f"  - id: {check_id}", f"    text: {json.dumps(text)}"]
    return "\n".join(lines) + "\n"


CHECKS = {"A": "The output names requirement A.", "B": "The output names requirement B."}


@dataclass
class Repo:
    root: Path

    def write(self, relative: str, text: str) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    def git(self, *args: str) -> str:
        return subprocess.run(["git", *args], cwd=self.root, capture_output=True, text=True, check=True).stdout

    def commit(self, message: str = "commit") -> None:
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message)

    def verdicts(self, checks: dict[str, str]) -> str:
        """A verdict for every (check, item): a check fails exactly the items FAILED_BY names."""
        return "".join(
            json.dumps({"item": item, "check_text": text, "answer": "no" if check_id in FAILED_BY[item] else "yes"}) + "\n"
            for check_id, text in checks.items() for item in ITEMS
        )


def init_repo(root: Path) -> Repo:
    root.mkdir(parents=True, exist_ok=True)
    repo = Repo(root)
    repo.git("init", "-q", "-b", "main")
    repo.git("config", "user.email", "t@example.invalid")
    repo.git("config", "user.name", "t")
    return repo


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Repo:
    """A committed demo rubric (checks A, B) with every verdict recorded; cwd is the repo."""
    repo = init_repo(tmp_path / "repo")
    repo.write("rubrics/demo.yaml", rubric_text(CHECKS))
    repo.write("calibration/demo.jsonl", "".join(
        json.dumps({"id": i, "input": f"env {i}", "output": f"report {i}", "label": label}) + "\n"
        for i, label in ITEMS.items()))
    repo.write("calibration/demo.verdicts.jsonl", repo.verdicts(CHECKS))
    repo.commit("base")
    monkeypatch.chdir(repo.root)
    return repo


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err
