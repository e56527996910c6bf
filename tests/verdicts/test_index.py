"""The on-disk verdict index: always the same table as a full read of the JSONL, never stale."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rubric_gate.calibration import CalibrationItem
from rubric_gate.verdicts import Verdict, VerdictStore
from rubric_gate.verdicts.index import index_path
from rubric_gate.verdicts.parse import HAS_SAMPLE

ITEMS = [CalibrationItem(id=f"r{i}", input=f"in {i}", output=f"out {i % 3}", label="pass") for i in range(4)]
TEXTS = ["Names the resource.", "Names  the\tresource.", "States the setting.", "Rates severity."]
HASHES = [None, ITEMS[0].content_hash, ITEMS[1].content_hash, "sha256:0000000000000000"]
JUDGES = [(None, None), ("hand", None), ("openai:m", "v1")]


def table(store: VerdictStore) -> list:
    """Everything a caller can observe: every lookup, and every verdict in order."""
    observed: list = [len(store), [v.model_dump() for v in store]]
    for text in TEXTS:
        for judge, prompt in [(None, None), *JUDGES[1:]]:
            for sample in (0, 1):
                failed, missing = store.answers(text, ITEMS, judge=judge, prompt=prompt, sample=sample)
                observed.append((text, judge, sample, failed.tolist(), missing.tolist()))
    return observed


SAMPLES = [None, 0, 1] if HAS_SAMPLE else [None]  # once the model has `sample` (repeated sampling)
verdict_lines = st.builds(
    lambda item, text, answer, item_hash, judge, quote, sample: json.dumps(
        {k: v for k, v in {"item": item, "check_text": text, "answer": answer, "item_hash": item_hash,
                           "judge": judge[0], "prompt": judge[1], "quote": quote, "sample": sample}.items()
         if v is not None},
        ensure_ascii=False),
    st.sampled_from([i.id for i in ITEMS]), st.sampled_from(TEXTS), st.sampled_from(["yes", "no"]),
    st.sampled_from(HASHES), st.sampled_from(JUDGES), st.sampled_from([None, "", 'say "x": y', "é"]),
    st.sampled_from(SAMPLES),
)
edits = st.one_of(
    st.tuples(st.just("append"), st.lists(verdict_lines, min_size=1, max_size=5)),
    st.tuples(st.just("replace"), st.integers(0, 50), verdict_lines),  # a hand edit in the middle
    st.tuples(st.just("torn"), verdict_lines, st.integers(1, 30)),  # a write cut short
    st.tuples(st.just("unterminated"), verdict_lines),  # a whole last line, no newline (editors)
    st.tuples(st.just("blank"), st.sampled_from(["", "  ", "\r"])),
)


def apply(path: Path, edit: tuple) -> None:
    text = path.read_text(encoding="utf-8")
    if not text.endswith("\n") and text:
        text = text.rsplit("\n", 1)[0] + "\n" if "\n" in text else ""  # the unfinished line is cut first
    kind = edit[0]
    if kind == "append":
        text += "".join(line + "\n" for line in edit[1])
    elif kind == "replace":
        lines = text.split("\n")[:-1]
        if lines:
            lines[edit[1] % len(lines)] = edit[2]
        text = "".join(line + "\n" for line in lines)
    elif kind == "torn":
        text += edit[1][: edit[2]]
    elif kind == "unterminated":
        text += edit[1]
    else:
        text += edit[1] + "\n"
    path.write_text(text, encoding="utf-8")


@pytest.mark.integration  # 40 generated histories, each building and reading SQLite indexes on disk
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(initial=st.lists(verdict_lines, max_size=12), steps=st.lists(edits, max_size=6))
def test_index_serves_the_same_table_as_a_full_read(tmp_path: Path, initial: list[str], steps: list) -> None:
    path = tmp_path / "v.jsonl"
    for stale in (path, *tmp_path.glob("index-*")):
        stale.unlink(missing_ok=True)
    path.write_text("".join(line + "\n" for line in initial), encoding="utf-8")
    os.environ["RUBRIC_GATE_INDEX_DIR"] = str(tmp_path / "index")  # monkeypatch is per test, not per example
    try:
        for edit in [("blank", ""), *steps]:
            apply(path, edit)
            full = table(VerdictStore.load(path, use_index=False))
            assert table(VerdictStore.load(path)) == full  # builds or extends the index
            assert table(VerdictStore.load(path)) == full  # reads it
    finally:
        index = index_path(path)
        assert index is not None
        for suffix in ("", "-wal", "-shm"):
            Path(f"{index}{suffix}").unlink(missing_ok=True)


def _line(item: str, answer: str) -> str:
    """Padded so that flipping the answer keeps the file's size."""
    return json.dumps({"item": item, "check_text": "c", "answer": answer}) + " " * (3 - len(answer)) + "\n"


