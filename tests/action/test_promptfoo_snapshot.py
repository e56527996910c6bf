"""The snapshot reader's promptfoo configs: which configs a PR changes (`action.commits.configs`),
and each document parsed once per (config blob, settings blob, path) (`snapshot.memo`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rubric_gate.action.commits.changed import ChangedFile
from rubric_gate.action.commits.configs import config_changes
from rubric_gate.action.commits.snapshot import ParseMemo, load_snapshots
from rubric_gate.action.commits.sources import GitReader
from rubric_gate.errors import InputError
from rubric_gate.rubric.mapping import PromptfooEntry
from tests.support.promptfoo_project import BASE_CONFIG, CONFIG_PATH, SETTINGS, make_repo

GLOBS = ("rubrics/**/*.y*ml",)
A, B = "evals/a.yaml", "evals/b.yaml"


def entry(calibration: str = "c.jsonl") -> PromptfooEntry:
    return PromptfooEntry(id="x", calibration=calibration, verdicts="v.jsonl")


def _shown(changes: list[ChangedFile]) -> list[tuple[str, str | None, str, bool]]:
    return [(c.path, c.previous, c.status, c.unlisted) for c in changes]


@pytest.mark.parametrize(("files", "base", "head", "expected"), [
    pytest.param([ChangedFile(A, None, "modified")], {A: entry()}, {A: entry()},
                 [(A, None, "modified", False)], id="config-edited"),
    pytest.param([], {A: entry()}, {A: entry("mine.jsonl")}, [(A, None, "modified", False)], id="entry-edited"),
    pytest.param([], {A: entry()}, {A: entry()}, [], id="nothing-changed"),
    pytest.param([], {A: entry()}, {}, [(A, None, "removed", True)], id="entry-dropped"),
    pytest.param([ChangedFile(A, None, "modified")], {A: entry()}, {}, [(A, None, "removed", True)],
                 id="entry-dropped-and-config-edited"),
    pytest.param([], {}, {A: entry()}, [(A, None, "added", False)], id="existing-file-newly-named"),
    pytest.param([ChangedFile(A, None, "modified")], {}, {A: entry()}, [(A, None, "added", False)],
                 id="edited-file-newly-named"),
    pytest.param([ChangedFile(A, None, "removed")], {A: entry()}, {}, [(A, None, "removed", False)],
                 id="config-deleted"),
    pytest.param([ChangedFile(B, A, "renamed")], {A: entry()}, {B: entry()}, [(B, A, "renamed", False)],
                 id="config-moved-with-its-entry"),
    pytest.param([ChangedFile(B, A, "renamed")], {A: entry()}, {}, [(A, None, "removed", True)],
                 id="config-moved-away-from-its-entry"),
    pytest.param([], {A: None}, {A: entry()}, [(A, None, "modified", False)], id="base-settings-unreadable"),
    pytest.param([], {A: entry()}, {A: None}, [(A, None, "modified", False)], id="head-settings-unreadable"),
    pytest.param([ChangedFile("rubrics/a.yaml", None, "modified")], {"rubrics/a.yaml": entry()},
                 {"rubrics/a.yaml": entry()}, [], id="under-the-globs-listed-by-rubric-changes"),
    pytest.param([], {"rubrics/a.yaml": entry()}, {}, [("rubrics/a.yaml", None, "modified", False)],
                 id="under-the-globs-a-rubric-either-way"),
])
def test_the_configs_a_pr_changes(files: list[ChangedFile], base: dict, head: dict,
                                  expected: list[tuple[str, str | None, str, bool]]) -> None:
    assert _shown(config_changes(files, GLOBS, base, head)) == expected


def test_a_promptfoo_document_is_parsed_once_per_config_settings_and_path(tmp_path: Path) -> None:
    """The same config bytes at the merge base, the tip and the head parse once; other settings
    bytes, or the same bytes at another path (whose entry is another, or none), parse again."""
    repo = make_repo(tmp_path / "repo", branch=False)
    base = repo.git("rev-parse", "HEAD").strip()
    repo.write("README.md", "main moves on\n")
    repo.commit("main moves on")
    tip = repo.git("rev-parse", "HEAD").strip()
    repo.write(".rubric-gate.yaml", SETTINGS.replace("id: support", "id: renamed"))
    repo.write("evals/copy.yaml", BASE_CONFIG)
    repo.commit("rename the rubric, copy the config")
    head = repo.git("rev-parse", "HEAD").strip()
    memo = ParseMemo()
    snapshots = load_snapshots(GitReader(repo.root), base, tip, head, [], memo)
    documents = [s.rubric(CONFIG_PATH) for s in (snapshots.merge_base, snapshots.tip, snapshots.merge_base)]
    assert {d.rubric.id for d in documents if d is not None} == {"support"}
    assert [d.display for d in documents if d is not None] == [
        f"{base[:7]}:{CONFIG_PATH}", f"{tip[:7]}:{CONFIG_PATH}", f"{base[:7]}:{CONFIG_PATH}"]
    assert [d.settings_display for d in documents if d is not None] == [
        f"{base[:7]}:.rubric-gate.yaml", f"{tip[:7]}:.rubric-gate.yaml", f"{base[:7]}:.rubric-gate.yaml"]
    head_doc = snapshots.head.rubric(CONFIG_PATH)
    assert head_doc is not None and head_doc.rubric.id == "renamed"
    with pytest.raises(InputError) as raised:
        snapshots.head.rubric("evals/copy.yaml")
    assert raised.value.path == f"{head[:7]}:evals/copy.yaml"
    assert f"that {head[:7]}:.rubric-gate.yaml does not name" in raised.value.what
    with pytest.raises(InputError):  # the failure is kept too, and named again where it is read
        snapshots.head.rubric("evals/copy.yaml")
    parses = sorted(n for (kind, _), n in memo.parses.items() if kind == "promptfoo")
    assert parses == [1, 1, 1]  # (config, main's settings), (config, the head's), (the copy, the head's)
    assert snapshots.head.rubric_keys(CONFIG_PATH)["id"] == "renamed"
    assert snapshots.merge_base.rubric_keys(CONFIG_PATH) == {
        "id": "support", "calibration": "calibration/support.jsonl", "verdicts": "calibration/support.verdicts.jsonl",
        "task": "Answer the customer's refund question from the policy excerpt, politely and accurately."}
    assert snapshots.head.rubric_keys("evals/copy.yaml") == {}
    assert CONFIG_PATH in snapshots.head.rubric_paths(GLOBS) and "evals/copy.yaml" not in snapshots.head.rubric_paths(GLOBS)


def test_an_error_in_the_settings_names_the_settings_file_at_each_commit(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", branch=False)
    repo.write(".rubric-gate.yaml", SETTINGS.replace("    id: support\n", "    id: support\n    colour: blue\n"))
    repo.commit("break the settings")
    first = repo.git("rev-parse", "HEAD").strip()
    repo.write("README.md", "again\n")
    repo.commit("again")
    second = repo.git("rev-parse", "HEAD").strip()
    memo = ParseMemo()
    snapshots = load_snapshots(GitReader(repo.root), first, second, second, [], memo)
    for snapshot, sha in ((snapshots.merge_base, first), (snapshots.tip, second)):
        with pytest.raises(InputError) as raised:
            snapshot.rubric(CONFIG_PATH)
        assert (raised.value.path, raised.value.line) == (f"{sha[:7]}:.rubric-gate.yaml", 4)
        assert snapshot.rubric_paths(GLOBS) == ["rubrics/support.yaml"]  # its configs are unknown
    assert sum(n for (kind, _), n in memo.parses.items() if kind == "promptfoo") == 1
