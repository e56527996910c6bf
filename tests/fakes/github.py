"""A stateful stand-in for the GitHub REST endpoints the action uses, served on 127.0.0.1.

Repository content (PR files, contents at a ref) is read with git from a real repository,
so the REST fallback sees exactly what a full checkout would. Without one, `diff_hunks`
declares the PR's diff (path -> head-side line ranges), enough for the review-comment API.

Where GitHub validates or limits, the fake does too, with GitHub's status codes and error
shapes (each cited next to the check): list endpoints paginate with a `Link` header, contents
over 1 MB come back without content, check-run output and annotations and status
descriptions have size limits, and the collaborator permission maps roles as GitHub does.
"""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from tests.fakes import github_openapi
from tests.fakes.server import FakeHTTPServer

COMMENT_LIMIT = 65536  # characters: "body is too long (maximum is 65536 characters)"
CHECK_OUTPUT_BYTES = 65535  # "summary exceeds a maximum bytesize of 65535" (github/docs#35252)
ANNOTATION_MESSAGE_BYTES = 64 * 1024  # annotations[].message: "The maximum size is 64 KB"
ANNOTATION_TITLE_CHARS = 255
STATUS_DESCRIPTION_CHARS = 140  # "description is too long (maximum is 140 characters)"
CONTENTS_INLINE_BYTES = 1024 * 1024  # contents API: over 1 MB, JSON has encoding "none" and no content
# Get a blob: the raw bytes with these media types, else JSON with base64 content (the default).
RAW_MEDIA_TYPES = {"application/vnd.github.raw+json", "application/vnd.github.raw", "application/vnd.github.v3.raw"}
CONCLUSIONS = {"action_required", "cancelled", "failure", "neutral", "success", "skipped", "timed_out"}
ANNOTATION_LEVELS = {"notice", "warning", "failure"}
STATUS_STATES = {"error", "failure", "pending", "success"}
# GET .../collaborators/{user}/permission: `permission` is the legacy base role (maintain ->
# write, triage -> read); `role_name` is the role itself.
LEGACY_PERMISSION = {"admin": "admin", "maintain": "write", "write": "write", "triage": "read", "read": "read"}


# The app behind the workflow's GITHUB_TOKEN, as check runs report it.
GITHUB_ACTIONS_APP = {"id": 15368, "slug": "github-actions", "node_id": "A", "name": "GitHub Actions",
                      "owner": {"login": "github", "type": "Organization"}}


def _invalid(resource: str, field: str, message: str) -> tuple[int, dict[str, Any]]:
    return 422, {"message": "Validation Failed",
                 "errors": [{"resource": resource, "code": "custom", "field": field, "message": message}]}


