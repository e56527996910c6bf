"""Read JSON Lines files, one object per line, with errors naming file and line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from rubric_gate.errors import InputError


def iter_jsonl(text: str, display: str, *, tolerate_torn_tail: bool = False) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line number, object) for each non-blank line.

    With `tolerate_torn_tail`, a last line without a newline that does not parse is
    skipped: it is what a process killed mid-write leaves behind.
    """
    lines = text.split("\n")
    torn_candidate = len(lines) - 1 if not text.endswith("\n") else None
    for index, raw in enumerate(lines):
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            if tolerate_torn_tail and index == torn_candidate:
                return
            raise InputError(display, f"malformed JSON ({exc.msg} at column {exc.colno})", index + 1) from None
        if not isinstance(value, dict):
            raise InputError(display, "each line must be a JSON object", index + 1)
        yield index + 1, value
