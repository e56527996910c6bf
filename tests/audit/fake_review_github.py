"""A minimal stand-in for GitHub's pull-request review-comment API (list, create, edit, delete),
enough for PyGithub. As GitHub does, it refuses (422) a comment whose line is outside the PR's
diff, and a multi-line one whose start_line is not before its line in the same hunk."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlparse

REPO = "octo/rubrics"


def _patch(hunks: list[tuple[int, int]]) -> str:
    """A unified diff whose hunks cover exactly these head-side lines (context lines only)."""
    return "".join(f"@@ -{a},{b - a + 1} +{a},{b - a + 1} @@\n" + "".join(f" line {n}\n" for n in range(a, b + 1))
                   for a, b in hunks)


@dataclass
class FakeReviewGitHub:
    hunks: dict[str, list[tuple[int, int]]] = field(default_factory=dict)  # path -> head-side hunks
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
        if method == "GET" and path == f"{prefix}/pulls/1/files":
            return 200, [{"filename": name, "status": "modified", "sha": "0" * 40, "additions": 1, "deletions": 0,
                          "changes": 1, "patch": _patch(hunks)} for name, hunks in self.hunks.items()]
        if method == "POST" and path == f"{prefix}/pulls/1/comments":
            refused = self._refusal(body)
            if refused:
                return 422, {"message": "Validation Failed", "errors": [
                    {"resource": "PullRequestReviewComment", "code": "custom", "field": refused[0], "message": refused[1]}]}
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

    def _refusal(self, body: dict[str, Any]) -> tuple[str, str] | None:
        line, start = body.get("line"), body.get("start_line")
        if not body.get("commit_id") or body.get("side") != "RIGHT" or not isinstance(line, int):
            return "line", "line is invalid"
        hunk = next((h for h in self.hunks.get(body.get("path", ""), []) if h[0] <= line <= h[1]), None)
        if hunk is None:
            return "pull_request_review_thread.line", "pull_request_review_thread.line must be part of the diff"
        if start is not None and start >= line:
            return "pull_request_review_thread.start_line", "pull_request_review_thread.start_line must precede the end line."
        if start is not None and start < hunk[0]:
            return ("pull_request_review_thread.start_line",
                    "pull_request_review_thread.start_line must be part of the same hunk as the line.")
        return None

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