def test_same_size_edit_with_mtime_restored_is_never_served_stale(tmp_path: Path) -> None:
    path = tmp_path / "v.jsonl"
    path.write_text(_line("r0", "yes") + _line("r1", "yes"))
    assert VerdictStore.load(path).find("c", ITEMS[1]).answer == "yes"  # type: ignore[union-attr]
    before = path.stat()
    path.write_text(_line("r0", "yes") + _line("r1", "no"))  # same size, same inode
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # an editor that keeps mtime
    assert path.stat().st_size == before.st_size
    assert VerdictStore.load(path).answers("c", ITEMS[:2])[0].tolist() == [False, True]


def test_an_old_verified_index_is_still_checked_after_an_edit(tmp_path: Path) -> None:
    path = tmp_path / "v.jsonl"
    path.write_text(_line("r0", "yes") * 3)
    old = 1_000_000_000_000_000_000
    os.utime(path, ns=(old, old))  # quiet long before the index: the stat shortcut applies
    VerdictStore.load(path)
    VerdictStore.load(path)
    path.write_text(_line("r0", "yes") + _line("r0", "yes") + _line("r0", "no"))
    os.utime(path, ns=(old, old))
    assert VerdictStore.load(path).answers("c", ITEMS[:1])[0].tolist() == [True]
    assert [v.answer for v in VerdictStore.load(path)] == ["yes", "yes", "no"]


def test_append_extends_the_index_without_reparsing_the_prefix(tmp_path: Path, monkeypatch) -> None:
    from rubric_gate.verdicts import index as index_module

    path = tmp_path / "v.jsonl"
    path.write_text(_line("r0", "yes") * 50)
    VerdictStore.load(path)
    store = VerdictStore.load(path)
    store.append([Verdict(item="r1", check_text="c", answer="no")])
    parsed: list[int] = []
    real = index_module.FileScan

    class Spy(real):  # type: ignore[misc, valid-type]
        def __init__(self, handle, start: int) -> None:  # type: ignore[no-untyped-def]
            parsed.append(start)
            super().__init__(handle, start)

    monkeypatch.setattr(index_module, "FileScan", Spy)
    reloaded = VerdictStore.load(path)
    assert parsed == [len(_line("r0", "yes")) * 50]  # only the appended bytes were parsed
    assert len(reloaded) == 51 and reloaded.find("c", ITEMS[1]).answer == "no"  # type: ignore[union-attr]


def test_a_corrupt_index_is_rebuilt(tmp_path: Path) -> None:
    path = tmp_path / "v.jsonl"
    path.write_text(_line("r0", "no"))
    VerdictStore.load(path)
    index = index_path(path)
    assert index is not None and index.exists()
    index.write_bytes(b"not a database" * 100)
    for suffix in ("-wal", "-shm"):
        Path(f"{index}{suffix}").unlink(missing_ok=True)
    assert VerdictStore.load(path).find("c", ITEMS[0]).answer == "no"  # type: ignore[union-attr]


@pytest.mark.integration
def test_stores_read_from_git_are_not_indexed(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "v.jsonl").write_text(_line("r0", "no"))
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "add", "v.jsonl"], check=True)
    subprocess.run([*git, "commit", "-qm", "v"], check=True)
    index_dir = Path(os.environ["RUBRIC_GATE_INDEX_DIR"])
    before = set(index_dir.glob("*")) if index_dir.exists() else set()
    store = VerdictStore.load("HEAD:v.jsonl", tmp_path)
    assert len(store) == 1
    after = set(index_dir.glob("*")) if index_dir.exists() else set()
    assert after == before


WRITER = """
import sys
from pathlib import Path
from rubric_gate.verdicts import Verdict, VerdictStore
store = VerdictStore(path=Path(sys.argv[1]))
for n in range(int(sys.argv[3])):
    store.append([Verdict(item=f"{sys.argv[2]}-{n}", check_text="c " * (n % 7 + 1), answer="no")], sync=n % 10 == 0)
"""


@pytest.mark.integration
def test_two_processes_appending_while_others_read_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "v.jsonl"
    path.write_text("")
    per_writer = 150
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), name, str(per_writer)])
               for name in ("a", "b")]
    reads = 0
    while any(w.poll() is None for w in writers) or reads < 3:
        store = VerdictStore.load(path)  # reads (and extends the index) while lines arrive
        assert len({(v.item) for v in store}) == len(store)
        reads += 1
    assert all(w.wait() == 0 for w in writers)
    final = VerdictStore.load(path)
    assert sorted(v.item for v in final) == sorted(f"{w}-{n}" for w in "ab" for n in range(per_writer))
    assert table(final) == table(VerdictStore.load(path, use_index=False))


