"""The classified diff fails closed and says what it can: every kind of difference is one the diff
can report (a scenario per kind, on commits held in memory), and a difference whose kind has no
rule, or a verdict field no rule names, needs the override (`rubric-gate action`, fake GitHub,
real git)."""

from __future__ import annotations

import json
from collections.abc import Callable
from unittest import mock

import pytest
import yaml

from rubric_gate.action.commits.changed import ChangedFile, rubric_changes
from rubric_gate.action.commits.configs import changed_rubrics
from rubric_gate.action.commits.merge_check import Merged, merge_bases_problem, merge_problems
from rubric_gate.action.commits.snapshot import ParseMemo, diff_snapshots, load_snapshots
from rubric_gate.action.event import PullRequest
from rubric_gate.trust import Confirms
from rubric_gate.trust.differences import RULES, Kind, item_field, verdict_field
from tests.action.harness import (
    CALIBRATION,
    LABELS,
    RUBRIC,
    TEXTS,
    VERDICTS,
    Scenario,
    calibration_jsonl,
    rubric_yaml,
    verdicts_jsonl,
)
from tests.support.memory_repo import MemoryRepo
from tests.support.promptfoo_project import (
    BASE_CONFIG,
    CONFIG_PATH,
    SETTINGS,
    calibration_lines,
    verdict_lines,
)


def _blocking(result) -> list[str]:  # type: ignore[no-untyped-def]
    return [f["message"] for f in result.report()["standard"] if f["blocking"]]


def test_an_allowed_difference_passes_and_the_same_one_without_a_rule_blocks(scenario: Scenario) -> None:
    head = scenario.git.commit({CALIBRATION: calibration_jsonl({**LABELS, "R6": "pass"})}, "add R6")
    allowed = scenario.run(head)
    assert allowed.code == 0 and _blocking(allowed) == [], allowed.stdout + allowed.stderr
    with mock.patch.dict(RULES):
        del RULES[Kind.LABELS_ADDED]  # a kind nobody gave a rule
        unruled = scenario.run(head)
    assert unruled.code == 1, unruled.stdout + unruled.stderr
    assert _blocking(unruled) == ["added 1: R6 (pass)"]


def test_a_verdict_field_no_rule_names_needs_the_override(scenario: Scenario) -> None:
    lines = verdicts_jsonl(TEXTS).splitlines(keepends=True)
    quoted = json.loads(lines[0])
    lines[0] = json.dumps({**quoted, "quote": "the design encrypts nothing"}) + "\n"
    head = scenario.git.commit({VERDICTS: "".join(lines)}, "a quote on one recorded verdict")
    noted = scenario.run(head)
    assert noted.code == 0 and _blocking(noted) == [], noted.stdout + noted.stderr  # `quote` is a note
    with mock.patch.dict(RULES):
        del RULES[verdict_field("quote")]  # as a field the format gains later would be
        unruled = scenario.run(head)
    assert unruled.code == 1, unruled.stdout + unruled.stderr
    (message,) = _blocking(unruled)
    assert "quote" in message and "no rule" in message


# -- every kind is one the diff can report -------------------------------------------------------
# One scenario per kind, run on commits held in memory (`tests.support.memory_repo`): the
# classified diff (`action.commits.snapshot.diff`) and the merge check report each kind, so the
# table has no rule for a kind nothing emits (a rule nobody can reach reads as coverage it is not).

GLOBS = ("rubrics/**/*.yaml",)
RENAMED_VERDICTS = "calibration/moved.verdicts.jsonl"
AB = {c: TEXTS[c] for c in "AB"}
BASE_FILES = {RUBRIC: rubric_yaml(["A", "B"]), CALIBRATION: calibration_jsonl(), VERDICTS: verdicts_jsonl(AB)}
OTHER = "rubrics/other.yaml"


def _changed(path: str, status: str = "modified", previous: str | None = None) -> ChangedFile:
    return ChangedFile(path, previous, status)


def _kinds(head: dict[str, str | None], files: list[ChangedFile], *, base: dict[str, str | None] | None = None,
           tip: dict[str, str | None] | None = None, confirms: Confirms | None = None,
           judge_gated: frozenset[str] = frozenset()) -> list[str]:
    """The kinds the classified diff reports for a PR writing `head` over the base's files."""
    repo = MemoryRepo()
    repo.commit("base", {**BASE_FILES, **(base or {})})
    repo.commit("head", head, parent="base")
    if tip is not None:
        repo.commit("tip", tip, parent="base")
    snapshots = load_snapshots(repo, "base", "tip" if tip is not None else "base", "head", files, ParseMemo())
    return [str(d.kind) for d in diff_snapshots(snapshots, GLOBS, rubric_changes(files, GLOBS), confirms, judge_gated)]


