"""A minimal stand-in for GitHub's pull-request review-comment API (list, create, edit, delete),
enough for PyGithub; a comment on a line outside the PR's diff is refused with 422, as GitHub does."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlparse

REPO = "octo/rubrics"


@dataclass
class FakeReviewGitHub:
    diff_lines: dict[str, set[int]] = field(default_factory=dict)  # path -> lines in the diff
    comments: list[dict[str, Any]] = field(default_factory=list)
    writes: list[tuple[str, int | None]] = field(default_factory=list)
    url: str = ""
    next_id: int = 100

    def _comment_json(self, comment: dict[str, Any]) -> dict[str, Any]:
        return {**comment, "url": f"{self.url}/repos/{REPO}/pulls/comments/{comment['id']}",
                "pull_request_url": f"{self.url}/repos/{REPO}/pulls/1"}

    def handle(self, method: str, path: str, body: dict[str, Any]) -> tuple[int, Any]:
        prefix = f"/repos/{REPO}"
        if method == "GET" and path == prefix:
            return 200, {"full_name": REPO, "name": "rubrics", "url": f"{self.url}{prefix}",
                         "owner": {"login": "octo"}}
        if method == "GET" and path == f"{prefix}/pulls/1":
            return 200, {"number": 1, "url": f"{self.url}{prefix}/pulls/1", "head": {"sha": "h" * 40}}
        if method == "GET" and path == f"{prefix}/pulls/1/comments":
            return 200, [self._comment_json(c) for c in self.comments]
        if method == "POST" and path == f"{prefix}/pulls/1/comments":
            lines = self.diff_lines.get(body.get("path", ""), set())
            wanted = {body["line"], body.get("start_line", body["line"])}
            if not body.get("commit_id") or body.get("side") != "RIGHT" or not wanted <= lines:
                return 422, {"message": "Validation Failed", "errors": [{"field": "line", "code": "invalid"}]}
            self.next_id += 1
            comment = {"id": self.next_id, "body": body["body"], "path": body["path"], "line": body["line"],
                       "start_line": body.get("start_line"), "user": {"login": "github-actions[bot]"}}
            self.comments.append(comment)
            self.writes.append(("create", self.next_id))
            return 201, self._comment_json(comment)
        if path.startswith(f"{prefix}/pulls/comments/"):
            comment_id = int(path.rsplit("/", 1)[1])
            comment = next((c for c in self.comments if c["id"] == comment_id), None)
            if comment is None:
                return 404, {"message": "Not Found"}
            if method == "PATCH":
                comment["body"] = body["body"]
                self.writes.append(("edit", comment_id))
                return 200, self._comment_json(comment)
            if method == "DELETE":
                self.comments.remove(comment)
                self.writes.append(("delete", comment_id))
                return 204, None
        return 404, {"message": f"no route {method} {path}"}

    def start(self) -> ThreadingHTTPServer:
        fake = self
        lock = threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            def _do(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}") if length else {}
                with lock:
                    status, data = fake.handle(self.command, urlparse(self.path).path, body)
                payload = b"" if data is None else json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_PATCH = do_DELETE = _do

            def log_message(self, format: str, *args: Any) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{server.server_address[1]}"
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return server
