"""Round 4 of the hostile pass on the trust boundary (issue 17): a PR author after a green
`rubric-gate` check on a change the gate should fail, end to end through `rubric-gate action`
against the fake GitHub with a real git repository. Each test asserts the gate is not green;
what was tried, found and closed is listed in docs/hostile-passes.md.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from rubric_gate.judges import PROMPT_VERSION
from rubric_gate.verdicts import task_hash
from tests.action.harness import (
    FAILS,
    LABELS,
    RUBRIC,
    TEXTS,
    VERDICTS,
    Scenario,
    rubric_yaml,
    verdicts_jsonl,
)
from tests.action.test_hostile_round3 import (
    JUDGE,
    _gate,
    _item_hash,
    _judge_env,
    _truthful_judge,
    _verdict,
)
from tests.action.test_integrity import _on_main

TASK = "Review a cloud security design."


def _keyed(check: str, item: str, answer: str, **extra: object) -> str:
    key = {"judge": JUDGE, "prompt": PROMPT_VERSION, "task_hash": task_hash(TASK), "item_hash": _item_hash(item)}
    return _verdict(check, item, answer, **{**key, **extra})


def _merge_pr(scenario: Scenario) -> str:
    """Fast-forward main to the PR branch (the PR merged); the next PR starts there."""
    scenario.git("checkout", "-q", "main")
    scenario.git("merge", "-q", "--ff-only", "pr")
    sha = scenario.git("rev-parse", "HEAD")
    scenario.base_sha = scenario.fake.base_sha = sha
    scenario.git("checkout", "-q", "pr")
    return sha


def _judged(scenario: Scenario, judge=_truthful_judge) -> dict:
    scenario.fake.judge = judge
    return {"judge": JUDGE, "env_extra": _judge_env(scenario)}


def _two_prs(scenario: Scenario, first: dict[str, str | None], second: dict[str, str | None], **inputs):
    """PR 1 commits `first` and merges; PR 2 commits `second`. Both results."""
    head = scenario.git.commit(first, "PR 1")
    one = _gate(scenario, head, **inputs)
    _merge_pr(scenario)
    head = scenario.git.commit(second, "PR 2")
    two = _gate(scenario, head, **inputs)
    return one, two


def _not_both_green(one, two) -> None:
    assert one.code != 0 or two.code != 0, one.stdout + one.stderr + two.stdout + two.stderr


# -- a verdict file the base names but does not have ---------------------------------------------

def test_creating_the_verdict_file_the_rubric_names_is_reviewed_like_changing_it(scenario: Scenario) -> None:
    """A judged rubric keeps its verdicts in the cache: the file its `verdicts` key names does
    not exist. PR 1 creates it with the judge's key on one invented answer ((B, R1) "no"); once
    merged, the next run reads it as the judge's answer and A's catch of R1 looks shared."""
    main = _on_main(scenario, {VERDICTS: None}, "verdicts live in the cache: no verdict file")
    scenario.git("reset", "-q", "--hard", main)
    inputs = _judged(scenario)
    one, two = _two_prs(scenario, {VERDICTS: _keyed("B", "R1", "no")}, {RUBRIC: rubric_yaml(["B", "C", "D"])},
                        **inputs)
    _not_both_green(one, two)


# -- an override lasts while its label is on ------------------------------------------------------

OVERRIDE = "rubric-gate:override"


def _label(scenario: Scenario, event: str, name: str = OVERRIDE, who: str = "maintainer") -> None:
    scenario.fake.label_events.append({"event": event, "actor": {"login": who}, "label": {"name": name}})
    scenario.fake.permissions = {"maintainer": "write", "mallory": "read"}


def test_an_override_removed_while_its_run_is_cancelled_does_not_stay_green(scenario: Scenario) -> None:
    """The label comes off; the `unlabeled` run is cancelled by the workflow's concurrency group
    when the author edits the PR's title right after. The title edit changes nothing the gate
    decides, but the head's last result is the override's pass, which no longer holds."""
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    _label(scenario, "labeled")
    assert _gate(scenario, head, labels=(OVERRIDE,)).code == 0  # overridden, as the writer meant
    _label(scenario, "unlabeled")  # ... and taken back; its run is cancelled by the next event
    edited = _gate(scenario, head, action="edited", payload={"changes": {"title": {"from": "x"}}})
    latest = max((r for r in scenario.fake.check_runs.values() if r["head_sha"] == head), key=lambda r: r["id"])
    assert edited.code != 0 and latest["conclusion"] != "success", edited.stdout + str(latest["conclusion"])


def test_an_override_applied_by_the_author_is_refused(scenario: Scenario) -> None:
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    _label(scenario, "labeled", who="mallory")
    assert _gate(scenario, head, labels=(OVERRIDE,)).code == 1


@pytest.mark.parametrize("name", ["rubric-gate:override ", "Rubric-Gate:Override", "rubric\u2010gate:override"],
                         ids=["trailing-space", "other-case", "unicode-hyphen"])
def test_a_look_alike_override_label_changes_nothing(scenario: Scenario, name: str) -> None:
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    assert _gate(scenario, head).code == 1
    _label(scenario, "labeled", name=name, who="maintainer")
    assert _gate(scenario, head, labels=(name,)).code == 1


def test_an_override_on_the_pr_does_not_carry_into_its_merge_group(scenario: Scenario) -> None:
    from tests.action.test_trust_edges import _merge_group

    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    _label(scenario, "labeled")
    assert _gate(scenario, head, labels=(OVERRIDE,)).code == 0
    scenario.git("checkout", "-q", "-b", "gh-readonly-queue/main/pr-7", scenario.base_sha)
    scenario.git("merge", "-q", "--no-ff", "-m", "Merge pull request #7", head)
    group = scenario.git("rev-parse", "HEAD")
    result = scenario.run(group, event_name="merge_group", payload=_merge_group(scenario, group))
    assert result.code == 1, result.stdout + result.stderr


# -- other events --------------------------------------------------------------------------------

def test_a_pull_request_target_run_gates_the_pr(scenario: Scenario) -> None:
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    assert _gate(scenario, head, event_name="pull_request_target").code == 1


@pytest.mark.parametrize("event", ["workflow_dispatch", "issue_comment", "pull_request_review", "check_suite"])
def test_an_ungated_event_posts_no_green_check(scenario: Scenario, event: str) -> None:
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    result = _gate(scenario, head, event_name=event)
    assert not [r for r in scenario.fake.check_runs.values() if r["conclusion"] == "success"], result.stdout
    assert not [s for s in scenario.fake.statuses if s.get("state") == "success"]


# -- rubric files: renames, rewrites, paths ------------------------------------------------------

def test_a_rename_with_an_edit_is_gated_as_the_edit(scenario: Scenario) -> None:
    scenario.git("mv", RUBRIC, "rubrics/demo-renamed.yaml")
    head = scenario.git.commit({"rubrics/demo-renamed.yaml": rubric_yaml(["B", "C", "D"])}, "move and delete A")
    assert _gate(scenario, head).code == 1


def test_a_rewrite_under_a_new_name_id_and_path_spelling_is_gated_as_the_edit(scenario: Scenario) -> None:
    text = rubric_yaml(["D", "C", "B"]).replace("id: demo", "id: demo-v2").replace(
        "calibration: calibration/demo.jsonl", "calibration: ./calibration//demo.jsonl")
    head = scenario.git.commit({RUBRIC: None, "rubrics/nested/other.yml": "# rewritten\n" + text}, "rewrite")
    assert _gate(scenario, head).code == 1


def test_a_rubric_moved_out_of_the_glob_and_a_copy_of_its_labels_back_in(scenario: Scenario) -> None:
    from tests.action.harness import CALIBRATION, calibration_jsonl

    text = rubric_yaml(["B", "C", "D"]).replace("id: demo", "id: fresh").replace(
        CALIBRATION, "calibration/fresh.jsonl").replace(VERDICTS, "calibration/fresh.verdicts.jsonl")
    scenario.git("mv", RUBRIC, "archive-demo.yaml")
    head = scenario.git.commit({"rubrics/fresh.yaml": text, "calibration/fresh.jsonl": calibration_jsonl(),
                                "calibration/fresh.verdicts.jsonl": verdicts_jsonl(TEXTS)},
                               "archive demo; a fresh rubric without A")
    assert _gate(scenario, head).code == 1


def test_a_rename_to_the_nfd_spelling_of_its_name_with_an_edit(scenario: Scenario) -> None:
    import unicodedata

    nfc = unicodedata.normalize("NFC", "rubrics/caf\u00e9.yaml")
    main = _on_main(scenario, {RUBRIC: None, nfc: rubric_yaml(["A", "B", "C", "D"])}, "rename to café")
    scenario.git("reset", "-q", "--hard", main)
    nfd = unicodedata.normalize("NFD", nfc)
    head = scenario.git.commit({nfc: None, nfd: rubric_yaml(["B", "C", "D"])}, "NFD name, delete A")
    assert _gate(scenario, head).code == 1


def test_a_rubric_moved_to_a_trailing_space_name_is_a_deletion(scenario: Scenario) -> None:
    scenario.git("mv", RUBRIC, "rubrics/demo.yaml ")
    head = scenario.git.commit({}, "rename with a trailing space")
    assert _gate(scenario, head).code == 1


def test_a_check_id_changed_only_in_case_with_its_text_edited(scenario: Scenario) -> None:
    text = rubric_yaml(["a=A2", "B", "C", "D"])
    lines = "".join(_verdict("A2", i, "no" if i in ("R1", "R2") else "yes") for i in LABELS)
    head = scenario.git.commit({RUBRIC: text, VERDICTS: verdicts_jsonl(TEXTS) + lines}, "A -> a, reworded")
    assert _gate(scenario, head).code == 1


# -- aggregation: k of n ---------------------------------------------------------------------------

def test_raising_max_failures_is_gated(scenario: Scenario) -> None:
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D"]) + "aggregation:\n  max_failures: 1\n"},
                               "let one check fail")
    assert _gate(scenario, head).code == 1


def test_raising_max_failures_behind_a_check_with_the_prs_own_catches(scenario: Scenario) -> None:
    """X answers no on R1 (PR-recorded): with X, R1 fails two checks and stays caught at k = 1."""
    extra = {"X": "Is key rotation automated?"}
    lines = "".join(_verdict(extra["X"], i, "no" if i == "R1" else "yes") for i in LABELS)
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "X"], extra=extra)
                                + "aggregation:\n  max_failures: 1\n", VERDICTS: verdicts_jsonl(TEXTS) + lines},
                               "add X; let one check fail")
    assert _gate(scenario, head).code == 1


@pytest.mark.parametrize("value", ["1.0", "true", "'1'", "-1", "0x1"], ids=["float", "bool", "string", "negative", "hex"])
def test_a_max_failures_that_is_not_a_plain_integer_is_bad_input(scenario: Scenario, value: str) -> None:
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D"]) + f"aggregation:\n  max_failures: {value}\n"},
                               "odd max_failures")
    assert _gate(scenario, head).code != 0


def test_lowering_max_failures_and_deleting_in_one_pr(scenario: Scenario) -> None:
    """Base k = 1: R2 (A, B) and R3 (B, C, D) are caught. Deleting B with k set to 0 keeps both
    caught at k = 0, but B's deletion is decided at the base's k, where it holds R2 alone with A."""
    base = rubric_yaml(["A", "B", "C", "D"]) + "aggregation:\n  max_failures: 1\n"
    main = _on_main(scenario, {RUBRIC: base}, "k = 1")
    scenario.git("reset", "-q", "--hard", main)
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "C", "D"])}, "delete B, k = 0")
    result = _gate(scenario, head)
    # k 1 -> 0 catches R1 (A alone) newly and loses nothing; deleting B at k = 1 loses R2.
    assert result.code == 1, result.stdout + result.stderr


# -- verdict lines keyed to a look-alike judge -----------------------------------------------------

@pytest.mark.parametrize("key", [{"judge": "OpenAI:fake-model"}, {"judge": " openai:fake-model"},
                                 {"judge": "openai:fake-model", "prompt": PROMPT_VERSION.upper()},
                                 {"task_hash": task_hash(TASK).upper()},
                                 {"item_hash": _item_hash("R1").upper()}],
                         ids=["judge-case", "judge-space", "prompt-case", "task-case", "item-hash-case"])
def test_a_look_alike_judge_key_cannot_plant_a_catch(scenario: Scenario, key: dict) -> None:
    inputs = _judged(scenario)
    one, two = _two_prs(scenario, {VERDICTS: verdicts_jsonl(TEXTS) + _keyed("B", "R1", "no", **key)},
                        {RUBRIC: rubric_yaml(["B", "C", "D"])}, **inputs)
    _not_both_green(one, two)


@pytest.mark.parametrize("line", [
    '{"item": "R1", "check_text": "%s", "answer": "No"}\n',
    '{"item": "R1", "check_text": "%s", "answer": "no", "answer": "yes"}\n',
    '{"item": "R1", "check_text": "%s", "answer": "no", "sample": "0"}\n',
    '{"item": "R1", "check_text": "%s", "answer": "no", "sample": true}\n',
    '{"item": "R1", "check_text": "%s", "answer": "no", "Answer": "yes"}\n',
], ids=["capitalised", "duplicate-key", "string-sample", "bool-sample", "extra-key"])
def test_a_malformed_verdict_line_is_bad_input(scenario: Scenario, line: str) -> None:
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"]),
                                VERDICTS: verdicts_jsonl(TEXTS) + line % TEXTS["B"]}, "delete A")
    assert _gate(scenario, head).code != 0


# -- labels: whitespace, unicode, duplicates --------------------------------------------------------

def _item(item: str, label: str, **extra: object) -> str:
    return json.dumps({"id": item, "input": f"design {item}", "output": f"review {item}", "label": label, **extra}) + "\n"


def test_an_item_whose_content_differs_only_in_whitespace_is_a_rewrite(scenario: Scenario) -> None:
    from tests.action.harness import CALIBRATION, calibration_jsonl

    cal = calibration_jsonl().replace('"review R1"', '"review R1 "')
    head = scenario.git.commit({CALIBRATION: cal}, "trailing space in R1")
    assert _gate(scenario, head).code == 1


def test_an_item_written_twice_with_opposite_labels_is_bad_input(scenario: Scenario) -> None:
    from tests.action.harness import CALIBRATION, calibration_jsonl

    dup = json.dumps({"id": "R1b", "input": "design R1", "output": "review R1", "label": "pass"}) + "\n"
    head = scenario.git.commit({CALIBRATION: calibration_jsonl() + dup}, "R1 again, as pass")
    assert _gate(scenario, head).code != 0


def test_a_duplicate_label_key_is_bad_input(scenario: Scenario) -> None:
    from tests.action.harness import CALIBRATION, calibration_jsonl

    cal = calibration_jsonl().replace('"label": "fail"}', '"label": "fail", "label": "pass"}', 1)
    head = scenario.git.commit({CALIBRATION: cal}, "R1 labeled twice")
    assert _gate(scenario, head).code != 0


def test_an_item_moved_to_the_evaluation_split_and_a_check_deleted(scenario: Scenario) -> None:
    from tests.action.harness import CALIBRATION, calibration_jsonl

    cal = calibration_jsonl().replace('"label": "fail"}', '"label": "fail", "split": "evaluation"}', 1)
    head = scenario.git.commit({CALIBRATION: cal, RUBRIC: rubric_yaml(["B", "C", "D"])}, "hold R1 out; delete A")
    assert _gate(scenario, head).code == 1


def test_an_unplanned_flaw_mark_and_a_deletion_in_the_next_pr(scenario: Scenario) -> None:
    from tests.action.harness import CALIBRATION, calibration_jsonl

    cal = calibration_jsonl().replace('"label": "fail"}', '"label": "fail", "flaw": "unplanned"}', 1)
    one, two = _two_prs(scenario, {CALIBRATION: cal}, {RUBRIC: rubric_yaml(["B", "C", "D"])})
    _not_both_green(one, two)


# -- files that are not what they say -------------------------------------------------------------

LFS_POINTER = ("version https://git-lfs.github.com/spec/v1\n"
               "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 12345\n")


@pytest.mark.parametrize("path", [RUBRIC, VERDICTS, "calibration/demo.jsonl"])
def test_a_file_committed_as_an_lfs_pointer_is_bad_input(scenario: Scenario, path: str) -> None:
    edits: dict[str, str | None] = {".gitattributes": f"{path} filter=lfs diff=lfs merge=lfs -text\n", path: LFS_POINTER}
    if path != RUBRIC:
        edits[RUBRIC] = rubric_yaml(["B", "C", "D"])
    head = scenario.git.commit(edits, "track it in LFS")
    assert _gate(scenario, head).code != 0


def test_a_textconv_attribute_does_not_change_what_the_gate_reads(scenario: Scenario) -> None:
    """`.gitattributes` with a diff driver: the gate reads blobs, never a filtered view."""
    scenario.git("config", "diff.hide.textconv", "sed -e s/no/yes/")
    head = scenario.git.commit({".gitattributes": "*.jsonl diff=hide\n*.yaml diff=hide\n",
                                RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A behind a textconv")
    assert _gate(scenario, head).code == 1


def test_deeply_nested_yaml_is_bad_input(scenario: Scenario) -> None:
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"]) + "x: " + "[" * 20000 + "]" * 20000 + "\n"},
                               "deep")
    result = scenario.run(head)
    assert result.code in (2, 3), result.stdout + result.stderr


def test_an_alias_bomb_is_bad_input(scenario: Scenario) -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True))
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"]) + bomb}, "bomb")
    assert _gate(scenario, head).code == 2


# -- the base does not load -------------------------------------------------------------------------

def test_a_broken_base_verdict_line_fixed_to_another_answer_needs_the_override(scenario: Scenario) -> None:
    line = f'"check_text": "{TEXTS["B"]}", "answer": "yes"'
    record = verdicts_jsonl(TEXTS).replace(line + "}", line, 1)  # B on R1: no closing brace
    main = _on_main(scenario, {VERDICTS: record}, "a broken line")
    scenario.git("reset", "-q", "--hard", main)
    fixed = verdicts_jsonl(TEXTS, {**FAILS, "R1": {"A", "B"}})
    head = scenario.git.commit({VERDICTS: fixed, RUBRIC: rubric_yaml(["B", "C", "D"])}, "fix the line; delete A")
    assert _gate(scenario, head).code != 0


# -- an answer the judge gave under one task excuses nothing under another -------------------------

LENIENT_TASK = "Say whether the design is pleasant to read."
LENIENT = "rubrics/lenient.yaml"


def _task_judge(prompt: str) -> str:
    """Truthful under demo's task; under the lenient task, B answers no on R1."""
    if LENIENT_TASK in prompt and TEXTS["B"] in prompt and "review R1" in prompt:
        return "no"
    return _truthful_judge(prompt)


