"""Two versions of a verdict store (a PR's head against its base), one function per question:

- `added_lines(base, head)`: which lines did the head write? Lines the base does not hold,
  unless one is a reformatted copy of a base verdict for the same check text and item.
- `differing_lines(base, head)`: which lines can make a lookup read otherwise? What the gate
  reads, compared group by group: a copy of an earlier line, a reordering or a removal counts.
- `appended_lines(base, head)`: is the head the base's bytes plus whole lines, and which?
- `merged_added(base, head, lines)`: the base's verdicts, then some of the head's added lines.

Two blob stores where one extends the other (a PR appending lines) compare only the appended
lines, and each answer is kept in the blob cache for every store of the same two blobs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from rubric_gate.rubric.model import normalize_text
from rubric_gate.verdicts.lines import line_fingerprints, verdicts_at
from rubric_gate.verdicts.model import Verdict
from rubric_gate.verdicts.store import VerdictStore
from rubric_gate.verdicts.table_data import ANSWER_CODES, NONE, VerdictData

Lines = tuple[Verdict, ...]


def added_lines(base: VerdictStore, head: VerdictStore) -> list[Verdict]:
    """The head's verdicts that `base` does not hold: lines not in `base`, unless one is a
    reformatted copy (same fields) of a `base` verdict for the same check text and item.
    These are the lines a PR wrote; whether the answers the gate reads changed is
    `differing_lines`' question (a copy of an earlier base line is no new line, yet it wins).

    Only the new lines are read back as `Verdict`s."""
    mine, theirs = head.blob, base.blob
    if mine is not None and theirs is not None:
        if mine.extends(theirs) or mine is theirs:
            prefix = len(theirs.data)
            return list(mine.cache.memo((theirs, mine), "added", lambda: _added(
                base, head, prefix, lambda: _appended(base, head))))
        if theirs.extends(mine):
            return []  # every line of the head starts the base
    return _added(base, head)


def differing_lines(base: VerdictStore, head: VerdictStore) -> tuple[Lines, Lines]:
    """The lines (`base`'s, then `head`'s) that can make a lookup read otherwise at the head.

    A lookup of (check text, item) reads two groups of lines, the text's lines for the item's
    id and those for its content hash, and the last line of a group wins. Where a group holds
    the same lines in the same order on both sides, every lookup reading it agrees; where
    not, the lines at each position that differs are returned, from either side. So a copy of
    an earlier line, a reordering and a removal are seen like a new line: what is compared is
    what the gate reads, not which lines one side lacks (`added_lines`' question).
    """
    mine, theirs = head.blob, base.blob
    if mine is not None and theirs is not None:
        if mine is theirs:
            return (), ()
        if mine.extends(theirs):
            return (), _appended(base, head)
        if theirs.extends(mine):
            return _appended(head, base), ()
    before, after = _differing_rows(base._data, head._data)
    return tuple(verdicts_at(base._data, before, base.display)), tuple(verdicts_at(head._data, after, head.display))


def appended_lines(base: VerdictStore, head: VerdictStore) -> Lines | None:
    """The lines the head's blob adds after all of `base`'s bytes; None unless it is `base`'s
    bytes plus whole lines (then what a merge of it with another version leaves is unknown)."""
    mine, theirs = head.blob, base.blob
    if mine is None or theirs is None or not (mine is theirs or mine.extends(theirs)):
        return None
    return differing_lines(base, head)[1]


def merged_added(base: VerdictStore, head: VerdictStore, lines: Sequence[Verdict]) -> VerdictStore:
    """`base.merged(VerdictStore(lines))`, for `lines` taken from `added_lines(base, head)`.

    When they are all of them and the head's blob is the base's plus exactly those lines, that
    is the head's own columns: shared (copied on write), not rebuilt per rubric."""
    mine, theirs = base.blob, head.blob
    if mine is not None and theirs is not None:
        known = theirs.cache.known((mine, theirs), "added")
        if (known is not None and len(lines) == len(known) == len(head) - len(base)
                and all(a is b for a, b in zip(lines, known, strict=True)) and theirs.extends(mine)):
            return VerdictStore._of_blob(theirs, head._data, base.path, base.display)
    return base.merged(VerdictStore(lines))


def _appended(shorter: VerdictStore, longer: VerdictStore) -> Lines:
    """The verdicts of `longer`'s rows after `shorter`'s (a blob `longer`'s blob extends), read
    back once for every store of the two blobs: `differing_lines` and `added_lines` ask for the
    same lines (a PR appending 10k verdicts: 13 MiB of `Verdict`s each time)."""
    prefix, blob = shorter.blob, longer.blob
    assert prefix is not None and blob is not None
    return blob.cache.memo((prefix, blob), "appended", lambda: tuple(verdicts_at(
        longer._data, np.arange(len(prefix.data), len(longer._data), dtype=np.int64), longer.display)))


def _added(base: VerdictStore, head: VerdictStore, prefix_rows: int | None = None,
           appended: Callable[[], Sequence[Verdict]] | None = None) -> list[Verdict]:
    """`added_lines`; `prefix_rows`: the head's first rows are `base`'s rows (same lines),
    and `appended()`, when given, the verdicts of the rows after them."""
    if prefix_rows is None:
        candidates = np.flatnonzero(~np.isin(line_fingerprints(head._data), line_fingerprints(base._data)))
    else:
        candidates = _new_lines(head._data, prefix_rows)
    if not len(candidates):
        return []
    if appended is None or prefix_rows is None:
        fresh = verdicts_at(head._data, candidates, head.display)
    else:
        lines = appended()
        fresh = [lines[row] for row in (candidates - prefix_rows).tolist()]
    # Canonical lines of the base verdicts that share a (check text, item) with a candidate.
    base_data = base._data
    arrays = base_data.columns.arrays()
    wanted = set()
    for verdict in fresh:
        text_id = base_data.texts.ids.get(normalize_text(verdict.check_text))
        item_id = base_data.items.ids.get(verdict.item)
        if text_id is not None and item_id is not None:
            wanted.add(text_id * max(1, len(base_data.items)) + item_id)
    known: set[str] = set()
    if wanted:
        keys = arrays["text"].astype(np.int64) * max(1, len(base_data.items)) + arrays["item"]
        rows = np.flatnonzero(np.isin(keys, np.fromiter(wanted, dtype=np.int64)))
        known.update(verdict.to_json_line() for verdict in verdicts_at(base_data, rows, base.display))
    return [v for v in fresh if v.to_json_line() not in known]


def _new_lines(data: VerdictData, prefix_rows: int) -> np.ndarray:
    """The rows after the first `prefix_rows` (which are the base's rows, sharing its string
    ids) whose line the base does not hold. A line equal to a base line parses to the same
    check text and item, so only the base lines of those (text, item) keys are compared."""
    arrays = data.columns.arrays()
    fresh = np.arange(prefix_rows, len(data), dtype=np.int64)
    if not len(fresh):
        return fresh
    span = max(1, len(data.items)) + 1
    keys = arrays["text"].astype(np.int64) * span + (arrays["item"] + 1)
    shared = np.flatnonzero(np.isin(keys[:prefix_rows], keys[fresh]))
    if not len(shared):
        return fresh
    known = line_fingerprints(data, shared)
    return fresh[~np.isin(line_fingerprints(data, fresh), known)]


def _differing_rows(before: VerdictData, after: VerdictData) -> tuple[np.ndarray, np.ndarray]:
    """The rows of each side (ascending) at a position of their (text, item id) or (text, item
    hash) group that the other side does not fill with the same line as lookups read it (item,
    hash, judge/prompt/task, answer and sample); `differing_lines`' general case. Strings are
    compared through ids shared by both sides, so the comparison is exact."""
    pools = ("texts", "items", "hashes", "sources")
    joint: dict[str, dict[Any, int]] = {name: {} for name in pools}
    mapped = []
    for data in (before, after):
        maps = {name: np.array([joint[name].setdefault(v, len(joint[name])) for v in getattr(data, name).values]
                               + [NONE], dtype=np.int64) for name in pools}
        a = data.columns.arrays()
        mapped.append({"text": maps["texts"][a["text"]], "item": maps["items"][a["item"]],
                       "hash": maps["hashes"][a["hash"]], "source": maps["sources"][a["source"]],
                       "answer": a["answer"].astype(np.int64), "sample": a["sample"].astype(np.int64)})
    sizes = {"text": len(joint["texts"]), "item": len(joint["items"]) + 1, "hash": len(joint["hashes"]) + 1,
             "source": len(joint["sources"]) + 1, "answer": len(ANSWER_CODES),
             "sample": 1 + max((int(m["sample"].max()) for m in mapped if len(m["sample"])), default=0)}
    differs = [np.zeros(len(m["text"]), dtype=bool) for m in mapped]
    for by, other in (("item", "hash"), ("hash", "item")):
        keys = []
        for m in mapped:
            rows = np.flatnonzero(m[by] >= 0)  # rows without an item hash are in no hash group
            group = m["text"][rows] * sizes[by] + m[by][rows]
            order = np.argsort(group, kind="stable")  # file order within each group
            ordered = group[order]
            starts = np.ones(len(ordered), dtype=bool)
            starts[1:] = ordered[1:] != ordered[:-1]
            at = np.arange(len(ordered))
            position = np.empty(len(rows), dtype=np.int64)
            position[order] = at - np.maximum.accumulate(np.where(starts, at, 0))
            keys.append((rows, [group, position, m[other][rows] + 1, m["source"][rows] + 1, m["answer"][rows],
                                m["sample"][rows]]))
        longest = max((int(columns[1].max()) for _, columns in keys if len(columns[1])), default=0)
        bounds = [sizes["text"] * sizes[by], longest + 1, sizes[other] + 1, sizes["source"] + 1, sizes["answer"],
                  sizes["sample"]]
        packed = [_packed(columns, bounds) for _, columns in keys]
        for side, (rows, _) in enumerate(keys):
            differs[side][rows[~np.isin(packed[side], packed[1 - side])]] = True
    return np.flatnonzero(differs[0]), np.flatnonzero(differs[1])


def _packed(columns: list[np.ndarray], bounds: list[int]) -> np.ndarray:
    """Rows of non-negative integer `columns` (each below its bound) as one comparable key per
    row: packed into as few int64 words as hold them exactly, several viewed as one byte string."""
    words: list[np.ndarray] = []
    word, room = None, 1
    for column, bound in zip(columns, bounds, strict=True):
        if word is not None and room * bound < 2**62:
            word, room = word * bound + column, room * bound
        else:
            if word is not None:
                words.append(word)
            word, room = column.astype(np.int64), bound
    assert word is not None
    words.append(word)
    if len(words) == 1:
        return words[0]
    stacked = np.ascontiguousarray(np.stack(words, axis=1))
    return stacked.view(np.dtype((np.void, stacked.dtype.itemsize * len(words)))).ravel()
