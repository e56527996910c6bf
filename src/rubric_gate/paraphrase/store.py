"""Paraphrases of check texts, appended to a JSONL file and reused by (check text, model, index)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from rubric_gate.errors import InputError
from rubric_gate.rubric import normalize_text
from rubric_gate.sources import iter_jsonl, read_source
from rubric_gate.sources.append import append_lines, complete_json

Key = tuple[str, str, int]  # (normalised check text, paraphraser model, index)


@dataclass(frozen=True)
class Paraphrase:
    check_text: str
    model: str
    index: int
    text: str

    @property
    def key(self) -> Key:
        return normalize_text(self.check_text), self.model, self.index

    def to_json_line(self) -> str:
        return json.dumps({"check_text": self.check_text, "model": self.model, "index": self.index,
                           "text": self.text}, ensure_ascii=False) + "\n"


def paraphrase_path(verdicts: Path) -> Path:
    """`review.verdicts.jsonl` -> `review.verdicts.paraphrases.jsonl`, beside the verdicts."""
    name = verdicts.name[: -len(".jsonl")] if verdicts.name.endswith(".jsonl") else verdicts.name
    return verdicts.with_name(name + ".paraphrases.jsonl")


class ParaphraseStore:
    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._by_key: dict[Key, Paraphrase] = {}

    @classmethod
    def load(cls, path: Path) -> ParaphraseStore:
        store = cls(path)
        if not path.exists():
            return store
        source = read_source(path)
        for line_no, obj in iter_jsonl(source.text, source.display, tolerate_torn_tail=True):
            fields = (obj.get("check_text"), obj.get("model"), obj.get("index"), obj.get("text"))
            if set(obj) != {"check_text", "model", "index", "text"} or not all(isinstance(v, str) for v in fields[:2] + fields[3:]) \
                    or type(fields[2]) is not int:
                raise InputError(source.display, "expected exactly check_text, model, text (strings) and index "
                                                 "(an integer)", line_no)
            paraphrase = Paraphrase(obj["check_text"], obj["model"], obj["index"], obj["text"])
            if not paraphrase.text.strip() or paraphrase.index < 0:
                raise InputError(source.display, "paraphrase text must be non-empty, index >= 0", line_no)
            store._by_key[paraphrase.key] = paraphrase
        return store

    def get(self, check_text: str, model: str, index: int) -> Paraphrase | None:
        return self._by_key.get((normalize_text(check_text), model, index))

    def append(self, paraphrases: Iterable[Paraphrase]) -> None:
        """Each paraphrase flushed to disk as it is added, like verdicts."""
        items = list(paraphrases)
        if self.path is not None and items:
            # A torn last line (a crash mid-write) is cut first, a whole one (no newline) ended.
            append_lines(self.path, [p.to_json_line().encode("utf-8") for p in items], complete_json)
        for paraphrase in items:
            self._by_key[paraphrase.key] = paraphrase
