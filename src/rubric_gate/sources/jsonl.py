"""Read JSON Lines files, one object per line, with errors naming file and line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from rubric_gate.errors import InputError


class _DuplicateKey(ValueError):
    pass


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are unique: with `"label": "pass", ..., "label": "fail"` no value wins silently."""
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _DuplicateKey(key)
        result[key] = value
    return result


def _encodable(value: Any) -> bool:
    """False when a string holds a lone surrogate (from an escape like \\ud800): it is no text."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


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
            value = json.loads(raw, object_pairs_hook=_object)
        except _DuplicateKey as exc:
            raise InputError(display, f"duplicate key '{exc}'", index + 1) from None
        except json.JSONDecodeError as exc:
            if tolerate_torn_tail and index == torn_candidate:
                return
            raise InputError(display, f"malformed JSON ({exc.msg} at column {exc.colno})", index + 1) from None
        except (ValueError, RecursionError) as exc:  # a number too long to convert, nesting too deep
            what = "nested too deeply" if isinstance(exc, RecursionError) else str(exc).split(";")[0]
            raise InputError(display, f"malformed JSON ({what})", index + 1) from None
        if not isinstance(value, dict):
            raise InputError(display, "each line must be a JSON object", index + 1)
        if "\\u" in raw and not _encodable(value):
            raise InputError(display, "malformed JSON (a \\u escape encodes half a surrogate pair, not a character)",
                             index + 1)
        yield index + 1, value
