"""Parse verdict JSONL into columns: msgspec typed decoding of whole blocks for the common
line, the exact `json` + pydantic path (and its `file:line` errors) for anything unusual.

The fast path decodes a block of lines into structs derived from the `Verdict` model (the same
keys, types and bounds, nothing coerced): in one call when every line of the block is one JSON
object and nothing else (`_whole_block`), else a line at a time. It checks the whole block for
duplicate keys at once (a duplicate key is a string the decoded rows do not hold: the block's
quote count says so), and adds the block's rows column by column. A line it does not take
(duplicate keys, NaN, huge numbers, lone surrogates, invalid UTF-8, null or coercible values,
bad values) goes through `sources.jsonl.parse_line` and `Verdict.model_validate`, which accept
or reject it exactly as a full read always did.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable
from itertools import compress, repeat
from operator import countOf, is_
from typing import Any

import numpy as np
from pydantic import ValidationError

from rubric_gate.errors import InputError
from rubric_gate.rubric.model import normalize_text
from rubric_gate.sources.jsonl import TornLine, decode_line, parse_line
from rubric_gate.verdicts.model import Verdict
from rubric_gate.verdicts.table_data import ANSWER_CODES, NONE, VerdictData

ANSWER_BYTES = {answer: bytes([code]) for answer, code in ANSWER_CODES.items()}  # the answer column's int8

# Bytes decoded at a time. Small on purpose: a block's decoded rows (~5x its bytes) and its
# buffers are freed after it, but the allocator keeps what a few survivors (the item ids the
# pools intern) pin, and glibc's heap keeps what 4 MiB buffers fragment: at 4 MiB a 255 MiB
# store's parse left ~60 MiB more resident than at 256 KiB, which is also no slower.
CHUNK = 1 << 18
BOM = b"\xef\xbb\xbf"
QUOTE, NEWLINE, OPEN, CLOSE = ord('"'), ord("\n"), ord("{"), ord("}")
HAS_SAMPLE = "sample" in Verdict.model_fields  # repeated sampling: the 0-based index of an answer


def _fast() -> Any:
    """The fast path's msgspec decoding, imported by the first parse (a rerun reads the index)."""
    from rubric_gate.verdicts import line_struct

    return line_struct


def validation_message(exc: ValidationError, obj: dict[str, Any]) -> str:
    error = exc.errors()[0]
    key = ".".join(str(p) for p in error["loc"]) or "verdict"
    if error["type"] == "missing":
        return f"missing required key '{key}'"
    if key == "answer":
        return f"answer must be 'yes', 'no' or 'n/a', got {obj.get('answer')!r}"
    if error["type"] == "extra_forbidden":
        return f"unknown key '{key}'"
    return f"{key}: {error['msg']}"


def validate(obj: dict[str, Any], display: str, line_no: int) -> Verdict:
    try:
        return Verdict.model_validate(obj)
    except ValidationError as exc:
        raise InputError(display, validation_message(exc, obj), line_no) from None


def _resolved(out: list[Any], cache: dict[Any, int], values: Callable[[], list[Any]], resolve: Any) -> array:
    """`out` (ids looked up in `cache`, None where it lacked the value) as an int32 array.

    Where a value was new, each distinct new value (`values()` lists them all) is interned by
    `resolve`, in first-seen order, and the block looked up again: a block of a store sorted by
    item holds the first rows of a few items, so a None per row but few values to resolve."""
    if None in out:
        listed = values()
        for value in dict.fromkeys(compress(listed, map(is_, out, repeat(None)))):
            if value not in cache:
                cache[value] = resolve(value)
        out = list(map(cache.__getitem__, listed))
    # `array(code, list)` converts a list twice as fast as `array.extend(list)`
    return array("i", out)


def _ids(cache: dict[Any, int], values: list[Any], resolve: Any) -> array:
    """Interned ids of `values` through `cache` (value -> id), resolving the values it lacks."""
    return _resolved(list(map(cache.get, values)), cache, lambda: values, resolve)