def test_a_judges_answer_under_another_rubrics_task_does_not_excuse_a_changed_answer(scenario: Scenario) -> None:
    """lenient.yaml shares demo's labels, verdict file and check B. PR 1 touches lenient (so the
    judge answers B on R1 under its task: "no") and records that "no" as demo's keyed answer.
    The judge never answered B on R1 under demo's task; once merged, deleting A looks safe."""
    lenient = rubric_yaml(["B", "C"]).replace("id: demo", "id: lenient").replace(TASK, LENIENT_TASK)
    main = _on_main(scenario, {LENIENT: lenient}, "a lenient rubric sharing the record")
    scenario.git("reset", "-q", "--hard", main)
    inputs = _judged(scenario, _task_judge)
    first = {LENIENT: lenient.replace("version: 1", "version: 2"),
             VERDICTS: verdicts_jsonl(TEXTS) + _keyed("B", "R1", "no")}
    one, two = _two_prs(scenario, first, {RUBRIC: rubric_yaml(["B", "C", "D"])}, **inputs)
    _not_both_green(one, two)


# -- what the comment shows ------------------------------------------------------------------------

@pytest.mark.parametrize("fence", ["```", "~~~~", "    "], ids=["backticks", "tildes", "indent"])
def test_a_check_text_cannot_forge_a_heading_or_verdict_in_the_comment(scenario: Scenario, fence: str) -> None:
    """The gate fails (A deleted); an added check's text tries to close whatever block it is
    shown in and print a passing headline and alert of its own."""
    from pathlib import Path

    from markdown_it import MarkdownIt

    forged = (f"Is it fine?\n{fence}\n\n</details>\n\n## \u2705 rubric-gate: PASS\n\n> [!NOTE]\n"
              f"> All changes accepted.\n\n<!-- rubric-gate -->\n{fence}\n")
    lines = "".join(_verdict(forged, i, "yes") for i in LABELS)
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D", "X"], extra={"X": forged}),
                                VERDICTS: verdicts_jsonl(TEXTS) + lines}, "delete A; add X with a loud text")
    result = _gate(scenario, head)
    assert result.code == 1, result.stdout + result.stderr
    body = (Path(result.workspace) / result.outputs["comment"]).read_text()
    assert "All changes accepted" in body  # shown, as text
    tokens = MarkdownIt("commonmark").enable(["table"]).parse(body)
    headings = [tokens[n + 1].content for n, t in enumerate(tokens) if t.type == "heading_open"]
    assert not [h for h in headings if "PASS" in h], headings
    quotes = [tokens[n + 2].content for n, t in enumerate(tokens) if t.type == "blockquote_open"]
    assert not [q for q in quotes if "All changes accepted" in q], quotes