def _verdicts(lines: list[dict[str, object]]) -> str:
    return "".join(json.dumps(line) + "\n" for line in lines)


def _recorded() -> list[dict[str, object]]:
    return [json.loads(line) for line in verdicts_jsonl(AB).splitlines()]


def _with_answer(item: str, cid: str, answer: str | None, **extra: object) -> str:
    """The base's record with (cid, item)'s line answering `answer` (None: without that line)."""
    lines = []
    for line in _recorded():
        if line["item"] == item and line["check_text"] == TEXTS[cid]:
            if answer is None:
                continue
            line = {**line, "answer": answer, **extra}
        lines.append(line)
    return _verdicts(lines)


def _without(item: str, cid: str) -> str:
    return _with_answer(item, cid, None)


def _items(added: tuple[str, ...] = (), **changes: dict[str, object] | None) -> str:
    """The base's calibration set with the items in `changes` updated (None: removed), and
    `added` items labeled pass."""
    out = []
    for line in calibration_jsonl().splitlines():
        item = json.loads(line)
        if item["id"] in changes:
            if changes[item["id"]] is None:
                continue
            item = {**item, **(changes[item["id"]] or {})}
        out.append(item)
    out += [{"id": i, "input": f"design {i}", "output": f"review {i}", "label": "pass"} for i in added]
    return "".join(json.dumps(item) + "\n" for item in out)


def _rubric_with(**keys: object) -> str:
    data = yaml.safe_load(rubric_yaml(["A", "B"]))
    return yaml.safe_dump({**data, **keys}, sort_keys=False)


def _confirm_all(answers, head, task_texts, items):  # type: ignore[no-untyped-def]
    return set(answers)


def _merge(merged: Merged | None = None, merge_files: dict[str, str | None] | None = None) -> list[str]:
    """The kinds the merge check reports for a PR editing check A, main having moved on."""
    repo = MemoryRepo()
    repo.commit("base", BASE_FILES)
    head_files = {RUBRIC: rubric_yaml(["A2", "B"])}
    repo.commit("head", head_files, parent="base")
    repo.commit("tip", {"README.md": "main moved\n"}, parent="base")
    files = [_changed(RUBRIC)]
    snapshots = load_snapshots(repo, "base", "tip", "head", files, ParseMemo())
    if merged is None:
        repo.commit("merge", {**head_files, **(merge_files or {})}, parent="tip")
        merged = Merged("merge", "the test merge")
    return [str(f.kind) for f in merge_problems(snapshots, merged, rubric_changes(files, GLOBS), GLOBS)]


def _unruled(name: str, scenario: Callable[[], list[str]]) -> Callable[[], list[str]]:
    """`scenario` with `name` (a field) taken out of the table, as a field the format gains later."""
    def run() -> list[str]:
        with mock.patch.dict(RULES):
            del RULES[name]
            return scenario()
    return run


def _config_kinds(head_config: str) -> list[str]:
    """The kinds for a PR editing a promptfoo config `.rubric-gate.yaml` names (read as the action reads it)."""
    files = {".rubric-gate.yaml": SETTINGS, CONFIG_PATH: BASE_CONFIG, "calibration/support.jsonl": calibration_lines(),
             "calibration/support.verdicts.jsonl": verdict_lines()}
    repo = MemoryRepo()
    repo.commit("base", {**BASE_FILES, **files})
    repo.commit("head", {CONFIG_PATH: head_config}, parent="base")
    snapshots = load_snapshots(repo, "base", "base", "head", [_changed(CONFIG_PATH)], ParseMemo())
    return [str(d.kind) for d in diff_snapshots(snapshots, GLOBS, changed_rubrics(snapshots, GLOBS))]


# A rubric the base branch has under the globs that does not load (a tag the one YAML reader refuses).
UNLOADABLE = "!rubric\nid: old\nversion: 1\ncalibration: calibration/old.jsonl\nverdicts: calibration/old.v.jsonl\n"

PR = PullRequest(7, "t" * 40, "h" * 40, "o/r", "o/r", (), "https://github.com/o/r/pull/7")
BROKEN = "{not json\n"

