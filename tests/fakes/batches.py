"""A local stand-in for OpenAI Batch (files upload/content, batches create/retrieve/list) and
Anthropic Message Batches (create/retrieve/list/results), on 127.0.0.1.

Answers come from the same rule as tests/fakes/llm.py (a check's last word is its keyword). A batch stays
`in_progress` while `hold` is set and for `polls_to_end` retrieves after that, then ends with
its results shuffled. Faults per request: `rules` maps a check-text marker to a list of
behaviours consumed one per request carrying it ("errored", "expired", "canceled", "nonjson",
"ok"); an exhausted list means "ok". `batch_status` forces the status of the next batches
(OpenAI "expired"/"cancelled"; Anthropic then reports every request expired/canceled).

Run as a script (`python -m tests.fakes.batches`) it serves until killed and prints its
port: the benchmark runs it in its own process so its memory is not counted as the tool's.
"""

from __future__ import annotations

import email.parser
import json
import random
import re
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs

from tests.fakes.llm import CHECK, CHECKLIST, OUTPUT, FakeLLM, prompt_of
from tests.fakes.server import FakeHTTPServer

ANTHROPIC_BATCH = re.compile(r"^/v1/messages/batches/([^/?]+)(/results)?$")
OPENAI_BATCH = re.compile(r"^/v1/batches/([^/?]+)$")
OPENAI_FILE = re.compile(r"^/v1/files/([^/?]+)/content$")


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat().replace("+00:00", "Z")


@dataclass
class _Batch:
    id: str
    provider: str
    requests: list[dict[str, Any]]
    created_at: float
    metadata: dict[str, str] | None = None
    input_file_id: str = ""
    polls: int = 0
    forced_status: str | None = None
    results: list[dict[str, Any]] | None = None  # computed when the batch ends
    output_file_id: str | None = None
    error_file_id: str | None = None


