"""Fixtures: the fake provider server, pointed at by both SDKs."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.llm import FakeLLM, serve_to_sdks


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLM]:
    yield from serve_to_sdks(FakeLLM(), monkeypatch)
