"""Snapshots (`action/commits/snapshot/`): one commit's view of the facts the gate reads, each blob
parsed once; the proposed snapshot is the PR's head as it will merge onto the base tip."""

from __future__ import annotations

import os
from pathlib import Path
from unittest import mock

import pytest

from rubric_gate.action.commits.changed import changed_via_git, merge_base_via_git
from rubric_gate.action.commits.snapshot import ParseMemo, load_snapshots
from rubric_gate.action.commits.sources import GitReader
from rubric_gate.errors import InputError
from tests.action.harness import Git

RUBRIC = "id: r\nversion: 1\ntask: t\ncalibration: c.jsonl\nverdicts: v.jsonl\nchecks:\n  - {id: A, text: a}\n"
LABELS = '{"id": "R1", "input": "i", "output": "o", "label": "fail"}\n'


@pytest.fixture
def repo(tmp_path: Path) -> Git:
    git = Git(tmp_path)
    git("init", "-q", "-b", "main")
    git.commit({"rubrics/a.yaml": RUBRIC, "rubrics/d.yaml": RUBRIC.replace("id: r", "id: d"),
                "rubrics/e.yaml": RUBRIC.replace("id: r", "id: e"), "c.jsonl": LABELS, "b.txt": "base\n"}, "base")
    return git


def _pr(repo: Git) -> tuple[str, str, str]:
    """Main moves on (b.txt, a new file); the PR edits a, deletes d, renames e to f."""
    base = repo("rev-parse", "HEAD")
    repo("checkout", "-q", "-b", "pr")
    head = repo.commit({"rubrics/a.yaml": RUBRIC.replace("text: a", "text: a2"), "rubrics/d.yaml": None}, "pr")
    repo("mv", "rubrics/e.yaml", "rubrics/f.yaml")
    repo("commit", "-q", "-m", "rename")
    head = repo("rev-parse", "HEAD")
    repo("checkout", "-q", "main")
    tip = repo.commit({"b.txt": "tip\n", "new.txt": "x\n"}, "main moves on")
    return base, tip, head


def test_the_proposed_snapshot_is_the_head_merged_onto_the_tip(repo: Git) -> None:
    base, tip, head = _pr(repo)
    merge_base = merge_base_via_git(repo.path, tip, head)
    assert merge_base == base
    files = changed_via_git(repo.path, merge_base, head)
    snapshots = load_snapshots(GitReader(repo.path), merge_base, tip, head, files, ParseMemo())
    proposed = snapshots.proposed
    assert snapshots.tip_moved and snapshots.trusted == (snapshots.merge_base, snapshots.tip)
    assert proposed.text("b.txt") == "tip\n" and proposed.text("new.txt") == "x\n"  # main's, untouched by the PR
    assert "text: a2" in (proposed.text("rubrics/a.yaml") or "")  # the PR's
    assert proposed.file("rubrics/d.yaml") is None and proposed.file("rubrics/e.yaml") is None
    assert proposed.text("rubrics/f.yaml") == RUBRIC.replace("id: r", "id: e")
    assert proposed.rubric_paths(("rubrics/*.yaml",)) == ["rubrics/a.yaml", "rubrics/f.yaml"]
    assert proposed.display("b.txt").startswith(tip[:7]) and proposed.display("rubrics/a.yaml").startswith(head[:7])
    assert snapshots.head.text("b.txt") == "base\n"  # the head commit itself is not the merge


def test_an_unmoved_base_is_one_trusted_snapshot(repo: Git) -> None:
    sha = repo("rev-parse", "HEAD")
    snapshots = load_snapshots(GitReader(repo.path), sha, sha, sha, [], ParseMemo())
    assert not snapshots.tip_moved and snapshots.trusted == (snapshots.merge_base,)


def test_a_blob_is_parsed_once_and_named_by_each_commit_that_holds_it(repo: Git) -> None:
    first = repo("rev-parse", "HEAD")
    second = repo.commit({"b.txt": "other\n"}, "the rubric's blob is unchanged")
    broken = "id: [\n"
    third = repo.commit({"rubrics/a.yaml": broken}, "broken")
    fourth = repo.commit({"b.txt": "again\n"}, "still broken")
    memo = ParseMemo()
    reader = GitReader(repo.path)
    docs = [load_snapshots(reader, sha, sha, sha, [], memo).merge_base.rubric("rubrics/a.yaml") for sha in (first, second)]
    assert [d.display for d in docs if d] == [f"{first[:7]}:rubrics/a.yaml", f"{second[:7]}:rubrics/a.yaml"]
    assert docs[0] and docs[1] and docs[0].rubric is docs[1].rubric  # one parse, shared
    messages = []
    for sha in (third, fourth):
        with pytest.raises(InputError) as caught:
            load_snapshots(reader, sha, sha, sha, [], memo).merge_base.rubric("rubrics/a.yaml")
        messages.append(caught.value.message)
    assert messages[0].startswith(f"{third[:7]}:rubrics/a.yaml:") and messages[1].startswith(f"{fourth[:7]}:rubrics/a.yaml:")
    assert messages[0].split(":", 2)[2] == messages[1].split(":", 2)[2]
    assert max(memo.parses.values()) == 1


def test_a_symlinked_rubric_has_no_keys_and_does_not_load(repo: Git) -> None:
    os.symlink("a.yaml", repo.path / "rubrics" / "link.yaml")
    repo("add", "rubrics/link.yaml")
    repo("commit", "-q", "-m", "a symlink whose target is a rubric")
    sha = repo("rev-parse", "HEAD")
    snapshot = load_snapshots(GitReader(repo.path), sha, sha, sha, [], ParseMemo()).merge_base
    assert snapshot.rubric_keys("rubrics/link.yaml") == {}
    with pytest.raises(InputError, match="symlink"):
        snapshot.rubric("rubrics/link.yaml")
    with pytest.raises(InputError, match="symlink"):
        snapshot.calibration("rubrics/link.yaml")


def test_the_reader_reads_a_blob_once_at_every_commit_holding_it(repo: Git) -> None:
    first = repo("rev-parse", "HEAD")
    second = repo.commit({"b.txt": "other\n"}, "the rubric's blob is unchanged")
    reader = GitReader(repo.path)
    blob = reader._blob
    with mock.patch.object(reader, "_blob", side_effect=blob) as reads:
        texts = [reader.read(sha, "rubrics/a.yaml") for sha in (first, second)]
        assert reader.read(second, "b.txt") == "other\n"
    assert texts == [RUBRIC, RUBRIC] and reads.call_count == 2  # a.yaml once, b.txt once
