"""The `pull_request` event payload: only the fields the gate needs."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rubric_gate.errors import InputError

PR_EVENTS = ("pull_request", "pull_request_target")
SHA = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")  # SHA-1, or SHA-256 repositories


@dataclass(frozen=True)
class PullRequest:
    number: int
    base_sha: str
    head_sha: str
    base_repo: str
    head_repo: str | None  # None when the fork was deleted
    labels: tuple[str, ...]
    html_url: str

    @property
    def is_fork(self) -> bool:
        return self.head_repo != self.base_repo


def load_event(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(path, f"event payload is not JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise InputError(path, "event payload is not a JSON object")
    return data


def pull_request_from(event: dict[str, Any], display: str) -> PullRequest:
    pr = event.get("pull_request")
    if not isinstance(pr, dict):
        raise InputError(display, "event has no pull_request object")
    try:
        head_repo = (pr["head"].get("repo") or {}).get("full_name")
        pull = PullRequest(
            number=int(pr["number"]),
            base_sha=str(pr["base"]["sha"]),
            head_sha=str(pr["head"]["sha"]),
            base_repo=str(pr["base"]["repo"]["full_name"]),
            head_repo=head_repo,
            labels=tuple(str(label.get("name", "")) for label in pr.get("labels") or []),
            html_url=str(pr.get("html_url", "")),
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise InputError(display, f"pull_request payload lacks a field ({exc})") from None
    for name, sha in (("base", pull.base_sha), ("head", pull.head_sha)):
        if not SHA.fullmatch(sha):  # the shas reach git's command line
            raise InputError(display, f"pull_request.{name}.sha is not a commit sha: {sha[:80]!r}")
    return pull
