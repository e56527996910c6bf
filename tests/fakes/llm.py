"""A local stand-in for the Anthropic Messages and OpenAI Chat Completions APIs.

It answers deterministically from the request: a check's last word is its keyword, and the
answer is "yes" exactly when the keyword occurs in the item's output. Faults are injected by
a per-request script (consumed in arrival order) or by rules keyed on a check-text marker.

Replies have the providers' shapes (checked against their API references): OpenAI's
`finish_reason` ("stop", "length"), `usage.prompt_tokens_details.cached_tokens` and `model`;
Anthropic's `stop_reason` ("end_turn", "max_tokens"), `usage.cache_read_input_tokens` and
`cache_creation_input_tokens` (counted apart from `input_tokens`) and `model`. Any raw reply
can be given instead (`respond`, or the `raw:` behaviour with `raw_bodies`): recorded replies of
a real model replay through the real SDKs this way.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any, TypeVar

import pytest

from tests.fakes.server import FakeHTTPServer

CHECK = re.compile(r"<check>\n(.*?)\n</check>", re.DOTALL)
CHECKLIST = re.compile(r'<check id="(c\d+)">\n(.*?)\n</check>', re.DOTALL)
OUTPUT = re.compile(r"<output>\n(.*?)\n</output>", re.DOTALL)
ORIGINAL = re.compile(r"<original>\n(.*?)\n</original>", re.DOTALL)
REWORDING = re.compile(r"rewording (\d+) of")

# Behaviours: ok, 429, 529 (Anthropic's overloaded), 500, 401, 400, hang, nonjson, badjson (valid JSON, wrong shape),
# cutoff (a quote looping until the token cap: unfinished JSON, finish_reason "length" / stop_reason
# "max_tokens"), raw:NAME (the body `raw_bodies[NAME]` as it is, see `respond`).


def prompt_of(body: dict[str, Any]) -> str:
    """The user message's text: a string, or (Anthropic, prompt caching) a list of text blocks."""
    content = body["messages"][0]["content"]
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content if isinstance(block, dict))


def completion_body(text: str, *, model: str = "m", finish_reason: str = "stop", prompt_tokens: int = 100,
                    completion_tokens: int = 10, cached_tokens: int | None = None) -> dict[str, Any]:
    """An OpenAI Chat Completions reply body."""
    usage: dict[str, Any] = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                             "total_tokens": prompt_tokens + completion_tokens}
    if cached_tokens is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": cached_tokens, "audio_tokens": 0}
    return {"id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish_reason}],
            "usage": usage}


def message_body(text: str, *, model: str = "m", stop_reason: str = "end_turn", input_tokens: int = 100,
                 output_tokens: int = 10, cache_read: int | None = None, cache_creation: int | None = None) -> dict[str, Any]:
    """An Anthropic Messages reply body (`input_tokens` excludes the cached ones, as the API counts)."""
    usage: dict[str, Any] = {"input_tokens": input_tokens, "output_tokens": output_tokens}
    if cache_read is not None:
        usage["cache_read_input_tokens"] = cache_read
    if cache_creation is not None:
        usage["cache_creation_input_tokens"] = cache_creation
    return {"id": "msg_fake", "type": "message", "role": "assistant", "model": model,
            "content": [{"type": "text", "text": text}], "stop_reason": stop_reason, "stop_sequence": None,
            "usage": usage}


LOOPING = '{"answer": "yes", "quote": "' + "the report the report " * 40  # cut off mid-quote


def keyword(check: str) -> str:
    return re.sub(r"[^a-z0-9]", "", check.split()[-1].lower())


APPLIES = re.compile(r"only when the output mentions (\w+)", re.IGNORECASE)


def decide(check: str, output: str) -> dict[str, str]:
    # An applicability clause, as the prompt describes it: n/a where the condition fails.
    condition = APPLIES.search(check)
    if condition and condition.group(1).lower() not in output.lower():
        return {"answer": "n/a", "quote": ""}
    word = keyword(check)
    found = word in output.lower()
    return {"answer": "yes" if found else "no", "quote": word if found else ""}


