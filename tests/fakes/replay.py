"""Real model replies, recorded once and replayed at the HTTP boundary.

`benchmarks/realmodel.py` puts a recording proxy between the CLI and a real OpenAI-compatible
server (llama-server serving SmolLM2-135M) and writes every exchange to a fixture
(tests/fixtures/realmodel/replies.jsonl). `ReplayLLM` answers the same requests from that
fixture, so the real `openai` SDK in the tests meets the real model's replies: cut-offs at the
token cap, loops, copied placeholders, timeouts.

The fixture is JSON lines of four kinds:

- `{"kind": "meta", ...}`: the server, the model and the commit the replies were recorded with.
- `{"kind": "step", "step", "argv", "exit", "wall_s"}`: one CLI command of the run, in order.
- `{"kind": "body", "id", "body"}`: one reply body as the server sent it, less its per-reply
  `id` and `created` (the replay sends fresh ones) and llama-server's `timings`, stored once: at
  temperature 0 an identical re-ask gets the identical reply, so bodies repeat.
- `{"kind": "call", "step", "key", "digest", "request", "outcome", "cause", ...}`: one HTTP
  request, in the order the replies came (the asks of one call in the order they were sent): `outcome` is "reply" (HTTP status and `body`, the id of a body
  line), "client_gone" (the client gave up, a timeout, before the reply came) or "connection"
  (the server could not be reached); `cause` is why it has no valid reply (one of `CAUSES`, or
  "cancelled": the client hung up before its timeout, as a run does when it stops early),
  judged when it was recorded, or null.

Matching. A request is matched on its *material key*: the endpoint, the requested model, the
reply schema's name and the tagged blocks of the prompt (`<task>`, `<output>`, `<check>`, ...),
the data a prompt is about, which survives edits to the instructions, the schema's bounds and
the sampling parameters. The n-th request with a key gets the n-th recorded call with that key
(re-asks of one pair arrive in order); among those still unused, one whose full-request digest
is the same is preferred. A request with no recorded call left is a *miss*: it gets HTTP 400
(the run stops on it) and is listed in `misses`, which the tests' fixture turns into a failure.
A reply is never invented.
"""

from __future__ import annotations

import hashlib
import json
import re
import socket
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from tests.fakes.server import FakeHTTPServer

CAUSES = ("cut off", "invalid", "timeout", "connection", "other")
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "realmodel" / "replies.jsonl"
PER_REPLY = ("id", "created", "timings")  # differ on every reply: not kept in the fixture
# The outermost `<tag ...>...</tag>` blocks of a prompt: the material it is about.
BLOCK = re.compile(r"<([a-z_]+)(?:\s[^<>]*)?>(.*?)</\1>", re.DOTALL)


def _digest(value: Any) -> str:
    data = value if isinstance(value, bytes) else json.dumps(value, sort_keys=True, ensure_ascii=False).encode()
    return hashlib.sha256(data).hexdigest()[:16]


def prompt_text(body: dict[str, Any]) -> str:
    """The user-visible text of a chat request (all message contents) or an embeddings input."""
    if "messages" in body:
        parts = []
        for message in body.get("messages") or []:
            content = message.get("content")
            if isinstance(content, list):  # content parts
                content = "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
            parts.append(str(content or ""))
        return "\n".join(parts)
    return json.dumps(body.get("input"), ensure_ascii=False)


def blocks(text: str) -> list[tuple[str, str]]:
    """The prompt's outermost tagged blocks, whitespace-normalised, in order."""
    return [(m.group(1), " ".join(m.group(2).split())) for m in BLOCK.finditer(text)]


def schema_name(body: dict[str, Any]) -> str:
    form = body.get("response_format") or {}
    return str((form.get("json_schema") or {}).get("name") or form.get("type") or "")


def material_key(path: str, body: dict[str, Any]) -> str:
    """What a request is about (see the module docstring); equal for a re-ask of the same call."""
    text = prompt_text(body)
    material: Any = blocks(text) or " ".join(text.split())
    return _digest([path.rsplit("/v1", 1)[-1], body.get("model"), schema_name(body), material])


def request_digest(path: str, body: dict[str, Any]) -> str:
    """The exact request: equal only for byte-for-byte the same parameters and prompt."""
    return _digest([path, body])


def request_summary(path: str, body: dict[str, Any]) -> dict[str, Any]:
    """What the fixture keeps of a request (the prompt itself is rebuilt by the CLI on replay)."""
    summary: dict[str, Any] = {"path": path.rsplit("/v1", 1)[-1], "model": body.get("model"),
                               "schema": schema_name(body), "chars": len(prompt_text(body)),
                               "tags": [name for name, _ in blocks(prompt_text(body))]}
    for name in ("max_tokens", "max_completion_tokens", "temperature", "seed"):
        if name in body:
            summary[name] = body[name]
    return summary


