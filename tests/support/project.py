"""A small rubric project on disk: the paper's four-check example as files."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

FAILED_BY = {"R1": "A", "R2": "AB", "R3": "BCD", "R4": "D", "R5": ""}
LABELS = {"R1": "fail", "R2": "fail", "R3": "fail", "R4": "pass", "R5": "pass"}
TEXTS = {c: f"The output satisfies requirement {c}." for c in "ABCDE"}

BASE_YAML = """\
id: demo
version: 1
task: Summarize the incident.
calibration: calibration/demo.jsonl
verdicts: calibration/demo.verdicts.jsonl
checks:
  - id: A
    text: The output satisfies requirement A.
    origin: label
    source: [R1]
  - id: B
    text: The output satisfies requirement B.
  - id: C
    text: The output satisfies requirement C.
  - id: D
    text: The output satisfies requirement D.
"""


@dataclass
class Project:
    root: Path

    def write(self, relative: str, text: str) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        """`rubric-gate ARGS` in the project: in this process (the console script's own entry
        point and error handling), or as a subprocess with RUBRIC_GATE_TEST_SUBPROCESS=1."""
        if os.environ.get("RUBRIC_GATE_TEST_SUBPROCESS"):
            return subprocess.run(
                [sys.executable, "-m", "rubric_gate", *args], cwd=self.root, capture_output=True, text=True, check=False
            )
        from rubric_gate.cli.main import main

        out, err = io.StringIO(), io.StringIO()
        with contextlib.chdir(self.root), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(args))
        return subprocess.CompletedProcess(["rubric-gate", *args], code, out.getvalue(), err.getvalue())

    def git(self, *args: str) -> str:
        return subprocess.run(["git", *args], cwd=self.root, capture_output=True, text=True, check=True).stdout


def write_example(root: Path) -> Project:
    project = Project(root)
    project.write("rubrics/demo.yaml", BASE_YAML)
    project.write(
        "calibration/demo.jsonl",
        "".join(
            json.dumps({"id": i, "input": f"env {i}", "output": f"report {i}", "label": LABELS[i]}) + "\n"
            for i in FAILED_BY
        ),
    )
    project.write(
        "calibration/demo.verdicts.jsonl",
        "".join(
            json.dumps({"item": i, "check_text": TEXTS[c], "answer": "no" if c in failed or (c == "E" and i == "R4") else "yes"}) + "\n"
            for i, failed in FAILED_BY.items()
            for c in "ABCDE"
        ),
    )
    return project


@pytest.fixture
def project(tmp_path: Path) -> Project:
    project = write_example(tmp_path)
    project.git("init", "-q", "-b", "main")
    project.git("-c", "user.name=t", "-c", "user.email=t@t", "add", ".")
    project.git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base")
    return project