def _ids_of(cache: dict[Any, int], rows: list[Any], getter: Any, resolve: Any) -> array:
    """`_ids` of each row's value (taken by `getter`), the values listed only when one is new
    (for check texts: a block rarely holds a new one)."""
    return _resolved(list(map(cache.get, map(getter, rows))), cache, lambda: list(map(getter, rows)), resolve)


def _held(rows: list[Any], getter: Any, unset: Any) -> list[Any] | None:
    """Each row's value of an optional field; None when no row holds it (then no list is built:
    a field absent from the first row is counted before it is listed)."""
    if getter(rows[0]) is unset and countOf(map(getter, rows), unset) == len(rows):
        return None
    return list(map(getter, rows))


class RowBuilder:
    """Appends parsed lines to a VerdictData's column tails."""

    def __init__(self, data: VerdictData) -> None:
        self.data = data
        tail = data.columns.tail
        self._text, self._item, self._hash = tail["text"].append, tail["item"].append, tail["hash"].append
        self._source, self._answer, self._offset = tail["source"].append, tail["answer"].append, tail["offset"].append
        self._sample = tail["sample"].append
        # The fast path's own caches, keyed by values as decoded (UNSET where a key is absent).
        self._hash_ids: dict[Any, int] = {}
        self._source_ids: dict[Any, int] = {}

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
        hash_id: int | None
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
        self._answer(ANSWER_CODES[answer])
        self._sample(sample)
        self._offset(offset)

    def add_verdict(self, verdict: Verdict, offset: int) -> None:
        self.add(verdict.item, verdict.check_text, verdict.answer, verdict.judge, verdict.prompt,
                 verdict.item_hash, offset, getattr(verdict, "sample", None) or 0, verdict.task_hash)

    def add_objects(self, verdicts: list[Verdict], first_offset: int) -> None:
        """Append `verdicts`' rows (as `add_verdict` would, a column at a time); their offsets
        count on from `first_offset` (indexes into the segment's list of objects)."""
        data = self.data
        raw_texts = dict.fromkeys(v.check_text for v in verdicts)
        text_ids = {text: self.text_id(text) for text in raw_texts}
        sources: dict[tuple[str | None, str | None, str | None], int] = {}
        for v in verdicts:
            key = (v.judge, v.prompt, v.task_hash)
            if key not in sources:
                sources[key] = data.sources.add(key)
        tail = data.columns.tail
        tail["text"].extend([text_ids[v.check_text] for v in verdicts])
        tail["item"].extend([data.items.add(v.item) for v in verdicts])
        tail["hash"].extend([NONE if v.item_hash is None else data.hashes.add(v.item_hash) for v in verdicts])
        tail["source"].extend([sources[(v.judge, v.prompt, v.task_hash)] for v in verdicts])
        tail["answer"].extend([ANSWER_CODES[v.answer] for v in verdicts])
        tail["sample"].extend([v.sample or 0 for v in verdicts])
        tail["offset"].extend(range(first_offset, first_offset + len(verdicts)))

    def add_rows(self, rows: list[Any], offsets: Any) -> None:
        """Append decoded fast-path rows, one column at a time."""
        if not rows:
            return
        data = self.data
        tail = data.columns.tail
        fast = _fast()
        unset = fast.UNSET
        n = len(rows)
        getter = fast.GETTER
        tail["text"].extend(_ids_of(data.raw_texts, rows, getter["check_text"], self._new_text))
        tail["item"].extend(data.items.add_all(map(getter["item"], rows)))  # a sorted store's blocks: new items
        tail["answer"].frombytes(b"".join(map(ANSWER_BYTES.__getitem__, map(getter["answer"], rows))))
        hashes = _held(rows, getter["item_hash"], unset)
        if hashes is None:
            tail["hash"].extend(array("i", [NONE]) * n)
        else:
            self._hash_ids.setdefault(unset, NONE)
            tail["hash"].extend(_ids(self._hash_ids, hashes, data.hashes.add))
        source = fast.SOURCE  # a row's (judge, prompt, task_hash), UNSET where absent
        head = rows[0]
        # One source: the usual block (no list of them). Counted a field at a time: a tuple per
        # row to compare cost 1.7x as much, and tuples compare field by field all the same.
        if all(countOf(map(getter[name], rows), getter[name](head)) == n for name in fast.SOURCE_FIELDS):
            tail["source"].extend(_ids(self._source_ids, [source(head)], self._new_source) * n)
        else:
            tail["source"].extend(_ids(self._source_ids, list(map(source, rows)), self._new_source))
        samples = _held(rows, getter["sample"], unset)
        if samples is None:
            tail["sample"].extend(array("i", [0]) * n)
        else:
            tail["sample"].extend([0 if value is unset else value for value in samples])
        tail["offset"].extend(offsets)

    def _new_text(self, raw_text: str) -> int:
        return self.data.texts.add(normalize_text(raw_text))

    def _new_source(self, key: tuple[Any, ...]) -> int:
        unset = _fast().UNSET
        return self.data.sources.add(tuple(None if value is unset else value for value in key))


