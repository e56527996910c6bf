"""What one run watches across all of its calls: a dead endpoint (connection failures in a row
with no reply in between stop the run with one line naming the URL) and the model that really
answers (a server that answers a request for one model with another is named once, and the
served name is kept for the verdicts)."""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable
from urllib.parse import urlsplit, urlunsplit

from rubric_gate.llm.errors import EndpointUnreachable, TransientError
from rubric_gate.llm.replies import excerpt
from rubric_gate.llm.retry import RetryPolicy

# A dated snapshot or alias of the requested model is the requested model ("gpt-4o" is served
# as "gpt-4o-2024-08-06", "claude-haiku-4-5" as "claude-haiku-4-5-20251001").
_SNAPSHOT = re.compile(r"(-\d{8}|-\d{4}-\d{2}-\d{2}|-latest)$")
# (who, served) pairs already warned about in this process: once per run, however many steps.
_WARNED: set[tuple[str, str]] = set()


def same_model(requested: str, served: str) -> bool:
    """Whether `served` (the reply's `model`) is the model asked for, or a snapshot of it."""
    if not served or served == requested:
        return True
    return _SNAPSHOT.sub("", served) == _SNAPSHOT.sub("", requested)


def shown_url(url: str) -> str:
    """A request URL fit to print: no user, password or query (an Azure key rides in one)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "the provider's URL"
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", "")) or "the provider's URL"


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


class RunWatch:
    """Shared by every call of one run (`who`: the judge spec, `requested`: its model name)."""

    def __init__(self, who: str, requested: str, policy: RetryPolicy,
                 warn: Callable[[str], None] = _stderr) -> None:
        self.who, self.requested, self.policy, self.warn = who, requested, policy, warn
        self.served: dict[str, int] = {}  # model names the replies gave, and how often
        self._failures = 0
        self._since: float | None = None

    def replied(self, served_model: str) -> None:
        self._failures, self._since = 0, None
        if not served_model:
            return
        self.served[served_model] = self.served.get(served_model, 0) + 1
        if same_model(self.requested, served_model) or (self.who, served_model) in _WARNED:
            return
        _WARNED.add((self.who, served_model))
        self.warn(f"rubric-gate: warning: {self.who} was answered by the model {excerpt(served_model, 60)}, "
                  f"not {excerpt(self.requested, 60)}: is the model name right? Verdicts are kept under "
                  f"{self.who} and record the served model")

    @property
    def other_models(self) -> list[str]:
        """Served model names that are not the requested model (nor a snapshot of it)."""
        return [name for name in self.served if not same_model(self.requested, name)]

    def failed_to_connect(self, exc: TransientError) -> None:
        """Count a connection failure; stop the run when they come in a row for long enough."""
        if not exc.unreachable:
            return
        now = time.monotonic()
        if self._since is None:
            self._since = now
        self._failures += 1
        waited = now - self._since
        if self._failures >= self.policy.max_unreachable and waited >= self.policy.unreachable_window:
            raise EndpointUnreachable(
                f"{self.who}: cannot connect to {shown_url(exc.url)}: {self._failures} connection failures in a "
                f"row over {waited:.1f} s and no reply; stopped (is the server running, and is the base URL "
                "right?)")
