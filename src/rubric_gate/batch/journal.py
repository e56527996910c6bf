"""The batch journal: an append-only JSONL file beside the verdict store recording every batch.

Lines, each flushed and fsynced before the next step that depends on it:
  {"event": "open", "local": L, "provider", "judge", "prompt", "at", "created_after"}   intent
  {"event": "request", "local": L, "custom_id": C, "pairs": [[item, item_hash, check, check_text, task_hash], ...]}
  {"event": "submitted", "local": L, "batch_id": B}      the provider accepted it
  {"event": "closed", "local": L, "batch_id": B}         every result is in the verdict store
  {"event": "abandoned", "local": L}                     the intent was never submitted

A batch is written as intent and requests *before* it is submitted and its id right after, so
a kill at any moment loses no batch id the provider knows (an intent without an id is looked up
by the runner before it submits anything again). Reading streams the file; the request lines of
a batch are read back only when that batch is collected.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from rubric_gate.rubric import normalize_text

JOURNAL_SUFFIX = ".batches"

# One (check, item) pair as journaled: enough to write its verdict without the rubric.
# (item id, item hash, check id, check text, task hash); journals written before the task hash
# have four fields, and their verdicts carry no task hash (so no keyed lookup reuses them).
PairRecord = tuple[str, ...]


def journal_path(verdicts: Path) -> Path:
    return verdicts.with_name(verdicts.name + JOURNAL_SUFFIX)


def record_task_hash(record: PairRecord) -> str | None:
    return record[4] if len(record) > 4 else None


def pair_key(record: PairRecord) -> tuple[str, str, str]:
    """The store key of a journaled pair, as `Pair.key`: (normalised check text, item hash, task hash)."""
    return normalize_text(record[3]), record[1], record_task_hash(record) or ""


@dataclass
class JournaledBatch:
    local: str
    provider: str
    judge: str
    prompt: str
    created_after: float
    batch_id: str | None = None
    requests: int = 0
    keys: set[tuple[str, str, str]] = field(default_factory=set)  # pairs inside, while the batch is open


class BatchJournal:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._handle: IO[str] | None = None
        self._checked = False
        self.warnings: list[str] = []  # what recovering a damaged journal did, for the caller to show

    # -- writing -----------------------------------------------------------------------------
    def _write(self, record: dict[str, Any], *, sync: bool = True) -> None:
        if self._handle is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            _drop_torn_tail(self.path)
            self._handle = self.path.open("a", encoding="utf-8")
        self._handle.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
        if sync:
            self.sync()

    def sync(self) -> None:
        if self._handle is not None:
            self._handle.flush()
            os.fsync(self._handle.fileno())

    def open_batch(self, local: str, provider: str, judge: str, prompt: str) -> None:
        self._write({
            "event": "open", "local": local, "provider": provider, "judge": judge, "prompt": prompt,
            "at": datetime.now(UTC).isoformat(timespec="seconds"), "created_after": time.time(),
        }, sync=False)

    def add_request(self, local: str, custom_id: str, pairs: list[PairRecord]) -> None:
        # Synced once for the whole batch by `sync()` before it is submitted.
        self._write({"event": "request", "local": local, "custom_id": custom_id,
                     "pairs": [list(p) for p in pairs]}, sync=False)

    def submitted(self, local: str, batch_id: str) -> None:
        self._write({"event": "submitted", "local": local, "batch_id": batch_id})

    def closed(self, local: str, batch_id: str) -> None:
        self._write({"event": "closed", "local": local, "batch_id": batch_id})

    def abandoned(self, local: str) -> None:
        self._write({"event": "abandoned", "local": local})

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    # -- reading -----------------------------------------------------------------------------
    def _records(self) -> Iterator[dict[str, Any]]:
        self.sync()
        if not self.path.exists():
            return
        if not self._checked:
            self._checked = True
            self._recover()
        with self.path.open("rb") as handle:
            for line in handle:
                if not line.endswith(b"\n"):
                    return  # torn tail from a crash: that step never completed
                record = _record(line)
                if record is not None:
                    yield record

    def _recover(self) -> None:
        """A complete line that does not read (a flipped byte, a bad disk): keep the damaged file
        aside, go on with the lines that read. A batch whose lines were lost may be submitted
        again (collection never stores a pair twice); nothing is guessed."""
        with self.path.open("rb") as handle:
            lines = handle.readlines()
        complete = lines[:-1] if lines and not lines[-1].endswith(b"\n") else lines
        bad = {number for number, line in enumerate(complete, 1) if _record(line) is None}
        if not bad:
            return
        self.close()
        aside = self.path.with_name(f"{self.path.name}.damaged-{int(time.time())}")
        shutil.copy2(self.path, aside)
        fresh = self.path.with_name(self.path.name + ".tmp")
        with fresh.open("wb") as handle:
            handle.writelines(line for number, line in enumerate(complete, 1) if number not in bad)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(fresh, self.path)
        shown = ", ".join(str(n) for n in sorted(bad)[:5]) + (f" and {len(bad) - 5} more" if len(bad) > 5 else "")
        self.warnings.append(f"{self.path}: line {shown} of the batch journal did not read; kept the damaged "
                             f"file as {aside.name} and went on with the other lines (a batch recorded only "
                             "there may be submitted again)")

    def open_batches(self, judge: str, prompt: str) -> list[JournaledBatch]:
        """Batches for this judge and prompt version that are not closed or abandoned, with the
        keys of the pairs inside them (two streaming passes: headers, then request lines)."""
        batches: dict[str, JournaledBatch] = {}
        for record in self._records():
            event, local = record.get("event"), record.get("local", "")
            if event == "open" and record.get("judge") == judge and record.get("prompt") == prompt:
                batches[local] = JournaledBatch(local, record["provider"], judge, prompt,
                                                float(record.get("created_after", 0)))
            elif event == "submitted" and local in batches:
                batches[local].batch_id = record["batch_id"]
            elif event in ("closed", "abandoned"):
                batches.pop(local, None)
        if batches:
            for record in self._records():
                batch = batches.get(record.get("local", ""))
                if batch is not None and record.get("event") == "request":
                    batch.requests += 1
                    batch.keys.update(pair_key(tuple(p)) for p in record["pairs"])
        return list(batches.values())

    def known_batch_ids(self) -> set[str]:
        return {r["batch_id"] for r in self._records() if r.get("event") == "submitted"}

    def remove_if_idle(self) -> bool:
        """Delete the journal once no batch in it (for any judge) is open: its history is in
        the verdicts (each carries its batch id), and CI caches stay small."""
        opened: set[str] = set()
        for record in self._records():
            if record.get("event") == "open":
                opened.add(record.get("local", ""))
            elif record.get("event") in ("closed", "abandoned"):
                opened.discard(record.get("local", ""))
        if opened:
            return False
        self.close()
        self.path.unlink(missing_ok=True)
        return True

    def requests_of(self, local: str) -> dict[str, list[PairRecord]]:
        """custom_id -> pairs, for one batch: read back when its results are collected."""
        return {
            record["custom_id"]: [tuple(p) for p in record["pairs"]]
            for record in self._records()
            if record.get("event") == "request" and record.get("local") == local
        }


def _record(line: bytes) -> dict[str, Any] | None:
    try:
        record = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    return record if isinstance(record, dict) else None


def _drop_torn_tail(path: Path) -> None:
    """Cut an unfinished last line (a crash mid-write), so the next record starts a line."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with path.open("rb+") as handle:
        data_end = handle.seek(0, os.SEEK_END)
        handle.seek(max(0, data_end - 1))
        if handle.read(1) == b"\n":
            return
        position = data_end
        while position > 0:
            start = max(0, position - 65536)
            handle.seek(start)
            newline = handle.read(position - start).rfind(b"\n")
            if newline >= 0:
                handle.truncate(start + newline + 1)
                return
            position = start
        handle.truncate(0)
