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
a batch are read back one at a time, by offset, when their results are collected. What a run
holds per pair is 8 bytes (a digest of its key while its batch is open, and the offset of its
request line while collecting): memory stays flat in the number of pairs.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

from rubric_gate.batch.keys import DIGEST_CHARS, PairKeys, PairRecord, pair_key
from rubric_gate.sources.append import AppendWriter

JOURNAL_SUFFIX = ".batches"


def journal_path(verdicts: Path) -> Path:
    return verdicts.with_name(verdicts.name + JOURNAL_SUFFIX)


PENDING_BYTES = 1 << 20  # lines not yet synced are written to the file in writes of about this size
MAX_INDEXED_REQUESTS = 1_000_000  # above every provider's requests per batch (100k, 50k)


@dataclass
class JournaledBatch:
    local: str
    provider: str
    judge: str
    prompt: str
    created_after: float
    batch_id: str | None = None
    requests: int = 0
    keys: PairKeys = field(default_factory=PairKeys)  # pairs inside, while the batch is open


class BatchJournal:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._writer: AppendWriter | None = None
        self._pending: list[bytes] = []  # lines not yet written (at most about PENDING_BYTES)
        self._pending_bytes = 0
        self._checked = False
        self.warnings: list[str] = []  # what recovering a damaged journal did, for the caller to show

    # -- writing -----------------------------------------------------------------------------
    def _write(self, record: dict[str, Any], *, sync: bool = True) -> None:
        if self._writer is None:  # the folder made, an unfinished last line a crash left cut
            self._writer = AppendWriter(self.path)
        line = (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
        self._pending.append(line)
        self._pending_bytes += len(line)
        if sync:
            self.sync()
        elif self._pending_bytes >= PENDING_BYTES:
            self._flush()

    def _flush(self) -> None:
        """Write the pending lines, in one write."""
        if not self._pending or self._writer is None:
            return
        self._writer.write(b"".join(self._pending), len(self._pending))
        self._pending, self._pending_bytes = [], 0

    def sync(self) -> None:
        """Every line so far written and fsynced."""
        self._flush()
        if self._writer is not None:
            self._writer.sync()

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
        self._flush()
        if self._writer is not None:
            self._writer.close(sync=False)  # written, as a closed file is; synced where a step needs it
            self._writer = None

    # -- reading -----------------------------------------------------------------------------
    def _records(self) -> Iterator[dict[str, Any]]:
        for _, record in self._records_at():
            yield record

    def _records_at(self) -> Iterator[tuple[int, dict[str, Any]]]:
        """(byte offset of its line, record) for each complete line that reads, streamed."""
        self.sync()
        if not self.path.exists():
            return
        if not self._checked:
            self._checked = True
            self._recover()
        with self.path.open("rb") as handle:
            offset = 0
            for line in handle:
                if not line.endswith(b"\n"):
                    return  # torn tail from a crash: that step never completed
                record = _record(line)
                if record is not None:
                    yield offset, record
                offset += len(line)

    def _recover(self) -> None:
        """A complete line that does not read (a flipped byte, a bad disk): keep the damaged file
        aside, go on with the lines that read. A batch whose lines were lost may be submitted
        again (collection never stores a pair twice); nothing is guessed. Streams the file."""
        bad: list[int] = []
        with self.path.open("rb") as handle:
            for number, line in enumerate(handle, 1):
                if line.endswith(b"\n") and _record(line) is None:
                    bad.append(number)
        if not bad:
            return
        self.close()
        aside = self.path.with_name(f"{self.path.name}.damaged-{int(time.time())}")
        shutil.copy2(self.path, aside)
        fresh = self.path.with_name(self.path.name + ".tmp")
        dropped = set(bad)
        with self.path.open("rb") as source, fresh.open("wb") as handle:
            for number, line in enumerate(source, 1):
                if line.endswith(b"\n") and number not in dropped:
                    handle.write(line)
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
        """custom_id -> pairs, for one batch (all in memory: for tools and tests)."""
        with self.request_index(local) as index:
            return {custom_id: records for custom_id, records in index.items()}

    def request_index(self, local: str) -> RequestIndex:
        """One batch's requests by custom_id, each read back from its journal line when asked."""
        index = RequestIndex(self.path, local)
        for offset, record in self._records_at():
            if record.get("event") == "request" and record.get("local") == local:
                index.add(str(record.get("custom_id")), offset)
        return index


class RequestIndex:
    """custom_id -> the journal offset of its request line: 8 bytes per request for the ids the
    cutter writes (`<local>-<n>`), a dict entry for any other. `take` hands each request's pairs
    out once (a repeated result is not routed twice); `remaining` reads back those never taken."""

    def __init__(self, path: Path, local: str) -> None:
        self.path = path
        self.local = local
        self._pattern = re.compile(re.escape(local) + rf"-(0|[1-9][0-9]{{0,8}})(?:-[0-9a-f]{{{DIGEST_CHARS}}})?")
        self._offsets = array("q")  # by n; -1: no such request
        self._taken = bytearray()
        self._other: dict[str, int] = {}  # offset, or -1 once taken
        self._handle: BinaryIO | None = None

    def add(self, custom_id: str, offset: int) -> None:
        match = self._pattern.fullmatch(custom_id)
        if match is None:
            self._other[custom_id] = offset  # a repeated id: the last line, as before
            return
        n = int(match.group(1))
        if n >= MAX_INDEXED_REQUESTS:  # no batch holds this many: a dict entry, not an array of n
            self._other[custom_id] = offset
            return
        if n >= len(self._offsets):
            grow = n + 1 - len(self._offsets)
            self._offsets.extend(array("q", [-1]) * grow)
            self._taken.extend(bytes(grow))
        self._offsets[n] = offset  # a repeated id: the last line, as before

    def __len__(self) -> int:
        return sum(1 for offset in self._offsets if offset >= 0) + len(self._other)

    def take(self, custom_id: str) -> list[PairRecord] | None:
        """The request's pairs the first time it is asked for; None if unknown or taken."""
        match = self._pattern.fullmatch(custom_id)
        if match is None:
            offset = self._other.get(custom_id, -1)
            if offset >= 0:
                self._other[custom_id] = -1
        else:
            n = int(match.group(1))
            if n >= len(self._offsets) or self._taken[n]:
                return None
            offset = self._offsets[n]
            if offset >= 0:
                self._taken[n] = 1
        return None if offset < 0 else self._read(offset)

    def remaining(self) -> Iterator[list[PairRecord]]:
        """The pairs of each request never taken, in custom_id order."""
        for n, offset in enumerate(self._offsets):
            if offset >= 0 and not self._taken[n]:
                yield self._read(offset)
        for offset in self._other.values():
            if offset >= 0:
                yield self._read(offset)

    def items(self) -> Iterator[tuple[str, list[PairRecord]]]:
        for n, offset in enumerate(self._offsets):
            if offset >= 0:
                yield f"{self.local}-{n}", self._read(offset)
        for custom_id, offset in self._other.items():
            if offset >= 0:
                yield custom_id, self._read(offset)

    def _read(self, offset: int) -> list[PairRecord]:
        if self._handle is None:
            self._handle = self.path.open("rb")
        self._handle.seek(offset)
        record = _record(self._handle.readline())
        if record is None or record.get("event") != "request":
            raise ValueError(f"{self.path}: the journal changed while a batch was collected")
        return [tuple(p) for p in record["pairs"]]

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def __enter__(self) -> RequestIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# The fields each event must carry, with their types: a line without them does not read (the
# journal can come back from a place others write, so its shape is checked, never assumed).
_EVENT_FIELDS: dict[str, dict[str, tuple[type, ...]]] = {
    "open": {"local": (str,), "provider": (str,), "judge": (str,), "prompt": (str,)},
    "request": {"local": (str,), "custom_id": (str,), "pairs": (list,)},
    "submitted": {"local": (str,), "batch_id": (str,)},
    "closed": {"local": (str,), "batch_id": (str,)},
    "abandoned": {"local": (str,)},
}


def _record(line: bytes) -> dict[str, Any] | None:
    try:
        record = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(record, dict):
        return None
    event = record.get("event")
    fields = _EVENT_FIELDS.get(event) if isinstance(event, str) else None
    if fields is None or not all(isinstance(record.get(k), t) for k, t in fields.items()):
        return None
    if "created_after" in record and not isinstance(record["created_after"], int | float):
        return None
    if any(not record[k].strip() for k in ("local", "batch_id", "custom_id") if k in fields):
        return None  # an empty id names nothing (and a provider client refuses it outright)
    if record["event"] == "request" and not all(
            isinstance(p, list) and 4 <= len(p) <= 5 and all(isinstance(v, str) or v is None for v in p)
            for p in record["pairs"]):
        return None
    return record
