"""Fixtures: the discover-aware fake provider, and a copy of the bundled example in a temp repo."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from rubric_gate.cli.main import main
from tests.fakes.discover_llm import FakeDiscoverLLM

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = "rubrics/cloud-security-review.yaml"
VERDICTS = "calibration/cloud-security-review.verdicts.jsonl"
CALIBRATION = "calibration/cloud-security-review.jsonl"


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeDiscoverLLM]:
    server = FakeDiscoverLLM().start()
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


@pytest.fixture
def example(tmp_path: Path) -> Path:
    """The bundled rubric, calibration set and hand-recorded verdicts, copied."""
    for rel in (EXAMPLE, CALIBRATION, VERDICTS):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / rel, tmp_path / rel)
    return tmp_path


def items(root: Path) -> list[dict]:
    return [json.loads(line) for line in (root / CALIBRATION).read_text().splitlines() if line.strip()]


def hand_truth(root: Path) -> dict[str, set[str]]:
    """Check text -> outputs the hand recorder answered no: a fake judge that agrees with them."""
    outputs = {i["id"]: i["output"] for i in items(root)}
    truth: dict[str, set[str]] = {}
    for line in (root / VERDICTS).read_text().splitlines():
        v = json.loads(line)
        bucket = truth.setdefault(v["check_text"], set())
        if v["answer"] == "no":
            bucket.add(outputs[v["item"]])
    return truth


def run(monkeypatch: pytest.MonkeyPatch, root: Path, capsys: pytest.CaptureFixture[str],
        *args: str) -> tuple[int, str, str]:
    """The CLI in `root`: (exit code, stdout, stderr)."""
    monkeypatch.chdir(root)
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err
