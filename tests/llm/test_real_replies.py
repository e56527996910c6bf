"""Replies as real models and servers give them, through the real SDKs against the fake server:
a reply cut off at the token cap, a re-ask that must not repeat the request, a schema each
provider enforces what it can of, a model other than the one asked for, a dead endpoint, a
server too slow for the timeout, and prompt-cache tokens counted and priced."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from typing import Any

import pytest

from rubric_gate.errors import JudgeError
from rubric_gate.judges import judge_missing
from rubric_gate.llm.errors import EndpointUnreachable, UnansweredError
from rubric_gate.llm.pricing import estimate_cost
from rubric_gate.llm.protocols import CUT_OFF, JudgeRequest, Reply
from rubric_gate.llm.providers.anthropic import message_params, reply_from_message
from rubric_gate.llm.providers.openai import chat_params, is_compatible_server
from rubric_gate.llm.replies import excerpt, short_text, strict_object
from rubric_gate.llm.watch import same_model
from rubric_gate.verdicts import VerdictStore
from tests.fakes.llm import FakeLLM, completion_body, message_body, prompt_of
from tests.judges.conftest import make_items, make_rubric
from tests.support.cli import rubric_gate

ANTHROPIC, OPENAI = "anthropic:claude-haiku-4-5", "openai:gpt-4o-mini"


def fresh_store(tmp_path: Path) -> VerdictStore:
    return VerdictStore.load(tmp_path / "verdicts.jsonl", missing_ok=True)


@pytest.mark.parametrize("judge", [ANTHROPIC, OPENAI])
def test_a_reply_cut_off_at_the_token_cap_says_so_with_the_start_of_what_the_model_said(
        fake: FakeLLM, tmp_path: Path, judge: str) -> None:
    fake.rules = {"mentions kiwi": "cutoff"}
    with pytest.raises(UnansweredError) as raised:
        judge_missing([make_rubric()], make_items(2), fresh_store(tmp_path), judge, progress=False)
    failure = raised.value.failures[0]
    assert "cut off at 400 tokens" in failure and "not JSON" not in failure
    assert 'the last began "{\\"answer\\": \\"yes\\", \\"quote\\": \\"the report the report' in failure
    assert "none guessed (2 cut off)" in str(raised.value)
    assert raised.value.stats.causes == {"cut off": 2}


def test_model_text_in_a_failure_listing_is_escaped() -> None:
    said = "\x1b[31mRED\x1b]8;;https://evil.example\x07link\x1b]8;;\x07 <img src=x> [x](y) @team `c` \u202eevil"
    shown = excerpt(said, 200)
    assert "\x1b" not in shown and "\x07" not in shown and "\u202e" not in shown
    assert not any(c in shown for c in "<>[]`@")
    assert json.loads(shown.replace("\\u003c", "<")) .startswith("\x1b[31mRED")  # one JSON string, undone exactly
    assert excerpt("x" * 100, 10) == '"xxxxxxxxxx"...'


def test_a_reask_after_an_invalid_reply_changes_the_request(fake: FakeLLM, tmp_path: Path) -> None:
    """A deterministic server answers an identical request identically: the re-ask steps the
    temperature up, sends a seed and reminds the model of the format."""
    fake.script = ["nonjson", "nonjson"]
    stats = judge_missing([make_rubric(["kiwi"])], make_items(1), fresh_store(tmp_path), OPENAI, progress=False)
    assert (stats.calls, stats.retries, stats.failed) == (3, 2, 0)
    first, second, third = fake.bodies
    assert first["temperature"] == 0 and "seed" not in first
    assert (second["temperature"], second["seed"]) == (0.4, 1) and (third["temperature"], third["seed"]) == (0.8, 2)
    reminder = "Your previous reply could not be used (not JSON: "
    assert reminder not in prompt_of(first) and reminder in prompt_of(second)
    assert prompt_of(second).startswith(prompt_of(first))  # the shared part stays first


def test_an_anthropic_reask_differs_by_its_reminder(fake: FakeLLM, tmp_path: Path) -> None:
    fake.script = ["badjson"]
    judge_missing([make_rubric(["kiwi"])], make_items(1), fresh_store(tmp_path), ANTHROPIC, progress=False)
    first, second = fake.bodies
    assert first != second and "answer must be 'yes', 'no' or 'n/a'" in prompt_of(second)


def test_each_provider_gets_the_bounds_it_enforces() -> None:
    request = JudgeRequest("p", strict_object({"quote": short_text(300), "ids": {
        "type": "array", "items": {"type": "string", "enum": ["c1", "c2"]}, "minItems": 2, "maxItems": 2}}),
        "answer", 100)
    local = chat_params("m", request, local=True)["response_format"]["json_schema"]["schema"]
    assert local == request.schema  # llama.cpp, vLLM: the whole schema, maxLength included
    hosted = chat_params("m", request, local=False)["response_format"]["json_schema"]["schema"]
    assert "maxLength" not in hosted["properties"]["quote"]  # OpenAI strict mode refuses string lengths
    assert hosted["properties"]["quote"]["description"] == "{maxLength: 300}"
    assert hosted["properties"]["ids"]["maxItems"] == 2 and hosted["properties"]["ids"]["items"]["enum"] == ["c1", "c2"]
    claude = message_params("m", request)["output_config"]["format"]["schema"]
    assert "maxItems" not in claude["properties"]["ids"] and "minItems" not in claude["properties"]["ids"]
    assert claude["properties"]["ids"]["items"]["enum"] == ["c1", "c2"] and "maxLength" not in claude["properties"]["quote"]
    assert is_compatible_server("http://127.0.0.1:8080/v1") and not is_compatible_server("https://api.openai.com/v1")
    assert not is_compatible_server(None)


@pytest.mark.parametrize("judge", [ANTHROPIC, OPENAI])
def test_a_model_other_than_the_one_asked_for_is_named_once_and_recorded(
        fake: FakeLLM, tmp_path: Path, judge: str, capsys: pytest.CaptureFixture[str]) -> None:
    fake.served_model = "smollm2"
    asked = judge.replace("haiku-4-5", f"haiku-{tmp_path.name}").replace("4o-mini", f"4o-{tmp_path.name}")
    store = fresh_store(tmp_path)
    stats = judge_missing([make_rubric()], make_items(4), store, asked, progress=False)
    warnings = [line for line in capsys.readouterr().err.splitlines() if "was answered by the model" in line]
    assert len(warnings) == 1 and '"smollm2"' in warnings[0] and asked in warnings[0]
    assert stats.served_models == ["smollm2"] and "smollm2" in stats.to_dict()["served_models"]
    assert {v.served_model for v in VerdictStore.load(store.path)} == {"smollm2"}
    assert {v.judge for v in VerdictStore.load(store.path)} == {asked}  # the key is unchanged


def test_a_dated_snapshot_is_the_model_asked_for() -> None:
    assert same_model("gpt-4o", "gpt-4o-2024-08-06") and same_model("claude-haiku-4-5", "claude-haiku-4-5-20251001")
    assert not same_model("gpt-9-does-not-exist", "smollm2") and same_model("x", "")


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_dead_endpoint_stops_the_run_with_one_line_naming_the_url(
        fake: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    started = time.monotonic()
    with pytest.raises(EndpointUnreachable) as raised:
        judge_missing([make_rubric()], make_items(8), fresh_store(tmp_path), OPENAI, progress=False)
    assert time.monotonic() - started < 10  # not 6 retries per pair
    assert f"cannot connect to {url}/chat/completions" in str(raised.value) and "\n" not in str(raised.value)
    assert raised.value.stats.retries >= 8  # type: ignore[attr-defined]


def test_a_dead_endpoint_is_exit_2_with_the_totals(fake: FakeLLM, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.judges.conftest import write_project

    write_project(tmp_path, make_rubric(), make_items(), judge=OPENAI)
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://user:pw@127.0.0.1:{_closed_port()}/v1?key=secret")
    proc = rubric_gate(tmp_path, "judge", "--rubric", "rubric.yaml", "--verdicts", "v.jsonl", "--root", ".")
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and lines[-1].startswith("rubric-gate: error: openai:gpt-4o-mini: cannot connect to")
    assert "pw" not in proc.stderr and "secret" not in proc.stderr  # no credentials or query in the line
    assert lines[0].startswith("openai:gpt-4o-mini: 0 calls") and "retries" in lines[0]  # the totals


def test_timeouts_lower_the_concurrency_like_rate_limits(fake: FakeLLM, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A local server with fewer slots than requests in flight queues them past the timeout:
    sending fewer at once is the cure, as for a 429."""
    monkeypatch.setenv("RUBRIC_GATE_JUDGE_TIMEOUT", "0.3")
    fake.hang_seconds = 0.6
    fake.script = ["hang"] * 4
    stats = judge_missing([make_rubric()], make_items(4), fresh_store(tmp_path), OPENAI, concurrency=4,
                          progress=False)
    assert stats.failed == 0 and stats.lowest_concurrency < 4
    assert "concurrency lowered to" in stats.summary and "timeouts" in stats.summary


