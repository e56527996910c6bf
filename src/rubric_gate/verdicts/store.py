"""The verdict store: an append-only JSONL file of verdicts, indexed for lookup.

Two ways to find a verdict for (check text, item):
- replay (no live judge): any verdict for the same normalised check text and the same item,
  by id or content hash; a verdict whose `item_hash` no longer matches the item is stale.
- keyed (live judge): judge, prompt version, normalised check text and item content hash
  must all match, so exactly the pairs whose inputs changed are judged again.
Later lines win over earlier ones, so re-recording a pair supersedes it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from pydantic import ValidationError

from rubric_gate.calibration.model import CalibrationItem
from rubric_gate.errors import InputError
from rubric_gate.rubric.model import normalize_text
from rubric_gate.sources import SourceText, iter_jsonl, read_source
from rubric_gate.verdicts.model import Verdict

KeyedIndex = dict[tuple[str | None, str | None, str, str, int], Verdict]


class VerdictStore:
    def __init__(self, verdicts: Iterable[Verdict] = (), path: Path | None = None, display: str = "<verdicts>") -> None:
        self.path = path
        self.display = display
        self._verdicts: list[Verdict] = []
        self._by_item_id: dict[tuple[str, str], Verdict] = {}
        self._by_item_hash: dict[tuple[str, str], Verdict] = {}
        self._keyed: KeyedIndex = {}
        for verdict in verdicts:
            self._index(verdict)

    # -- reading -----------------------------------------------------------------------------
    @classmethod
    def from_source(cls, source: SourceText) -> VerdictStore:
        store = cls(path=source.path, display=source.display)
        for line_no, obj in iter_jsonl(source.text, source.display, tolerate_torn_tail=True):
            try:
                store._index(Verdict.model_validate(obj))
            except ValidationError as exc:
                error = exc.errors()[0]
                key = ".".join(str(p) for p in error["loc"]) or "verdict"
                if error["type"] == "missing":
                    what = f"missing required key '{key}'"
                elif key == "answer":
                    what = f"answer must be 'yes' or 'no', got {obj.get('answer')!r}"
                elif error["type"] == "extra_forbidden":
                    what = f"unknown key '{key}'"
                else:
                    what = f"{key}: {error['msg']}"
                raise InputError(source.display, what, line_no) from None
        return store

    @classmethod
    def load(cls, spec: str | Path, cwd: Path | None = None, *, missing_ok: bool = False) -> VerdictStore:
        path = Path(spec) if cwd is None or Path(spec).is_absolute() else cwd / spec
        if missing_ok and ":" not in str(spec) and not path.exists():
            return cls(path=path, display=str(spec))
        return cls.from_source(read_source(spec, cwd))

    def _index(self, verdict: Verdict) -> None:
        text = normalize_text(verdict.check_text)
        self._verdicts.append(verdict)
        sample = verdict.sample or 0
        if sample == 0:  # replay reads one answer per pair: the first sample
            self._by_item_id[(text, verdict.item)] = verdict
        if verdict.item_hash is not None:
            if sample == 0:
                self._by_item_hash[(text, verdict.item_hash)] = verdict
            self._keyed[(verdict.judge, verdict.prompt, text, verdict.item_hash, sample)] = verdict

    def __len__(self) -> int:
        return len(self._verdicts)

    def __iter__(self):
        return iter(self._verdicts)

    def find(
        self,
        check_text: str,
        item: CalibrationItem,
        *,
        judge: str | None = None,
        prompt: str | None = None,
        sample: int = 0,
    ) -> Verdict | None:
        text = normalize_text(check_text)
        if judge is not None:
            return self._keyed.get((judge, prompt, text, item.content_hash, sample))
        if sample:
            return None  # replay has no judge to key samples by
        by_id = self._by_item_id.get((text, item.id))
        if by_id is not None and by_id.item_hash not in (None, item.content_hash):
            by_id = None  # recorded for an older version of this item's content
        return by_id or self._by_item_hash.get((text, item.content_hash))

    def merged(self, other: VerdictStore) -> VerdictStore:
        """A store holding this store's verdicts, then `other`'s (which win on conflict)."""
        merged = VerdictStore(path=self.path, display=self.display)
        for verdict in [*self._verdicts, *other._verdicts]:
            merged._index(verdict)
        return merged

    # -- writing -----------------------------------------------------------------------------
    def append(self, verdicts: Iterable[Verdict]) -> None:
        """Append verdicts to the file, each flushed to disk before the next."""
        if self.path is None:
            for verdict in verdicts:
                self._index(verdict)
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        _drop_torn_tail(self.path)
        with self.path.open("a", encoding="utf-8") as handle:
            for verdict in verdicts:
                handle.write(verdict.to_json_line())
                handle.flush()
                os.fsync(handle.fileno())
                self._index(verdict)


def _drop_torn_tail(path: Path) -> None:
    """Cut a last line left unfinished by a crash, so appended lines start on a line of their own.

    A torn line holds no complete verdict (reads already skip it); every whole line stays.
    """
    if not path.exists() or path.stat().st_size == 0:
        return
    with path.open("r+b") as handle:
        end = handle.seek(0, os.SEEK_END)
        position = end
        while position > 0:
            start = max(0, position - 65536)
            handle.seek(start)
            chunk = handle.read(position - start)
            if position == end and chunk.endswith(b"\n"):
                return
            newline = chunk.rfind(b"\n")
            if newline >= 0:
                handle.truncate(start + newline + 1)
                return
            position = start
        handle.truncate(0)