SCENARIOS: dict[Kind, Callable[[], list[str]]] = {
    Kind.RUBRIC_ADDED: lambda: _kinds({OTHER: rubric_yaml(["A"]).replace("id: demo", "id: other")},
                                      [_changed(OTHER, "added")]),
    Kind.RUBRIC_REMOVED: lambda: _kinds({RUBRIC: None}, [_changed(RUBRIC, "removed")]),
    Kind.RUBRIC_MOVED: lambda: _kinds({RUBRIC: None, OTHER: BASE_FILES[RUBRIC]}, [_changed(OTHER, "renamed", RUBRIC)]),
    Kind.RUBRIC_ID_SHARED: lambda: _kinds({OTHER: BASE_FILES[RUBRIC]}, [_changed(OTHER, "added")]),
    Kind.RUBRIC_UNREADABLE: lambda: _kinds({RUBRIC: rubric_yaml(["A"])}, [_changed(RUBRIC)],
                                           base={"rubrics/old.yaml": UNLOADABLE}),
    Kind.FILE_MAYBE_IN_USE: lambda: _kinds({"data/x.jsonl": "{}\n"}, [_changed("data/x.jsonl", "added")],
                                           base={"rubrics/old.yaml": UNLOADABLE}),
    Kind.PROMPTFOO_GRADING: lambda: _config_kinds(BASE_CONFIG.replace("defaultTest:\n", "defaultTest:\n  threshold: 0.5\n",
                                                                      1)),
    Kind.RUBRIC_JUDGE_GATED: lambda: _kinds({RUBRIC: _rubric_with(judge="openai:n")}, [_changed(RUBRIC)],
                                            base={RUBRIC: _rubric_with(judge="openai:m")}, judge_gated=frozenset({RUBRIC})),
    Kind.RUBRIC_CHECKS: lambda: _kinds({RUBRIC: rubric_yaml(["A2", "B"])}, [_changed(RUBRIC)]),
    Kind.RUBRIC_AGGREGATION: lambda: _kinds({RUBRIC: _rubric_with(aggregation={"max_failures": 1})},
                                            [_changed(RUBRIC)]),
    Kind.RUBRIC_ID: lambda: _kinds({RUBRIC: _rubric_with(id="renamed")}, [_changed(RUBRIC)]),
    Kind.RUBRIC_VERSION: lambda: _kinds({RUBRIC: _rubric_with(version=2)}, [_changed(RUBRIC)]),
    Kind.RUBRIC_JUDGE: lambda: _kinds({RUBRIC: _rubric_with(judge="openai:m")}, [_changed(RUBRIC)]),
    Kind.RUBRIC_TASK: lambda: _kinds({RUBRIC: _rubric_with(task="Another task.")}, [_changed(RUBRIC)]),
    Kind.RUBRIC_CALIBRATION: lambda: _kinds({RUBRIC: _rubric_with(calibration="c2.jsonl")}, [_changed(RUBRIC)]),
    Kind.RUBRIC_VERDICTS: lambda: _kinds({RUBRIC: _rubric_with(verdicts="v2.jsonl")}, [_changed(RUBRIC)]),
    Kind.CALIBRATION_CREATED: lambda: _kinds({CALIBRATION: calibration_jsonl()}, [_changed(CALIBRATION, "added")],
                                             base={CALIBRATION: None}),
    Kind.CALIBRATION_UNREADABLE: lambda: _kinds({CALIBRATION: calibration_jsonl()}, [_changed(CALIBRATION)],
                                                base={CALIBRATION: BROKEN}),
    Kind.CALIBRATION_DELETED: lambda: _kinds({CALIBRATION: None}, [_changed(CALIBRATION, "removed")]),
    Kind.CALIBRATION_MOVED: lambda: _kinds({CALIBRATION: None, "calibration/moved.jsonl": calibration_jsonl()},
                                           [_changed("calibration/moved.jsonl", "renamed", CALIBRATION)]),
    Kind.LABELS_RELABELED: lambda: _kinds({CALIBRATION: _items(R1={"label": "pass"})}, [_changed(CALIBRATION)]),
    Kind.LABELS_REMOVED: lambda: _kinds({CALIBRATION: _items(R1=None)}, [_changed(CALIBRATION)]),
    Kind.LABELS_REWRITTEN: lambda: _kinds({CALIBRATION: _items(R1={"output": "other"})}, [_changed(CALIBRATION)]),
    Kind.LABELS_HELD_OUT: lambda: _kinds({CALIBRATION: _items(R1={"split": "evaluation"})}, [_changed(CALIBRATION)]),
    Kind.LABELS_UNCLASSIFIED: _unruled(item_field("meta"), lambda: _kinds(
        {CALIBRATION: _items(R1={"meta": {"source": "x"}})}, [_changed(CALIBRATION)])),
    Kind.LABELS_ADDED: lambda: _kinds({CALIBRATION: _items(added=("N1",))}, [_changed(CALIBRATION)]),
    Kind.LABELS_EDITED: lambda: _kinds({CALIBRATION: _items(R1={"flaw": "omission"})}, [_changed(CALIBRATION)]),
    Kind.VERDICTS_UNREADABLE: lambda: _kinds({VERDICTS: BASE_FILES[VERDICTS]}, [_changed(VERDICTS)],
                                             base={VERDICTS: BROKEN}),
    Kind.VERDICTS_DELETED: lambda: _kinds({VERDICTS: None}, [_changed(VERDICTS, "removed")]),
    Kind.VERDICTS_MOVED: lambda: _kinds({VERDICTS: None, RENAMED_VERDICTS: BASE_FILES[VERDICTS]},
                                        [_changed(RENAMED_VERDICTS, "renamed", VERDICTS)]),
    Kind.VERDICTS_UNCLASSIFIED: _unruled(verdict_field("quote"), lambda: _kinds(
        {VERDICTS: _with_answer("R1", "A", "no", quote="q")}, [_changed(VERDICTS)])),
    Kind.ANSWER_CHANGED: lambda: _kinds({VERDICTS: _with_answer("R1", "A", "yes")}, [_changed(VERDICTS)]),
    Kind.ANSWER_REJUDGED: lambda: _kinds({VERDICTS: _with_answer("R1", "A", "yes")}, [_changed(VERDICTS)],
                                         confirms=_confirm_all),
    Kind.ANSWER_FILLED: lambda: _kinds({VERDICTS: BASE_FILES[VERDICTS]}, [_changed(VERDICTS)],
                                       base={VERDICTS: _without("R1", "A")}),
    Kind.ANSWER_FILLED_REJUDGED: lambda: _kinds({VERDICTS: BASE_FILES[VERDICTS]}, [_changed(VERDICTS)],
                                                base={VERDICTS: _without("R1", "A")}, confirms=_confirm_all),
    Kind.ANSWER_FOR_NEW_CHECK: lambda: _kinds(
        {RUBRIC: rubric_yaml(["A", "B", "C"]), VERDICTS: BASE_FILES[VERDICTS] + verdicts_jsonl({"C": TEXTS["C"]})},
        [_changed(RUBRIC), _changed(VERDICTS)]),
    Kind.ANSWER_FOR_NO_CHECK: lambda: _kinds({VERDICTS: BASE_FILES[VERDICTS] + verdicts_jsonl({"C": TEXTS["C"]})},
                                             [_changed(VERDICTS)]),
    Kind.ANSWER_REMOVED: lambda: _kinds({VERDICTS: _without("R1", "A")}, [_changed(VERDICTS)]),
    Kind.ANSWER_REMOVED_WITH_CHECK: lambda: _kinds(
        {RUBRIC: rubric_yaml(["B"]), VERDICTS: verdicts_jsonl({"B": TEXTS["B"]})}, [_changed(RUBRIC), _changed(VERDICTS)]),
    Kind.MERGE_BASES: lambda: [str(f.kind) for f in merge_bases_problem(PR, ["a" * 40, "b" * 40])],
    Kind.MERGE_MISSING: lambda: _merge(Merged(None, "GitHub's test merge", "not computed yet")),
    Kind.MERGE_CONFLICTS: lambda: _merge(Merged(None, "git's merge", "it has conflicts", conflicts=True)),
    Kind.MERGE_DIFFERS: lambda: _merge(merge_files={RUBRIC: rubric_yaml(["A", "B"])}),
}


@pytest.mark.unit
@pytest.mark.parametrize("kind", list(Kind))
def test_every_kind_is_one_the_diff_can_report(kind: Kind) -> None:
    """No rule for a kind nothing emits: each kind has a scenario that reports it."""
    assert kind in SCENARIOS, f"no scenario reports {kind}: add one, or delete the kind and its rule"
    assert kind in SCENARIOS[kind]()
