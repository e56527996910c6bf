"""Fixtures: the audit-aware fake provider and a small rubric project in a temp dir."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.audit_llm import FakeAuditLLM
from tests.fakes.llm import serve_to_sdks

TASK = "List the fruit in the basket, naming apple, pear and plum when present."


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAuditLLM]:
    yield from serve_to_sdks(FakeAuditLLM(), monkeypatch)


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