@dataclass
class Call:
    step: str
    key: str
    digest: str
    request: dict[str, Any]
    outcome: str  # "reply", "client_gone", "connection"
    status: int = 0
    body: dict[str, Any] | None = None
    ms: int = 0
    cause: str | None = None  # why this request got no valid reply, or None

    @property
    def finish_reason(self) -> str | None:
        choices = (self.body or {}).get("choices") or []
        return choices[0].get("finish_reason") if choices and isinstance(choices[0], dict) else None

    @property
    def content(self) -> str | None:
        choices = (self.body or {}).get("choices") or []
        if not choices or not isinstance(choices[0], dict):
            return None
        return (choices[0].get("message") or {}).get("content")

    @property
    def usage(self) -> tuple[int, int]:
        usage = (self.body or {}).get("usage") or {}
        return int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)


@dataclass
class Recording:
    meta: dict[str, Any] = field(default_factory=dict)
    steps: list[dict[str, Any]] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)

    @classmethod
    def load(cls, path: Path = FIXTURE) -> Recording:
        recording = cls()
        bodies: dict[str, dict[str, Any]] = {}
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            record = json.loads(line)
            kind = record.pop("kind", None)
            if kind == "meta":
                recording.meta = record
            elif kind == "step":
                recording.steps.append(record)
            elif kind == "body":
                bodies[record["id"]] = record["body"]
            elif kind == "call":
                body_id = record.pop("body", None)
                recording.calls.append(Call(**record, body=bodies[body_id] if body_id else None))
            else:
                raise ValueError(f"{path}:{number}: unknown record kind {kind!r}")
        return recording

    def lines(self) -> Iterator[str]:
        """The fixture's lines: meta, then per step its step line, the bodies it first uses and its calls."""
        def dump(value: dict[str, Any]) -> str:
            return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

        yield dump({"kind": "meta", **self.meta})
        seen: set[str] = set()
        for step in self.steps:
            yield dump({"kind": "step", **step})
            for call in (c for c in self.calls if c.step == step["step"]):
                record: dict[str, Any] = {"kind": "call", "step": call.step, "key": call.key, "digest": call.digest,
                                          "request": call.request, "outcome": call.outcome}
                if call.status:
                    record["status"] = call.status
                if call.body is not None:
                    body = {k: v for k, v in call.body.items() if k not in PER_REPLY}
                    body_id = _digest(body)
                    if body_id not in seen:
                        seen.add(body_id)
                        yield dump({"kind": "body", "id": body_id, "body": body})
                    record["body"] = body_id
                record["cause"] = call.cause
                record["ms"] = call.ms
                yield dump(record)

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(line + "\n" for line in self.lines()), encoding="utf-8")

    def step_calls(self, step: str) -> list[Call]:
        return [c for c in self.calls if c.step == step]


def reply_cause(call: Call, schema: dict[str, Any] | None, timeout_s: float | None = None) -> str | None:
    """Why a request has no valid reply, read at the HTTP boundary whatever the client makes of
    it: `cut off` the reply ended at the token cap (finish_reason "length"), `invalid` it ended but
    is not a JSON object matching the request's schema, `timeout` the client gave up waiting (at
    `timeout_s`, when known; earlier it is `cancelled`), `connection` the server could not be
    reached, `other` an HTTP error; None: a valid reply."""
    if call.outcome == "client_gone":
        return "timeout" if timeout_s is None or call.ms >= 900 * timeout_s else "cancelled"
    if call.outcome == "connection":
        return "connection"
    if call.status != 200:
        return "other"
    if call.request.get("path", "").endswith("/embeddings"):
        return None
    if call.finish_reason == "length":
        return "cut off"
    try:
        value = json.loads(call.content or "")
    except ValueError:
        return "invalid"
    if not isinstance(value, dict):
        return "invalid"
    if schema:
        import jsonschema  # a test dependency, loaded only to judge a recorded reply

        try:
            jsonschema.validate(value, schema)
        except jsonschema.ValidationError:
            return "invalid"
    return None


def call_cause(attempts: Iterable[Call]) -> str | None:
    """Why one call (all the asks of one material key, in order) ended without a valid answer:
    its last ask's cause; when the client cancelled that ask (the run stopped), the cause of the
    ask before it. An ask followed by another whose reply matched its schema was refused after
    parsing (a quote not in the text, an unknown id): `invalid`. None: the last reply is valid."""
    asked = list(attempts)
    if not asked or asked[-1].cause is None:
        return None
    causes = [a.cause or "invalid" for a in asked[:-1]] + [asked[-1].cause]
    if causes[-1] != "cancelled":
        return causes[-1]
    return next((c for c in reversed(causes) if c != "cancelled"), "other")