@dataclass
class FakeGitHub:
    repo: str
    origin: Path | None = None  # git repository holding every commit
    pr_number: int = 7
    base_sha: str = ""
    head_sha: str = ""
    read_only_tokens: set[str] = field(default_factory=lambda: {"read-only-token"})
    checks_forbidden: bool = False
    label_events: list[dict[str, Any]] = field(default_factory=list)
    permissions: dict[str, str] = field(default_factory=dict)  # login -> role (admin, maintain, write, triage, read)
    # Personal tokens -> their user's login. Any other token acts as the workflow's GITHUB_TOKEN:
    # it writes as `github-actions[bot]`, and GET /user refuses it (an installation token has no user).
    token_users: dict[str, str] = field(default_factory=dict)
    comments: dict[int, dict[str, Any]] = field(default_factory=dict)
    check_runs: dict[int, dict[str, Any]] = field(default_factory=dict)
    statuses: list[dict[str, Any]] = field(default_factory=list)
    requests: list[tuple[str, str]] = field(default_factory=list)
    judge: Any = None  # (prompt) -> "yes" | "no": answers an OpenAI-compatible chat request
    judge_by_model: dict[str, Any] = field(default_factory=dict)  # model -> (prompt) -> answer, over `judge`
    judge_calls: int = 0
    copies: dict[str, str] = field(default_factory=dict)  # new path -> source: listed as "copied"
    review_comments: dict[int, dict[str, Any]] = field(default_factory=dict)
    # Other open pull requests, number -> {"base": sha, "head": sha}: listed by GET /pulls beside
    # this one (`pr_number`) and read by number, as a branch proposed into two bases is.
    other_pulls: dict[int, dict[str, str]] = field(default_factory=dict)
    other_label_events: dict[int, list[dict[str, Any]]] = field(default_factory=dict)  # as label_events, per PR
    # Called with (method, path) before and after each request is answered: a test changes the
    # state between two calls there (a PR opened between two listings of the open PRs, another
    # run's check run posted just before this one's).
    before_request: Any = None
    after_request: Any = None
    # Without `origin`: the PR's files and their diff hunks (head-side first and last line).
    diff_hunks: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    # The Actions workflow runs GitHub created (GET .../actions/runs), oldest first; the harness
    # records one for every event it runs the action for (`record_workflow_run`).
    workflow_runs: list[dict[str, Any]] = field(default_factory=list)
    actions_forbidden: bool = False  # the token lacks `actions: read`: the runs API answers 403
    # Pull-request reviews, number -> reviews oldest first (GET .../pulls/{n}/reviews), as
    # `review` submits them; `reviews_forbidden` makes that endpoint answer 403.
    reviews: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    reviews_forbidden: bool = False
    # A read-only token (a fork's run) asking GET .../collaborators/{user}/permission: GitHub answers
    # a token without push access "403 Must have push access to view collaborator permission."
    permission_forbidden_for_read_only: bool = False
    author: str = "author"  # who opened the pull requests (`user` of each)
    # GitHub's clock: label events are stamped with it when first seen (unless they carry a
    # `created_at`), and so are workflow runs; `tick` moves it on a second (never behind the
    # wall clock, which stamps git commits). A test moves it on to let time pass.
    clock: datetime = field(default_factory=lambda: datetime.now(UTC).replace(microsecond=0))
    _next_id: int = 100
    url: str = ""
    _headers: dict[str, str] = field(default_factory=dict)  # extra response headers (Link)

    # -- state helpers -------------------------------------------------------------------------
    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def tick(self) -> str:
        """GitHub's time now, as the API writes it; the clock moves on a second."""
        self.clock = max(self.clock + timedelta(seconds=1), datetime.now(UTC).replace(microsecond=0))
        return self.clock.strftime("%Y-%m-%dT%H:%M:%SZ")

    def stamp_events(self) -> None:
        """Stamp every label event not stamped yet with the time now (they happened before what comes next)."""
        for events in (self.label_events, *self.other_label_events.values()):
            for event in events:
                if "created_at" not in event:
                    event["created_at"] = self.tick()

    def record_workflow_run(self, *, head_sha: str, actor: str, event: str = "pull_request",
                            path: str = ".github/workflows/rubric-gate.yml", number: int | None = None,
                            head_repo: str | None = None, head_branch: str = "pr", fork: bool = False) -> dict[str, Any]:
        """The workflow run GitHub creates for an event (after the events before it are stamped).
        A fork's PR has an empty `pull_requests` (github/docs#22501)."""
        self.stamp_events()
        number = self.pr_number if number is None else number
        rid = self.new_id()
        api = f"{self.url}/repos/{self.repo}"
        head = {"full_name": head_repo or self.repo, "url": f"{self.url}/repos/{head_repo or self.repo}"}
        user = {"login": actor, "type": "User", "url": f"{self.url}/users/{actor}"}
        created = self.tick()
        run = {"id": rid, "node_id": "WR", "name": "rubric-gate", "path": path, "event": event,
               "head_sha": head_sha, "head_branch": head_branch, "head_repository": head,
               "status": "in_progress", "conclusion": None, "run_number": len(self.workflow_runs) + 1,
               "run_attempt": 1, "actor": user, "triggering_actor": user, "created_at": created,
               "updated_at": created, "run_started_at": created, "url": f"{api}/actions/runs/{rid}",
               "html_url": f"https://github.test/{self.repo}/actions/runs/{rid}",
               "pull_requests": [] if fork or event not in ("pull_request", "pull_request_target") else [
                   {"number": number, "url": f"{api}/pulls/{number}",
                    "head": {"ref": head_branch, "sha": head_sha, "repo": {"name": self.repo.split("/")[1]}},
                    "base": {"ref": "main", "sha": self.base_sha, "repo": {"name": self.repo.split("/")[1]}}}]}
        self.workflow_runs.append(run)
        return run

    def user(self, login: str, bot: bool = False) -> dict[str, Any]:
        """A `simple-user` object as the REST API returns one (the fields its schema requires)."""
        uid = abs(hash(login)) % 10**8
        base = f"{self.url}/users/{login}"
        return {"login": login, "id": uid, "node_id": "U", "avatar_url": f"https://avatars.test/u/{uid}",
                "gravatar_id": "", "url": base, "html_url": f"https://github.test/{login}",
                "followers_url": f"{base}/followers", "following_url": f"{base}/following{{/other_user}}",
                "gists_url": f"{base}/gists{{/gist_id}}", "starred_url": f"{base}/starred{{/owner}}{{/repo}}",
                "subscriptions_url": f"{base}/subscriptions", "organizations_url": f"{base}/orgs",
                "repos_url": f"{base}/repos", "events_url": f"{base}/events{{/privacy}}",
                "received_events_url": f"{base}/received_events", "type": "Bot" if bot else "User",
                "site_admin": False}

    def review(self, login: str, state: str = "APPROVED", commit_id: str | None = None, *,
               number: int | None = None, bot: bool = False) -> dict[str, Any]:
        """Submit a review (POST .../pulls/{n}/reviews with an event, as a person does in the UI):
        on `commit_id`, by default the PR's head now. Stored as the list endpoint answers it."""
        number = self.pr_number if number is None else number
        rid = self.new_id()
        api = f"{self.url}/repos/{self.repo}/pulls/{number}"
        html = f"https://github.test/{self.repo}/pull/{number}"
        role = self.permissions.get(login)
        review = {"id": rid, "node_id": "PRR", "user": self.user(login, bot), "body": "", "state": state,
                  "html_url": f"{html}#pullrequestreview-{rid}", "pull_request_url": api,
                  "_links": {"html": {"href": f"{html}#pullrequestreview-{rid}"}, "pull_request": {"href": api}},
                  "submitted_at": self.tick(), "commit_id": commit_id or self.head_sha,
                  "author_association": "COLLABORATOR" if role in LEGACY_PERMISSION else "CONTRIBUTOR"}
        self.reviews.setdefault(number, []).append(review)
        return review

    def dismiss(self, review: dict[str, Any]) -> None:
        """Dismiss a review (PUT .../reviews/{id}/dismissals): its state becomes DISMISSED where it stands."""
        review["state"] = "DISMISSED"

    def marked_comments(self) -> list[dict[str, Any]]:
        return [c for c in self.comments.values() if c["body"].startswith("<!-- rubric-gate -->")]

    def writes(self) -> list[tuple[str, str]]:
        return [r for r in self.requests if r[0] != "GET"]

    def add_review_comment(self, body: str, path: str, line: int, start_line: int | None = None,
                           login: str = "github-actions[bot]") -> dict[str, Any]:
        """A review comment already on the PR (someone else's, or ours from an earlier run)."""
        cid = self.new_id()
        api = f"{self.url}/repos/{self.repo}"
        self.review_comments[cid] = {
            "id": cid, "body": body, "path": path, "line": line, "start_line": start_line,
            "commit_id": self.head_sha, "url": f"{api}/pulls/comments/{cid}",
            "pull_request_url": f"{api}/pulls/{self.pr_number}",
            "user": {"login": login, "type": "Bot" if login.endswith("[bot]") else "User"}}
        return self.review_comments[cid]

    # -- request handling ----------------------------------------------------------------------
    def handle(self, method: str, path: str, token: str | None, body: Any) -> tuple[int, Any]:
        if self.before_request is not None:
            self.before_request(method, path)
        answer = self._answer(method, path, token, body)
        if self.after_request is not None:
            self.after_request(method, path)
        return answer

    def _answer(self, method: str, path: str, token: str | None, body: Any) -> tuple[int, Any]:
        self.requests.append((method, path))
        if method == "POST" and path == "/v1/chat/completions" and (self.judge or self.judge_by_model):
            return 200, self._chat(body)
        if method == "GET" and path == "/user":
            if token in self.token_users:
                return 200, {"login": self.token_users[token], "type": "User"}
            return 403, {"message": "Resource not accessible by integration"}
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
        match = re.fullmatch(r"/issues/(\d+)(/labels|/events)?", rest)
        if method == "GET" and match and (int(match.group(1)) == n or int(match.group(1)) in self.other_pulls):
            number, what = int(match.group(1)), match.group(2)
            events = self.label_events if number == n else self.other_label_events.get(number, [])
            if what == "/events":
                return self._page(path, [self._issue_event(i, e) for i, e in enumerate(events)])
            if what == "/labels":
                return self._page(path, [self._label(name) for name in self.current_labels(events)])
            return 200, {"number": number, "url": f"{api}/issues/{number}", "title": "PR"}
        match = re.fullmatch(r"/pulls/(\d+)/reviews", rest)
        if method == "GET" and match and (int(match.group(1)) == n or int(match.group(1)) in self.other_pulls):
            if self.reviews_forbidden:
                return 403, {"message": "Resource not accessible by integration"}
            return self._page(path, self.reviews.get(int(match.group(1)), []))  # oldest first
        if method == "GET" and rest == f"/pulls/{n}":
            return 200, {"number": n, "url": f"{api}/pulls/{n}", "changed_files": len(self._pr_files()),
                         "user": self.user(self.author),
                         "base": {"sha": self.base_sha}, "head": {"sha": self.head_sha}, **self._mergeability()}
        if method == "GET" and rest == "/pulls":  # open by default; `state=all|closed` lists no closed ones here
            pulls = {n: {"base": self.base_sha, "head": self.head_sha}, **self.other_pulls}
            return self._page(path, [self._pull(api, number, pulls[number]) for number in sorted(pulls)])
        match = re.fullmatch(r"/pulls/(\d+)", rest)
        if method == "GET" and match and int(match.group(1)) in self.other_pulls:
            pull = self.other_pulls[int(match.group(1))]
            return 200, {**self._pull(api, int(match.group(1)), pull), **self._test_merge(pull["base"], pull["head"])}
        if method == "GET" and rest == f"/issues/{n}/comments":
            return self._page(path, sorted(self.comments.values(), key=lambda c: c["id"]))
        if method == "POST" and rest == f"/issues/{n}/comments":
            if len(body["body"]) > COMMENT_LIMIT:
                return _invalid("IssueComment", "body", "body is too long (maximum is 65536 characters)")
            cid = self.new_id()
            self.comments[cid] = {"id": cid, "body": body["body"], "url": f"{api}/issues/comments/{cid}",
                                  "html_url": f"https://github.test/{self.repo}/pull/{n}#issuecomment-{cid}",
                                  "user": self._author(token)}
            return 201, self.comments[cid]
        match = re.fullmatch(r"/issues/comments/(\d+)", rest)
        if match and method == "PATCH":
            comment = self.comments.get(int(match.group(1)))
            if comment is None:
                return 404, {"message": "Not Found"}
            if len(body["body"]) > COMMENT_LIMIT:
                return _invalid("IssueComment", "body", "body is too long (maximum is 65536 characters)")
            comment["body"] = body["body"]
            return 200, comment
        if method == "POST" and rest == "/check-runs":
            if self.checks_forbidden:
                return 403, {"message": "Resource not accessible by integration"}
            if not body.get("name") or not body.get("head_sha"):
                return _invalid("CheckRun", "head_sha" if body.get("name") else "name", "is missing")
            problem = self._check_run_problem(body)
            if problem:
                return problem
            rid = self.new_id()
            output = dict(body.get("output", {}))
            run = {**body, "id": rid, "url": f"{api}/check-runs/{rid}", "app": GITHUB_ACTIONS_APP,
                   "html_url": f"https://github.test/{self.repo}/runs/{rid}",
                   "output": {**output, "annotations": list(output.get("annotations", []))}}
            self.check_runs[rid] = run
            return 201, run
        match = re.fullmatch(r"/check-runs/(\d+)", rest)
        if match and method == "PATCH":
            run = self.check_runs.get(int(match.group(1)))
            if run is None:
                return 404, {"message": "Not Found"}
            problem = self._check_run_problem(body)
            if problem:
                return problem
            output = body.get("output", {})
            run["output"]["annotations"] += output.get("annotations", [])
            run["output"].update({k: v for k, v in output.items() if k != "annotations"})
            run.update({k: v for k, v in body.items() if k != "output"})
            return 200, run
        match = re.fullmatch(r"/commits/([0-9a-f]{40})/check-runs", rest)
        if match and method == "GET":
            return self._check_runs_for(match.group(1))
        # List commit statuses for a reference (`/statuses/{sha}` is POST only in the REST description).
        match = re.fullmatch(r"/commits/([0-9a-f]{40})/statuses", rest)
        if match and method == "GET":  # "returned in reverse chronological order"
            return self._page(path, [st for st in reversed(self.statuses) if st["sha"] == match.group(1)])
        match = re.fullmatch(r"/commits/([0-9a-f]{40})", rest)
        if match and method == "GET":
            return 200, self._commit(match.group(1), api)
        match = re.fullmatch(r"/statuses/([0-9a-f]{40})", rest)
        if match and method == "POST":
            if body.get("state") not in STATUS_STATES:
                return _invalid("Status", "state", f"state is not included in the list: {body.get('state')!r}")
            if len(body.get("description") or "") > STATUS_DESCRIPTION_CHARS:
                return _invalid("Status", "description", "description is too long (maximum is 140 characters)")
            status = {**body, "sha": match.group(1), "id": self.new_id(), "creator": self._author(token)}
            self.statuses.append(status)
            return 201, status
        if method == "GET" and rest == f"/pulls/{n}/files":
            return self._page(path, self._pr_files()[:3000])  # "Responses include a maximum of 3000 files"
        if method == "GET" and rest == f"/pulls/{n}/comments":
            return self._page(path, sorted(self.review_comments.values(), key=lambda c: c["id"]))
        if method == "POST" and rest == f"/pulls/{n}/comments":
            return self._create_review_comment(body, token, api)
        match = re.fullmatch(r"/pulls/comments/(\d+)", rest)
        if match and method in ("PATCH", "DELETE"):
            comment = self.review_comments.get(int(match.group(1)))
            if comment is None:
                return 404, {"message": "Not Found"}
            if method == "DELETE":
                del self.review_comments[comment["id"]]
                return 204, None
            comment["body"] = body["body"]
            return 200, comment
        match = re.fullmatch(r"/compare/([0-9a-f]{40})\.\.\.([0-9a-f]{40})", rest)
        if method == "GET" and match:
            return self._compare(match.group(1), match.group(2))
        match = re.fullmatch(r"/git/trees/([^/]+)", rest)
        if method == "GET" and match:
            return self._tree(match.group(1))
        match = re.fullmatch(r"/contents/(.+)", rest)
        if match and method == "GET":
            return self._contents(unquote(match.group(1)))
        match = re.fullmatch(r"/git/blobs/([0-9a-f]{40})", rest)
        if match and method == "GET":
            return self._blob(match.group(1))
        if method == "GET" and rest == "/actions/runs":
            return self._workflow_runs(path)
        match = re.fullmatch(r"/git/commits/([0-9a-f]{40})", rest)
        if match and method == "GET":
            return self._git_commit(match.group(1))
        match = re.fullmatch(r"/collaborators/([^/]+)/permission", rest)
        if match and method == "GET":
            if self.permission_forbidden_for_read_only and token in self.read_only_tokens:
                return 403, {"message": "Must have push access to view collaborator permission.",
                             "documentation_url": "https://docs.github.com/rest/collaborators/collaborators"
                                                  "#get-repository-permissions-for-a-user"}
            login = unquote(match.group(1))
            role = self.permissions.get(login, "read")
            return 200, {"permission": LEGACY_PERMISSION.get(role, role), "role_name": role,
                         "user": {"login": login, "type": "User"}}
        return 404, {"message": f"Not Found: {method} {rest}"}

    def _check_runs_for(self, sha: str) -> tuple[int, Any]:
        """List check runs for a Git reference: {total_count, check_runs}; `check_name` filters,
        and `filter=latest` (the default) keeps the most recent run of each name."""
        runs = [r for r in self.check_runs.values() if r["head_sha"] == sha
                and ("check_name" not in self._query or r["name"] == unquote(self._query["check_name"]))]
        if self._query.get("filter", "latest") == "latest":
            newest: dict[str, dict[str, Any]] = {}
            for run in runs:
                if run["name"] not in newest or run["id"] > newest[run["name"]]["id"]:
                    newest[run["name"]] = run
            runs = list(newest.values())
        runs.sort(key=lambda r: -r["id"])
        return 200, {"total_count": len(runs), "check_runs": runs}

    def _commit(self, sha: str, api: str) -> dict[str, Any]:
        """Get a commit: with `commit.committer.date` from git when the repository has it (the
        override reads the base tip's to tell a moved base in a shallow checkout)."""
        data: dict[str, Any] = {"sha": sha, "url": f"{api}/commits/{sha}"}
        dated = self._git("show", "-s", "--format=%cI", sha) if self.origin is not None else None
        if dated is not None and dated.returncode == 0:
            when = datetime.fromisoformat(dated.stdout.decode().strip()).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            data["commit"] = {"url": f"{api}/git/commits/{sha}", "message": "c",
                              "committer": {"name": "t", "email": "t@example.com", "date": when}}
        return data

    def _workflow_runs(self, path: str) -> tuple[int, Any]:
        """List workflow runs for a repository: {total_count, workflow_runs}, newest first, filtered
        by `actor` (the login), `branch` (head branch), `event`, `status`, `head_sha` and `created`
        (`a..b`, `>=a`, `<=b`: search-syntax dates); `per_page`/`page` with a Link header; at most
        1,000 results for a filtered query. 403 without `actions: read`."""
        if self.actions_forbidden:
            return 403, {"message": "Resource not accessible by integration"}
        q = {k: unquote(v) for k, v in self._query.items()}
        runs = [r for r in reversed(self.workflow_runs)
                if ("actor" not in q or r["actor"]["login"] == q["actor"])
                and ("branch" not in q or r["head_branch"] == q["branch"])
                and ("event" not in q or r["event"] == q["event"])
                and ("status" not in q or q["status"] in (r["status"], r["conclusion"]))
                and ("head_sha" not in q or r["head_sha"] == q["head_sha"])
                and ("created" not in q or _in_range(r["created_at"], q["created"]))]
        status, page = self._page(path, runs[:1000])
        if self._headers.get("Link"):  # keep the query's filters on the next page's link
            filters = "".join(f"&{k}={self._query[k]}" for k in q if k not in ("page", "per_page"))
            self._headers["Link"] = re.sub(r'(page=\d+)>', lambda m: f"{m.group(1)}{filters}>", self._headers["Link"])
        return status, {"total_count": len(runs), "workflow_runs": page}

    def current_labels(self, events: list[dict[str, Any]] | None = None) -> list[str]:
        """The labels on the PR now: what its `labeled` and `unlabeled` events left (as GitHub keeps them)."""
        on: list[str] = []
        for event in self.label_events if events is None else events:
            if "label" not in event:
                continue  # e.g. base_ref_changed
            name = event["label"]["name"]
            if event["event"] == "labeled" and name not in on:
                on.append(name)
            elif event["event"] == "unlabeled" and name in on:
                on.remove(name)
        return on

    def _label(self, name: str) -> dict[str, Any]:
        # GET /repos/{owner}/{repo}/issues/{n}/labels: label objects
        return {"id": abs(hash(name)) % 10**9, "node_id": "L", "url": f"{self.url}/repos/{self.repo}/labels/{name}",
                "name": name, "color": "ededed", "default": False, "description": None}

    def _issue_event(self, index: int, event: dict[str, Any]) -> dict[str, Any]:
        # GET /repos/{owner}/{repo}/issues/{n}/events: oldest first; label events carry the label
        # (name and color) and the actor; commit_id is null for them.
        actor = event.get("actor")
        return {"id": 1000 + index, "node_id": "E", "url": f"{self.url}/repos/{self.repo}/issues/events/{1000 + index}",
                "event": event["event"], "commit_id": None, "commit_url": None,
                "created_at": event["created_at"] if "created_at" in event else event.setdefault("created_at", self.tick()),
                "actor": {**actor, "type": "User"} if actor else None,
                **({"label": {"name": event["label"]["name"], "color": "ededed"}} if "label" in event else {})}

    def _pull(self, api: str, number: int, pull: dict[str, str]) -> dict[str, Any]:
        repo = {"full_name": self.repo, "url": api, "fork": False}
        return {"number": number, "state": "open", "url": f"{api}/pulls/{number}", "user": self.user(self.author),
                "html_url": f"https://github.test/{self.repo}/pull/{number}",
                "head": {"ref": f"pr-{number}", "sha": pull["head"], "repo": repo},
                "base": {"ref": pull.get("base_ref", "main"), "sha": pull["base"], "repo": repo}}

    def _author(self, token: str | None) -> dict[str, str]:
        if token in self.token_users:
            return {"login": self.token_users[token], "type": "User"}
        return {"login": "github-actions[bot]", "type": "Bot"}

    def _chat(self, body: dict[str, Any]) -> dict[str, Any]:
        self.judge_calls += 1
        answer = self.judge_by_model.get(body["model"], self.judge)(body["messages"][-1]["content"])
        return {"id": f"c{self.judge_calls}", "object": "chat.completion", "created": 0, "model": body["model"],
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": json.dumps({"answer": answer, "quote": ""})}}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}

    def _git(self, *args: str) -> subprocess.CompletedProcess[bytes]:
        assert self.origin is not None, "this fake has no repository (diff_hunks only)"
        return subprocess.run(["git", *args], cwd=self.origin, capture_output=True, check=False)

    def _pr_files(self) -> list[dict[str, Any]]:
        if self.origin is None:
            return [{"filename": name, "status": "modified", "sha": "0" * 40, "additions": 1, "deletions": 0,
                     "changes": 1, "patch": patch} for name, patch in self._patches().items()]
        merge_base = self._git("merge-base", self.base_sha, self.head_sha).stdout.decode().strip()
        # -z: names exactly as stored (the API sends them raw, not C-quoted like `git diff` output).
        # A name that is not UTF-8 cannot be JSON text: shown with replacement characters.
        raw = self._git("diff", "--name-status", "-z", "--find-renames", merge_base,
                        self.head_sha).stdout.decode(errors="replace")
        fields = raw.split("\0")
        files = []
        i = 0
        while i < len(fields) and fields[i]:
            code = fields[i][0]
            if code == "R":
                files.append({"filename": fields[i + 2], "previous_filename": fields[i + 1], "status": "renamed"})
                i += 3
            else:
                status = {"A": "added", "D": "removed"}.get(code, "modified")
                files.append({"filename": fields[i + 1], "status": status})
                i += 2
        patches = self._patches()
        for f in files:
            if f["filename"] in self.copies:  # what the REST API reports for a copy (git diff -C)
                f.update({"status": "copied", "previous_filename": self.copies[f["filename"]]})
            f.update({"sha": "0" * 40, "additions": 1, "deletions": 1, "changes": 2})
            if f["filename"] in patches:
                f["patch"] = patches[f["filename"]]
        return files

    def _patches(self) -> dict[str, str]:
        """Each file's diff from its first hunk header on (the pull request files API's `patch`),
        from one `git diff` of the PR; a name git would quote gets no patch."""
        if self.origin is None:
            return {name: _declared_patch(hunks) for name, hunks in self.diff_hunks.items()}
        merge_base = self._git("merge-base", self.base_sha, self.head_sha).stdout.decode().strip()
        diff = self._git("-c", "core.quotepath=off", "diff", "-U3", "--find-renames", merge_base,
                         self.head_sha).stdout.decode(errors="replace")
        patches = {}
        for section in re.split(r"(?m)^diff --git ", diff)[1:]:
            target = re.search(r"(?m)^\+\+\+ b/(.*)$", section)
            if target and "\n@@" in section:
                patches[target.group(1)] = section[section.find("\n@@") + 1:]
        return patches

    def _patch(self, path: str) -> str:
        return self._patches().get(path, "")

    def _hunks(self, path: str) -> list[tuple[int, int]]:
        """Each hunk's head-side lines (RIGHT side), first and last."""
        found = []
        for start, count in re.findall(r"^@@ -\S+ \+(\d+)(?:,(\d+))? @@", self._patch(path), flags=re.M):
            if int(count or 1):
                found.append((int(start), int(start) + int(count or 1) - 1))
        return found

    def _create_review_comment(self, body: dict[str, Any], token: str | None, api: str) -> tuple[int, Any]:
        """Create a review comment as GitHub does: `line` inside a hunk of the diff, and a
        multi-line comment's `start_line` before it in the same hunk; else 422."""
        line, start = body.get("line"), body.get("start_line")
        if body.get("commit_id") != self.head_sha or body.get("side") != "RIGHT" or not isinstance(line, int):
            return _invalid("PullRequestReviewComment", "line", "could not be resolved")
        hunk = next((h for h in self._hunks(body.get("path", "")) if h[0] <= line <= h[1]), None)
        if hunk is None:
            return _invalid("PullRequestReviewComment", "pull_request_review_thread.line",
                            "pull_request_review_thread.line must be part of the diff")
        if start is not None and start >= line:
            return _invalid("PullRequestReviewComment", "pull_request_review_thread.start_line",
                            "pull_request_review_thread.start_line must precede the end line.")
        if start is not None and not hunk[0] <= start:
            return _invalid("PullRequestReviewComment", "pull_request_review_thread.start_line",
                            "pull_request_review_thread.start_line must be part of the same hunk as the line.")
        cid = self.new_id()
        comment = {"id": cid, "body": body["body"], "path": body["path"], "line": body["line"],
                   "start_line": body.get("start_line"), "commit_id": body["commit_id"],
                   "url": f"{api}/pulls/comments/{cid}", "pull_request_url": f"{api}/pulls/{self.pr_number}",
                   "user": self._author(token)}
        self.review_comments[cid] = comment
        return 201, comment

    def _commit_json(self, sha: str) -> dict[str, Any]:
        return {"sha": sha, "url": f"{self.url}/repos/{self.repo}/commits/{sha}", "commit": {"message": "c"},
                "html_url": f"https://github.test/{self.repo}/commit/{sha}", "parents": []}

    def _compare(self, base: str, head: str) -> tuple[int, Any]:
        """Compare two commits: the fields PyGithub reads (merge_base_commit is what we use)."""
        merge_base = self._git("merge-base", base, head)
        if merge_base.returncode != 0:
            return 404, {"message": "Not Found"}
        mb = merge_base.stdout.decode().strip()
        ahead = int(self._git("rev-list", "--count", f"{mb}..{head}").stdout or 0)
        behind = int(self._git("rev-list", "--count", f"{mb}..{base}").stdout or 0)
        status = "identical" if not ahead and not behind else "ahead" if not behind else "behind" if not ahead else "diverged"
        return 200, {"url": f"{self.url}/repos/{self.repo}/compare/{base}...{head}",
                     "html_url": f"https://github.test/{self.repo}/compare/{base}...{head}",
                     "status": status, "ahead_by": ahead, "behind_by": behind, "total_commits": ahead,
                     "base_commit": self._commit_json(base), "merge_base_commit": self._commit_json(mb),
                     "commits": [], "files": []}

    def _mergeability(self) -> dict[str, Any]:
        """`mergeable` and `merge_commit_sha` as Get a pull request answers them: GitHub's test merge
        of the head into the base ("When you get ... a pull request, GitHub creates a merge commit to
        test whether the pull request can be automatically merged into the base branch"), made
        with git's merge (merge-ort, as `git merge-tree`); null while "GitHub has started a
        background job to compute the mergeability" (`mergeable_pending` answers), false on
        conflicts. `test_merge_sha` answers another commit (a stale test merge)."""
        if self.origin is None:
            return {"mergeable": None, "merge_commit_sha": None, "mergeable_state": "unknown"}
        if self.mergeable_pending:
            self.mergeable_pending -= 1
            return {"mergeable": None, "merge_commit_sha": self.test_merge_sha, "mergeable_state": "unknown"}
        if self.test_merge_sha is not None:
            return {"mergeable": True, "merge_commit_sha": self.test_merge_sha, "mergeable_state": "clean"}
        return self._test_merge(self.base_sha, self.head_sha)

    def _test_merge(self, base: str, head: str) -> dict[str, Any]:
        if self.origin is None:
            return {"mergeable": None, "merge_commit_sha": None, "mergeable_state": "unknown"}
        key = (base, head)
        if key not in self._test_merges:
            tree = self._git("merge-tree", "--write-tree", "--no-messages", base, head)
            merge = None
            if tree.returncode == 0:
                env = {"GIT_AUTHOR_NAME": "GitHub", "GIT_AUTHOR_EMAIL": "noreply@github.com",
                       "GIT_COMMITTER_NAME": "GitHub", "GIT_COMMITTER_EMAIL": "noreply@github.com",
                       "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}
                made = subprocess.run(["git", "commit-tree", tree.stdout.split()[0].decode(), "-p", base,
                                       "-p", head, "-m", f"Merge {head} into {base}"],
                                      cwd=self.origin, capture_output=True, check=True,
                                      env={**os.environ, **env})
                merge = made.stdout.decode().strip()
            self._test_merges[key] = merge
        merge = self._test_merges[key]
        # "If mergeable is true, then merge_commit_sha will be the SHA of the test merge commit."
        return {"mergeable": merge is not None, "merge_commit_sha": merge,
                "mergeable_state": "clean" if merge is not None else "dirty"}

    def _git_commit(self, sha: str) -> tuple[int, Any]:
        """Get a commit object (Git database API): its tree and parents."""
        proc = self._git("cat-file", "commit", sha)
        if proc.returncode != 0:
            return 404, {"message": "Not Found"}
        header = proc.stdout.decode(errors="replace").split("\n\n", 1)[0].splitlines()
        tree = next(line.split()[1] for line in header if line.startswith("tree "))
        parents = [line.split()[1] for line in header if line.startswith("parent ")]
        api = f"{self.url}/repos/{self.repo}/git"
        return 200, {"sha": sha, "node_id": "C", "url": f"{api}/commits/{sha}", "message": "c",
                     "author": {"name": "GitHub", "email": "noreply@github.com", "date": "2026-01-01T00:00:00Z"},
                     "committer": {"name": "GitHub", "email": "noreply@github.com", "date": "2026-01-01T00:00:00Z"},
                     "tree": {"sha": tree, "url": f"{api}/trees/{tree}"},
                     "parents": [{"sha": p, "url": f"{api}/commits/{p}",
                                  "html_url": f"https://github.test/{self.repo}/commit/{p}"} for p in parents],
                     "verification": {"verified": False, "reason": "unsigned", "signature": None, "payload": None}}

    def _tree(self, ref: str) -> tuple[int, Any]:
        """Get a tree (recursive=1 lists every blob; a commit sha names its tree)."""
        proc = self._git("ls-tree", "-r", "-z", "-l", "--end-of-options", ref)
        if proc.returncode != 0:
            return 404, {"message": "Not Found"}
        entries = []
        for record in proc.stdout.decode().split("\0"):
            if not record:
                continue
            meta, path = record.split("\t", 1)
            mode, kind, sha, size = meta.split()
            entries.append({"path": path, "mode": mode, "type": kind, "sha": sha,
                            "size": int(size) if size != "-" else None,
                            "url": f"{self.url}/repos/{self.repo}/git/blobs/{sha}"})
        return 200, {"sha": ref, "url": f"{self.url}/repos/{self.repo}/git/trees/{ref}", "tree": entries,
                     "truncated": False}

    def _contents(self, path: str) -> tuple[int, Any]:
        ref = self._query.get("ref", "HEAD")
        proc = self._git("show", f"{ref}:{path}")
        if proc.returncode != 0:
            return 404, {"message": "Not Found"}
        blob_sha = self._git("rev-parse", f"{ref}:{path}").stdout.decode().strip()
        data = {"type": "file", "path": path, "name": path.rsplit("/", 1)[-1], "size": len(proc.stdout),
                "sha": blob_sha, "url": f"{self.url}/repos/{self.repo}/contents/{path}"}
        if len(proc.stdout) > CONTENTS_INLINE_BYTES:
            # "Between 1-100 MB: ... the content field will be an empty string and the encoding
            # field will be "none"." (Get repository content, size limits)
            return 200, {**data, "encoding": "none", "content": ""}
        return 200, {**data, "encoding": "base64", "content": _base64_lines(proc.stdout)}

    def _blob(self, sha: str) -> tuple[int, Any]:
        proc = self._git("cat-file", "blob", sha)
        if proc.returncode != 0:
            return 404, {"message": "Not Found"}
        self.blob_reads.append((sha, self._accept))
        if self._accept in RAW_MEDIA_TYPES:  # "application/vnd.github.raw+json: Returns the raw blob data."
            raw = proc.stdout
            if sha in self.altered_blobs:  # a transfer gone wrong: same length, one byte changed
                raw = bytes([raw[0] ^ 1]) + raw[1:]
            return 200, raw
        return 200, {"sha": sha, "size": len(proc.stdout), "encoding": "base64", "content": _base64_lines(proc.stdout),
                     "url": f"{self.url}/repos/{self.repo}/git/blobs/{sha}", "node_id": "B"}

    def _page(self, path: str, items: list[Any]) -> tuple[int, list[Any]]:
        """A page of a list endpoint: `per_page` (default 30, at most 100) and `page`, with a Link header."""
        per_page = min(int(self._query.get("per_page", 30)), 100)
        page = int(self._query.get("page", 1))
        last = max(1, -(-len(items) // per_page))
        links = []
        if page < last:
            links.append(f'<{self.url}{path}?per_page={per_page}&page={page + 1}>; rel="next"')
            links.append(f'<{self.url}{path}?per_page={per_page}&page={last}>; rel="last"')
        if links:
            self._headers["Link"] = ", ".join(links)
        return 200, items[(page - 1) * per_page: page * per_page]

    @staticmethod
    def _check_run_problem(body: dict[str, Any]) -> tuple[int, Any] | None:
        conclusion = body.get("conclusion")
        if conclusion is not None and conclusion not in CONCLUSIONS:
            return _invalid("CheckRun", "conclusion", f"conclusion is not included in the list: {conclusion!r}")
        if body.get("status") == "completed" and conclusion is None:
            return _invalid("CheckRun", "conclusion", "conclusion is required when status is completed")
        output = body.get("output")
        if output is None:
            return None
        if not output.get("title") or output.get("summary") is None:
            return _invalid("CheckRun", "output", "title and summary are required")
        for key in ("summary", "text"):
            if len((output.get(key) or "").encode("utf-8")) > CHECK_OUTPUT_BYTES:
                return _invalid("CheckRun", key, f"{key} exceeds a maximum bytesize of {CHECK_OUTPUT_BYTES}")
        annotations = output.get("annotations") or []
        if len(annotations) > 50:
            return 422, {"message": "Invalid request.\n\nOnly 50 annotations are allowed per request."}
        for a in annotations:
            missing = [k for k in ("path", "start_line", "end_line", "annotation_level", "message") if k not in a]
            if missing:
                return 422, {"message": f"Invalid request.\n\n\"{missing[0]}\" wasn't supplied."}
            if a["annotation_level"] not in ANNOTATION_LEVELS or a["start_line"] < 1 or a["end_line"] < a["start_line"]:
                return _invalid("CheckRun", "annotations", "invalid annotation")
            if len(a["message"].encode("utf-8")) > ANNOTATION_MESSAGE_BYTES or len(a.get("title") or "") > ANNOTATION_TITLE_CHARS:
                return _invalid("CheckRun", "annotations", "annotation message or title is too long")
        return None

    _query: dict[str, str] = field(default_factory=dict)
    _accept: str = ""  # the request's Accept header
    blob_reads: list[tuple[str, str]] = field(default_factory=list)  # (blob sha, Accept) of each blob read
    altered_blobs: set[str] = field(default_factory=set)  # blob shas whose raw bytes arrive altered
    # Get a pull request's test merge: answers with `mergeable: null` left before it is computed,
    # and a commit to answer as `merge_commit_sha` instead of the merge of the base and the head.
    mergeable_pending: int = 0
    test_merge_sha: str | None = None
    _test_merges: dict[tuple[str, str], str | None] = field(default_factory=dict)


def _in_range(stamp: str, query: str) -> bool:
    """Whether an ISO time is in a search-syntax range (`a..b`, `>=a`, `>a`, `<=b`, `<b`, `a`)."""
    at = datetime.fromisoformat(stamp.replace("Z", "+00:00"))

    def parse(text: str) -> datetime:
        value = datetime.fromisoformat(text.replace("Z", "+00:00"))
        return value if value.tzinfo else value.replace(tzinfo=UTC)

    if ".." in query:
        low, high = query.split("..", 1)
        return (low == "*" or parse(low) <= at) and (high == "*" or at <= parse(high))
    for op, test in ((">=", lambda v: at >= v), ("<=", lambda v: at <= v), (">", lambda v: at > v),
                     ("<", lambda v: at < v)):
        if query.startswith(op):
            return bool(test(parse(query[len(op):])))
    return parse(query) == at


def _declared_patch(hunks: list[tuple[int, int]]) -> str:
    """A unified diff whose hunks cover exactly these head-side lines (context lines only)."""
    return "".join(f"@@ -{a},{b - a + 1} +{a},{b - a + 1} @@\n" + "".join(f" line {n}\n" for n in range(a, b + 1))
                   for a, b in hunks)


def _base64_lines(data: bytes) -> str:
    """Base64 as GitHub sends it for contents and blobs: wrapped at 60 characters per line."""
    text = base64.b64encode(data).decode()
    return "".join(text[i:i + 60] + "\n" for i in range(0, len(text), 60))


def serve(fake: FakeGitHub) -> FakeHTTPServer:
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def _do(self) -> None:
            parsed = urlparse(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            body = json.loads(raw) if raw else {}
            auth = self.headers.get("Authorization", "")
            token = auth.split(" ", 1)[1] if " " in auth else None
            judge = parsed.path == "/v1/chat/completions" and (fake.judge or fake.judge_by_model)
            if not judge and not parsed.path.startswith("/storage/"):  # an artifact download redirects there: no API
                # Every request to GitHub is one its REST description documents (tests/conftest.py fails the test).
                github_openapi.check(github_openapi.Request(self.command, parsed.path, parsed.query,
                                                            self.headers.get("Content-Type", ""), raw))
            with lock:
                fake._query = dict(p.split("=", 1) for p in parsed.query.split("&") if "=" in p)
                fake._headers = {}
                fake._accept = self.headers.get("Accept", "")
                status, data = fake.handle(self.command, parsed.path, token, body)
                extra = dict(fake._headers)
            raw = isinstance(data, bytes)
            payload = data if raw else json.dumps(data).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/vnd.github.raw" if raw else "application/json; charset=utf-8")
            for name, value in extra.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _do

        def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
            pass

    server = FakeHTTPServer(("127.0.0.1", 0), Handler)
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    # A short poll: shutdown() waits for it, once per test (0.5 s by default).
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    return server
