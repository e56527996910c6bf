"""The PyGithub client, pointed at GITHUB_API_URL so GitHub Enterprise Server works."""

from __future__ import annotations

import logging

from github import Auth, Github, GithubException
from github.GithubRetry import GithubRetry
from github.Repository import Repository

from rubric_gate.tuning import env_number

# Tests point the client at a local server and do not want PyGithub's write throttling.
_WRITE_INTERVAL_VAR = "RUBRIC_GATE_SECONDS_BETWEEN_WRITES"


def connect(token: str, api_url: str, repository: str) -> Repository:
    # PyGithub logs every refused request; the action reports refusals itself, in plain words.
    logging.getLogger("github").setLevel(logging.ERROR)
    interval = env_number(_WRITE_INTERVAL_VAR, 1.0)
    client = Github(
        auth=Auth.Token(token) if token else None,
        base_url=api_url.rstrip("/"),
        timeout=30,
        per_page=100,  # the REST maximum: fewer requests to list a busy PR's comments and events
        retry=GithubRetry(total=3),
        lazy=True,
        seconds_between_requests=None,
        seconds_between_writes=interval,
    )
    return client.get_repo(repository)


def is_forbidden(exc: Exception) -> bool:
    """A write refused for lack of permission (a read-only token on a fork PR)."""
    return isinstance(exc, GithubException) and exc.status in (401, 403, 404)


def describe(exc: Exception) -> str:
    if isinstance(exc, GithubException):
        message = exc.data.get("message") if isinstance(exc.data, dict) else None
        return f"HTTP {exc.status}" + (f": {message}" if message else "")
    return f"{type(exc).__name__}: {exc}"