def slow_line(raw: bytes, display: str, line_no: int, *, last: bool) -> Verdict | None:
    """The exact path: None for a blank line; TornLine for an unfinished last line."""
    text = decode_line(raw, display, line_no, last=last)
    obj = parse_line(text, display, line_no, last=last)
    return None if obj is None else validate(obj, display, line_no)


def _decoded(lines: list[bytes]) -> list[Any]:
    """Each line's fast-path row, or None where the exact path must decide."""
    fast = _fast()
    decode, errors = fast.decode_line, fast.DECODE_ERRORS
    try:
        return [decode(raw) for raw in lines]  # the common block: no line needs a second look
    except errors:
        pass
    rows: list[Any] = []
    for raw in lines:
        try:
            rows.append(decode(raw))
        except errors:
            rows.append(None)
    return rows


def _whole_block(block: bytes, offset: int, unterminated: bool) -> tuple[list[Any], array] | None:
    """The block's rows decoded in one call and its line starts (as `_line_starts`), when every
    line of the block is one JSON object and nothing else and no line holds a key twice; None
    when a line needs a look of its own (a blank or indented line, a CR, two objects on a line,
    a line that does not decode, a key twice).

    `decode_lines` reads values separated by any whitespace, so it is held to the lines: each
    newline must close one object (`}`) and open the next (`{`). A newline there is between two
    top-level values: inside a string it would not decode, and after a nested object's `}` a
    `{` cannot follow. So no value spans a line, every line holds at least one, and as many
    values as lines is one per line."""
    fast = _fast()
    bytes_ = np.frombuffer(block, dtype=np.uint8)
    ends = np.flatnonzero(bytes_ == NEWLINE)
    lines = len(ends) + (1 if unterminated else 0)
    if not lines or (len(ends) and ends[0] == 0):
        return None
    opens = ends + 1 if unterminated else ends[:-1] + 1
    if not (bytes_[ends - 1] == CLOSE).all() or not (bytes_[opens] == OPEN).all():
        return None
    try:
        rows = fast.decode_lines(block)
    except fast.DECODE_ERRORS:
        return None
    if len(rows) != lines:
        return None
    if not _clear_of_duplicate_keys(block, bytes_, rows):
        return None
    starts = np.empty(lines + 1, dtype=np.int64)
    starts[0] = offset
    starts[1:len(ends) + 1] = ends + (offset + 1)
    if unterminated:
        starts[lines] = offset + len(block) + 1
    return rows, array("q", starts.tobytes())


def _clear_of_duplicate_keys(block: bytes, bytes_: np.ndarray, rows: list[Any]) -> bool:
    """Whether no line of a whole block (every row decoded) has a key twice: its quote count is
    that of the rows re-encoded (`_without_duplicate_keys`, a block at once)."""
    if b"\\" in block and b"\\u0022" in block:  # a quote written without a quote character
        return False
    encoded = np.frombuffer(_fast().encode(rows), dtype=np.uint8)
    return int(np.count_nonzero(bytes_ == QUOTE)) == int(np.count_nonzero(encoded == QUOTE))


