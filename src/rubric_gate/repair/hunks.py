"""Where GitHub accepts a review comment: inside one hunk of the PR's diff, on the head side.

GitHub refuses (422) a comment whose `line` is not in the diff ("pull_request_review_thread.line
must be part of the diff") and a multi-line one whose `start_line` is in another hunk than its
`line` ("... start_line must be part of the same hunk as the line"). A suggestion replaces
exactly start_line..line, so it cannot be shrunk to fit: one that does not fit stays in the
sticky comment. Pure functions of the `patch` text the pull request files API returns.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_HUNK_HEADER = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@", re.M)

Hunk = tuple[int, int]  # first and last head-side line, inclusive


def head_hunks(patch: str | None) -> list[Hunk]:
    """The head-side line range of each hunk in a unified diff (a hunk that only deletes has none)."""
    hunks = []
    for start, count in _HUNK_HEADER.findall(patch or ""):
        length = 1 if count == "" else int(count)
        if length:
            hunks.append((int(start), int(start) + length - 1))
    return hunks


def hunk_holding(hunks: Sequence[Hunk], start: int, end: int) -> Hunk | None:
    """The hunk that holds every line of start..end, if one does."""
    return next((h for h in hunks if h[0] <= start and end <= h[1]), None)