@dataclass
class FakeBatches:
    polls_to_end: int = 1
    hold: bool = False
    shuffle: bool = True
    seed: int = 7
    rules: dict[str, list[str]] = field(default_factory=dict)
    batch_status: list[str] = field(default_factory=list)
    reject_status: int | None = None  # answer every request with this HTTP error (e.g. 401)
    batches: dict[str, _Batch] = field(default_factory=dict)
    files: dict[str, bytes] = field(default_factory=dict)
    created: list[str] = field(default_factory=list)  # batch ids, in creation order
    requested: Counter[tuple[str, str]] = field(default_factory=Counter)  # (check, output) -> times asked
    hits: Counter[str] = field(default_factory=Counter)  # "GET /v1/batches/{id}" style route counts
    lock: threading.Lock = field(default_factory=threading.Lock)
    server: FakeHTTPServer | None = None
    _llm: FakeLLM = field(default_factory=FakeLLM)

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

    @property
    def total_requests(self) -> int:
        return sum(self.hits.values())

    def start(self, port: int = 0) -> FakeBatches:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # one reply in two writes: no delayed-ACK stalls

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                fake.route(self, "GET", b"")

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                fake.route(self, "POST", self.rfile.read(length))

        self.server = FakeHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()

    # -- routing --------------------------------------------------------------------------
    def route(self, handler: BaseHTTPRequestHandler, method: str, body: bytes) -> None:
        path, _, query = handler.path.partition("?")
        generic = re.sub(r"/(msgbatch|batch|file)_[0-9]+", r"/{id}", path)
        with self.lock:
            self.hits[f"{method} {generic}"] += 1
        try:
            if self.reject_status is not None:
                kind = "authentication_error" if self.reject_status == 401 else "invalid_request_error"
                payload = ({"type": "error", "error": {"type": kind, "message": "fake rejection"}}
                           if "/messages/" in path else {"error": {"type": kind, "message": "fake rejection"}})
                self._send(handler, payload, self.reject_status)
            elif method == "POST" and path == "/v1/messages/batches":
                self._send(handler, self.create_anthropic(json.loads(body)))
            elif method == "GET" and path == "/v1/messages/batches":
                self._send(handler, self.list_batches("anthropic", parse_qs(query)))
            elif method == "GET" and (m := ANTHROPIC_BATCH.match(path)):
                if m.group(2):
                    self._send_lines(handler, self.anthropic_results(m.group(1)))
                else:
                    self._send(handler, self.retrieve(m.group(1)))
            elif method == "POST" and path == "/v1/files":
                self._send(handler, self.upload(handler.headers.get("content-type", ""), body))
            elif method == "GET" and (m := OPENAI_FILE.match(path)):
                self._send_raw(handler, self.files[m.group(1)])
            elif method == "POST" and path == "/v1/batches":
                self._send(handler, self.create_openai(json.loads(body)))
            elif method == "GET" and path == "/v1/batches":
                self._send(handler, self.list_batches("openai", parse_qs(query)))
            elif method == "GET" and (m := OPENAI_BATCH.match(path)):
                self._send(handler, self.retrieve(m.group(1)))
            else:
                self._send(handler, {"error": {"type": "not_found_error", "message": path}}, 404)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _send(self, handler: BaseHTTPRequestHandler, payload: dict[str, Any], status: int = 200) -> None:
        self._send_raw(handler, json.dumps(payload).encode(), status, "application/json")

    def _send_lines(self, handler: BaseHTTPRequestHandler, lines: list[dict[str, Any]]) -> None:
        self._send_raw(handler, "".join(json.dumps(x) + "\n" for x in lines).encode())

    def _send_raw(self, handler: BaseHTTPRequestHandler, data: bytes, status: int = 200,
                  content_type: str = "application/binary") -> None:
        handler.send_response(status)
        handler.send_header("content-type", content_type)
        handler.send_header("content-length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    # -- batches --------------------------------------------------------------------------
    def _new_batch(self, provider: str, requests: list[dict[str, Any]], **extra: Any) -> _Batch:
        with self.lock:
            prefix = "msgbatch" if provider == "anthropic" else "batch"
            batch = _Batch(f"{prefix}_{len(self.batches) + 1}", provider, requests, time.time(), **extra)
            if self.batch_status:
                batch.forced_status = self.batch_status.pop(0)
            self.batches[batch.id] = batch
            self.created.append(batch.id)
        return batch

    def create_anthropic(self, body: dict[str, Any]) -> dict[str, Any]:
        ids = [r["custom_id"] for r in body["requests"]]
        assert len(ids) == len(set(ids)), "custom_id must be unique within a batch"
        assert all(re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", i) for i in ids), "custom_id format"
        return self._anthropic_view(self._new_batch("anthropic", body["requests"]))

    def upload(self, content_type: str, body: bytes) -> dict[str, Any]:
        message = email.parser.BytesParser().parsebytes(
            f"Content-Type: {content_type}\r\n\r\n".encode() + body
        )
        fields = {part.get_param("name", header="content-disposition"): part.get_payload(decode=True)
                  for part in message.get_payload()}
        assert fields["purpose"] == b"batch", fields.get("purpose")
        with self.lock:
            file_id = f"file_{len(self.files) + 1}"
            self.files[file_id] = fields["file"]
        return {"id": file_id, "object": "file", "bytes": len(fields["file"]), "created_at": int(time.time()),
                "filename": "input.jsonl", "purpose": "batch", "status": "processed"}

    def create_openai(self, body: dict[str, Any]) -> dict[str, Any]:
        assert body["endpoint"] == "/v1/chat/completions" and body["completion_window"] == "24h", body
        lines = [json.loads(x) for x in self.files[body["input_file_id"]].splitlines() if x.strip()]
        ids = [x["custom_id"] for x in lines]
        assert len(ids) == len(set(ids)), "custom_id must be unique within a batch"
        assert all(x["method"] == "POST" and x["url"] == body["endpoint"] for x in lines)
        batch = self._new_batch("openai", lines, metadata=body.get("metadata"), input_file_id=body["input_file_id"])
        return self._openai_view(batch)

    def retrieve(self, batch_id: str) -> dict[str, Any]:
        batch = self.batches[batch_id]
        with self.lock:
            if not self.hold:
                batch.polls += 1
                if batch.polls > self.polls_to_end and batch.results is None:
                    self._finish(batch)
        return self._anthropic_view(batch) if batch.provider == "anthropic" else self._openai_view(batch)

    def list_batches(self, provider: str, query: dict[str, list[str]] | None = None) -> dict[str, Any]:
        """A page of the provider's batches, newest first, as the list endpoints page them.

        OpenAI (`GET /v1/batches`): `limit` 1-100 (default 20) and `after`, the id of the item
        the page starts after. Anthropic (`GET /v1/messages/batches`): `limit` 1-1000 (default
        20), `after_id` or `before_id`. Both answer `data`, `has_more`, `first_id` and `last_id`;
        an SDK follows `after`/`after_id` = `last_id` while `has_more` (openai releases before
        1.66 follow the last item's id until a page comes back empty)."""
        query = query or {}
        mine = [b for b in reversed(list(self.batches.values())) if b.provider == provider]
        ceiling = 1000 if provider == "anthropic" else 100
        limit = max(1, min(int(query.get("limit", ["20"])[0]), ceiling))
        ids = [b.id for b in mine]
        after = query.get("after_id" if provider == "anthropic" else "after", [None])[0]
        before = query.get("before_id", [None])[0] if provider == "anthropic" else None
        if before is not None:
            end = ids.index(before) if before in ids else 0
            page, more = mine[max(0, end - limit):end], end - limit > 0
        else:
            start = ids.index(after) + 1 if after in ids else len(ids) if after is not None else 0
            page, more = mine[start:start + limit], start + limit < len(mine)
        view = self._anthropic_view if provider == "anthropic" else self._openai_view
        data = [view(b) for b in page]
        found = {"data": data, "has_more": more, "first_id": data[0]["id"] if data else None,
                 "last_id": data[-1]["id"] if data else None}
        return found if provider == "anthropic" else {"object": "list", **found}

    # -- processing -----------------------------------------------------------------------
    def _behaviour(self, prompt: str) -> str:
        for marker, behaviours in self.rules.items():
            if marker in prompt and behaviours:
                return behaviours.pop(0)
        return "ok"

    def _record_asked(self, prompt: str) -> None:
        output = OUTPUT.search(prompt).group(1)  # type: ignore[union-attr]
        listed = [c for _, c in CHECKLIST.findall(prompt)] or [CHECK.search(prompt).group(1)]  # type: ignore[union-attr]
        for check in listed:
            self.requested[(check, output)] += 1

    def _finish(self, batch: _Batch) -> None:
        results = []
        for request in batch.requests:
            params = request["params"] if batch.provider == "anthropic" else request["body"]
            prompt = prompt_of(params)
            self._record_asked(prompt)
            behaviour = self._behaviour(prompt)
            if batch.forced_status in ("expired", "cancelled"):
                behaviour = "expired" if batch.forced_status == "expired" else "canceled"
            text = None if behaviour in ("errored", "expired", "canceled") else self._llm._answer_text(prompt, behaviour)
            results.append({"custom_id": request["custom_id"], "behaviour": behaviour, "text": text,
                            "model": params["model"]})
        if self.shuffle:
            random.Random(self.seed + len(self.created)).shuffle(results)
        batch.results = results
        if batch.provider == "openai":
            out = [self._openai_line(r) for r in results if r["text"] is not None]
            err = [self._openai_line(r) for r in results if r["text"] is None]
            for name, lines in (("output_file_id", out), ("error_file_id", err)):
                if lines:
                    file_id = f"file_{len(self.files) + 1}"
                    self.files[file_id] = "".join(json.dumps(x) + "\n" for x in lines).encode()
                    setattr(batch, name, file_id)

    def _openai_line(self, r: dict[str, Any]) -> dict[str, Any]:
        line_id = f"batch_req_{r['custom_id']}"
        if r["text"] is not None:
            body = {"id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": r["model"],
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": r["text"]},
                                 "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}}
            return {"id": line_id, "custom_id": r["custom_id"],
                    "response": {"status_code": 200, "request_id": "req_fake", "body": body}, "error": None}
        code = {"errored": "server_error", "expired": "batch_expired", "canceled": "batch_cancelled"}[r["behaviour"]]
        return {"id": line_id, "custom_id": r["custom_id"], "response": None,
                "error": {"code": code, "message": f"fake {r['behaviour']}"}}

    def anthropic_results(self, batch_id: str) -> list[dict[str, Any]]:
        batch = self.batches[batch_id]
        assert batch.results is not None, "results asked before the batch ended"
        lines = []
        for r in batch.results:
            if r["text"] is not None:
                result: dict[str, Any] = {"type": "succeeded", "message": {
                    "id": "msg_fake", "type": "message", "role": "assistant", "model": r["model"],
                    "content": [{"type": "text", "text": r["text"]}], "stop_reason": "end_turn",
                    "stop_sequence": None, "usage": {"input_tokens": 100, "output_tokens": 10}}}
            elif r["behaviour"] == "errored":
                result = {"type": "errored", "error": {"type": "error", "error": {
                    "type": "overloaded_error", "message": "fake overloaded"}}}
            else:
                result = {"type": r["behaviour"]}
            lines.append({"custom_id": r["custom_id"], "result": result})
        return lines

    # -- views ----------------------------------------------------------------------------
    def _counts(self, batch: _Batch) -> Counter[str]:
        return Counter(r["behaviour"] if r["text"] is None else "succeeded" for r in batch.results or [])

    def _anthropic_view(self, batch: _Batch) -> dict[str, Any]:
        ended = batch.results is not None
        counts = self._counts(batch)
        return {
            "id": batch.id, "type": "message_batch",
            "processing_status": "ended" if ended else "in_progress",
            "request_counts": {"processing": 0 if ended else len(batch.requests),
                               "succeeded": counts["succeeded"], "errored": counts["errored"],
                               "canceled": counts["canceled"], "expired": counts["expired"]},
            "created_at": _iso(batch.created_at), "expires_at": _iso(batch.created_at + 86400),
            "ended_at": _iso(time.time()) if ended else None, "cancel_initiated_at": None,
            "archived_at": None,
            "results_url": f"{self.anthropic_url}/v1/messages/batches/{batch.id}/results" if ended else None,
        }

    def _openai_view(self, batch: _Batch) -> dict[str, Any]:
        ended = batch.results is not None
        counts = self._counts(batch)
        status = (batch.forced_status or "completed") if ended else "in_progress"
        return {
            "id": batch.id, "object": "batch", "endpoint": "/v1/chat/completions",
            "input_file_id": batch.input_file_id, "completion_window": "24h", "status": status,
            "created_at": int(batch.created_at), "metadata": batch.metadata,
            "output_file_id": batch.output_file_id, "error_file_id": batch.error_file_id,
            "request_counts": {"total": len(batch.requests), "completed": counts["succeeded"],
                               "failed": counts["errored"]},
        }


if __name__ == "__main__":
    server = FakeBatches(polls_to_end=int(sys.argv[1]) if len(sys.argv) > 1 else 0, shuffle=True).start()
    print(server.port, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()