def _without_duplicate_keys(block: bytes, lines: list[bytes], rows: list[Any]) -> None:
    """Set to None the rows whose line has a key twice (the decoder keeps the last silently).

    Such a line holds a string its row does not, so it has more quote characters than the
    row re-encoded; one count over the block clears the common block at once. `\\u0022` is
    the one way to write a quote without a quote character: such lines take the exact path."""
    quoted = b'"'
    encode = _fast().encode
    if b"\\u0022" not in block:
        if None not in rows:
            kept, left_out = rows, 0
        else:
            kept = [row for row in rows if row is not None]
            left_out = sum(raw.count(quoted) for raw, row in zip(lines, rows, strict=True) if row is None)
        if block.count(quoted) == encode(kept).count(quoted) + left_out:
            return
    for index, (raw, row) in enumerate(zip(lines, rows, strict=True)):
        if row is not None and (b"\\u0022" in raw or raw.count(quoted) != encode(row).count(quoted)):
            rows[index] = None


def _line_starts(block: bytes, offset: int, count: int) -> array:
    """The byte offset of each of the block's `count` lines, then of the byte after the last."""
    ends = np.flatnonzero(np.frombuffer(block, dtype=np.uint8) == 10)[:count]
    starts = np.empty(count + 1, dtype=np.int64)
    starts[0] = offset
    starts[1:len(ends) + 1] = ends + (offset + 1)
    if len(ends) < count:  # an unterminated last line
        starts[count] = offset + len(block) + 1
    return array("q", starts.tobytes())


def parse_blocks(blocks: Iterable[tuple[bytes, int, bool]], builder: RowBuilder, display: str,
                 first_line: int) -> int:
    """Parse blocks of whole lines, each with the byte offset of its first line and whether it
    is the file's unterminated last line. Returns the number of lines seen."""
    line_no = first_line - 1
    for block, offset, unterminated in blocks:
        whole = _whole_block(block, offset, unterminated)
        if whole is not None:
            rows, starts = whole
            builder.add_rows(rows, starts[:-1])
            line_no += len(rows)
            continue
        lines = block.split(b"\n")
        if not unterminated:
            lines.pop()  # the empty string after the block's last newline
        rows = _decoded(lines)
        _without_duplicate_keys(block, lines, rows)
        starts = _line_starts(block, offset, len(lines))
        if None not in rows:
            builder.add_rows(rows, starts[:-1])
            line_no += len(lines)
            continue
        run_start = 0
        for index, row in enumerate(rows):
            if row is not None:
                continue
            builder.add_rows(rows[run_start:index], starts[run_start:index])
            run_start = index + 1
            try:
                verdict = slow_line(lines[index], display, line_no + index + 1,
                                    last=unterminated and index == len(lines) - 1)
            except TornLine:
                verdict = None
            if verdict is not None:
                builder.add_verdict(verdict, starts[index])
        builder.add_rows(rows[run_start:], starts[run_start:-1])
        line_no += len(lines)
    return line_no - first_line + 1


def parse_bytes(data: bytes, builder: RowBuilder, display: str, *, start: int = 0, first_line: int = 1) -> int:
    """Parse a whole buffer of JSONL (from `start`); returns lines seen."""
    if start == 0 and data.startswith(BOM):
        start = len(BOM)
    if start >= len(data):
        return 0

    def blocks() -> Iterable[tuple[bytes, int, bool]]:  # one block of about CHUNK bytes at a time
        at = start
        while at < len(data):
            cut = data.find(b"\n", at + CHUNK)
            end = len(data) if cut < 0 else cut + 1
            yield data[at:end], at, end == len(data) and not data.endswith(b"\n")
            at = end

    return parse_blocks(blocks(), builder, display, first_line)