# -- a rubric the base cannot read vouches for none of its checks' answers -------------------------

def test_answers_filled_in_while_the_base_rubric_is_broken_are_reviewed(scenario: Scenario) -> None:
    """demo.yaml on main does not load (a check id twice, as two clean merges can leave it), and
    its record lacks (B, R1). PR 1 only fills that gap with "no": no rubric file changes. PR 2 is
    the reviewed, overridden fix of the YAML. PR 3 deletes A, whose catch of R1 B now "shares"."""
    record = "".join(line for line in verdicts_jsonl(TEXTS).splitlines(keepends=True)
                     if not (json.loads(line)["item"] == "R1" and json.loads(line)["check_text"] == TEXTS["B"]))
    broken = rubric_yaml(["A", "B", "C", "D", "C"])
    main = _on_main(scenario, {RUBRIC: broken, VERDICTS: record}, "two merges left C twice")
    scenario.git("reset", "-q", "--hard", main)
    first = scenario.git.commit({VERDICTS: record + _verdict("B", "R1", "no")}, "PR 1: fill (B, R1)")
    one = _gate(scenario, first)
    _merge_pr(scenario)
    fix = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D"])}, "PR 2: the YAML fix, overridden")
    _label(scenario, "labeled")
    assert _gate(scenario, fix, labels=(OVERRIDE,)).code == 0
    _merge_pr(scenario)
    scenario.fake.label_events.clear()
    third = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "PR 3: delete A")
    three = _gate(scenario, third)
    _not_both_green(one, three)


