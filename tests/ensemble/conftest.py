"""A fruit project whose labels follow "apple", judged by a panel that disagrees on known pairs.

Item i mentions the keywords whose bit is set in i (r0 "nothing", r1 "apple", r3 "apple and
pear", ...); items mentioning apple (odd i) are correct, the rest flawed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rubric_gate.rubric import Check, Rubric
from tests.judges.conftest import fake, make_items, write_project  # noqa: F401 - fixture re-export
from tests.support.cli import run_cli

TRUTHFUL = "anthropic:judge-a"
CONTRARY = "openai:judge-b"  # inverts every answer on checks ending in "kiwi"
TRUTHFUL_TOO = "openai:judge-c"


def fruit_rubric(words: list[str]) -> Rubric:
    checks = [Check(id=word, text=f"The output mentions {word}") for word in words]
    return Rubric(id="fruit", version=1, task="List fruit.", calibration="cal.jsonl",
                  verdicts="verdicts.jsonl", checks=checks)


def write_base_head(root: Path, base: list[str], head: list[str]) -> None:
    write_project(root, fruit_rubric(base), make_items())
    (root / "base.yaml").write_text((root / "rubric.yaml").read_text())
    write_project(root, fruit_rubric(head), make_items())



def check_json(capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, dict]:
    code, out, err = run_cli(capsys, "check", "--base", "base.yaml", "--head", "rubric.yaml", "--root", ".",
                             "--format", "json", *extra)
    assert code in (0, 1), err
    return code, json.loads(out)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path
