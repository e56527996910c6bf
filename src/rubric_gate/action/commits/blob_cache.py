"""Verdict stores read from a commit by git blob id: each distinct blob is parsed once per run.

Every rubric of a run, base and head alike, that names the same bytes gets the same parsed
columns (`VerdictStore.from_blob`); a head that appends lines to the base's store parses only
those lines; the parsed columns are indexed on disk by blob id beside the verdict cache, so
the next run skips the parse. A blob's bytes are streamed from git into a spool file for the
run (verdicts are read back line by line from it), never held in memory whole.
"""

from __future__ import annotations

import atexit
import gc
import shutil
import tempfile
from pathlib import Path

from rubric_gate.action.commits.sources import FileReader
from rubric_gate.errors import InputError
from rubric_gate.sources import SourceText
from rubric_gate.verdicts import VerdictStore

_spool: Path | None = None


def _spool_dir() -> Path:
    global _spool
    if _spool is None or not _spool.is_dir():
        _spool = Path(tempfile.mkdtemp(prefix="rubric-gate-blobs-"))
        atexit.register(shutil.rmtree, _spool, True)
    return _spool


def read_store(reader: FileReader, sha: str, path: str) -> VerdictStore | None:
    """The verdict store at `sha:path`, None when there is no such file (any other kind of entry
    is the reader's InputError; a line that does not parse, the parser's `file:line` one)."""
    display = f"{sha[:7]}:{path}"
    blob_id = reader.blob_id(sha, path) if hasattr(reader, "blob_id") else None
    if blob_id is None:
        if hasattr(reader, "blob_id"):
            return None
        text = reader.read(sha, path)  # a reader without blob ids: parsed as it is read
        return None if text is None else VerdictStore.from_source(SourceText(display, text, None))
    write_blob = getattr(reader, "write_blob", None)

    def spooled() -> Path | str | None:
        if write_blob is None:
            return reader.read(sha, path)
        target = _spool_dir() / f"{blob_id}.jsonl"
        if not target.is_file():
            partial = target.with_suffix(".partial")
            with partial.open("wb") as handle:
                if not write_blob(sha, path, handle):
                    raise InputError(display, "verdict store not found at this commit")
            partial.replace(target)
        return target

    store = VerdictStore.from_blob(blob_id, spooled, display)
    # The run's parsed stores live until it ends: keep the collector from scanning them again
    # on every collection (a fifth of a 12-rubric run's CPU went there).
    gc.freeze()
    return store