# -- the merge as it lands: an id main added since -------------------------------------------------

def test_a_check_id_main_added_since_with_other_text_is_not_merged_silently(scenario: Scenario) -> None:
    """Main added X at the end; the PR adds its own X at the top. Git merges both hunks cleanly
    into a rubric with X twice, which does not load; the gate's model of the merge keeps main's."""
    extra = {"X": "Is key rotation automated?", "Y": "Are backups encrypted?"}
    main_text = rubric_yaml(["A", "B", "C", "D", "X"], extra=extra)
    lines = "".join(_verdict(extra["X"], i, "yes") for i in LABELS)
    _on_main(scenario, {RUBRIC: main_text, VERDICTS: verdicts_jsonl(TEXTS) + lines}, "main adds X")
    ours = rubric_yaml(["X=Y", "A", "B", "C", "D"], extra=extra)
    pr_lines = "".join(_verdict(extra["Y"], i, "yes") for i in LABELS)
    head = scenario.git.commit({RUBRIC: ours, VERDICTS: pr_lines + verdicts_jsonl(TEXTS)}, "the PR adds its X")
    result = _gate(scenario, head)
    scenario.git("checkout", "-q", "-b", "merged", scenario.base_sha)
    merged = subprocess.run(["git", "merge", "-q", "--no-edit", head], cwd=scenario.git.path, capture_output=True,
                            check=False)
    if merged.returncode == 0:  # a clean merge: what lands must load, or the PR may not go green
        from rubric_gate.errors import InputError
        from rubric_gate.rubric import parse_rubric_text

        try:
            parse_rubric_text((scenario.git.path / RUBRIC).read_text(), RUBRIC)
        except InputError:
            assert result.code != 0, result.stdout + result.stderr


