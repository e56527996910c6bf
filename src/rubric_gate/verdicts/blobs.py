"""Parsed verdict stores by git blob id: each distinct store is parsed once per process.

A git blob id is a hash of the file's bytes, so the columns parsed for one blob serve every
rubric, and both sides of a pull request, that name the same bytes. A blob whose bytes extend
a blob already parsed (a PR that appends verdicts to the base's store) is read as that blob's
columns plus its added lines. Stores handed out share the parsed columns and copy them on
their first write.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rubric_gate.verdicts.parse import BOM, RowBuilder, parse_bytes
from rubric_gate.verdicts.table_data import Segment, VerdictData

MAX_BLOBS = 64  # distinct stores kept per process (an action run reads a few)
Loader = Callable[[], "bytes | str | None"]


@dataclass
class _Parsed:
    raw: bytes
    data: VerdictData


class BlobCache:
    """Parsed columns by blob id (one per process by default: `default_cache()`)."""

    def __init__(self) -> None:
        self._parsed: dict[str, _Parsed] = {}
        self.parses = 0  # full parses (for tests and benchmarks)
        self.extensions = 0  # blobs read as a cached prefix plus added lines

    def __contains__(self, blob_id: str) -> bool:
        return blob_id in self._parsed

    def data(self, blob_id: str, content: bytes | str | Loader, display: str) -> VerdictData:
        """The parsed columns of `blob_id`, parsing `content` (bytes, text, or a function that
        returns them) only when no store of that blob was parsed before."""
        found = self._parsed.get(blob_id)
        if found is not None:
            return found.data
        raw = content() if callable(content) else content
        if isinstance(raw, str):
            raw = raw.encode("utf-8", "surrogateescape")
        raw = raw or b""
        prefix = self._longest_prefix(raw)
        if prefix is None:
            data = VerdictData()
            data.segments.append(Segment(0, data=raw))
            parse_bytes(raw, RowBuilder(data), display)
            self.parses += 1
        else:
            data = prefix.data.copy()
            data.segments = [Segment(0, data=raw)]  # offsets into the prefix are offsets into `raw`
            parse_bytes(raw, RowBuilder(data), display, start=len(prefix.raw),
                        first_line=prefix.raw.count(b"\n") + 1)
            data.changed()
            self.extensions += 1
        if len(self._parsed) >= MAX_BLOBS:  # a long-lived process: drop the oldest
            del self._parsed[next(iter(self._parsed))]
        self._parsed[blob_id] = _Parsed(raw, data)
        return data

    def _longest_prefix(self, raw: bytes) -> _Parsed | None:
        """The longest parsed blob that `raw` extends by whole lines (BOM aside, ending in a newline)."""
        best: _Parsed | None = None
        for parsed in self._parsed.values():
            prefix = parsed.raw
            if (len(prefix) < len(raw) and prefix.endswith(b"\n") and prefix != BOM
                    and (best is None or len(prefix) > len(best.raw)) and raw.startswith(prefix)):
                best = parsed
        return best

    def clear(self) -> None:
        self._parsed.clear()


_DEFAULT = BlobCache()


def default_cache() -> BlobCache:
    return _DEFAULT