@pytest.mark.parametrize("off", ["off", "0"])
def test_index_can_be_switched_off(tmp_path: Path, monkeypatch, off: str) -> None:
    monkeypatch.setenv("RUBRIC_GATE_INDEX", off)
    path = tmp_path / "v.jsonl"
    path.write_text(_line("r0", "no"))
    assert len(VerdictStore.load(path)) == 1
    assert index_path(path) is None


def test_many_appends_compact_the_index_and_keep_the_table(tmp_path: Path) -> None:
    from rubric_gate.verdicts.index import MAX_SEGMENTS

    path = tmp_path / "v.jsonl"
    path.write_text("")
    for n in range(MAX_SEGMENTS + 3):
        with path.open("a") as handle:
            handle.write(json.dumps({"item": ITEMS[n % 4].id, "check_text": TEXTS[n % 3], "answer": "no" if n % 2 else "yes"}) + "\n")
        assert table(VerdictStore.load(path)) == table(VerdictStore.load(path, use_index=False))
    import sqlite3

    index = index_path(path)
    segments = sqlite3.connect(index).execute("SELECT COUNT(*) FROM segments").fetchone()[0]
    assert segments < MAX_SEGMENTS


def test_an_index_written_by_another_version_is_replaced(tmp_path: Path) -> None:
    import sqlite3

    from rubric_gate.verdicts.index import SCHEMA_VERSION

    path = tmp_path / "v.jsonl"
    path.write_text(_line("r0", "no"))
    index = index_path(path)
    assert index is not None
    index.parent.mkdir(parents=True, exist_ok=True)
    old = sqlite3.connect(index)
    old.executescript("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                      "INSERT INTO meta VALUES ('version', 'old');"
                      "CREATE TABLE segments (seq INTEGER PRIMARY KEY, start INTEGER, text BLOB);")
    old.close()
    assert VerdictStore.load(path).answers("c", ITEMS[:1])[0].tolist() == [True]
    db = sqlite3.connect(index)
    assert db.execute("SELECT value FROM meta WHERE key = 'version'").fetchone() == (SCHEMA_VERSION,)
    assert db.execute("SELECT COUNT(*) FROM segments").fetchone() == (1,)


def test_each_segment_s_column_file_goes_with_it(tmp_path: Path) -> None:
    """Columns live in files beside the index: a compaction or a rebuild leaves only the files
    its segments name, and a file gone or cut short is a full parse, then a new index."""
    import sqlite3

    from rubric_gate.verdicts.column_files import files_of
    from rubric_gate.verdicts.index import MAX_SEGMENTS

    path = tmp_path / "v.jsonl"
    path.write_text("")
    for n in range(MAX_SEGMENTS + 3):
        with path.open("a") as handle:
            handle.write(_line(ITEMS[n % 4].id, "no" if n % 2 else "yes"))
        VerdictStore.load(path)
    index = index_path(path)
    assert index is not None
    named = sorted(name for (name,) in sqlite3.connect(index).execute("SELECT columns FROM segments"))
    assert [p.name for p in files_of(index)] == named
    expected = table(VerdictStore.load(path, use_index=False))
    for damage in ("truncate", "remove"):
        (victim,) = files_of(index)[-1:]
        if damage == "truncate":
            victim.write_bytes(victim.read_bytes()[:-1])
        else:
            victim.unlink()
        assert table(VerdictStore.load(path)) == expected  # parsed in full
        named = [name for (name,) in sqlite3.connect(index).execute("SELECT columns FROM segments")]
        assert [p.name for p in files_of(index)] == named and (index.parent / named[0]).exists()
        assert table(VerdictStore.load(path)) == expected  # the index again


def test_a_rerun_on_the_file_as_last_checked_writes_nothing(tmp_path: Path, monkeypatch) -> None:
    """No transaction and no fsync when nothing changed: the index's files stay as they were."""
    from rubric_gate.verdicts import index as index_module

    monkeypatch.setattr(index_module, "RACY_WINDOW_NS", 0)  # quiet at once (no second to wait)
    # an index directory of this test's own: the session's shared one holds other tests' WAL files,
    # which come and go while this test lists the directory
    monkeypatch.setenv("RUBRIC_GATE_INDEX_DIR", str(tmp_path / "index"))
    path = tmp_path / "v.jsonl"
    path.write_text(_line("r0", "no"))
    VerdictStore.load(path)
    index = index_path(path)
    assert index is not None
    before = {p.name: (p.stat().st_mtime_ns, p.stat().st_size) for p in index.parent.iterdir()}
    synced: list[int] = []
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd))
    assert VerdictStore.load(path).find("c", ITEMS[0]).answer == "no"  # type: ignore[union-attr]
    assert {p.name: (p.stat().st_mtime_ns, p.stat().st_size) for p in index.parent.iterdir()} == before
    assert synced == []
    path.write_text(_line("r0", "yes"))  # changed: checked again (and marked)
    assert VerdictStore.load(path).find("c", ITEMS[0]).answer == "yes"  # type: ignore[union-attr]