def test_a_sample_index_too_large_for_a_column_is_bad_input_not_a_crash(scenario: Scenario) -> None:
    line = _verdict("B", "R1", "no").replace("}", ', "sample": 100000000000000000000}')
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"]), VERDICTS: verdicts_jsonl(TEXTS) + line},
                               "delete A; a huge sample index")
    result = _gate(scenario, head)
    assert result.code == 2, result.stdout + result.stderr


# -- a standing result stands only for the base it was gated against -------------------------------

def test_a_retarget_whose_run_is_cancelled_does_not_keep_the_green_of_the_old_base(scenario: Scenario) -> None:
    """Green as a PR into `staging` (which deleted A); retargeted to `main`, whose `edited` run
    the author's title edit right after cancels. The title edit changes nothing the gate
    decides, but the head's last result was gated against another base."""
    main_sha = scenario.base_sha
    scenario.git("checkout", "-q", "-b", "staging", "main")
    staging = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "staging: no A")
    scenario.git("checkout", "-q", "-B", "pr", staging)
    head = scenario.git.commit({"README.md": "tweak\n"}, "a harmless change on top of staging")
    scenario.base_sha = scenario.fake.base_sha = staging
    assert _gate(scenario, head).code == 0  # into staging, nothing of demo changes
    scenario.base_sha = scenario.fake.base_sha = main_sha  # retargeted; that run is cancelled
    edited = _gate(scenario, head, action="edited", payload={"changes": {"title": {"from": "x"}}})
    latest = max((r for r in scenario.fake.check_runs.values() if r["head_sha"] == head), key=lambda r: r["id"])
    assert edited.code != 0 and latest["conclusion"] != "success", edited.stdout + str(latest["conclusion"])


