"""Fixtures: the discover-aware fake provider, and a copy of the bundled example in a temp repo."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.discover_llm import FakeDiscoverLLM
from tests.fakes.llm import serve_to_sdks

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = "rubrics/cloud-security-review.yaml"
VERDICTS = "calibration/cloud-security-review.verdicts.jsonl"
CALIBRATION = "calibration/cloud-security-review.jsonl"


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeDiscoverLLM]:
    yield from serve_to_sdks(FakeDiscoverLLM(), monkeypatch)


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

