"""Parse verdict JSONL into columns: orjson and plain type checks for the common line, the
exact `json` + pydantic path (and its `file:line` errors) for anything unusual.

A line takes the fast path only when orjson parses it, its keys and value types are the
plain ones a `Verdict` accepts, and it provably has no duplicate key. Everything else
(duplicate keys, NaN, huge numbers, lone surrogates, invalid UTF-8, coercible values, bad
values) goes through `sources.jsonl.parse_line` and `Verdict.model_validate`, which accept
or reject it exactly as a full read always did.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from typing import Any, BinaryIO

import orjson
from pydantic import ValidationError

from rubric_gate.errors import InputError
from rubric_gate.rubric.model import normalize_text
from rubric_gate.sources.jsonl import TornLine, decode_line, parse_line
from rubric_gate.verdicts.model import Verdict
from rubric_gate.verdicts.table_data import NONE, VerdictData

CHUNK = 1 << 22
BOM = b"\xef\xbb\xbf"
OPTIONAL_TEXT = ("judge", "prompt", "item_hash", "task_hash", "check", "quote", "at")
# `sample` (repeated sampling) takes the fast path only where the model knows the field.
HAS_SAMPLE = "sample" in Verdict.model_fields
FAST_KEYS = frozenset(("item", "check_text", "answer", "usage", *OPTIONAL_TEXT, *(("sample",) if HAS_SAMPLE else ())))
USAGE_KEYS = frozenset(("input_tokens", "output_tokens"))
_KEY_END = re.compile(rb'"[ \t\r]*:')


def validation_message(exc: ValidationError, obj: dict[str, Any]) -> str:
    error = exc.errors()[0]
    key = ".".join(str(p) for p in error["loc"]) or "verdict"
    if error["type"] == "missing":
        return f"missing required key '{key}'"
    if key == "answer":
        return f"answer must be 'yes' or 'no', got {obj.get('answer')!r}"
    if error["type"] == "extra_forbidden":
        return f"unknown key '{key}'"
    return f"{key}: {error['msg']}"


def validate(obj: dict[str, Any], display: str, line_no: int) -> Verdict:
    try:
        return Verdict.model_validate(obj)
    except ValidationError as exc:
        raise InputError(display, validation_message(exc, obj), line_no) from None


_SHAPES: dict[tuple[str, ...], tuple[tuple[type, ...], bool] | None] = {}


def _shape(keys: tuple[str, ...]) -> tuple[tuple[type, ...], bool] | None:
    """For a key order seen on a line: the value types a plain verdict has, and whether it has usage."""
    if not {"item", "check_text", "answer"} <= set(keys) <= FAST_KEYS:
        return None
    return tuple(dict if key == "usage" else int if key == "sample" else str for key in keys), "usage" in keys


def _plain(obj: Any, raw: bytes) -> bool:
    """True when `obj` is a verdict pydantic would take as is, and `raw` has no duplicate key."""
    if type(obj) is not dict:
        return False
    keys = tuple(obj)
    try:
        shape = _SHAPES[keys]
    except KeyError:
        shape = _shape(keys)
        if len(_SHAPES) < 4096:  # a file with ever new key orders gets no cache, not unbounded memory
            _SHAPES[keys] = shape
    if shape is None or tuple(map(type, obj.values())) != shape[0]:
        return False  # a null, a number where text belongs, an unknown key: the exact path decides
    if not obj["item"] or not obj["check_text"] or obj["answer"] not in ("yes", "no"):
        return False
    sample = obj.get("sample", 0)
    if sample < 0:
        return False
    strings = 2 * len(keys) - shape[1] - ("sample" in obj)  # every key, and every value but usage/sample, is a string
    if shape[1]:
        usage = obj["usage"]
        if not usage.keys() <= USAGE_KEYS or any(type(v) is not int or v < 0 for v in usage.values()):
            return False
        strings += len(usage)
    # A duplicate key (orjson keeps the last silently) adds a string to the line, and so do
    # escaped quotes: with exactly two quotes per expected string there is neither.
    if raw.count(b'"') == 2 * strings:
        return True
    return len(_KEY_END.findall(raw)) == len(keys) + (len(obj["usage"]) if shape[1] else 0)


class RowBuilder:
    """Appends parsed lines to a VerdictData's column tails."""

    def __init__(self, data: VerdictData) -> None:
        self.data = data
        tail = data.columns.tail
        self._text, self._item, self._hash = tail["text"].append, tail["item"].append, tail["hash"].append
        self._source, self._failed, self._offset = tail["source"].append, tail["failed"].append, tail["offset"].append
        self._sample = tail["sample"].append

    def text_id(self, raw_text: str) -> int:
        found = self.data.raw_texts.get(raw_text)
        if found is None:
            found = self.data.raw_texts[raw_text] = self.data.texts.add(normalize_text(raw_text))
        return found

    def add(self, item: str, check_text: str, answer: str, judge: str | None, prompt: str | None,
            item_hash: str | None, offset: int, sample: int = 0, task_hash: str | None = None) -> None:
        data = self.data
        text_id = data.raw_texts.get(check_text)
        if text_id is None:
            text_id = self.text_id(check_text)
        item_id = data.items.ids.get(item)
        if item_id is None:
            item_id = data.items.add(item)
        if item_hash is None:
            hash_id = NONE
        else:
            hash_id = data.hashes.ids.get(item_hash)
            if hash_id is None:
                hash_id = data.hashes.add(item_hash)
        source_key = (judge, prompt, task_hash)
        source_id = data.sources.ids.get(source_key)
        if source_id is None:
            source_id = data.sources.add(source_key)
        self._text(text_id)
        self._item(item_id)
        self._hash(hash_id)
        self._source(source_id)
        self._failed(answer == "no")
        self._sample(sample)
        self._offset(offset)

    def add_verdict(self, verdict: Verdict, offset: int) -> None:
        self.add(verdict.item, verdict.check_text, verdict.answer, verdict.judge, verdict.prompt,
                 verdict.item_hash, offset, getattr(verdict, "sample", None) or 0, verdict.task_hash)