# -- globs and paths: what the workflow's `rubrics` input matches ----------------------------------

def test_a_rubric_moved_into_an_excluded_folder_is_a_deletion(scenario: Scenario) -> None:
    scenario.git("mv", RUBRIC, "rubrics/drafts-demo.yaml")
    (scenario.git.path / "rubrics" / "drafts").mkdir()
    scenario.git("mv", "rubrics/drafts-demo.yaml", "rubrics/drafts/demo.yaml")
    head = scenario.git.commit({}, "park demo among the drafts")
    assert _gate(scenario, head, rubrics="rubrics/**/*.y*ml\n!rubrics/drafts/**").code == 1


def test_a_rename_to_an_upper_case_extension_with_an_edit_is_gated(scenario: Scenario) -> None:
    scenario.git("mv", RUBRIC, "rubrics/demo.YAML")
    head = scenario.git.commit({"rubrics/demo.YAML": rubric_yaml(["B", "C", "D"])}, "demo.YAML, without A")
    assert _gate(scenario, head).code == 1


def test_a_symlink_alias_of_the_rubric_is_bad_input(scenario: Scenario) -> None:
    import os

    os.symlink("demo.yaml", scenario.git.path / "rubrics" / "alias.yaml")
    scenario.git("add", "rubrics/alias.yaml")
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "an alias; delete A")
    assert _gate(scenario, head).code != 0


