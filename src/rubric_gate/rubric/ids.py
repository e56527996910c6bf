"""Fresh check ids for checks a model proposes: readable, valid, never one already taken."""

from __future__ import annotations

import re

MAX_SLUG = 48


def fresh_check_id(name: str, taken: set[str], *, prefix: str = "", fallback: str = "check") -> str:
    """`prefix` + a slug of `name` (`-2`, `-3`, ... until unused); the result is added to `taken`."""
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:MAX_SLUG].strip("-") or fallback
    base = f"{prefix}{slug}"
    candidate, n = base, 1
    while candidate in taken:
        n += 1
        candidate = f"{base}-{n}"
    taken.add(candidate)
    return candidate
