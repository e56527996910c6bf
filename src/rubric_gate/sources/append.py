"""Append-only JSON Lines files: one writer for the verdict store, the batch journal and the
audit and paraphrase stores.

Each write is whole lines, in one `write` under an exclusive lock (two processes appending at
once never interleave a line), flushed to the OS at once (a kill -9 loses nothing written);
`sync` makes what was written durable, so a caller chooses how often it pays for an fsync.
Before the first write the file's last line is repaired once, under the same lock: a last line
without its newline is what a write cut short by a crash leaves, and appending after it would
glue the next record onto it. It is cut, unless the caller's `whole` says it is a complete line
(as an editor saves a file without a final newline): then it gets the newline it lacks.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from rubric_gate.errors import InputError
from rubric_gate.sources.jsonl import TornLine, decode_line, parse_line

if sys.platform == "win32":  # pragma: no cover - no fcntl there
    fcntl = None
else:
    import fcntl

SCAN_CHUNK = 1 << 16  # the last line is found by reading back from the end, a chunk at a time

# Whether a last line without a newline is a whole line (kept, ended) or a torn write (cut).
WholeLine = Callable[[bytes], bool]


def complete_json(raw: bytes) -> bool:
    """A last line that is complete JSON is whole, even when it is wrong in another way (a
    duplicate key, not an object, not UTF-8 before its end): that is the user's line, reported
    when the file is read. Cut short mid-value or mid-character, it is torn."""
    try:
        parse_line(decode_line(raw, "", 0, last=True), "", 0, last=True)
    except TornLine:
        return False
    except InputError:
        return True
    return True


def repair_tail(path: Path, whole: WholeLine | None = None) -> None:
    """End the file with a newline: cut a last line that lacks one, unless `whole(line)` says
    it is complete (then append the newline). Reads only the last line, from the end."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with path.open("r+b") as handle:
        end = handle.seek(0, os.SEEK_END)
        handle.seek(end - 1)
        if handle.read(1) == b"\n":
            return
        position, tail, line_start = end, b"", 0
        while position > 0:
            start = max(0, position - SCAN_CHUNK)
            handle.seek(start)
            chunk = handle.read(position - start)
            newline = chunk.rfind(b"\n")
            if newline >= 0:
                tail = chunk[newline + 1:] + tail
                line_start = start + newline + 1
                break
            tail = chunk + tail
            position = start
        if whole is not None and whole(tail):
            handle.seek(end)
            handle.write(b"\n")
        else:
            handle.truncate(line_start)
        handle.flush()
        os.fsync(handle.fileno())


class AppendWriter:
    """Appends whole lines to one file, under an exclusive lock, after repairing its last line."""

    def __init__(self, path: Path, whole: WholeLine | None = None) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self.handle = path.open("ab")
        self.unsynced = 0  # lines written since the last fsync
        try:
            with self._locked():
                repair_tail(path, whole)
        except BaseException:
            self.handle.close()
            raise

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        if fcntl is not None:
            fcntl.flock(self.handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            if fcntl is not None:
                fcntl.flock(self.handle.fileno(), fcntl.LOCK_UN)

    def write(self, payload: bytes, lines: int = 1) -> int:
        """Write `payload` (whole lines, `lines` of them) at the end of the file in one write;
        returns the byte offset it starts at."""
        with self._locked():
            self.handle.write(payload)
            self.handle.flush()
            start = self.handle.tell() - len(payload)  # append mode, under the lock: our bytes end the file
        self.unsynced += lines
        return start

    def sync(self) -> None:
        """fsync what was written since the last sync (nothing to do when nothing was)."""
        if self.unsynced:
            os.fsync(self.handle.fileno())
            self.unsynced = 0

    @property
    def closed(self) -> bool:
        return self.handle.closed

    def close(self, *, sync: bool = True) -> None:
        """Close, after syncing what was written unless `sync` is False (again: nothing)."""
        if not self.handle.closed:
            try:
                if sync:
                    self.sync()
            finally:
                self.handle.close()

    def __enter__(self) -> AppendWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def append_lines(path: Path, lines: list[bytes], whole: WholeLine | None = None, *, sync_each: bool = True) -> None:
    """Append `lines` (each ending in a newline), each fsynced before the next when `sync_each`
    (a killed run keeps every record it paid for), else all of them at once."""
    if not lines:
        return
    with AppendWriter(path, whole) as writer:
        if sync_each:
            for line in lines:
                writer.write(line)
                writer.sync()
        else:
            writer.write(b"".join(lines), len(lines))