@dataclass
class Served:
    """A request the replay answered: its step, the prompt's tagged blocks and the recorded call."""

    step: str
    blocks: list[tuple[str, str]]
    call: Call


@dataclass
class Miss:
    step: str
    key: str
    request: dict[str, Any]
    blocks: list[tuple[str, str]]


@dataclass
class ReplayLLM:
    """An OpenAI-compatible server that answers from a `Recording`, one step at a time."""

    recording: Recording
    step: str = ""
    hang_seconds: float = 3.0  # how long a recorded timeout keeps the client waiting
    # Replies come back after their recorded time divided by `speed` (None: at once), so a run
    # whose course depends on the order replies arrive (an early stop, a cancelled ask) takes
    # the recorded course.
    speed: float | None = None
    served: list[Served] = field(default_factory=list)
    misses: list[Miss] = field(default_factory=list)
    inexact: int = 0  # served on the material key, the exact request differing
    lock: threading.Lock = field(default_factory=threading.Lock)
    server: FakeHTTPServer | None = None
    _unused: dict[tuple[str, str], list[Call]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        unused: dict[tuple[str, str], list[Call]] = defaultdict(list)
        for call in self.recording.calls:
            unused[(call.step, call.key)].append(call)
        self._unused = dict(unused)

    @property
    def openai_url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def start(self) -> ReplayLLM:
        self.server = serve_posts(0, lambda handler, raw: self.handle(handler, json.loads(raw or b"{}")))
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()

    def take(self, path: str, body: dict[str, Any]) -> Call | None:
        key, digest = material_key(path, body), request_digest(path, body)
        with self.lock:
            left = self._unused.get((self.step, key)) or []
            call = next((c for c in left if c.digest == digest), left[0] if left else None)
            if call is None:
                self.misses.append(Miss(self.step, key, request_summary(path, body), blocks(prompt_text(body))))
                return None
            left.remove(call)
            self.served.append(Served(self.step, blocks(prompt_text(body)), call))
            self.inexact += call.digest != digest
            return call

    def handle(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        call = self.take(handler.path, body)
        if call is not None and call.outcome == "reply" and self.speed:
            time.sleep(call.ms / 1000 / self.speed)
        try:
            if call is None:
                _send(handler, 400, {"error": {"message": f"replay: no recorded reply left for this request "
                                                          f"(step {self.step!r})", "type": "invalid_request_error",
                                               "code": "replay_miss"}})
            elif call.outcome == "reply":
                assert call.body is not None
                fresh = {"id": f"chatcmpl-replay-{len(self.served)}", "created": int(time.time())}
                _send(handler, call.status or 200, {**fresh, **call.body} if "choices" in call.body else call.body)
            elif call.outcome == "client_gone":  # the client timed out waiting: keep it waiting
                time.sleep(self.hang_seconds)
                handler.close_connection = True
            else:  # "connection": the server could not be reached; close without a reply
                handler.close_connection = True
                handler.connection.shutdown(socket.SHUT_RDWR)
        except (BrokenPipeError, ConnectionResetError, OSError):
            pass

    def unused(self, step: str | None = None) -> list[Call]:
        """Recorded calls no request asked for (the run made fewer calls than the recording)."""
        return [c for (s, _), calls in self._unused.items() if step in (None, s) for c in calls]


def serve_posts(port: int, on_post: Callable[[BaseHTTPRequestHandler, bytes], None]) -> FakeHTTPServer:
    """A threaded HTTP/1.1 server on 127.0.0.1:`port` (0: any free port) calling `on_post` with
    each POST's handler and body; the replay fake and the recording proxy are both one."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            on_post(self, self.rfile.read(length))

    server = FakeHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return server


def _send(handler: BaseHTTPRequestHandler, status: int, payload: dict[str, Any]) -> None:
    data = json.dumps(payload).encode()
    handler.send_response(status)
    handler.send_header("content-type", "application/json")
    handler.send_header("content-length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


def describe(misses: Iterable[Miss]) -> str:
    """One line per miss, for the failure message: re-record when the requests changed."""
    lines = []
    for miss in misses:
        shown = ", ".join(f"<{name}> {text[:50]!r}" for name, text in miss.blocks[:3]) or "(no tagged blocks)"
        lines.append(f"step {miss.step!r}: {miss.request.get('schema')!r} for {miss.request.get('model')}: {shown}")
    return "\n".join(lines)