@dataclass
class FakeLLM:
    delay: float = 0.0
    hang_seconds: float = 3.0
    retry_after: str | None = "0"
    script: list[str] = field(default_factory=list)
    rules: dict[str, str] = field(default_factory=dict)  # check-text marker -> behaviour
    # Judges that disagree: model name -> check keywords whose answer that model inverts.
    contrary: dict[str, set[str]] = field(default_factory=dict)
    # Judges that disagree on known pairs: model name -> (check keyword, item output) pairs whose
    # yes/no answer that model inverts (a judge change, or a judge drifting, pair by pair).
    flips: dict[str, set[tuple[str, str]]] = field(default_factory=dict)
    # Unstable pairs: (check keyword, item output) -> answers given on successive calls, cycling.
    sequences: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    sequence_calls: dict[tuple[str, str, str], int] = field(default_factory=dict)
    # Paraphrase requests: check keyword -> keyword of each rewording (default: the same word,
    # i.e. a faithful rewording); another word changes the check's meaning.
    paraphrase_words: dict[str, list[str]] = field(default_factory=dict)
    # The model name replies give (default: the one asked for); tokens read from / written to the
    # prompt cache (None: the usage carries no cache fields, as an old server's).
    served_model: str | None = None
    cached_tokens: int | None = None
    cache_creation_tokens: int | None = None
    # Raw replies: `respond(body, anthropic)` may return (status, payload) to send as it is
    # (None: answer as usual); `raw:NAME` behaviours send `raw_bodies[NAME]`.
    respond: Any = None
    raw_bodies: dict[str, dict[str, Any]] = field(default_factory=dict)
    received: int = 0
    answered: list[tuple[str, str, str]] = field(default_factory=list)  # (check, output, answer)
    bodies: list[dict[str, Any]] = field(default_factory=list)
    auth_headers: list[str] = field(default_factory=list)
    in_flight: int = 0
    max_in_flight: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    server: FakeHTTPServer | None = None

    @property
    def port(self) -> int:
        assert self.server is not None
        return self.server.server_address[1]

    @property
    def anthropic_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeLLM:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                fake.handle(self, body)

        self.server = FakeHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()


    # -- request handling -----------------------------------------------------------------
    def _behaviour(self, prompt: str) -> str:
        with self.lock:
            self.received += 1
            scripted = self.script.pop(0) if self.script else None
        if scripted:
            return scripted
        for marker, behaviour in self.rules.items():
            if marker in prompt:
                return behaviour
        return "ok"

    def handle(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        anthropic = handler.path.endswith("/messages")
        prompt = prompt_of(body)
        with self.lock:
            self.bodies.append(body)
            self.auth_headers.append(handler.headers.get("authorization") or handler.headers.get("x-api-key") or "")
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            behaviour = self._behaviour(prompt)
            if self.delay:
                time.sleep(self.delay)
            if behaviour == "hang":
                time.sleep(self.hang_seconds)
                return
            if behaviour in ("429", "529", "500", "401", "400"):
                self._error(handler, int(behaviour), anthropic)
                return
            raw = self.respond(body, anthropic) if self.respond is not None else None
            if raw is None and behaviour.startswith("raw:"):
                raw = (200, self.raw_bodies[behaviour[4:]])
            if raw is not None:
                self._send(handler, raw[0], raw[1])
                return
            if behaviour == "cutoff":
                self._reply(handler, LOOPING, anthropic, body.get("model", "m"), cut_off=True)
                return
            text = self._answer_text(prompt, behaviour, body.get("model", "m"))
            self._reply(handler, text, anthropic, body.get("model", "m"))
        except (BrokenPipeError, ConnectionResetError):
            pass
        finally:
            with self.lock:
                self.in_flight -= 1

    def _decide(self, check: str, output: str, model: str) -> dict[str, str]:
        decided = decide(check, output)
        word = keyword(check)
        sequence = self.sequences.get((word, output))
        if sequence:
            with self.lock:
                key = (model, word, output)
                count = self.sequence_calls.get(key, 0)
                self.sequence_calls[key] = count + 1
            decided = {"answer": sequence[count % len(sequence)], "quote": ""}
        if word in self.contrary.get(model, ()) or (word, output) in self.flips.get(model, ()):
            decided = {"answer": "no" if decided["answer"] == "yes" else "yes", "quote": ""}
        return decided

    def _answer_text(self, prompt: str, behaviour: str, model: str = "m") -> str:
        if behaviour == "nonjson":
            return "Sure! The answer is yes."
        if behaviour == "badjson":
            return json.dumps({"answer": "maybe", "quote": ""})
        original = ORIGINAL.search(prompt)
        if original:
            word = keyword(original.group(1))
            index = int(REWORDING.search(prompt).group(1)) - 1  # type: ignore[union-attr]
            words = self.paraphrase_words.get(word, [])
            new_word = words[index] if index < len(words) else word
            with self.lock:
                self.answered.append((original.group(1), "<paraphrase>", new_word))
            return json.dumps({"paraphrase": f"Reworded ({index + 1}): the output names {new_word}"})
        output = OUTPUT.search(prompt).group(1)  # type: ignore[union-attr]
        listed = CHECKLIST.findall(prompt)
        if listed:
            answers = []
            for check_id, check in listed:
                decided = self._decide(check, output, model)
                answers.append({"id": check_id, **decided})
                with self.lock:
                    self.answered.append((check, output, decided["answer"]))
            return json.dumps({"answers": answers})
        check = CHECK.search(prompt).group(1)  # type: ignore[union-attr]
        decided = self._decide(check, output, model)
        with self.lock:
            self.answered.append((check, output, decided["answer"]))
        return json.dumps(decided)

    def _send(self, handler: BaseHTTPRequestHandler, status: int, payload: dict[str, Any],
              headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        handler.send_response(status)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-length", str(len(data)))
        for name, value in (headers or {}).items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(data)

    def _error(self, handler: BaseHTTPRequestHandler, status: int, anthropic: bool) -> None:
        kinds = {429: "rate_limit_error", 529: "overloaded_error", 500: "api_error", 401: "authentication_error", 400: "invalid_request_error"}
        headers = {"retry-after": self.retry_after} if status in (429, 529) and self.retry_after is not None else {}
        headers["x-should-retry"] = "false"
        if anthropic:
            payload: dict[str, Any] = {"type": "error", "error": {"type": kinds[status], "message": f"fake {status}"}}
        else:
            payload = {"error": {"message": f"fake {status}", "type": kinds[status], "code": None}}
        self._send(handler, status, payload, headers)

    def _reply(self, handler: BaseHTTPRequestHandler, text: str, anthropic: bool, model: str,
               cut_off: bool = False) -> None:
        model = self.served_model or model
        output_tokens = 400 if cut_off else 10
        if anthropic:
            payload = message_body(text, model=model, stop_reason="max_tokens" if cut_off else "end_turn",
                                   output_tokens=output_tokens, cache_read=self.cached_tokens,
                                   cache_creation=self.cache_creation_tokens)
        else:
            payload = completion_body(text, model=model, finish_reason="length" if cut_off else "stop",
                                      completion_tokens=output_tokens, cached_tokens=self.cached_tokens)
        self._send(handler, 200, payload)


FakeLLMType = TypeVar("FakeLLMType", bound=FakeLLM)
SDK_VARIABLES = ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE", "ANTHROPIC_CUSTOM_HEADERS", "RUBRIC_GATE_PRICES")


def serve_to_sdks(fake: FakeLLMType, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLMType]:
    """Start `fake` and point both SDKs at it (test keys, fast retries, a short timeout) for one
    test: the body of each directory's `fake` fixture."""
    server = fake.start()
    for name in SDK_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.anthropic_url)
    monkeypatch.setenv("OPENAI_BASE_URL", server.openai_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-anthropic-SECRET")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-openai-SECRET")
    monkeypatch.setenv("RUBRIC_GATE_RETRY_BASE", "0.01")
    monkeypatch.setenv("RUBRIC_GATE_JUDGE_TIMEOUT", "2")
    try:
        yield server
    finally:
        server.stop()
