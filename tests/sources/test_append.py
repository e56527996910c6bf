"""The one append-only JSONL writer: whole lines under a lock, a torn last line cut before the
next record (a whole one ended), in every store that appends (verdicts, the batch journal,
audits, paraphrases)."""

from __future__ import annotations

import json
import multiprocessing
from collections.abc import Callable
from pathlib import Path

import pytest

from rubric_gate.audit import AuditStore
from rubric_gate.batch.journal import BatchJournal
from rubric_gate.paraphrase import ParaphraseStore
from rubric_gate.paraphrase.store import Paraphrase
from rubric_gate.sources.append import (
    SCAN_CHUNK,
    AppendWriter,
    append_lines,
    complete_json,
    repair_tail,
)
from rubric_gate.verdicts import Verdict, VerdictStore

WHOLE = b'{"a": 1}'


@pytest.mark.parametrize(("text", "whole", "after"), [
    (b"", complete_json, b""),
    (b"x\n", complete_json, b"x\n"),  # ends in a newline: untouched
    (WHOLE + b"\n" + b'{"a": ', complete_json, WHOLE + b"\n"),  # torn mid-value: cut
    (WHOLE + b"\n" + WHOLE, complete_json, WHOLE + b"\n" + WHOLE + b"\n"),  # whole: ended
    (WHOLE + b"\n" + WHOLE, None, WHOLE + b"\n"),  # no `whole`: every unended line is torn
    (WHOLE + b'\n{"a": "\xc3', complete_json, WHOLE + b"\n"),  # torn mid-character
    (b'{"a": 1, "a": 2}', complete_json, b'{"a": 1, "a": 2}\n'),  # complete but wrong: the user's line
    (b'{"a": "' + b"x" * (3 * SCAN_CHUNK), complete_json, b""),  # one torn line longer than a scan chunk
])
def test_repair_tail_cuts_a_torn_line_and_ends_a_whole_one(tmp_path: Path, text: bytes,
                                                           whole: Callable[[bytes], bool] | None,
                                                           after: bytes) -> None:
    path = tmp_path / "f.jsonl"
    path.write_bytes(text)
    repair_tail(path, whole)
    assert path.read_bytes() == after


def test_writes_start_where_the_file_ends_and_sync_only_what_is_unsynced(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "f.jsonl"
    with AppendWriter(path) as writer:  # the folder is made
        assert writer.write(b"one\n") == 0 and writer.unsynced == 1
        assert writer.write(b"two\nthree\n", 2) == 4 and writer.unsynced == 3
        writer.sync()
        assert writer.unsynced == 0
    assert writer.closed and path.read_bytes() == b"one\ntwo\nthree\n"


def _append_many(path: str, tag: int) -> None:
    with AppendWriter(Path(path)) as writer:
        for n in range(200):
            writer.write(json.dumps({"tag": tag, "n": n, "pad": "x" * 3000}).encode() + b"\n")


@pytest.mark.integration
def test_two_processes_appending_at_once_never_interleave_a_line(tmp_path: Path) -> None:
    path = tmp_path / "f.jsonl"
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_append_many, args=(str(path), tag)) for tag in (1, 2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    rows = [json.loads(line) for line in path.read_bytes().splitlines()]
    assert sorted((r["tag"], r["n"]) for r in rows) == [(t, n) for t in (1, 2) for n in range(200)]


def _verdicts(path: Path) -> list[str]:
    VerdictStore.load(path, missing_ok=True).append([Verdict(item="r1", check_text="d", answer="no")])
    return [v.check_text for v in VerdictStore.load(path, use_index=False)]


def _audits(path: Path) -> list[str]:
    AuditStore.load(path).record("structure", "m", "v1", "d", "ctx", {"ok": True})
    return [r.check_text for r in AuditStore.load(path)._records.values()]


def _paraphrases(path: Path) -> list[str]:
    ParaphraseStore.load(path).append([Paraphrase("d", "m", 0, "a rewording")])
    store = ParaphraseStore.load(path)
    return [p.check_text for p in store._by_key.values()]


def _journal(path: Path) -> list[str]:
    journal = BatchJournal(path)
    journal.abandoned("d")
    journal.close()
    return [line["local"] for line in map(json.loads, path.read_text().splitlines())]


STORES = {"verdicts": (_verdicts, {"item": "r1", "check_text": "c", "answer": "yes"}),
          "audits": (_audits, {"kind": "structure", "model": "m", "prompt": "v1", "check_text": "c",
                               "context": "ctx", "result": {}}),
          "paraphrases": (_paraphrases, {"check_text": "c", "model": "m", "index": 0, "text": "t"}),
          "journal": (_journal, {"event": "abandoned", "local": "c"})}


@pytest.mark.parametrize("name", STORES)
def test_every_store_cuts_a_torn_last_line_before_its_next_record(tmp_path: Path, name: str) -> None:
    append, first = STORES[name]
    path = tmp_path / "f.jsonl"
    line = json.dumps(first)
    path.write_text(f"{line}\n{line[:-7]}")  # a write cut short by a crash
    assert append(path) == ["c", "d"]


@pytest.mark.parametrize("name", ["verdicts", "audits", "paraphrases"])
def test_every_store_keeps_a_whole_last_line_without_its_newline(tmp_path: Path, name: str) -> None:
    """As an editor saves a file: the store read that line, so appending never loses it."""
    append, first = STORES[name]
    path = tmp_path / "f.jsonl"
    path.write_text(json.dumps(first))
    assert append(path) == ["c", "d"]
    assert path.read_text().count("\n") == 2


def test_the_journal_cuts_an_unended_line_it_never_read(tmp_path: Path) -> None:
    """A journal step counts once its line ends: an unended one never happened, whole or not."""
    path = tmp_path / "f.jsonl"
    path.write_text(json.dumps({"event": "abandoned", "local": "c"}))
    assert _journal(path) == ["d"]


def test_append_lines_syncs_each_record_or_all_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[int] = []
    monkeypatch.setattr("rubric_gate.sources.append.os.fsync", lambda fd: synced.append(fd))
    append_lines(tmp_path / "a.jsonl", [b"1\n", b"2\n", b"3\n"])
    assert len(synced) == 3
    append_lines(tmp_path / "b.jsonl", [b"1\n", b"2\n", b"3\n"], sync_each=False)
    assert len(synced) == 4 and (tmp_path / "b.jsonl").read_bytes() == b"1\n2\n3\n"
