"""The replay fake (tests/fakes/replay.py) answers the real `openai` SDK from a recording and
never invents a reply: the n-th ask of one call gets the n-th recorded reply, an ask the
recording lacks is a loud miss, a recorded timeout keeps the client waiting past its timeout,
and a request is recognised by what it is about, not by its instructions or sampling."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

from tests.fakes.replay import (
    Call,
    Recording,
    ReplayLLM,
    call_cause,
    material_key,
    reply_cause,
    request_digest,
    request_summary,
)

PATH = "/v1/chat/completions"
SCHEMA = {"type": "object", "properties": {"answer": {"type": "string", "enum": ["yes", "no"]}},
          "required": ["answer"], "additionalProperties": False}


def _prompt(check: str, output: str, instructions: str = "Answer the check.") -> str:
    return f"{instructions}\n\n<output>\n{output}\n</output>\n\n<check>\n{check}\n</check>\n"


def _body(prompt: str, model: str = "smollm2", **sampling: Any) -> dict[str, Any]:
    return {"model": model, "messages": [{"role": "user", "content": prompt}], "max_tokens": 400,
            "temperature": 0.0, **sampling,
            "response_format": {"type": "json_schema", "json_schema": {"name": "check_answer", "schema": SCHEMA,
                                                                       "strict": True}}}


def _completion(content: str, finish: str = "stop") -> dict[str, Any]:
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "smollm2",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}],
            "usage": {"prompt_tokens": 500, "completion_tokens": 400 if finish == "length" else 9,
                      "total_tokens": 900 if finish == "length" else 509}}


def _call(body: dict[str, Any], outcome: str = "reply", reply: dict[str, Any] | None = None, step: str = "s") -> Call:
    call = Call(step, material_key(PATH, body), request_digest(PATH, body), request_summary(PATH, body), outcome,
                status=200 if reply is not None else 0, body=reply)
    call.cause = reply_cause(call, SCHEMA)
    return call


@pytest.fixture
def replay(request: pytest.FixtureRequest) -> Iterator[ReplayLLM]:
    fake = ReplayLLM(Recording(calls=list(request.param)), step="s", hang_seconds=1.5).start()
    try:
        yield fake
    finally:
        fake.stop()


def _ask(fake: ReplayLLM, body: dict[str, Any], timeout: float = 10) -> str | None:
    client = openai.OpenAI(base_url=fake.openai_url, api_key="sk-test", max_retries=0, timeout=timeout)
    try:
        reply = client.chat.completions.create(**body)
        content: str | None = reply.choices[0].message.content
        return content
    finally:
        client.close()


LOOP = '{"answer": "yes", "quote": "the the the the the the the the'
FIRST = _body(_prompt("Names the resource.", "pg-orders is public"))


@pytest.mark.parametrize("replay", [[_call(FIRST, reply=_completion(LOOP, "length")),
                                     _call(FIRST, reply=_completion('{"answer": "no"}'))]], indirect=True)
def test_re_asks_get_the_recorded_replies_in_order_even_when_the_request_changed(replay: ReplayLLM) -> None:
    assert _ask(replay, FIRST) == LOOP
    # The second ask changes its wording and temperature (a re-ask that varies): still the same call.
    varied = _body(_prompt("Names the resource.", "pg-orders is public", "Reply in JSON only."), temperature=0.7)
    assert _ask(replay, varied) == '{"answer": "no"}'
    assert replay.inexact == 1 and replay.misses == []
    assert [s.call.cause for s in replay.served] == ["cut off", None]


@pytest.mark.parametrize("replay", [[_call(FIRST, reply=_completion('{"answer": "yes"}'))]], indirect=True)
def test_an_ask_the_recording_lacks_is_a_loud_miss_never_a_made_up_reply(replay: ReplayLLM) -> None:
    assert _ask(replay, FIRST) == '{"answer": "yes"}'
    with pytest.raises(openai.BadRequestError, match="no recorded reply"):
        _ask(replay, FIRST)  # asked once more than recorded
    other = _body(_prompt("Names the resource.", "a different output"))
    with pytest.raises(openai.BadRequestError):
        _ask(replay, other)
    assert len(replay.misses) == 2
    assert replay.misses[1].blocks == [("output", "a different output"), ("check", "Names the resource.")]


@pytest.mark.parametrize("replay", [[_call(FIRST, "client_gone"), _call(FIRST, "connection")]], indirect=True)
def test_a_recorded_timeout_times_the_client_out_and_a_dead_server_drops_the_connection(replay: ReplayLLM) -> None:
    with pytest.raises(openai.APITimeoutError):
        _ask(replay, FIRST, timeout=0.5)
    with pytest.raises(openai.APIConnectionError):
        _ask(replay, FIRST)
    assert [s.call.cause for s in replay.served] == ["timeout", "connection"]


def test_the_material_key_follows_the_data_not_the_instructions_or_sampling() -> None:
    def key(body: dict[str, Any]) -> str:
        return material_key(PATH, body)

    base = key(FIRST)
    assert key(_body(_prompt("Names the resource.", "pg-orders   is\npublic", "Other words."), seed=3)) == base
    assert key(_body(_prompt("Names the setting.", "pg-orders is public"))) != base
    assert key(_body(_prompt("Names the resource.", "pg-orders is private"))) != base
    assert key(_body(_prompt("Names the resource.", "pg-orders is public"), model="smollm2-b")) != base
    assert request_digest(PATH, _body(_prompt("Names the resource.", "pg-orders is public"), seed=3)) != \
        request_digest(PATH, FIRST)


@pytest.mark.parametrize(("content", "finish", "cause"), [
    ('{"answer": "yes"}', "stop", None),
    (LOOP, "length", "cut off"),
    ('{"answer": "maybe"}', "stop", "invalid"),  # valid JSON, outside the schema
    ("Sure! The answer is yes.", "stop", "invalid"),
])
def test_a_reply_s_cause_is_read_from_finish_reason_and_the_schema(content: str, finish: str, cause: str | None) -> None:
    assert _call(FIRST, reply=_completion(content, finish)).cause == cause


def test_a_call_s_cause_is_its_last_ask_s_or_the_one_before_a_cancelled_ask() -> None:
    valid, cut = _completion('{"answer": "yes"}'), _completion(LOOP, "length")
    cancelled = _call(FIRST, "client_gone")
    cancelled.ms, cancelled.cause = 100, reply_cause(cancelled, SCHEMA, timeout_s=60)
    assert cancelled.cause == "cancelled"
    assert call_cause([_call(FIRST, reply=cut), _call(FIRST, reply=valid)]) is None
    assert call_cause([_call(FIRST, reply=valid), _call(FIRST, reply=cut)]) == "cut off"
    assert call_cause([_call(FIRST, reply=cut), cancelled]) == "cut off"
    # Asked again after a reply that matched its schema: the client refused it after parsing.
    assert call_cause([_call(FIRST, reply=valid), cancelled]) == "invalid"
    assert call_cause([cancelled]) == "other"


def test_a_recording_round_trips_and_stores_each_body_once(tmp_path: Path) -> None:
    same = _completion(LOOP, "length")
    recording = Recording({"model": "m"}, [{"step": "s", "argv": ["judge"], "exit": 2, "wall_s": 1.0}],
                          [_call(FIRST, reply=same), _call(FIRST, reply=same), _call(FIRST, "client_gone")])
    path = tmp_path / "replies.jsonl"
    recording.save(path)
    kinds = [json.loads(line)["kind"] for line in path.read_text(encoding="utf-8").splitlines()]
    assert kinds == ["meta", "step", "body", "call", "call", "call"]
    loaded = Recording.load(path)
    assert loaded.meta == {"model": "m"} and loaded.steps == recording.steps
    kept = {k: v for k, v in same.items() if k not in ("id", "created")}  # fresh ones on every replayed reply
    assert [(c.outcome, c.cause, c.body) for c in loaded.calls] == [("reply", "cut off", kept), ("reply", "cut off", kept),
                                                                    ("client_gone", "timeout", None)]
