"""Fixtures: the audit-aware fake provider and a small rubric project in a temp dir."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from rubric_gate.cli.main import main
from tests.fakes.audit_llm import FakeAuditLLM

TASK = "List the fruit in the basket, naming apple, pear and plum when present."


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAuditLLM]:
    server = FakeAuditLLM().start()
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


def write_rubric(path: Path, checks: list[tuple[str, str]], *, judge: str | None = None,
                 frozen: set[str] = frozenset()) -> None:
    lines = ["id: fruit", "version: 1", f"task: {TASK}", "calibration: cal.jsonl", "verdicts: verdicts.jsonl"]
    if judge:
        lines.append(f"judge: {judge}")
    lines.append("checks:")
    for check_id, text in checks:
        lines += [f"  - id: {check_id}", f"    text: {text}"]
        if check_id in frozen:
            lines.append("    frozen: true")
    path.write_text("\n".join(lines) + "\n")


def write_items(path: Path, items: list[tuple[str, str, str]]) -> None:
    """(id, output, label) rows; the input names the basket."""
    path.write_text("".join(
        json.dumps({"id": i, "input": f"basket {i}", "output": out, "label": label}) + "\n" for i, out, label in items
    ))


def run_cli(monkeypatch: pytest.MonkeyPatch, root: Path, capsys: pytest.CaptureFixture[str],
            *args: str) -> tuple[int, str, str]:
    monkeypatch.chdir(root)
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err