def test_anthropic_cache_reads_and_writes_are_counted_and_priced(fake: FakeLLM, tmp_path: Path) -> None:
    fake.cached_tokens, fake.cache_creation_tokens = 60, 20  # beside 100 uncached input tokens per call
    stats = judge_missing([make_rubric()], make_items(2), fresh_store(tmp_path), ANTHROPIC, progress=False)
    assert (stats.calls, stats.input_tokens, stats.cached_tokens, stats.cache_write_tokens) == (10, 1800, 600, 200)
    price_in, price_out = 1.0, 5.0  # claude-haiku-4-5, USD per 1M tokens
    expected = (1000 * price_in + 600 * price_in * 0.1 + 200 * price_in * 1.25 + 100 * price_out) / 1_000_000
    assert stats.cost_usd == pytest.approx(expected)
    assert "1800 tokens in (600 cached)" in stats.summary


def test_openai_cached_prompt_tokens_are_counted_and_priced(fake: FakeLLM, tmp_path: Path) -> None:
    fake.cached_tokens = 64  # of the 100 prompt tokens (OpenAI counts them inside prompt_tokens)
    stats = judge_missing([make_rubric()], make_items(2), fresh_store(tmp_path), OPENAI, progress=False)
    assert (stats.input_tokens, stats.cached_tokens) == (1000, 640)
    assert stats.cost_usd == pytest.approx((360 * 0.15 + 640 * 0.075 + 100 * 0.6) / 1_000_000)
    assert estimate_cost("gpt-4o-mini", 1000, 0, 1000) == pytest.approx(1000 * 0.075 / 1_000_000)


