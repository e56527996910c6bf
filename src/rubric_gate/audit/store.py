"""The audit store: an append-only JSONL file of model findings about checks, reused by key.

A record is keyed like a verdict: which model answered, which prompt version, the check's
normalised text and a hash of the context it was asked in (the rubric's task, plus for
repairs and attacks whatever else the prompt showed). A rerun with the same key makes no call.
Later lines win over earlier ones.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rubric_gate.errors import InputError
from rubric_gate.rubric import normalize_text
from rubric_gate.sources import iter_jsonl
from rubric_gate.sources.append import append_lines, complete_json


class AuditRecord(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: str = Field(min_length=1)  # structure | grounding | repair | attack | verify | answer
    model: str = Field(min_length=1)
    prompt: str = Field(min_length=1)
    check_text: str
    context: str  # hash of what else the prompt showed (task, items, ...)
    result: dict[str, Any]
    input_tokens: int = 0
    output_tokens: int = 0
    at: str | None = None

    @property
    def key(self) -> tuple[str, str, str, str, str]:
        return self.kind, self.model, self.prompt, normalize_text(self.check_text), self.context


def context_hash(*parts: Any) -> str:
    canonical = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def default_audit_path(verdicts_path: Path) -> Path:
    """`x.verdicts.jsonl` -> `x.verdicts.audits.jsonl`: audits live beside the verdicts they go with."""
    name = verdicts_path.name
    stem = name[: -len(".jsonl")] if name.endswith(".jsonl") else name
    return verdicts_path.with_name(f"{stem}.audits.jsonl")


class AuditStore:
    def __init__(self, path: Path | None = None, display: str = "<audits>") -> None:
        self.path = path
        self.display = display
        self._records: dict[tuple[str, str, str, str, str], AuditRecord] = {}

    @classmethod
    def load(cls, path: Path, *, missing_ok: bool = True) -> AuditStore:
        store = cls(path, str(path))
        if missing_ok and not path.exists():
            return store
        text = path.read_text("utf-8")
        for line_no, obj in iter_jsonl(text, str(path), tolerate_torn_tail=True):
            try:
                record = AuditRecord.model_validate(obj)
            except ValidationError as exc:
                error = exc.errors()[0]
                key = ".".join(str(p) for p in error["loc"]) or "record"
                raise InputError(str(path), f"{key}: {error['msg']}", line_no) from None
            store._records[record.key] = record
        return store

    def __len__(self) -> int:
        return len(self._records)

    def find(self, kind: str, model: str, prompt: str, check_text: str, context: str) -> AuditRecord | None:
        return self._records.get((kind, model, prompt, normalize_text(check_text), context))

    def find_any_model(self, kind: str, prompt: str, check_text: str, context: str) -> list[AuditRecord]:
        """Every model's record for this question (replay without a live model)."""
        text = normalize_text(check_text)
        return [r for (k, _m, p, t, c), r in self._records.items() if (k, p, t, c) == (kind, prompt, text, context)]

    def record(self, kind: str, model: str, prompt: str, check_text: str, context: str,
               result: dict[str, Any], input_tokens: int = 0, output_tokens: int = 0) -> AuditRecord:
        entry = AuditRecord(kind=kind, model=model, prompt=prompt, check_text=check_text, context=context,
                            result=result, input_tokens=input_tokens, output_tokens=output_tokens,
                            at=datetime.now(UTC).isoformat(timespec="seconds"))
        self.append([entry])
        return entry

    def append(self, records: Iterable[AuditRecord]) -> None:
        """Append records, each flushed and fsynced before the next (a killed run keeps what it paid for)."""
        records = list(records)
        for entry in records:
            self._records[entry.key] = entry
        if self.path is None or not records:
            return
        # As the verdict store: a torn last line is cut first, a whole one (no newline) ended.
        append_lines(self.path, [(entry.model_dump_json(exclude_none=True) + "\n").encode("utf-8")
                                 for entry in records], complete_json)
