"""Verdict stores by git blob id: one parse per distinct blob, shared columns copied on write,
and a blob that extends a parsed one read as its columns plus the added lines."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from rubric_gate.calibration import CalibrationItem
from rubric_gate.errors import InputError
from rubric_gate.verdicts import Verdict, VerdictStore
from rubric_gate.verdicts.blobs import BlobCache
from rubric_gate.verdicts.compare import added_lines, differing_lines

ITEMS = [CalibrationItem(id=f"r{i}", input="in", output=str(i), label="pass") for i in range(5)]


def lines(n: int, answer: str = "yes", start: int = 0) -> bytes:
    return "".join(json.dumps({"item": f"r{i % 5}", "check_text": f"check {i % 3}", "answer": answer,
                               "judge": "hand"}) + "\n" for i in range(start, start + n)).encode()


def table(store: VerdictStore) -> list:
    out: list = [len(store), [v.model_dump() for v in store]]
    for text in ("check 0", "check 1", "check 2"):
        failed, missing = store.answers(text, ITEMS)
        out.append((failed.tolist(), missing.tolist()))
    return out


def test_one_parse_per_blob_and_the_loader_runs_only_on_a_miss() -> None:
    cache = BlobCache()
    loads: list[int] = []
    raw = lines(30)

    def loader() -> bytes:
        loads.append(1)
        return raw

    first = VerdictStore.from_blob("b1", loader, "base:v.jsonl", cache=cache)
    second = VerdictStore.from_blob("b1", loader, "head:v.jsonl", cache=cache)
    assert loads == [1] and cache.parses == 1
    assert table(first) == table(second) == table(VerdictStore.from_bytes(raw, "x"))
    assert second.display == "head:v.jsonl"


def test_a_write_to_one_store_leaves_the_others_of_the_blob_alone() -> None:
    cache = BlobCache()
    raw = lines(10)
    one = VerdictStore.from_blob("b1", raw, "a", cache=cache)
    other = VerdictStore.from_blob("b1", raw, "b", cache=cache)
    before = table(other)
    one.append([Verdict(item="r0", check_text="check 0", answer="no")])
    assert len(one) == 11 and one.answers("check 0", ITEMS[:1])[0].tolist() == [True]
    assert table(other) == before
    assert table(VerdictStore.from_blob("b1", raw, "c", cache=cache)) == before


def test_a_blob_extending_a_parsed_one_parses_only_its_added_lines(monkeypatch) -> None:
    from rubric_gate.verdicts import blobs

    cache = BlobCache()
    base_raw = lines(40)
    head_raw = base_raw + lines(7, answer="no", start=40)
    base = VerdictStore.from_blob("base", base_raw, "base:v", cache=cache)
    parsed: list[int] = []
    real = blobs.parse_bytes

    def spy(raw, builder, display, *, start=0, first_line=1):  # type: ignore[no-untyped-def]
        parsed.append(len(raw) - start)
        return real(raw, builder, display, start=start, first_line=first_line)

    monkeypatch.setattr(blobs, "parse_bytes", spy)
    head = VerdictStore.from_blob("head", head_raw, "head:v", cache=cache)
    assert (cache.parses, cache.extensions) == (1, 1)
    assert parsed == [len(head_raw) - len(base_raw)]
    assert table(head) == table(VerdictStore.from_bytes(head_raw, "x"))
    assert table(base) == table(VerdictStore.from_bytes(base_raw, "x"))
    assert [v.model_dump() for v in added_lines(base, head)] == [
        v.model_dump() for v in VerdictStore.from_bytes(head_raw[len(base_raw):], "x")]


def test_a_blob_extending_a_parsed_one_holds_their_shared_rows_once() -> None:
    """The base's columns become a view of the head's first rows (one copy for both), a copy of a
    store shares its columns read-only, and a write to either still leaves the other alone."""
    import numpy as np

    cache = BlobCache()
    base_raw = lines(40)
    head_raw = base_raw + lines(7, answer="no", start=40)
    base = VerdictStore.from_blob("base", base_raw, "base:v", cache=cache)
    head = VerdictStore.from_blob("head", head_raw, "head:v", cache=cache)
    base_columns, head_columns = base._data.columns.arrays(), head._data.columns.arrays()
    for name, column in base_columns.items():
        assert np.shares_memory(column, head_columns[name]) and not column.flags.writeable
    assert table(base) == table(VerdictStore.from_bytes(base_raw, "x"))
    assert table(head) == table(VerdictStore.from_bytes(head_raw, "x"))
    merged = base.merged(VerdictStore([Verdict(item="r0", check_text="check 0", answer="no")]))
    assert len(merged) == 41 and table(base) == table(VerdictStore.from_bytes(base_raw, "x"))
    copied = base._data.copy()
    assert all(np.shares_memory(a, b) for a, b in zip(copied.columns.arrays().values(), base_columns.values(),
                                                       strict=True))
    with pytest.raises(ValueError):
        copied.columns.arrays()["answer"][0] = 1  # shared: read-only
    before = table(head)
    base.append([Verdict(item="r1", check_text="check 1", answer="no")])
    assert base.answers("check 1", ITEMS[1:2])[0].tolist() == [True] and table(head) == before


def test_extending_a_blob_holds_its_old_and_new_columns_together_one_column_at_a_time() -> None:
    """The head's columns are the base's plus the added rows, and the base's become views of
    them: built a column at a time, so both full sets are never held at once (10k x 128: 39 MiB)."""
    import tracemalloc

    cache = BlobCache()
    base_raw = "".join(json.dumps({"item": f"r{i % 1000}", "check_text": f"check {i // 1000}", "answer": "yes"})
                       + "\n" for i in range(40_000)).encode()
    head_raw = base_raw + lines(3, "no")
    tracemalloc.start()  # before the base's columns are made: their release counts too
    try:
        base = VerdictStore.from_blob("base", base_raw, "base:v", cache=cache)
        columns = sum(a.nbytes for a in base._data.columns.arrays().values())
        held = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        head = VerdictStore.from_blob("head", head_raw, "head:v", cache=cache)
        extra = tracemalloc.get_traced_memory()[1] - held
    finally:
        tracemalloc.stop()
    assert len(head) == 40_003 and len(base) == 40_000
    # The largest column (the int64 offsets) at most beside the old ones: not all seven.
    assert extra < columns / 2, f"{extra / 2**20:.1f} MiB more while extending {columns / 2**20:.1f} MiB of columns"


def test_the_appended_lines_are_read_back_once_for_both_questions() -> None:
    """`added_lines` (the lines a PR wrote) and `differing_lines` (what the gate reads otherwise)
    of a head appending to its base are the same appended lines: one `Verdict` each, shared."""
    cache = BlobCache()
    base_raw = lines(40)
    head_raw = base_raw + lines(7, answer="no", start=40) + lines(2)  # two copies of base lines
    base = VerdictStore.from_blob("base", base_raw, "base:v", cache=cache)
    head = VerdictStore.from_blob("head", head_raw, "head:v", cache=cache)
    added = added_lines(base, head)
    _, differing = differing_lines(base, head)
    assert [v.model_dump() for v in added] == [v.model_dump() for v in VerdictStore.from_bytes(lines(7, "no", 40), "x")]
    assert len(differing) == 9 and all(a is b for a, b in zip(added, differing, strict=False))
    assert added_lines(base, VerdictStore.from_blob("head", head_raw, "head:v", cache=cache))[0] is added[0]


def test_an_error_in_the_added_lines_names_the_line_of_the_head_file() -> None:
    cache = BlobCache()
    base_raw = lines(12)
    VerdictStore.from_blob("base", base_raw, "base:v", cache=cache)
    with pytest.raises(InputError) as caught:
        VerdictStore.from_blob("head", base_raw + lines(2) + b'{"item": "r1"}\n', "head:v", cache=cache)
    assert str(caught.value).startswith("head:v:15: ") and "check_text" in str(caught.value)


def test_a_blob_edited_in_the_middle_is_parsed_in_full() -> None:
    cache = BlobCache()
    base_raw = lines(20)
    VerdictStore.from_blob("base", base_raw, "base:v", cache=cache)
    edited = base_raw.replace(b'"answer": "yes"', b'"answer": "no"', 1) + lines(3)
    head = VerdictStore.from_blob("head", edited, "head:v", cache=cache)
    assert (cache.parses, cache.extensions) == (2, 0)
    assert table(head) == table(VerdictStore.from_bytes(edited, "x"))


@pytest.mark.integration
def test_git_reader_gives_blob_ids(tmp_path: Path) -> None:
    from rubric_gate.action.commits.sources import GitReader

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=tmp_path, capture_output=True, text=True, check=True).stdout.strip()

    git("init", "-q")
    (tmp_path / "v.jsonl").write_bytes(lines(3))
    git("add", "v.jsonl")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    sha = git("rev-parse", "HEAD")
    reader = GitReader(tmp_path)
    assert reader.blob_id(sha, "v.jsonl") == git("rev-parse", f"{sha}:v.jsonl")
    assert reader.blob_id(sha, "missing.jsonl") is None


def _git_blob_id(raw: bytes) -> str:
    import hashlib

    return hashlib.sha1(b"blob %d\0" % len(raw) + raw).hexdigest()


def _dumped(verdicts: list[Verdict]) -> list[dict]:
    return [v.model_dump() for v in verdicts]


@pytest.mark.parametrize("seed", range(6))
def test_added_lines_between_blobs_equals_the_line_by_line_comparison(seed: int) -> None:
    """Appended lines that repeat a base line byte for byte, or reformat one, or contradict one:
    the blob route (comparing only the appended lines) answers exactly as the full comparison."""
    import random

    rng = random.Random(seed)
    base_lines = lines(30).splitlines(keepends=True) + lines(10, answer="no", start=30).splitlines(keepends=True)
    appended = []
    for _ in range(15):
        kind = rng.choice(["repeat", "reformat", "new", "flip"])
        line = rng.choice(base_lines)
        if kind == "repeat":
            appended.append(line)
        elif kind == "reformat":
            appended.append(json.dumps(json.loads(line), indent=None, separators=(",", ":")).encode() + b"\n")
        elif kind == "flip":
            obj = json.loads(line)
            obj["answer"] = "yes" if obj["answer"] == "no" else "no"
            appended.append(json.dumps(obj).encode() + b"\n")
        else:
            appended.append(json.dumps({"item": f"r{rng.randrange(5)}", "check_text": f"new {rng.randrange(3)}",
                                        "answer": "yes"}).encode() + b"\n")
    base_raw = b"".join(base_lines)
    head_raw = base_raw + b"".join(appended)
    cache = BlobCache()
    base = VerdictStore.from_blob("base", base_raw, "base:v", cache=cache)
    head = VerdictStore.from_blob("head", head_raw, "head:v", cache=cache)
    assert cache.extensions == 1
    plain_base, plain_head = VerdictStore.from_bytes(base_raw, "b"), VerdictStore.from_bytes(head_raw, "h")
    assert _dumped(added_lines(base, head)) == _dumped(added_lines(plain_base, plain_head))
    assert _dumped(added_lines(head, base)) == _dumped(added_lines(plain_head, plain_base)) == []
    assert _dumped(added_lines(base, head)) == _dumped(added_lines(plain_base, plain_head))  # the kept answer


def test_a_blob_in_a_file_is_streamed_and_read_back_like_bytes(tmp_path: Path) -> None:
    base_raw, head_raw = lines(25), lines(25) + lines(5, answer="no", start=25)
    (tmp_path / "base").write_bytes(base_raw)
    (tmp_path / "head").write_bytes(head_raw)
    cache = BlobCache()
    base = VerdictStore.from_blob("b", tmp_path / "base", "base:v", cache=cache)
    head = VerdictStore.from_blob("h", lambda: tmp_path / "head", "head:v", cache=cache)
    assert (cache.parses, cache.extensions) == (1, 1)
    assert table(base) == table(VerdictStore.from_bytes(base_raw, "x"))
    assert table(head) == table(VerdictStore.from_bytes(head_raw, "x"))
    assert _dumped(added_lines(base, head)) == _dumped(VerdictStore.from_bytes(lines(5, answer="no", start=25), "x"))


def test_parsed_blobs_are_indexed_by_blob_id_for_the_next_process(tmp_path: Path, monkeypatch) -> None:
    from rubric_gate.verdicts import blob_index as index

    monkeypatch.setenv("RUBRIC_GATE_INDEX_DIR", str(tmp_path / "index"))
    base_raw = lines(20)
    head_raw = base_raw + lines(4, answer="no", start=20)
    first = BlobCache(persist=True)
    for raw in (base_raw, head_raw):
        VerdictStore.from_blob(_git_blob_id(raw), raw, "v", cache=first)
    assert (first.parses, first.extensions, first.indexed) == (1, 1, 0)
    indexes = sorted(f"blob-{_git_blob_id(raw)}.sqlite" for raw in (base_raw, head_raw))
    assert sorted(p.name for p in (tmp_path / "index").iterdir() if p.suffix == ".sqlite") == indexes
    assert sorted(p.name.split(".sqlite.")[0] + ".sqlite" for p in (tmp_path / "index").glob("*.columns")) == indexes
    second = BlobCache(persist=True)  # the next run: nothing parsed
    stores = [VerdictStore.from_blob(_git_blob_id(raw), raw, "v", cache=second) for raw in (base_raw, head_raw)]
    assert (second.parses, second.extensions, second.indexed) == (0, 0, 2)
    assert [table(s) for s in stores] == [table(VerdictStore.from_bytes(raw, "x")) for raw in (base_raw, head_raw)]
    assert _dumped(added_lines(stores[0], stores[1])) == _dumped(VerdictStore.from_bytes(head_raw[len(base_raw):], "x"))
    import numpy as np  # read from the index, the base's rows are still held once: views of the head's

    base_columns, head_columns = stores[0]._data.columns.arrays(), stores[1]._data.columns.arrays()
    assert all(np.shares_memory(column, head_columns[name]) for name, column in base_columns.items())
    reverse = BlobCache(persist=True)  # the head read first: the base is a view of it all the same
    later = [VerdictStore.from_blob(_git_blob_id(raw), raw, "v", cache=reverse) for raw in (head_raw, base_raw)]
    assert np.shares_memory(later[1]._data.columns.arrays()["item"], later[0]._data.columns.arrays()["item"])
    assert table(later[1]) == table(VerdictStore.from_bytes(base_raw, "x"))
    # An id that is no git object id is never written; a damaged index is only a parse.
    BlobCache(persist=True).data("not-an-id", base_raw, "v")
    assert not (tmp_path / "index" / "blob-not-an-id.sqlite").exists()
    index.blob_index_path(_git_blob_id(base_raw)).write_bytes(b"not a database")  # type: ignore[union-attr]
    third = BlobCache(persist=True)
    assert table(VerdictStore.from_blob(_git_blob_id(base_raw), base_raw, "v", cache=third)) == table(
        VerdictStore.from_bytes(base_raw, "x"))
    assert third.parses == 1


def test_the_blob_index_keeps_the_most_recently_used(tmp_path: Path, monkeypatch) -> None:
    from rubric_gate.verdicts import blob_index as index

    monkeypatch.setenv("RUBRIC_GATE_INDEX_DIR", str(tmp_path))
    raws = [lines(3 + n) for n in range(index.MAX_BLOB_INDEXES + 2)]
    for raw in raws:
        BlobCache(persist=True).data(_git_blob_id(raw), raw, "v")
    assert len(list(tmp_path.glob("blob-*.sqlite"))) == index.MAX_BLOB_INDEXES
    assert (tmp_path / f"blob-{_git_blob_id(raws[-1])}.sqlite").exists()
    assert not (tmp_path / f"blob-{_git_blob_id(raws[0])}.sqlite").exists()
    assert len(list(tmp_path.glob("blob-*.columns"))) == index.MAX_BLOB_INDEXES  # each removed with its index
