"""Read JSON Lines files, one object per line, with errors naming file and line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from rubric_gate.errors import InputError


class _DuplicateKey(ValueError):
    pass


class TornLine(Exception):
    """A last line that does not parse: what a process killed mid-write leaves behind."""


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are unique: with `"label": "pass", ..., "label": "fail"` no value wins silently."""
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _DuplicateKey(key)
        result[key] = value
    return result


# `json.loads(raw, object_pairs_hook=_object)`, without a new decoder per line.
_DECODER = json.JSONDecoder(object_pairs_hook=_object)


def _encodable(value: Any) -> bool:
    """False when a string holds a lone surrogate (from an escape like \\ud800): it is no text."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def decode_line(raw: bytes, display: str, line_no: int, *, last: bool = False) -> str:
    """One line's bytes as text; invalid UTF-8 names the line (a torn last line may end mid-character)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        if last:
            raise TornLine from None
        raise InputError(display, f"not UTF-8 text (byte {exc.start + 1} of the line)", line_no) from None


def parse_line(raw: str, display: str, line_no: int, *, last: bool = False) -> dict[str, Any] | None:
    """The object on one line, None for a blank line. With `last` (a last line without a
    newline), a line that is not complete JSON raises TornLine instead of InputError."""
    if not raw.strip():
        return None
    try:
        if raw.startswith("\ufeff"):  # as `json.loads` refuses it
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", raw, 0)
        value = _DECODER.decode(raw)
    except _DuplicateKey as exc:
        raise InputError(display, f"duplicate key '{exc}'", line_no) from None
    except json.JSONDecodeError as exc:
        if last:
            raise TornLine from None
        # Some messages end in "at" ("Unterminated string starting at"): say it once.
        message = exc.msg.removesuffix(" at")
        raise InputError(display, f"malformed JSON ({message} at column {exc.colno})", line_no) from None
    except (ValueError, RecursionError) as exc:  # a number too long to convert, nesting too deep
        what = "nested too deeply" if isinstance(exc, RecursionError) else str(exc).split(";")[0]
        raise InputError(display, f"malformed JSON ({what})", line_no) from None
    if not isinstance(value, dict):
        raise InputError(display, "each line must be a JSON object", line_no)
    if "\\u" in raw and not _encodable(value):
        raise InputError(display, "malformed JSON (a \\u escape encodes half a surrogate pair, not a character)",
                         line_no)
    return value


def iter_jsonl(text: str, display: str, *, tolerate_torn_tail: bool = False) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line number, object) for each non-blank line.

    With `tolerate_torn_tail`, a last line without a newline that does not parse is
    skipped: it is what a process killed mid-write leaves behind.
    """
    lines = text.split("\n")
    torn_candidate = len(lines) - 1 if tolerate_torn_tail and not text.endswith("\n") else None
    for index, raw in enumerate(lines):
        try:
            value = parse_line(raw, display, index + 1, last=index == torn_candidate)
        except TornLine:
            return
        if value is not None:
            yield index + 1, value
