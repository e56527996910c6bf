"""A store's rows read back as the lines they came from: full `Verdict`s, or a hash of each line.

Rows hold columns, not verdicts; each row keeps where its line is (a byte offset into a file or
into bytes held in memory, or an index into the `Verdict` objects it was given). Reading back is
for the few rows a caller asks for (a `find`, the lines a PR added), never for a hot path: files
are read in chunks, in row order, and never whole.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, cast

import numpy as np

from rubric_gate.verdicts.model import Verdict
from rubric_gate.verdicts.parse import slow_line
from rubric_gate.verdicts.table_data import Segment, VerdictData

CHUNK = 1 << 22


def read_back(raw: bytes, display: str) -> Verdict:
    """A verdict line read back (it parsed before): pydantic's JSON reader for the common line,
    the exact path for any it refuses."""
    try:
        return Verdict.model_validate_json(raw)
    except ValueError:
        verdict = slow_line(raw, display, 0, last=False)
        assert verdict is not None
        return verdict


def _bounds(data: VerdictData) -> list[int]:
    return [s.row_start for s in data.segments] + [len(data)]


def verdict_at(data: VerdictData, row: int, display: str, reader: LineReader | None = None,
               segment: Segment | None = None) -> Verdict:
    """The verdict of one row."""
    if segment is None:
        starts = [s.row_start for s in data.segments]
        segment = data.segments[bisect.bisect_right(starts, row) - 1]
    offset = int(data.columns.arrays()["offset"][row])
    if segment.objects is not None:
        return cast(Verdict, segment.objects[offset])
    if segment.data is not None:
        end = segment.data.find(b"\n", offset)
        raw = segment.data[offset:] if end < 0 else segment.data[offset:end]
    else:
        assert segment.path is not None
        if reader is None:
            with LineReader() as own:
                raw = own.line(segment.path, offset)
        else:
            raw = reader.line(segment.path, offset)
    return read_back(raw, display)


def verdicts_at(data: VerdictData, rows: np.ndarray, display: str) -> list[Verdict]:
    """The verdicts of `rows` (ascending), each file read once, in chunks."""
    offsets = data.columns.arrays()["offset"]
    bounds = _bounds(data)
    out: list[Verdict] = []
    for number, segment in enumerate(data.segments):
        first, end = np.searchsorted(rows, bounds[number]), np.searchsorted(rows, bounds[number + 1])
        if first == end:
            continue
        if segment.path is not None and segment.objects is None and segment.data is None:
            out.extend(read_back(line, display) for line in lines_at(segment.path, offsets[rows[first:end]].tolist()))
        else:
            out.extend(verdict_at(data, int(row), display, segment=segment) for row in rows[first:end])
    return out


def all_verdicts(data: VerdictData, display: str) -> Iterator[Verdict]:
    """Every row's verdict in file order."""
    segments = data.segments
    with LineReader() as reader:
        for number, segment in enumerate(segments):
            end = segments[number + 1].row_start if number + 1 < len(segments) else len(data)
            if segment.objects is not None:
                yield from segment.objects[: end - segment.row_start]
                continue
            for row in range(segment.row_start, end):
                yield verdict_at(data, row, display, reader, segment)


def line_fingerprints(data: VerdictData, rows: np.ndarray | None = None) -> np.ndarray:
    """A hash of each row's line as written (trailing whitespace aside), in row order; of the
    given `rows` (ascending) only, when given."""
    all_offsets = data.columns.arrays()["offset"]
    rows = np.arange(len(data), dtype=np.int64) if rows is None else rows
    out = np.empty(len(rows), dtype=np.int64)
    bounds = _bounds(data)
    for number, segment in enumerate(data.segments):
        first, end = int(np.searchsorted(rows, bounds[number])), int(np.searchsorted(rows, bounds[number + 1]))
        offsets = all_offsets[rows[first:end]].tolist()
        if segment.objects is not None:
            for at, offset in enumerate(offsets, first):
                out[at] = hash(segment.objects[offset].to_json_line().rstrip().encode())
        elif segment.data is not None:
            raw = segment.data
            for at, offset in enumerate(offsets, first):
                stop = raw.find(b"\n", offset)
                out[at] = hash(raw[offset: stop if stop >= 0 else None].rstrip())
        else:
            assert segment.path is not None
            for at, line in enumerate(lines_at(segment.path, offsets), first):
                out[at] = hash(line.rstrip())
    return out


def lines_at(path: Path, offsets: list[int], chunk: int = CHUNK) -> Iterator[bytes]:
    """The lines starting at `offsets` (ascending) of a file, read a chunk at a time."""
    with path.open("rb") as handle:
        buffer, buffer_start = b"", 0
        for offset in offsets:
            at = offset - buffer_start
            stop = buffer.find(b"\n", at) if 0 <= at <= len(buffer) else -1
            if stop < 0:
                handle.seek(offset)
                buffer, buffer_start, at = handle.read(chunk), offset, 0
                stop = buffer.find(b"\n")
                while stop < 0 and len(buffer) >= chunk:  # a line longer than a chunk
                    more = handle.read(chunk)
                    if not more:
                        break
                    buffer += more
                    stop = buffer.find(b"\n")
            yield buffer[at: stop if stop >= 0 else None]


class LineReader:
    """Reads single lines from files by offset, keeping each file open while iterating."""

    def __init__(self) -> None:
        self.handles: dict[Path, BinaryIO] = {}

    def line(self, path: Path, offset: int) -> bytes:
        handle = self.handles.get(path)
        if handle is None:
            handle = self.handles[path] = path.open("rb")
        handle.seek(offset)
        return handle.readline().rstrip(b"\n")

    def __enter__(self) -> LineReader:
        return self

    def __exit__(self, *exc: object) -> None:
        for handle in self.handles.values():
            handle.close()