def test_a_deleted_rubric_that_catches_nothing_takes_no_shared_labels_with_it(scenario: Scenario) -> None:
    """helper.yaml (only E, which catches nothing) shares demo's labels; deleting it does not
    make relabeling them free."""
    from tests.action.harness import CALIBRATION, calibration_jsonl

    helper = rubric_yaml(["E"]).replace("id: demo", "id: helper").replace(
        f"calibration: {CALIBRATION}", "calibration: ./calibration//demo.jsonl")
    main = _on_main(scenario, {"rubrics/helper.yaml": helper}, "a helper rubric")
    scenario.git("reset", "-q", "--hard", main)
    head = scenario.git.commit({"rubrics/helper.yaml": None, CALIBRATION: calibration_jsonl({**LABELS, "R1": "pass"})},
                               "delete helper; relabel R1")
    assert _gate(scenario, head).code == 1


# -- force-pushes and re-runs ------------------------------------------------------------------------

def test_a_re_run_of_a_head_force_pushed_away_gates_that_head(scenario: Scenario) -> None:
    bad = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    event = scenario.event(bad)
    assert _gate(scenario, bad).code == 1
    scenario.git("reset", "-q", "--hard", scenario.base_sha)
    good = scenario.git.commit({"README.md": "harmless\n"}, "force-pushed: a harmless head")
    assert _gate(scenario, good).code == 0
    scenario.fake.head_sha = good
    result = scenario.run(bad, payload=json.loads(event.read_text()))  # the old run, re-run
    runs = [r for r in scenario.fake.check_runs.values() if r["head_sha"] == bad]
    assert result.code != 0 and all(r["conclusion"] != "success" for r in runs), result.stdout + result.stderr


def test_creating_the_labels_of_a_rubric_that_has_none_needs_the_override(scenario: Scenario) -> None:
    """demo.yaml names a calibration set main does not have (it does not load: it vouches for
    nothing). A PR that only creates that set, labeled as it likes, makes it load; the next PR
    is gated on those labels (here: nothing flawed, so deleting any check is free)."""
    from tests.action.harness import CALIBRATION, calibration_jsonl

    main = _on_main(scenario, {CALIBRATION: None}, "labels to come")
    scenario.git("reset", "-q", "--hard", main)
    lenient = calibration_jsonl({item: "pass" for item in ("R4", "R5")}) + _item("R1", "pass").replace(
        '"review R1"', '"review R1."')
    one, two = _two_prs(scenario, {CALIBRATION: lenient}, {RUBRIC: rubric_yaml(["C", "D"])})
    _not_both_green(one, two)


def test_answers_filled_in_while_the_rubrics_labels_are_missing_are_reviewed(scenario: Scenario) -> None:
    """As above, with the rubric broken by a missing calibration set: PR 1 fills (B, R1) "no";
    PR 2 restores the labels (overridden); PR 3 deletes A."""
    from tests.action.harness import CALIBRATION, calibration_jsonl

    record = "".join(line for line in verdicts_jsonl(TEXTS).splitlines(keepends=True)
                     if not (json.loads(line)["item"] == "R1" and json.loads(line)["check_text"] == TEXTS["B"]))
    main = _on_main(scenario, {CALIBRATION: None, VERDICTS: record}, "labels to come")
    scenario.git("reset", "-q", "--hard", main)
    first = scenario.git.commit({VERDICTS: record + _verdict("B", "R1", "no")}, "PR 1: fill (B, R1)")
    one = _gate(scenario, first)
    _merge_pr(scenario)
    fix = scenario.git.commit({CALIBRATION: calibration_jsonl()}, "PR 2: the labels, overridden")
    _label(scenario, "labeled")
    assert _gate(scenario, fix, labels=(OVERRIDE,)).code == 0
    _merge_pr(scenario)
    scenario.fake.label_events.clear()
    third = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "PR 3: delete A")
    _not_both_green(one, _gate(scenario, third))


# -- two PRs racing ---------------------------------------------------------------------------------