def slow_line(raw: bytes, display: str, line_no: int, *, last: bool) -> Verdict | None:
    """The exact path: None for a blank line; TornLine for an unfinished last line."""
    text = decode_line(raw, display, line_no, last=last)
    obj = parse_line(text, display, line_no, last=last)
    return None if obj is None else validate(obj, display, line_no)


def parse_blocks(blocks: Iterable[tuple[list[bytes], int, bool]], builder: RowBuilder, display: str,
                 first_line: int) -> int:
    """Parse blocks of lines (without newlines), each with the byte offset of its first line and
    whether its last line is the file's unterminated last line. Returns the number of lines seen."""
    loads, add, plain, decode_error = orjson.loads, builder.add, _plain, orjson.JSONDecodeError
    line_no = first_line - 1
    for lines, offset, unterminated in blocks:
        last_index = len(lines) - 1 if unterminated else -1
        for index, raw in enumerate(lines):
            line_no += 1
            try:
                obj = loads(raw)
            except decode_error:
                obj = None
            if obj is not None and plain(obj, raw):
                get = obj.get
                add(obj["item"], obj["check_text"], obj["answer"], get("judge"), get("prompt"),
                    get("item_hash"), offset, get("sample", 0), get("task_hash"))
            else:
                try:
                    verdict = slow_line(raw, display, line_no, last=index == last_index)
                except TornLine:
                    verdict = None
                if verdict is not None:
                    builder.add_verdict(verdict, offset)
            offset += len(raw) + 1
    return line_no - first_line + 1


def parse_bytes(data: bytes, builder: RowBuilder, display: str, *, start: int = 0, first_line: int = 1) -> int:
    """Parse a whole buffer of JSONL (from `start`); returns lines seen."""
    if start == 0 and data.startswith(BOM):
        start = len(BOM)
    view = data[start:] if start else data
    if not view:
        return 0
    parts = view.split(b"\n")
    unterminated = not view.endswith(b"\n")
    if not unterminated:
        parts.pop()
    return parse_blocks([(parts, start, unterminated)], builder, display, first_line)


class FileScan:
    """Stream a file from `start`, hashing the bytes up to the last newline as it goes."""

    def __init__(self, handle: BinaryIO, start: int) -> None:
        self.handle = handle
        self.start = start
        self.complete_end = start  # end of the last newline-terminated line seen
        self.complete_lines = 0  # lines up to complete_end
        self.digest = hashlib.sha256()
        self.unterminated = False

    def blocks(self) -> Iterable[tuple[list[bytes], int, bool]]:
        handle = self.handle
        handle.seek(self.start)
        carry = b""
        offset = self.start
        first = self.start == 0
        while True:
            chunk = handle.read(CHUNK)
            if not chunk:
                break
            if first:
                first = False
                if chunk.startswith(BOM):  # a BOM is not part of the first line
                    self.digest.update(BOM)
                    chunk = chunk[len(BOM):]
                    offset += len(BOM)
                    self.complete_end = offset
            cut = chunk.rfind(b"\n")
            if cut < 0:
                carry += chunk
                continue
            block = carry + chunk[: cut + 1]
            carry = chunk[cut + 1:]
            self.digest.update(block)
            parts = block.split(b"\n")
            parts.pop()
            yield parts, offset, False
            offset += len(block)
            self.complete_end = offset
            self.complete_lines += len(parts)
        if carry:
            self.unterminated = True
            yield [carry], offset, True
