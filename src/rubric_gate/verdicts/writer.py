"""Appending verdicts to a store's file: whole lines through the one append-only JSONL writer
(`sources.append`: an exclusive lock, a torn last line repaired first, fsync when asked)."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from rubric_gate.sources.append import AppendWriter, complete_json
from rubric_gate.verdicts.model import Verdict


class _Rows(Protocol):
    def _add_objects(self, verdicts: list[Verdict]) -> None: ...


def payload(verdicts: list[Verdict]) -> bytes:
    """The verdicts as the lines a store's file holds."""
    return "".join(v.to_json_line() for v in verdicts).encode("utf-8")


class VerdictWriter:
    """Appends verdicts to one file; each `write` reaches the OS at once (a kill -9 loses
    nothing written) and `sync` makes what was written durable, so callers batch fsyncs.
    A last line that is complete JSON without its newline (as an editor saves) is kept."""

    def __init__(self, path: Path, store: _Rows | None = None) -> None:
        self.path = path
        self.store = store  # a store whose rows follow what is written (as `Verdict` objects)
        self._file = AppendWriter(path, complete_json)

    @property
    def unsynced(self) -> int:
        """Lines written since the last sync."""
        return self._file.unsynced

    def write(self, verdicts: list[Verdict]) -> None:
        if not verdicts:
            return
        self._file.write(payload(verdicts), len(verdicts))
        if self.store is not None:
            self.store._add_objects(verdicts)

    def write_payload(self, lines: bytes, count: int) -> int:
        """Write `count` whole lines; returns the byte offset they start at."""
        return self._file.write(lines, count)

    def sync(self) -> None:
        self._file.sync()

    def close(self, *, sync: bool = True) -> None:
        self._file.close(sync=sync)

    def __enter__(self) -> VerdictWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
