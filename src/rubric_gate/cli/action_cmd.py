"""`rubric-gate action`: the GitHub Action's entry point, configured only by the Actions environment."""

from __future__ import annotations

import os
from urllib.parse import urlsplit

import click

from rubric_gate.cli.errors import handle_errors
from rubric_gate.errors import UnreachableError


@click.command("action")
@handle_errors
def action_command() -> int:
    """Gate a pull request's rubric edits (run by the GitHub Action; reads GITHUB_* and INPUT_* variables).

    Exit 0 pass, 1 gate failed, 2 bad input or GitHub's API unreachable, 3 a crash (a bug; the
    traceback goes to a log file). On your machine, `rubric-gate preview` shows what it would post.
    """
    from requests.exceptions import ConnectionError, Timeout  # PyGithub's transport

    from rubric_gate.action import run_action  # PyGithub loads only for this command

    try:
        return run_action()
    except (ConnectionError, Timeout) as exc:
        raise UnreachableError("GitHub API", _origin(exc), _reason(exc)) from None


def _origin(exc: Exception) -> str:
    request = getattr(exc, "request", None)
    url = getattr(request, "url", None) or os.environ.get("GITHUB_API_URL") or "https://api.github.com"
    parts = urlsplit(str(url))
    if not parts.netloc:
        return str(url)
    default = {"https": 443, "http": 80}.get(parts.scheme)
    host = parts.hostname or parts.netloc
    return f"{parts.scheme}://{host}" + (f":{parts.port}" if parts.port and parts.port != default else "")


def _reason(exc: Exception) -> str:
    """urllib3's nested repr, in a few words."""
    from requests.exceptions import SSLError, Timeout

    text = str(exc)
    if isinstance(exc, SSLError):
        return "TLS handshake failed"
    if isinstance(exc, Timeout) or "timed out" in text:
        return "timed out"
    if "NameResolutionError" in text or "Failed to resolve" in text or "Name or service not known" in text:
        return "host name not resolved"
    if "Connection refused" in text:
        return "connection refused"
    if "RemoteDisconnected" in text or "Connection aborted" in text:
        return "connection closed by the server"
    return type(exc).__name__
