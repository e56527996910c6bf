"""The index's columns: each segment's arrays back to back in a file of their own beside the
SQLite index, read back by mapping the file (no copy: a rerun faults in only the pages its
lookups read, where reading the columns out of the database copied all of them).

A file is written once under a name no other file had (`<index>.<random>.columns`), fsynced
before the segment naming it is committed, and only ever removed, never rewritten: a reader
that mapped it keeps its pages. A file no committed segment names (a writer killed between the
two) is removed by the next writer of that index.
"""

from __future__ import annotations

import contextlib
import mmap
import os
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from rubric_gate.verdicts.table_data import COLUMNS

SUFFIX = ".columns"
ALIGN = 8  # each column starts at a multiple of its widest item (int64 offsets)


def _layout(rows: int) -> tuple[list[tuple[str, np.dtype, int]], int]:
    """(name, dtype, byte offset) of each column in a file of `rows` rows, and its size."""
    layout, at = [], 0
    for name, _, dtype in COLUMNS:
        kind = np.dtype(dtype)
        layout.append((name, kind, at))
        at += -(-rows * kind.itemsize // ALIGN) * ALIGN
    return layout, at


def files_of(index: Path) -> list[Path]:
    """Every column file of the index at `index` (committed or not)."""
    return sorted(index.parent.glob(f"{index.name}.*{SUFFIX}"))


def write_columns(index: Path, columns: list[np.ndarray]) -> str:
    """Write one segment's columns (in `COLUMNS` order) to a new file; its name."""
    rows = len(columns[0])
    layout, size = _layout(rows)
    name = f"{index.name}.{os.urandom(6).hex()}{SUFFIX}"
    path = index.parent / name
    try:
        with path.open("xb") as handle:
            for (_, kind, at), column in zip(layout, columns, strict=True):
                handle.seek(at)
                handle.write(np.ascontiguousarray(column, dtype=kind).data.cast("B"))
            handle.truncate(size)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            path.unlink()
        raise
    return name


def read_columns(index: Path, name: str, rows: int) -> dict[str, np.ndarray]:
    """A segment's columns, mapped read-only; ValueError when the file is not what was written."""
    layout, size = _layout(rows)
    if not rows:
        return {column: np.empty(0, dtype=kind) for column, kind, _ in layout}
    if os.sep in name or not name.startswith(f"{index.name}.") or not name.endswith(SUFFIX):
        raise ValueError(f"not a column file of this index: {name!r}")
    with (index.parent / name).open("rb") as handle:
        if os.fstat(handle.fileno()).st_size != size:
            raise ValueError(f"{name}: not the size its segment says")
        mapped = mmap.mmap(handle.fileno(), size, access=mmap.ACCESS_READ)
    return {column: np.frombuffer(mapped, dtype=kind, count=rows, offset=at) for column, kind, at in layout}


def remove_unnamed(index: Path, named: Iterable[str]) -> None:
    """Remove the index's column files that no segment names (replaced or never committed)."""
    keep = set(named)
    for path in files_of(index):
        if path.name not in keep:
            with contextlib.suppress(OSError):
                path.unlink()