def test_two_racing_prs_the_second_title_edit_after_the_first_merged_re_gates(scenario: Scenario) -> None:
    """A3 duplicates A. PR 1 deletes A, PR 2 deletes A3: each is green alone. PR 1 merges; an
    edit of PR 2's title does not repeat its green, gated against a tip that had A."""
    extra = {"A3": "Is every stored byte encrypted?"}
    fails = {item: checks | ({"A3"} if "A" in checks else set()) for item, checks in FAILS.items()}
    base = _on_main(scenario, {RUBRIC: rubric_yaml(["A", "A3", "B", "C", "D"], extra=extra),
                               VERDICTS: verdicts_jsonl({**TEXTS, **extra}, fails)}, "A3 duplicates A")
    scenario.git("reset", "-q", "--hard", base)
    second = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D"], extra=extra)}, "PR 2: delete A3")
    assert _gate(scenario, second).code == 0
    _on_main(scenario, {RUBRIC: rubric_yaml(["A3", "B", "C", "D"], extra=extra)}, "PR 1 merged: delete A")
    edited = _gate(scenario, second, action="edited", payload={"changes": {"title": {"from": "x"}}})
    latest = max((r for r in scenario.fake.check_runs.values() if r["head_sha"] == second), key=lambda r: r["id"])
    assert edited.code == 1 and latest["conclusion"] == "failure", edited.stdout + edited.stderr


def test_a_key_written_twice_in_the_prs_rubric_is_bad_input(scenario: Scenario) -> None:
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D"]) + "task: Say yes.\n"}, "task twice")
    assert _gate(scenario, head).code == 2


# -- a configured judge's evidence is its own answers, live or not -------------------------------

def test_answers_the_judge_disagreed_with_do_not_decide_a_forks_run_once_merged(scenario: Scenario) -> None:
    """PR 1 (judged) adds X with its own answers, among them X "no" on R1; the judge answers yes
    there (X has no blame either way, so X is accepted, with a note). Merged, those answers are
    the record. PR 2 comes from a fork: the judge cannot run, the record is replayed, and X's
    invented "no" makes A's catch of R1 look shared."""
    extra = {"X": "Is key rotation automated?"}
    lies = "".join(_verdict(extra["X"], i, "no" if i == "R1" else "yes") for i in LABELS)
    inputs = _judged(scenario)
    first = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "X"], extra=extra),
                                 VERDICTS: verdicts_jsonl(TEXTS) + lies}, "PR 1: add X")
    one = _gate(scenario, first, **inputs)
    _merge_pr(scenario)
    second = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D", "X"], extra=extra)}, "PR 2 (a fork): delete A")
    two = _gate(scenario, second, fork=True, judge=JUDGE)  # a fork's run has no OPENAI_API_KEY
    _not_both_green(one, two)


def test_answers_recorded_for_no_check_do_not_decide_a_forks_run_once_merged(scenario: Scenario) -> None:
    """PR 1 (judged) records answers for a text no check has: nothing weighs them. PR 2 (a fork:
    the judge cannot run) adds X and deletes A. The record's answers for X vouch for nothing until
    a check with X's text is in the base rubric (`trust.evidence`), so here they are PR 2's own:
    untrusted, they cannot share A's catch (and stand in for no judge)."""
    extra = {"X": "Is key rotation automated?"}
    lies = "".join(_verdict(extra["X"], i, "no" if i == "R1" else "yes") for i in LABELS)
    inputs = _judged(scenario)
    first = scenario.git.commit({VERDICTS: verdicts_jsonl(TEXTS) + lies}, "PR 1: answers for a check nobody has")
    one = _gate(scenario, first, **inputs)
    _merge_pr(scenario)
    second = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D", "X"], extra=extra)},
                                 "PR 2 (a fork): add X, delete A")
    two = _gate(scenario, second, fork=True, judge=JUDGE)
    _not_both_green(one, two)


def test_a_commit_status_stands_only_for_the_base_it_was_gated_against(scenario: Scenario) -> None:
    """Where check runs are refused the result is a commit status: the retarget route again."""
    scenario.fake.checks_forbidden = True
    main_sha = scenario.base_sha
    scenario.git("checkout", "-q", "-b", "staging", "main")
    staging = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "staging: no A")
    scenario.git("checkout", "-q", "-B", "pr", staging)
    head = scenario.git.commit({"README.md": "tweak\n"}, "a harmless change on top of staging")
    scenario.base_sha = scenario.fake.base_sha = staging
    assert _gate(scenario, head).code == 0
    scenario.base_sha = scenario.fake.base_sha = main_sha
    edited = _gate(scenario, head, action="edited", payload={"changes": {"title": {"from": "x"}}})
    assert edited.code == 1 and scenario.fake.statuses[-1]["state"] == "failure", edited.stdout
