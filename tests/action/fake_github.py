"""A stateful stand-in for the GitHub REST endpoints the action uses, served on 127.0.0.1.

Repository content (PR files, contents at a ref) is read with git from a real repository,
so the REST fallback sees exactly what a full checkout would.
"""

from __future__ import annotations

import base64
import json
import re
import subprocess
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

COMMENT_LIMIT = 65536


@dataclass
class FakeGitHub:
    repo: str
    origin: Path  # git repository holding every commit
    pr_number: int = 7
    base_sha: str = ""
    head_sha: str = ""
    read_only_tokens: set[str] = field(default_factory=lambda: {"read-only-token"})
    checks_forbidden: bool = False
    label_events: list[dict[str, Any]] = field(default_factory=list)
    permissions: dict[str, str] = field(default_factory=dict)
    comments: dict[int, dict[str, Any]] = field(default_factory=dict)
    check_runs: dict[int, dict[str, Any]] = field(default_factory=dict)
    statuses: list[dict[str, Any]] = field(default_factory=list)
    requests: list[tuple[str, str]] = field(default_factory=list)
    judge: Any = None  # (prompt) -> "yes" | "no": answers an OpenAI-compatible chat request
    judge_calls: int = 0
    _next_id: int = 100
    url: str = ""

    # -- state helpers -------------------------------------------------------------------------
    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def marked_comments(self) -> list[dict[str, Any]]:
        return [c for c in self.comments.values() if c["body"].startswith("<!-- rubric-gate -->")]

    def writes(self) -> list[tuple[str, str]]:
        return [r for r in self.requests if r[0] != "GET"]

    # -- request handling ----------------------------------------------------------------------
    def handle(self, method: str, path: str, token: str | None, body: Any) -> tuple[int, Any]:
        self.requests.append((method, path))
        if method == "POST" and path == "/v1/chat/completions" and self.judge is not None:
            return 200, self._chat(body)
        prefix = f"/repos/{self.repo}"
        if not path.startswith(prefix):
            return 404, {"message": "Not Found"}
        rest = path[len(prefix):]
        if method != "GET" and token in self.read_only_tokens:
            return 403, {"message": "Resource not accessible by integration"}
        api = f"{self.url}{prefix}"
        n = self.pr_number
        if method == "GET" and rest == "":
            return 200, {"full_name": self.repo, "url": api, "name": self.repo.split("/")[1]}
        if method == "GET" and rest == f"/issues/{n}":
            return 200, {"number": n, "url": f"{api}/issues/{n}", "title": "PR"}
        if method == "GET" and rest == f"/pulls/{n}":
            return 200, {"number": n, "url": f"{api}/pulls/{n}",
                         "base": {"sha": self.base_sha}, "head": {"sha": self.head_sha}}
        if method == "GET" and rest == f"/issues/{n}/comments":
            return 200, sorted(self.comments.values(), key=lambda c: c["id"])
        if method == "POST" and rest == f"/issues/{n}/comments":
            if len(body["body"]) > COMMENT_LIMIT:
                return 422, {"message": "Validation Failed", "errors": [{"message": "body is too long"}]}
            cid = self.new_id()
            self.comments[cid] = {"id": cid, "body": body["body"], "url": f"{api}/issues/comments/{cid}",
                                  "html_url": f"https://github.test/{self.repo}/pull/{n}#issuecomment-{cid}",
                                  "user": {"login": "github-actions[bot]", "type": "Bot"}}
            return 201, self.comments[cid]
        match = re.fullmatch(r"/issues/comments/(\d+)", rest)
        if match and method == "PATCH":
            comment = self.comments.get(int(match.group(1)))
            if comment is None:
                return 404, {"message": "Not Found"}
            if len(body["body"]) > COMMENT_LIMIT:
                return 422, {"message": "Validation Failed"}
            comment["body"] = body["body"]
            return 200, comment
        if method == "POST" and rest == "/check-runs":
            if self.checks_forbidden:
                return 403, {"message": "Resource not accessible by integration"}
            if len(body.get("output", {}).get("annotations", [])) > 50:
                return 422, {"message": "Only 50 annotations are allowed per request"}
            rid = self.new_id()
            output = dict(body.get("output", {}))
            run = {**body, "id": rid, "url": f"{api}/check-runs/{rid}",
                   "html_url": f"https://github.test/{self.repo}/runs/{rid}",
                   "output": {**output, "annotations": list(output.get("annotations", []))}}
            self.check_runs[rid] = run
            return 201, run
        match = re.fullmatch(r"/check-runs/(\d+)", rest)
        if match and method == "PATCH":
            run = self.check_runs[int(match.group(1))]
            output = body.get("output", {})
            if len(output.get("annotations", [])) > 50:
                return 422, {"message": "Only 50 annotations are allowed per request"}
            run["output"]["annotations"] += output.get("annotations", [])
            run["output"].update({k: v for k, v in output.items() if k != "annotations"})
            run.update({k: v for k, v in body.items() if k != "output"})
            return 200, run
        match = re.fullmatch(r"/commits/([0-9a-f]{40})", rest)
        if match and method == "GET":
            return 200, {"sha": match.group(1), "url": f"{api}/commits/{match.group(1)}"}
        match = re.fullmatch(r"/statuses/([0-9a-f]{40})", rest)
        if match and method == "POST":
            status = {**body, "sha": match.group(1), "id": self.new_id()}
            self.statuses.append(status)
            return 201, status
        if method == "GET" and rest == f"/pulls/{n}/files":
            return 200, self._pr_files()
        match = re.fullmatch(r"/contents/(.+)", rest)
        if match and method == "GET":
            return self._contents(unquote(match.group(1)))
        if method == "GET" and rest == f"/issues/{n}/events":
            return 200, self.label_events
        match = re.fullmatch(r"/collaborators/([^/]+)/permission", rest)
        if match and method == "GET":
            return 200, {"permission": self.permissions.get(match.group(1), "read"), "user": {"login": match.group(1)}}
        return 404, {"message": f"Not Found: {method} {rest}"}

    def _chat(self, body: dict[str, Any]) -> dict[str, Any]:
        self.judge_calls += 1
        answer = self.judge(body["messages"][-1]["content"])
        return {"id": f"c{self.judge_calls}", "object": "chat.completion", "created": 0, "model": body["model"],
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": json.dumps({"answer": answer, "quote": ""})}}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}

    def _git(self, *args: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(["git", *args], cwd=self.origin, capture_output=True, check=False)

    def _pr_files(self) -> list[dict[str, Any]]:
        merge_base = self._git("merge-base", self.base_sha, self.head_sha).stdout.decode().strip()
        raw = self._git("diff", "--name-status", "--find-renames", merge_base, self.head_sha).stdout.decode()
        files = []
        for line in raw.splitlines():
            parts = line.split("\t")
            code = parts[0][0]
            if code == "R":
                files.append({"filename": parts[2], "previous_filename": parts[1], "status": "renamed"})
            else:
                status = {"A": "added", "D": "removed"}.get(code, "modified")
                files.append({"filename": parts[1], "status": status})
        for f in files:
            f.update({"sha": "0" * 40, "additions": 1, "deletions": 1, "changes": 2})
        return files

    def _contents(self, path: str) -> tuple[int, Any]:
        ref = self._query.get("ref", "HEAD")
        proc = self._git("show", f"{ref}:{path}")
        if proc.returncode != 0:
            return 404, {"message": "Not Found"}
        return 200, {"type": "file", "encoding": "base64", "path": path, "name": path.rsplit("/", 1)[-1],
                     "content": base64.b64encode(proc.stdout).decode(), "size": len(proc.stdout),
                     "sha": "0" * 40, "url": f"{self.url}/repos/{self.repo}/contents/{path}"}

    _query: dict[str, str] = field(default_factory=dict)


def serve(fake: FakeGitHub) -> ThreadingHTTPServer:
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def _do(self) -> None:
            parsed = urlparse(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            body = json.loads(raw) if raw else {}
            auth = self.headers.get("Authorization", "")
            token = auth.split(" ", 1)[1] if " " in auth else None
            with lock:
                fake._query = dict(p.split("=", 1) for p in parsed.query.split("&") if "=" in p)
                status, data = fake.handle(self.command, parsed.path, token, body)
            payload = json.dumps(data).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _do

        def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server
