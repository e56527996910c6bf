"""Fixtures: a fake provider server on 127.0.0.1, env pointing both SDKs at it, tiny inputs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from rubric_gate.calibration import CalibrationItem, CalibrationSet
from rubric_gate.rubric import Check, Rubric
from tests.fakes.llm import FakeLLM

KEYWORDS = ["apple", "pear", "plum", "fig", "kiwi"]


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLM]:
    server = FakeLLM().start()
    for name in ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE", "ANTHROPIC_CUSTOM_HEADERS", "RUBRIC_GATE_PRICES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.anthropic_url)
    monkeypatch.setenv("OPENAI_BASE_URL", server.openai_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-anthropic-SECRET")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-openai-SECRET")
    monkeypatch.setenv("RUBRIC_GATE_RETRY_BASE", "0.01")
    monkeypatch.setenv("RUBRIC_GATE_JUDGE_TIMEOUT", "2")
    yield server
    server.stop()


def make_rubric(words: list[str] = KEYWORDS, prefix: str = "The output mentions") -> Rubric:
    checks = [Check(id=f"k{i}", text=f"{prefix} {word}") for i, word in enumerate(words)]
    return Rubric(id="fruit", version=1, task="List fruit.", calibration="cal.jsonl",
                  verdicts="verdicts.jsonl", checks=checks)


def make_items(n: int = 8) -> CalibrationSet:
    # Item i mentions the keywords whose index bit is set in i: every pair has a known answer.
    items = []
    for i in range(n):
        words = [w for b, w in enumerate(KEYWORDS) if i >> b & 1]
        items.append(CalibrationItem(id=f"r{i}", input=f"basket {i}", output=" and ".join(words) or "nothing",
                                     label="pass" if i % 2 else "fail"))
    return CalibrationSet(tuple(items), "cal")


def expected(check_text: str, output: str) -> str:
    return "yes" if check_text.split()[-1] in output else "no"


def write_project(root: Path, rubric: Rubric, items: CalibrationSet, judge: str | None = None) -> None:
    lines = [f"id: {rubric.id}", "version: 1", f"task: {rubric.task}", "calibration: cal.jsonl",
             "verdicts: verdicts.jsonl"]
    if judge:
        lines.append(f"judge: {judge}")
    lines.append("checks:")
    for check in rubric.checks:
        lines += [f"  - id: {check.id}", f"    text: {check.text}"]
    (root / "rubric.yaml").write_text("\n".join(lines) + "\n")
    (root / "cal.jsonl").write_text(
        "".join(json.dumps(i.model_dump(exclude_none=True)) + "\n" for i in items.items)
    )