def test_anthropic_caches_the_part_every_check_of_an_item_shares(fake: FakeLLM, tmp_path: Path) -> None:
    judge_missing([make_rubric(["apple", "pear"])], make_items(1), fresh_store(tmp_path), ANTHROPIC, progress=False)
    for body in fake.bodies:
        shared, rest = body["messages"][0]["content"]
        assert shared["cache_control"] == {"type": "ephemeral"} and "cache_control" not in rest
        assert shared["text"].rstrip().endswith("</output>") and rest["text"].startswith("<check>")
    assert fake.bodies[0]["messages"][0]["content"][0] == fake.bodies[1]["messages"][0]["content"][0]


def test_the_next_check_of_an_item_is_sent_after_the_first_answered(fake: FakeLLM, tmp_path: Path) -> None:
    """Calls in flight at once are for different items, so the item's shared prompt is in the
    provider's cache when its next check is asked."""
    fake.delay = 0.02
    judge_missing([make_rubric()], make_items(8), fresh_store(tmp_path), OPENAI, concurrency=4, progress=False)
    items = [prompt_of(b).split("<output>\n", 1)[1].split("\n</output>", 1)[0] for b in fake.bodies]
    assert all(len(set(items[i:i + 4])) == 4 for i in range(0, 20, 4))


def test_provider_reply_shapes_are_read() -> None:
    from anthropic.types import Message
    from openai.types.chat import ChatCompletion

    from rubric_gate.llm.providers.openai import reply_from_completion

    cut = reply_from_completion(ChatCompletion.model_validate(
        completion_body("{", model="gpt-4o-mini-2024-07-18", finish_reason="length", prompt_tokens=50,
                        completion_tokens=400, cached_tokens=32)))
    assert cut == Reply("{", 50, 400, finish=CUT_OFF, cached_tokens=32, model="gpt-4o-mini-2024-07-18")
    message = reply_from_message(Message.model_validate(
        message_body("{", model="claude-x", stop_reason="max_tokens", input_tokens=10, output_tokens=7,
                     cache_read=100, cache_creation=5)))
    assert message == Reply("{", 115, 7, finish=CUT_OFF, cached_tokens=100, cache_write_tokens=5, model="claude-x")
    plain: Any = Message.model_validate(message_body("{}", stop_reason="end_turn"))
    assert reply_from_message(plain).finish == "stop" and reply_from_message(plain).cached_tokens == 0


def test_a_refused_request_is_still_a_judge_error(fake: FakeLLM, tmp_path: Path) -> None:
    fake.rules = {"mentions": "400"}
    with pytest.raises(JudgeError, match="HTTP 400"):
        judge_missing([make_rubric()], make_items(1), fresh_store(tmp_path), OPENAI, progress=False)
