"""Round 5 of the hostile pass on the trust boundary (issue 17): a PR author (a fork contributor,
a writer who can label) after a green `rubric-gate` check on a change the gate should fail, end
to end through `rubric-gate action` against the fake GitHub with a real git repository. Each
class probes one boundary; a strict xfail is a route still open (it flips when closed). What
was tried, found and closed is listed in docs/hostile-passes.md.
"""

from __future__ import annotations

import json
import os
import unicodedata

import pytest

from tests.action.harness import (
    CALIBRATION,
    FAILS,
    LABELS,
    RUBRIC,
    TEXTS,
    VERDICTS,
    Scenario,
    calibration_jsonl,
    rubric_yaml,
    verdicts_jsonl,
)
from tests.action.test_hostile_round3 import JUDGE, _gate, _item_hash, _verdict
from tests.action.test_hostile_round4 import OVERRIDE, _judged, _keyed, _label, _merge_pr
from tests.action.test_integrity import _on_main, _with_origin

DELETE_A = {RUBRIC: rubric_yaml(["B", "C", "D"])}
EXTRA = {"X": "Is key rotation automated?", "A3": "Is every stored byte encrypted?"}


def _latest(scenario: Scenario, head: str) -> dict | None:
    runs = [r for r in scenario.fake.check_runs.values() if r["head_sha"] == head]
    return max(runs, key=lambda r: r["id"]) if runs else None


def _conclusion(scenario: Scenario, head: str) -> str | None:
    run = _latest(scenario, head)
    return None if run is None else run.get("conclusion")


def _rejected(scenario: Scenario, head: str, code: int = 1, **kwargs) -> None:
    """The run exits `code` and the head's newest check run is a failure."""
    result = _gate(scenario, head, **kwargs)
    assert result.code == code, result.stdout + result.stderr
    assert _conclusion(scenario, head) == "failure", result.stdout


def _record_without(*pairs: tuple[str, str]) -> str:
    return "".join(line for line in verdicts_jsonl(TEXTS).splitlines(keepends=True)
                   if (next(k for k, t in TEXTS.items() if t == json.loads(line)["check_text"]),
                       json.loads(line)["item"]) not in pairs)


def _flip(record: str, check: str, item: str, answer: str) -> str:
    old = json.dumps({"item": item, "check_text": TEXTS[check], "answer": "no" if answer == "yes" else "yes"})
    new = json.dumps({"item": item, "check_text": TEXTS[check], "answer": answer})
    assert old in record
    return record.replace(old, new)


# -- verdict-file lines: encodings, duplicates, spellings ----------------------------------------

class TestVerdictLineEncoding:
    """One verdict file, many spellings of one line: each must read as the gate's lookup reads it."""

    def test_crlf_line_endings_with_a_flipped_answer(self, scenario: Scenario) -> None:
        record = _flip(verdicts_jsonl(TEXTS), "B", "R1", "no").replace("\n", "\r\n")
        head = scenario.git.commit({VERDICTS: record, **DELETE_A}, "CRLF; B no on R1; delete A")
        _rejected(scenario, head)

    def test_a_bom_before_an_appended_line(self, scenario: Scenario) -> None:
        line = "\ufeff" + _verdict("B", "R1", "no")
        head = scenario.git.commit({VERDICTS: verdicts_jsonl(TEXTS) + line, **DELETE_A}, "a BOM mid-file")
        _rejected(scenario, head, code=2)

    def test_a_bom_at_the_start_of_a_rewritten_record(self, scenario: Scenario) -> None:
        record = "\ufeff" + _flip(verdicts_jsonl(TEXTS), "B", "R1", "no")
        head = scenario.git.commit({VERDICTS: record, **DELETE_A}, "a leading BOM; B no on R1")
        _rejected(scenario, head)

    def test_a_nul_byte_inside_a_line(self, scenario: Scenario) -> None:
        line = _verdict("B", "R1", "no").replace('"answer"', '"answer"\x00', 1)
        head = scenario.git.commit({VERDICTS: verdicts_jsonl(TEXTS) + line, **DELETE_A}, "a NUL")
        _rejected(scenario, head, code=2)

    def test_an_escaped_duplicate_answer_key(self, scenario: Scenario) -> None:
        """`\\u0061nswer` decodes to `answer`: a second answer key in another spelling."""
        line = _verdict("B", "R1", "yes").replace("}", ', "\\u0061nswer": "no"}')
        record = verdicts_jsonl(TEXTS).replace(json.dumps({"item": "R1", "check_text": TEXTS["B"], "answer": "yes"})
                                               + "\n", line)
        head = scenario.git.commit({VERDICTS: record, **DELETE_A}, "answer twice, escaped")
        _rejected(scenario, head, code=2)

    def test_a_line_padded_past_a_megabyte(self, scenario: Scenario) -> None:
        line = _verdict("B", "R1", "no").replace("{", "{" + " " * (2 << 20), 1)
        head = scenario.git.commit({VERDICTS: verdicts_jsonl(TEXTS) + line, **DELETE_A}, "a long line")
        _rejected(scenario, head)

    def test_a_duplicate_line_for_a_pair_with_the_other_answer(self, scenario: Scenario) -> None:
        """The base's (B, R1) "yes" stays; a second line says "no": which one the lookup reads is
        a change of the record either way."""
        head = scenario.git.commit({VERDICTS: verdicts_jsonl(TEXTS) + _verdict("B", "R1", "no"), **DELETE_A},
                                   "a second (B, R1)")
        _rejected(scenario, head)

    def test_reordered_lines_put_a_stale_duplicate_first(self, scenario: Scenario) -> None:
        """main recorded (B, R1) twice: "no" then a re-recorded "yes". The PR only reorders lines."""
        record = verdicts_jsonl(TEXTS)
        yes = json.dumps({"item": "R1", "check_text": TEXTS["B"], "answer": "yes"}) + "\n"
        no = json.dumps({"item": "R1", "check_text": TEXTS["B"], "answer": "no"}) + "\n"
        main = _on_main(scenario, {VERDICTS: record.replace(yes, no + yes)}, "B on R1 re-recorded")
        scenario.git("reset", "-q", "--hard", main)
        head = scenario.git.commit({VERDICTS: record.replace(yes, yes + no), **DELETE_A}, "reorder; delete A")
        _rejected(scenario, head)

    def test_check_text_spelled_with_a_no_break_space(self, scenario: Scenario) -> None:
        """NBSP is whitespace to the text's normalisation: the line answers B."""
        spelled = TEXTS["B"].replace(" ", "\u00a0", 1)
        line = json.dumps({"item": "R1", "check_text": spelled, "answer": "no"}) + "\n"
        head = scenario.git.commit({VERDICTS: verdicts_jsonl(TEXTS) + line, **DELETE_A}, "B (nbsp) no on R1")
        _rejected(scenario, head)

    def test_check_text_in_nfd_in_the_rubric_and_its_verdicts(self, scenario: Scenario) -> None:
        """B reworded to a text that renders alike (a combining accent) with the PR's own "no"."""
        extra = {"Bd": unicodedata.normalize("NFD", "Are IAM rôles scoped to least privilege?")}
        lines = "".join(_verdict(extra["Bd"], i, "no" if i in ("R1", "R2", "R3") else "yes") for i in LABELS)
        head = scenario.git.commit({RUBRIC: rubric_yaml(["B=Bd", "C", "D"], extra=extra),
                                    VERDICTS: verdicts_jsonl(TEXTS) + lines}, "B in NFD; delete A")
        _rejected(scenario, head)

    def test_an_answer_given_as_a_number(self, scenario: Scenario) -> None:
        line = _verdict("B", "R1", "no").replace('"no"', "0")
        head = scenario.git.commit({VERDICTS: verdicts_jsonl(TEXTS) + line, **DELETE_A}, "answer 0")
        _rejected(scenario, head, code=2)

    def test_an_item_id_given_as_a_number(self, scenario: Scenario) -> None:
        labels = {**LABELS, "6": "fail"}
        cal = calibration_jsonl(labels)
        main = _on_main(scenario, {CALIBRATION: cal, VERDICTS: verdicts_jsonl(TEXTS, {**FAILS, "6": {"A"}}, labels)},
                        "item 6, caught by A alone")
        scenario.git("reset", "-q", "--hard", main)
        line = json.dumps({"item": 6, "check_text": TEXTS["B"], "answer": "no"}) + "\n"
        head = scenario.git.commit({VERDICTS: verdicts_jsonl(TEXTS, {**FAILS, "6": {"A"}}, labels) + line,
                                    RUBRIC: rubric_yaml(["B", "C", "D", "E"])}, "item 6 as a number")
        _rejected(scenario, head, code=2)


# -- verdict lines that claim a judge --------------------------------------------------------------

class TestKeyedEvidence:
    """Keyed lines are what a judged run reads as its judge's answers."""

    def test_keyed_lines_recorded_for_no_check_do_not_decide_a_judged_run_once_merged(self, scenario: Scenario) -> None:
        """PR 1 records keyed answers (the configured judge's key) for a check text no rubric has:
        nobody weighs or judges them. PR 2, judged, adds that check and deletes A: the judged run
        reads the record's keyed "no" on R1 as its judge's answer, and A's catch looks shared."""
        inputs = _judged(scenario)
        lies = "".join(_keyed(EXTRA["X"], i, "no" if i == "R1" else "yes") for i in LABELS)
        first = scenario.git.commit({VERDICTS: verdicts_jsonl(TEXTS) + lies}, "PR 1: keyed answers for X")
        one = _gate(scenario, first, **inputs)
        _merge_pr(scenario)
        second = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D", "X"], extra=EXTRA)}, "PR 2: X in, A out")
        two = _gate(scenario, second, **inputs)
        # Closed at PR 1: a keyed answer where the base had none is the judge's answer nobody judged.
        assert one.code == 1 and "did not confirm" in one.stdout, one.stdout + two.stdout

    def test_keyed_lines_under_a_hash_only_item_reference(self, scenario: Scenario) -> None:
        """An item named by content hash alone (an id no item has), answering B "no" on R1."""
        line = _verdict("B", "R1-copy", "no", item_hash=_item_hash("R1"))
        head = scenario.git.commit({VERDICTS: verdicts_jsonl(TEXTS) + line, **DELETE_A}, "B no on R1 by hash")
        _rejected(scenario, head)

    def test_keyed_later_samples_flip_a_majority(self, scenario: Scenario) -> None:
        inputs = _judged(scenario)
        lines = _keyed("B", "R1", "no", sample=1) + _keyed("B", "R1", "no", sample=2)
        head = scenario.git.commit({VERDICTS: verdicts_jsonl(TEXTS) + lines, **DELETE_A}, "samples 1, 2: no")
        _rejected(scenario, head, samples="3", **inputs)

    def test_a_keyed_line_naming_the_judge_in_a_fork_run(self, scenario: Scenario) -> None:
        """A fork's run has no key: a line keyed to the configured judge is still the PR's."""
        head = scenario.git.commit({VERDICTS: verdicts_jsonl(TEXTS) + _keyed("B", "R1", "no"), **DELETE_A},
                                   "the judge's key, written by hand")
        _rejected(scenario, head, fork=True, judge=JUDGE)


# -- calibration sets: item identity --------------------------------------------------------------

def _item(item: str, label: str, content: str | None = None, **extra: object) -> str:
    content = content or item
    return json.dumps({"id": item, "input": f"design {content}", "output": f"review {content}", "label": label,
                       **extra}) + "\n"


class TestCalibrationIdentity:
    """Which items are the same item: ids, content, spellings, fields no rule names."""

    def test_an_item_id_renamed_to_its_fullwidth_spelling(self, scenario: Scenario) -> None:
        cal = calibration_jsonl().replace('"id": "R1"', '"id": "\uff321"')
        head = scenario.git.commit({CALIBRATION: cal}, "R1 -> fullwidth R1")
        _rejected(scenario, head)

    def test_an_item_id_renamed_to_its_nfd_spelling_then_a_deletion(self, scenario: Scenario) -> None:
        labels = {**LABELS, "R\u00e9": "fail"}
        fails = {**FAILS, "R\u00e9": {"A"}}
        _on_main(scenario, {CALIBRATION: calibration_jsonl(labels), VERDICTS: verdicts_jsonl(TEXTS, fails, labels)},
                 "Ré, caught by A alone")
        scenario.git("reset", "-q", "--hard", scenario.base_sha)
        cal = calibration_jsonl(labels).replace('"id": "R\\u00e9"', '"id": "Re\\u0301"')
        assert cal != calibration_jsonl(labels)
        head = scenario.git.commit({CALIBRATION: cal, **DELETE_A}, "Ré in NFD; delete A")
        _rejected(scenario, head)

    def test_the_same_content_under_a_new_id_with_the_other_label(self, scenario: Scenario) -> None:
        head = scenario.git.commit({CALIBRATION: calibration_jsonl() + _item("R1b", "pass", content="R1")},
                                   "R1's content again, as pass")
        _rejected(scenario, head, code=2)  # the new set does not load: bad input, no override covers it

    @pytest.mark.parametrize("split", ["Calibration", "calibration ", "calibratio\u0578"],
                             ids=["case", "trailing-space", "armenian-n"])
    def test_a_split_that_only_looks_like_calibration_then_a_deletion(self, scenario: Scenario, split: str) -> None:
        """R1 is A's unique catch. PR 1 marks it with a split that reads like `calibration`; if
        that leaves the calibration split unnoticed, PR 2 deletes A on labels without R1."""
        cal = calibration_jsonl().replace('"label": "fail"}', f'"label": "fail", "split": {json.dumps(split)}}}', 1)
        head = scenario.git.commit({CALIBRATION: cal}, "PR 1: R1's split")
        one = _gate(scenario, head)
        _merge_pr(scenario)
        second = scenario.git.commit(DELETE_A, "PR 2: delete A")
        two = _gate(scenario, second)
        # `split` is an enum: PR 1's set does not load (bad input), and so the base of PR 2.
        assert (one.code, two.code) == (2, 2), one.stdout + two.stdout

    def test_a_meta_field_changed_on_a_caught_item_then_a_deletion(self, scenario: Scenario) -> None:
        cal = calibration_jsonl().replace('"label": "fail"}', '"label": "fail", "meta": {"note": "x"}}', 1)
        _on_main(scenario, {CALIBRATION: cal}, "R1 has meta")
        scenario.git("reset", "-q", "--hard", scenario.base_sha)
        edited = cal.replace('{"note": "x"}', '{"note": "x", "label": "pass", "split": "evaluation"}')
        head = scenario.git.commit({CALIBRATION: edited, **DELETE_A}, "meta that names a label; delete A")
        _rejected(scenario, head)

    def test_a_label_spelled_in_upper_case(self, scenario: Scenario) -> None:
        cal = calibration_jsonl().replace('"label": "fail"}', '"label": "FAIL"}', 1)
        head = scenario.git.commit({CALIBRATION: cal, **DELETE_A}, "FAIL")
        _rejected(scenario, head, code=2)  # the new set does not load: bad input, no override covers it

    def test_an_item_id_with_a_trailing_space(self, scenario: Scenario) -> None:
        cal = calibration_jsonl().replace('"id": "R1"', '"id": "R1 "')
        head = scenario.git.commit({CALIBRATION: cal}, "'R1 '")
        _rejected(scenario, head)


# -- rubric documents: ids, k, checks across files, frozen checks --------------------------------

OTHER = "rubrics/other.yaml"


def _other(checks: list[str], rubric_id: str = "other") -> str:
    return rubric_yaml(checks, extra=EXTRA).replace("id: demo", f"id: {rubric_id}")


class TestRubricDocuments:
    def test_a_check_moved_to_another_rubric_sharing_the_labels(self, scenario: Scenario) -> None:
        _on_main(scenario, {OTHER: _other(["E"])}, "other.yaml shares labels and verdicts")
        scenario.git("reset", "-q", "--hard", scenario.base_sha)
        head = scenario.git.commit({**DELETE_A, OTHER: _other(["A", "E"])}, "move A to other.yaml")
        _rejected(scenario, head)

    def test_a_copy_under_the_same_rubric_id_then_the_original_deleted(self, scenario: Scenario) -> None:
        copy = "rubrics/a-demo.yaml"
        first = scenario.git.commit({copy: rubric_yaml(["B", "C", "D"])}, "PR 1: demo again, without A")
        one = _gate(scenario, first)
        _merge_pr(scenario)
        second = scenario.git.commit({RUBRIC: None}, "PR 2: delete the original demo")
        two = _gate(scenario, second)
        # Closed by trust-snapshot's merge: one rubric id in two files fails the PR that does it.
        assert (one.code, two.code) == (1, 1) and "rubric ids must be unique" in one.stdout, one.stdout + two.stdout

    def test_two_added_copies_of_a_deleted_rubric_one_lenient(self, scenario: Scenario) -> None:
        """git pairs demo with its identical copy (a rename); the lenient copy would go in as a
        new rubric with the same id."""
        head = scenario.git.commit({RUBRIC: None, "rubrics/a.yaml": rubric_yaml(["B", "C", "D"]),
                                    "rubrics/b.yaml": rubric_yaml(["A", "B", "C", "D"])}, "PR 1: two copies")
        one = _gate(scenario, head)
        assert one.code == 1 and "rubric ids must be unique" in one.stdout, one.stdout
        assert _conclusion(scenario, head) == "failure"

    def test_max_failures_zero_spelled_as_a_mapping_with_a_deletion(self, scenario: Scenario) -> None:
        head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"]) + "aggregation:\n  max_failures: 0\n"},
                                   "k = 0 spelled out; delete A")
        _rejected(scenario, head)

    def test_frozen_check_ids_swapped(self, scenario: Scenario) -> None:
        """A and B (both frozen) swap ids: by id, each is reworded."""
        frozen = _with_origin(rubric_yaml(["A", "B", "C", "D"]), A="label", B="label")
        _on_main(scenario, {RUBRIC: frozen}, "A and B frozen")
        scenario.git("reset", "-q", "--hard", scenario.base_sha)
        swapped = _with_origin(rubric_yaml(["A=B", "B=A", "C", "D"]), A="label", B="label")
        head = scenario.git.commit({RUBRIC: swapped}, "swap ids")
        _rejected(scenario, head)

    def test_a_frozen_check_renamed_and_unfrozen_in_one_pr(self, scenario: Scenario) -> None:
        frozen = _with_origin(rubric_yaml(["A", "B", "C", "D"]), A="label")
        _on_main(scenario, {RUBRIC: frozen}, "A frozen")
        scenario.git("reset", "-q", "--hard", scenario.base_sha)
        head = scenario.git.commit({RUBRIC: rubric_yaml(["Z=A", "B", "C", "D"])}, "A -> Z, origin dropped")
        _rejected(scenario, head)

    def test_a_frozen_check_reordered_with_frozen_false_via_an_anchor(self, scenario: Scenario) -> None:
        frozen = _with_origin(rubric_yaml(["A", "B", "C", "D"]), A="label")
        _on_main(scenario, {RUBRIC: frozen}, "A frozen")
        scenario.git("reset", "-q", "--hard", scenario.base_sha)
        head = scenario.git.commit({RUBRIC: frozen.replace("origin: label", "origin: label\n  <<: {frozen: false}")},
                                   "unfreeze through a merge key")
        result = _gate(scenario, head)
        assert result.code == 1 and _conclusion(scenario, head) == "failure", result.stdout
        (change,) = result.report()["rubrics"][0]["report"]["changes"]
        assert change["edited"] == ["frozen"] and change["decision"] == "rejected"  # the merge key is read

    def test_the_same_check_text_under_two_ids_then_one_deleted_in_each_of_two_prs(self, scenario: Scenario) -> None:
        """A3 has A's exact text (one column of verdicts). PR 1 deletes A, PR 2 deletes A3."""
        extra = {"A3": TEXTS["A"] + "  "}
        _on_main(scenario, {RUBRIC: rubric_yaml(["A", "A3", "B", "C", "D"], extra=extra)}, "A twice")
        scenario.git("reset", "-q", "--hard", scenario.base_sha)
        first = scenario.git.commit({RUBRIC: rubric_yaml(["A3", "B", "C", "D"], extra=extra)}, "PR 1: delete A")
        one = _gate(scenario, first)
        _merge_pr(scenario)
        second = scenario.git.commit(DELETE_A, "PR 2: delete A3")
        two = _gate(scenario, second)
        assert one.code == 0 and two.code == 1, one.stdout + two.stdout


# -- the glob: spellings of a path ---------------------------------------------------------------

class TestGlobSpelling:
    @pytest.mark.parametrize("target", ["rubrics/demo.yml", "rubr\u0456cs/demo.yaml", "rubrics/demo.yaml.bak",
                                        "Rubrics/demo.yaml", "rubrics/demo.yaml/inner.yaml"],
                             ids=["yml", "cyrillic-i", "bak", "capital-dir", "dir-named-yaml"])
    def test_a_move_with_a_deletion_of_a(self, scenario: Scenario, target: str) -> None:
        scenario.git("rm", "-q", RUBRIC)
        head = scenario.git.commit({target: rubric_yaml(["B", "C", "D"])}, f"move to {target}, without A")
        _rejected(scenario, head)

    def test_a_second_rubric_file_for_the_same_labels_under_a_lookalike_dir(self, scenario: Scenario) -> None:
        """A lenient copy outside the glob is not a rubric the gate knows; the original stays."""
        head = scenario.git.commit({"rubr\u0456cs/demo.yaml": rubric_yaml(["B"]), **DELETE_A}, "copy; delete A")
        _rejected(scenario, head)


# -- the output directory and the verdict cache --------------------------------------------------

class TestWorkspaceFiles:
    def test_the_output_dir_committed_as_a_regular_file(self, scenario: Scenario) -> None:
        head = scenario.git.commit({".rubric-gate": "decision: pass\n", **DELETE_A}, "a file where output goes")
        result = _gate(scenario, head)
        assert _conclusion(scenario, head) is None  # refused before it gates: no check run to read
        assert result.code == 2, result.stdout + result.stderr

    def test_the_output_dir_committed_as_a_symlink_to_the_git_dir(self, scenario: Scenario) -> None:
        os.symlink(".git", scenario.git.path / ".rubric-gate")
        scenario.git("add", ".rubric-gate")
        head = scenario.git.commit(DELETE_A, "output into .git")
        result = _gate(scenario, head)
        assert _conclusion(scenario, head) is None  # refused before it gates: no check run to read
        assert result.code == 2, result.stdout + result.stderr
        assert not (scenario.git.path / ".git" / "report.json").exists()

    def test_a_planted_keyed_cache_in_a_custom_cache_dir(self, scenario: Scenario) -> None:
        planted = _keyed("B", "R1", "no")
        head = scenario.git.commit({"cache/verdicts.jsonl": planted, **DELETE_A}, "plant the cache")
        result = _gate(scenario, head, verdict_cache="cache", **_judged(scenario))
        assert _conclusion(scenario, head) is None  # refused before it gates: no check run to read
        assert result.code == 2, result.stdout + result.stderr
        assert not (scenario.git.path / "cache" / "verdicts.jsonl").exists()  # the always-run save keeps nothing

    def test_an_untracked_cache_restored_with_a_forged_line_is_only_the_judges(self, scenario: Scenario) -> None:
        """actions/cache restores what an earlier run saved; a line in it keyed to another task
        (a lenient rubric's, say) is not this rubric's evidence."""
        cache = scenario.git.path / ".rubric-gate" / "cache"
        cache.mkdir(parents=True)
        (cache / "verdicts.jsonl").write_text(_keyed("B", "R1", "no", task_hash="0" * 16))
        head = scenario.git.commit(DELETE_A, "delete A")
        _rejected(scenario, head, **_judged(scenario))


# -- events: which ones gate, and what they may repeat -------------------------------------------

class TestEvents:
    def test_reopened_is_gated(self, scenario: Scenario) -> None:
        head = scenario.git.commit(DELETE_A, "delete A")
        _rejected(scenario, head, action="reopened")

    @pytest.mark.parametrize("action", ["ready_for_review", "auto_merge_enabled", "review_requested", "assigned"])
    def test_other_pull_request_actions_are_gated(self, scenario: Scenario, action: str) -> None:
        head = scenario.git.commit(DELETE_A, "delete A")
        _rejected(scenario, head, action=action)

    def test_a_label_re_applied_by_the_author_after_a_writer_removed_it(self, scenario: Scenario) -> None:
        head = scenario.git.commit(DELETE_A, "delete A")
        _label(scenario, "labeled")
        _label(scenario, "unlabeled")
        _label(scenario, "labeled", who="mallory")
        _rejected(scenario, head, labels=(OVERRIDE,))

    def test_a_label_applied_by_a_deleted_user(self, scenario: Scenario) -> None:
        head = scenario.git.commit(DELETE_A, "delete A")
        scenario.fake.label_events.append({"event": "labeled", "actor": None, "label": {"name": OVERRIDE}})
        _rejected(scenario, head, labels=(OVERRIDE,))

    def test_the_override_label_in_the_payload_but_another_label_applied(self, scenario: Scenario) -> None:
        """The `labeled` run of another label lists the override label (applied long ago, on an
        older head) among the PR's labels."""
        head = scenario.git.commit(DELETE_A, "delete A")
        _label(scenario, "labeled")
        _rejected(scenario, head)  # the push's run
        scenario.fake.label_events.append({"event": "labeled", "actor": {"login": "maintainer"},
                                           "label": {"name": "docs"}})
        result = _gate(scenario, head, labels=(OVERRIDE, "docs"))
        assert result.code == 1 and _conclusion(scenario, head) == "failure", result.stdout


    @pytest.mark.parametrize("ref", ["refs/heads/pr", "refs/heads/main"])
    def test_a_push_run_posts_no_result_on_the_commit(self, scenario: Scenario, ref: str) -> None:
        """A push (to the PR's branch, or to main with the PR's commit) warms the cache: it gates
        nothing, so it must post nothing a required check could read as green."""
        head = scenario.git.commit(DELETE_A, "delete A")
        result = _gate(scenario, head, event_name="push", env_extra={"GITHUB_SHA": head, "GITHUB_REF": ref},
                       payload={"ref": ref, "after": head})
        assert result.code == 0, result.stdout + result.stderr
        assert _conclusion(scenario, head) is None and not scenario.fake.statuses, result.stdout

# -- merge groups: several PRs queued together ---------------------------------------------------

class TestMergeQueue:
    def test_two_queued_prs_each_deleting_one_of_a_redundant_pair(self, scenario: Scenario) -> None:
        from tests.action.test_trust_edges import _merge_group

        fails = {item: checks | ({"A3"} if "A" in checks else set()) for item, checks in FAILS.items()}
        base = _on_main(scenario, {RUBRIC: rubric_yaml(["A", "A3", "B", "C", "D"], extra=EXTRA),
                                   VERDICTS: verdicts_jsonl({**TEXTS, **EXTRA}, fails)}, "A3 duplicates A")
        scenario.git("checkout", "-q", "-b", "one", base)
        one = scenario.git.commit({RUBRIC: rubric_yaml(["A3", "B", "C", "D"], extra=EXTRA)}, "delete A")
        scenario.git("checkout", "-q", "-b", "two", base)
        two = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D"], extra=EXTRA)}, "delete A3")
        scenario.git("checkout", "-q", "-b", "gh-readonly-queue/main/pr-7", base)
        scenario.git("merge", "-q", "--no-ff", "-m", "Merge #7", one)
        scenario.git("checkout", "-q", "-b", "gh-readonly-queue/main/pr-8", "gh-readonly-queue/main/pr-7")
        merged = scenario.git("merge", "--no-ff", "-m", "Merge #8", two, "--strategy-option=theirs")
        del merged
        text = (scenario.git.path / RUBRIC).read_text()
        if "id: A3" in text or "id: A\n" in text:  # git kept one side: write what both PRs want
            scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"], extra=EXTRA)}, "both deletions")
        group = scenario.git("rev-parse", "HEAD")
        result = scenario.run(group, event_name="merge_group", payload=_merge_group(scenario, group))
        assert result.code == 1 and _conclusion(scenario, group) == "failure", result.stdout + result.stderr

    def test_a_merge_group_whose_ref_names_no_pr(self, scenario: Scenario) -> None:
        from tests.action.test_trust_edges import _merge_group

        head = scenario.git.commit(DELETE_A, "delete A")
        scenario.git("checkout", "-q", "-b", "gh-readonly-queue/main/x", scenario.base_sha)
        scenario.git("merge", "-q", "--no-ff", "-m", "Merge", head)
        group = scenario.git("rev-parse", "HEAD")
        payload = _merge_group(scenario, group)
        payload["merge_group"]["head_ref"] = "refs/heads/gh-readonly-queue/main/odd"
        result = scenario.run(group, event_name="merge_group", payload=payload)
        assert result.code == 1 and _conclusion(scenario, group) == "failure", result.stdout + result.stderr


    def _queue(self, scenario: Scenario, head: str):
        from tests.action.test_trust_edges import _merge_group

        scenario.git("checkout", "-q", "-b", "gh-readonly-queue/main/pr-7", scenario.base_sha)
        scenario.git("merge", "-q", "--no-ff", "-m", "Merge pull request #7", head)
        group = scenario.git("rev-parse", "HEAD")
        return group, scenario.run(group, event_name="merge_group", payload=_merge_group(scenario, group))

    def test_the_criss_cross_route_in_a_merge_queue(self, scenario: Scenario) -> None:
        """The queue gates the merge git made: A is gone from it."""
        o1 = _on_main(scenario, DELETE_A, "O1: A retired for now")
        scenario.git("checkout", "-q", "-b", "feat", o1)
        f1 = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D"])}, "f1: A back")
        scenario.git("checkout", "-q", "main")
        m1 = scenario.git.commit({"README.md": "m1\n"}, "m1")
        scenario.git("merge", "-q", "--no-ff", "-m", "Merge feat", "feat")
        scenario.base_sha = scenario.fake.base_sha = scenario.git("rev-parse", "HEAD")
        scenario.git("checkout", "-q", "-B", "pr", m1)
        scenario.git("merge", "-q", "-s", "ours", "-m", "merge main's f1 in, keeping ours", f1)
        head = scenario.git.commit({"README.md": "a harmless change\n"}, "a harmless change")
        group, result = self._queue(scenario, head)
        assert result.code == 1 and _conclusion(scenario, group) == "failure", result.stdout + result.stderr

    def test_the_duplicate_anchor_route_in_a_merge_queue(self, scenario: Scenario) -> None:
        base_text = rubric_yaml(["A", "B", "C", "D"])
        main_text = base_text.replace(f"  text: {TEXTS['B']}\n", f"  text: &tb {TEXTS['B']}\n") + \
            "- id: Z\n  text: *tb\n  origin: label\n"
        _on_main(scenario, {RUBRIC: main_text}, "main: Z, frozen, B's text by alias")
        lenient = "Is the design written in English?"
        lines = "".join(_verdict(lenient, i, "yes") for i in LABELS)
        head = scenario.git.commit({RUBRIC: base_text.replace("- id: D\n", f"- id: Y\n  text: &tb {lenient}\n- id: D\n"),
                                    VERDICTS: verdicts_jsonl(TEXTS) + lines}, "add Y")
        group, result = self._queue(scenario, head)
        assert result.code == 2 and _conclusion(scenario, group) == "failure", result.stdout + result.stderr

# -- the comment: what user text can become -------------------------------------------------------

class TestCommentText:
    @pytest.mark.parametrize("text", [
        "ops@evil.example",
        "<https://evil.example/x>",
        "&#64;octocat &#x23;1",
        "[x]: https://evil.example/ref",
        "![i](https://evil.example/p.png)",
        "<img src=https://evil.example/p.png>",
        "[^1] [^1]: https://evil.example",
        "http://evil.example",
        "[ok][x]\n\n[x]: https://evil.example",
        "a\\\n<b>evil</b>",
    ], ids=["email", "angle-autolink", "entities", "reference-definition", "image", "html-img", "footnote",
            "bare-url", "reference-link", "hard-break-html"])
    def test_an_item_id_is_inert_in_the_comment(self, scenario: Scenario, text: str) -> None:
        """A correct item with a loud id; X (added) fails it, so the reason names it."""
        from pathlib import Path

        from tests.support import gfm

        labels = {**LABELS, text: "pass"}
        main = _on_main(scenario, {CALIBRATION: calibration_jsonl(labels),
                                   VERDICTS: verdicts_jsonl(TEXTS, FAILS, labels)}, "a loud item id")
        scenario.git("reset", "-q", "--hard", main)
        lines = "".join(_verdict(EXTRA["X"], i, "no" if i == text else "yes") for i in labels)
        head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "X"], extra=EXTRA),
                                    VERDICTS: verdicts_jsonl(TEXTS, FAILS, labels) + lines}, "add X")
        result = _gate(scenario, head)
        assert _conclusion(scenario, head) == "failure", result.stdout
        assert result.code == 1, result.stdout + result.stderr
        body = (Path(result.workspace) / result.outputs["comment"]).read_text()
        root = gfm.parse(body)
        run_link = "https://github.test/acme/rubrics/actions/runs/42"
        live = gfm.live_spans(root, allowed_links=(run_link,), own=(scenario.base_sha[:7], head[:7]))
        assert not [s for s in live if "evil" in s[1] or "octocat" in s[1] or s[0] in ("image", "html")], live
        shown = "".join(ch for ch in root.text() if unicodedata.category(ch) != "Cf")
        assert ("evil" in shown or "octocat" in shown), body

    @pytest.mark.parametrize("name", ["rubrics/[ok](https:evil.example).yaml", "rubrics/@octocat.yaml",
                                      "rubrics/<img src=x>.yaml", "rubrics/www.evil.example.yaml"],
                             ids=["link", "mention", "html", "www"])
    def test_a_rubric_file_name_is_inert_in_the_comment(self, scenario: Scenario, name: str) -> None:
        from pathlib import Path

        from tests.support import gfm

        scenario.git("mv", RUBRIC, name)
        head = scenario.git.commit({name: rubric_yaml(["B", "C", "D"])}, "rename; delete A")
        result = _gate(scenario, head)
        assert _conclusion(scenario, head) == "failure", result.stdout
        assert result.code == 1, result.stdout + result.stderr
        body = (Path(result.workspace) / result.outputs["comment"]).read_text()
        run_link = "https://github.test/acme/rubrics/actions/runs/42"
        live = gfm.live_spans(gfm.parse(body), allowed_links=(run_link,), own=(scenario.base_sha[:7], head[:7]))
        assert not [s for s in live if "evil" in s[1] or "octocat" in s[1] or s[0] in ("image", "html")], live

    @pytest.mark.parametrize("item", ["R\x1b]8;;https://evil.example\x07x\x1b]8;;\x07",
                                      "R\n::add-mask::write-token", "R%0A::stop-commands::x"],
                             ids=["osc8", "newline-command", "percent-command"])
    def test_an_item_id_cannot_act_on_the_log(self, scenario: Scenario, item: str) -> None:
        labels = {**LABELS, item: "fail"}
        cal = calibration_jsonl(labels)
        head = scenario.git.commit({CALIBRATION: cal.replace(_item("R1", "fail"), _item("R1", "pass"))},
                                   "relabel R1; a loud item id")
        result = _gate(scenario, head)
        assert _conclusion(scenario, head) == "failure", result.stdout
        assert result.code == 1, result.stdout + result.stderr
        log = result.stdout + result.stderr
        assert "\x1b" not in log and "\x07" not in log
        lines = log.splitlines()
        assert lines.count("::add-mask::write-token") == 1  # the action's own mask, and no other
        assert not [line for line in lines if line.startswith("::stop-commands::")], log



# -- which item a line answers: by id, else by content hash ---------------------------------------

class TestItemReference:
    """A replay lookup reads a line by item id, and by content hash where the id's row is
    missing or stale; a review of the record must locate each line the same way."""

    def test_a_gap_filled_by_a_line_naming_another_item_with_the_gaps_hash(self, scenario: Scenario) -> None:
        """main lacks (B, R1). PR 1 appends a line for item R2 carrying R1's content hash, "no";
        the review locates it as R2's (answered), the lookup of R1 finds it by hash. PR 2 deletes A."""
        record = _record_without(("B", "R1"))
        main = _on_main(scenario, {VERDICTS: record}, "(B, R1) not recorded")
        scenario.git("reset", "-q", "--hard", main)
        line = _verdict("B", "R2", "no", item_hash=_item_hash("R1"))
        first = scenario.git.commit({VERDICTS: record + line}, "PR 1: R2's line with R1's hash")
        one = _gate(scenario, first)
        _merge_pr(scenario)
        second = scenario.git.commit(DELETE_A, "PR 2: delete A")
        two = _gate(scenario, second)
        # The review reads the line as the lookups do: R1 gains B's "no" by its hash and R2's own
        # answer is outranked by a line that is stale for R2, so PR 1 is reviewed (a fill and a
        # lost answer); merged anyway, B has no answer on R2 and PR 2 stops.
        assert one.code == 1 and "on R1: none -> no" in one.stdout and "on R2 (no)" in one.stdout, one.stdout
        assert two.code == 2 and "no verdict for checks B" in two.stdout, two.stdout

    def test_a_line_for_a_caught_item_with_a_wrong_hash_and_the_other_answer(self, scenario: Scenario) -> None:
        line = _verdict("B", "R1", "no", item_hash="0" * 16)
        head = scenario.git.commit({VERDICTS: verdicts_jsonl(TEXTS) + line, **DELETE_A}, "B no on R1, stale hash")
        _rejected(scenario, head)

    def test_a_line_for_another_item_with_the_caught_items_hash(self, scenario: Scenario) -> None:
        line = _verdict("B", "R2", "no", item_hash=_item_hash("R1"))
        head = scenario.git.commit({VERDICTS: verdicts_jsonl(TEXTS) + line, **DELETE_A}, "R2 with R1's hash")
        _rejected(scenario, head)


# -- answers laundered through the record: recorded where nobody reads them, used later -----------

class TestLaunderedEvidence:
    """With `trust_pr_verdicts: false` a PR's own verdicts never stand in for a judge; with the
    default (true) they stand for the checks the PR adds, with a note naming them unverified, so
    a reviewer reads them before they become the record. A route is a PR whose answers become
    the record without either: weighed by no rule, named by no note. Closed where the record is
    read (`trust.evidence`): answers for a text the gated rubric's base lacks count as the PR's
    own in the PR that adds the check, whoever recorded them and whichever rubric read them."""

    def _launder(self, scenario: Scenario, first_files: dict[str, str | None], **inputs: str):
        lies = "".join(_verdict(EXTRA["X"], i, "no" if i == "R1" else "yes") for i in LABELS)
        first = scenario.git.commit({VERDICTS: verdicts_jsonl(TEXTS) + lies, **first_files}, "PR 1: X's answers")
        one = _gate(scenario, first, **inputs)
        _merge_pr(scenario)
        second = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D", "X"], extra=EXTRA)}, "PR 2: X in, A out")
        two = _gate(scenario, second, **inputs)
        return one, two

    @pytest.mark.parametrize("trust", ["true", "false"])
    def test_answers_for_a_check_no_rubric_has(self, scenario: Scenario, trust: str) -> None:
        """No judge anywhere: PR 1 records X's answers, which no rubric reads."""
        one, two = self._launder(scenario, {}, trust_pr_verdicts=trust)
        assert one.code == 1 or two.code == 1, one.stdout + two.stdout

    @pytest.mark.parametrize("trust", ["true", "false"])
    def test_answers_for_the_check_of_a_new_helper_rubric(self, scenario: Scenario, trust: str) -> None:
        """PR 1 adds a rubric (scored, not gated) with check X on demo's labels and record."""
        one, two = self._launder(scenario, {"rubrics/helper.yaml": _other(["X"], "helper")}, trust_pr_verdicts=trust)
        assert one.code == 1 or two.code == 1, one.stdout + two.stdout

    def test_answers_for_a_check_the_pr_adds_to_the_rubric_need_a_judge_when_untrusted(self, scenario: Scenario) -> None:
        one, _two = self._launder(scenario, {RUBRIC: rubric_yaml(["A", "B", "C", "D", "X"], extra=EXTRA)},
                                 trust_pr_verdicts="false")
        assert one.code == 1 and "unverified verdict(s) added by this PR" in one.stdout + one.summary, one.stdout

    def test_answers_for_a_check_the_pr_adds_are_named_unverified_by_default(self, scenario: Scenario) -> None:
        """The default trusts them once reviewed (so the comment names them): by design, PR 2
        then stands on PR 1's record."""
        one, two = self._launder(scenario, {RUBRIC: rubric_yaml(["A", "B", "C", "D", "X"], extra=EXTRA)})
        assert (one.code, two.code) == (0, 0), one.stdout + two.stdout
        assert "5 unverified verdict(s)" in one.summary, one.summary

    def test_with_a_configured_judge_in_both_runs(self, scenario: Scenario) -> None:
        one, two = self._launder(scenario, {}, **_judged(scenario))
        # The judge answers X in PR 2: R1 is A's alone again. (PR 1 may pass, as today, or need the
        # override, as the fix of the routes above may make it: this route stops at PR 2 either way.)
        assert one.code in (0, 1) and two.code == 1, one.stdout + two.stdout


# -- the comment: rubric fields shown as written --------------------------------------------------

def _assert_inert(scenario: Scenario, result, head: str, needle: str = "evil") -> None:
    from pathlib import Path

    from tests.support import gfm

    body = (Path(result.workspace) / result.outputs["comment"]).read_text()
    root = gfm.parse(body)
    run_link = "https://github.test/acme/rubrics/actions/runs/42"
    live = gfm.live_spans(root, allowed_links=(run_link,), own=(scenario.base_sha[:7], head[:7]))
    assert not [s for s in live if "evil" in s[1] or "octocat" in s[1] or s[0] in ("image", "html")], live
    shown = "".join(ch for ch in root.text() if unicodedata.category(ch) != "Cf")
    assert needle in shown, body


class TestCommentRubricFields:
    @pytest.mark.parametrize("field,value", [
        ("version", "'1 [ok](https://evil.example) @octocat'"),
        ("id", "'x` [ok](https://evil.example) `y'"),
        ("id", "'<img src=https://evil.example/p.png>'"),
        ("version", "'``` </details> ![i](https://evil.example/p.png)'"),
    ], ids=["version-link", "id-backticks", "id-html", "version-fence"])
    def test_a_new_rubrics_fields_are_inert(self, scenario: Scenario, field: str, value: str) -> None:
        text = _other(["B", "C"], "helper")
        text = text.replace("version: 1", f"version: {value}") if field == "version" else text.replace(
            "id: helper", f"id: {value}")
        head = scenario.git.commit({"rubrics/helper.yaml": text, **DELETE_A}, "a loud new rubric; delete A")
        result = _gate(scenario, head)
        assert _conclusion(scenario, head) == "failure", result.stdout
        assert result.code == 1, result.stdout + result.stderr
        _assert_inert(scenario, result, head)

    @pytest.mark.parametrize("name", ["rubrics/a`b [ok](https:evil.example)`.yaml", "rubrics/``` evil.yaml",
                                      "rubrics/evil|x|.yaml"], ids=["backticks", "fence", "table-pipes"])
    def test_a_rubric_file_name_with_code_span_breakers(self, scenario: Scenario, name: str) -> None:
        scenario.git("mv", RUBRIC, name)
        head = scenario.git.commit({name: rubric_yaml(["B", "C", "D"])}, "rename; delete A")
        result = _gate(scenario, head)
        assert _conclusion(scenario, head) == "failure", result.stdout
        assert result.code == 1, result.stdout + result.stderr
        _assert_inert(scenario, result, head)


# -- a shallow checkout: everything read through the GitHub API ------------------------------------

def _shallow(scenario: Scenario):
    import subprocess

    workspace = scenario.tmp / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", "--branch", "pr", scenario.git.path.as_uri(), str(workspace)],
                   check=True, capture_output=True)
    return workspace


class TestShallowCheckout:
    def test_a_symlink_rubric_read_through_the_api(self, scenario: Scenario) -> None:
        os.symlink("../calibration/demo.jsonl", scenario.git.path / "rubrics" / "alias.yaml")
        scenario.git("add", "rubrics/alias.yaml")
        head = scenario.git.commit(DELETE_A, "an alias; delete A")
        result = _gate(scenario, head, workspace=_shallow(scenario))
        assert _conclusion(scenario, head) == "failure", result.stdout
        assert result.code == 2 and result.report()["files_from"] == "rest", result.stdout

    def test_a_verdict_file_over_a_megabyte_read_through_the_api(self, scenario: Scenario) -> None:
        """Over 1 MB the contents API sends no content; the blob must still be read, all of it."""
        padding = "".join(_verdict(f"filler {n} " + "x" * 200, "R1", "yes") for n in range(5000))
        main = _on_main(scenario, {VERDICTS: verdicts_jsonl(TEXTS) + padding}, "a large record")
        scenario.git("reset", "-q", "--hard", main)
        record = _flip(verdicts_jsonl(TEXTS), "B", "R1", "no") + padding
        head = scenario.git.commit({VERDICTS: record, **DELETE_A}, "B no on R1; delete A")
        result = _gate(scenario, head, workspace=_shallow(scenario))
        assert result.code == 1 and result.report()["files_from"] == "rest", result.stdout + result.stderr
        assert _conclusion(scenario, head) == "failure"

    def test_a_rename_out_of_the_glob_read_through_the_api(self, scenario: Scenario) -> None:
        (scenario.git.path / "archive").mkdir()
        scenario.git("mv", RUBRIC, "archive/demo.yaml")
        head = scenario.git.commit({"archive/demo.yaml": rubric_yaml(["B", "C", "D"])}, "archive, without A")
        result = _gate(scenario, head, workspace=_shallow(scenario))
        assert _conclusion(scenario, head) == "failure", result.stdout
        assert result.code == 1 and result.report()["files_from"] == "rest", result.stdout

    def test_a_copy_reported_as_copied_with_the_original_edited(self, scenario: Scenario) -> None:
        scenario.fake.copies = {"rubrics/copy.yaml": RUBRIC}
        head = scenario.git.commit({"rubrics/copy.yaml": rubric_yaml(["A", "B", "C", "D"]), **DELETE_A},
                                   "copy demo; delete A from the original")
        result = _gate(scenario, head, workspace=_shallow(scenario))
        assert _conclusion(scenario, head) == "failure", result.stdout
        assert result.code == 1 and result.report()["files_from"] == "rest", result.stdout


# -- file names git stores as bytes -----------------------------------------------------------------

class TestFileNameBytes:
    def test_a_rubric_renamed_to_a_name_that_is_not_utf8(self, scenario: Scenario) -> None:
        import subprocess

        root = bytes(scenario.git.path)
        os.rename(root + b"/rubrics/demo.yaml", root + b"/rubrics/\xff.yaml")
        with open(root + b"/rubrics/\xff.yaml", "w", encoding="utf-8") as handle:
            handle.write(rubric_yaml(["B", "C", "D"]))
        subprocess.run([b"git", b"add", b"-A"], cwd=root, check=True)
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "bytes"],
                       cwd=root, check=True)
        head = scenario.git("rev-parse", "HEAD")
        result = scenario.run(head)
        assert result.code == 2 and _conclusion(scenario, head) == "failure", result.stdout + result.stderr


# -- a configured judge that cannot answer everything ---------------------------------------------

class TestJudgeShortfall:
    """When the judge cannot answer a pair (budget spent, refused, unparseable), the PR's own
    recorded answer for it must not stand in."""

    def _x_with_lies(self, scenario: Scenario) -> str:
        lies = "".join(_verdict(EXTRA["X"], i, "no" if i == "R1" else "yes") for i in LABELS)
        return scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D", "X"], extra=EXTRA),
                                    VERDICTS: verdicts_jsonl(TEXTS) + lies}, "X with its answers; delete A")

    def test_the_call_budget_runs_out_before_the_added_check(self, scenario: Scenario) -> None:
        inputs = _judged(scenario)
        head = self._x_with_lies(scenario)
        result = _gate(scenario, head, max_judge_calls="3", **inputs)
        assert result.code == 2 and "nothing was judged" in result.stdout and _conclusion(scenario, head) == "failure", result.stdout

    def test_the_judge_answers_the_added_check_with_nonsense(self, scenario: Scenario) -> None:
        from tests.action.test_hostile_round3 import _truthful_judge

        def judge(prompt: str) -> str:
            return "maybe" if EXTRA["X"] in prompt else _truthful_judge(prompt)

        inputs = _judged(scenario, judge)
        head = self._x_with_lies(scenario)
        result = _gate(scenario, head, **inputs)
        assert result.code == 2 and "none guessed" in result.stdout and _conclusion(scenario, head) == "failure", result.stdout

    def test_a_panel_whose_second_judge_has_no_key(self, scenario: Scenario) -> None:
        inputs = _judged(scenario)
        head = self._x_with_lies(scenario)
        result = _gate(scenario, head, judge=f"{JUDGE}\nanthropic:claude-fake", env_extra=inputs["env_extra"])
        assert result.code == 1 and _conclusion(scenario, head) == "failure", result.stdout


# -- one head, several pull requests ------------------------------------------------------------

class TestSameHead:
    def _staging_head(self, scenario: Scenario) -> tuple[str, str, str]:
        from tests.action.test_hostile_round3 import _branch

        main_sha = scenario.base_sha
        lenient = _branch(scenario, "staging", "main", DELETE_A, "staging: no A")
        head = scenario.git.commit({"README.md": "tweak\n"}, "a harmless change on top of staging")
        return main_sha, lenient, head

    def test_the_strict_pr_is_listed_on_a_later_page(self, scenario: Scenario) -> None:
        """Forty other open PRs come first; the one proposing this head into main is on page 2."""
        main_sha, lenient, head = self._staging_head(scenario)
        others = {n: {"base": main_sha, "head": "0" * 40} for n in range(10, 50)}
        scenario.fake.other_pulls = {**others, 60: {"base": main_sha, "head": head}}
        scenario.fake.pr_number, scenario.base_sha, scenario.fake.base_sha = 8, lenient, lenient
        _rejected(scenario, head)

    def test_the_strict_pr_comes_from_a_fork_of_the_same_commit(self, scenario: Scenario) -> None:
        main_sha, lenient, head = self._staging_head(scenario)
        scenario.fake.other_pulls = {7: {"base": main_sha, "head": head}}
        scenario.fake.pr_number, scenario.base_sha, scenario.fake.base_sha = 8, lenient, lenient
        _rejected(scenario, head, fork=True)

    def test_an_override_on_one_pr_does_not_cover_the_same_head_into_another_base(self, scenario: Scenario) -> None:
        """#8 proposes the head into staging (overridden there); #7 proposes it into main."""
        main_sha, lenient, head = self._staging_head(scenario)
        scenario.fake.other_pulls = {7: {"base": main_sha, "head": head}}
        scenario.fake.pr_number, scenario.base_sha, scenario.fake.base_sha = 8, lenient, lenient
        _label(scenario, "labeled")
        _rejected(scenario, head, labels=(OVERRIDE,))


    def test_a_pass_posted_after_the_strict_prs_failure_by_a_run_that_listed_before_it(self,
                                                                                        scenario: Scenario) -> None:
        """#8's run (the head into a lenient staging) listed the open PRs before #7 (the same head
        into main) was opened, and #7's run posted its failure first. Closed by action-flow: the
        open PRs are read again before a pass is posted."""
        main_sha, lenient, head = self._staging_head(scenario)
        _rejected(scenario, head)  # #7, opened while #8's run was under way, fails into main
        scenario.fake.pr_number, scenario.base_sha, scenario.fake.base_sha = 8, lenient, lenient
        scenario.fake.other_pulls = {7: {"base": main_sha, "head": head}}  # open by now
        original = scenario.fake.handle
        listings = []

        def listing_from_before_7(method, path, token, body):
            if method == "GET" and path.endswith("/pulls") and not listings:  # #8's run listed them before #7
                listings.append(path)
                scenario.fake.requests.append((method, path))
                return scenario.fake._page(path, [scenario.fake._pull(f"{scenario.fake.url}/repos/acme/rubrics", 8,
                                                                      {"base": lenient, "head": head})])
            return original(method, path, token, body)

        scenario.fake.handle = listing_from_before_7  # type: ignore[method-assign]
        late = _gate(scenario, head)
        assert late.code == 1 and _conclusion(scenario, head) == "failure", late.stdout

# -- calibration files: line spellings ----------------------------------------------------------

class TestCalibrationLines:
    def test_crlf_with_a_relabel(self, scenario: Scenario) -> None:
        cal = calibration_jsonl({**LABELS, "R1": "pass"}).replace("\n", "\r\n")
        head = scenario.git.commit({CALIBRATION: cal}, "CRLF; R1 pass")
        _rejected(scenario, head)

    def test_a_bom_and_a_relabel(self, scenario: Scenario) -> None:
        cal = "\ufeff" + calibration_jsonl({**LABELS, "R1": "pass"})
        head = scenario.git.commit({CALIBRATION: cal}, "BOM; R1 pass")
        _rejected(scenario, head)

    def test_an_escaped_duplicate_label_key(self, scenario: Scenario) -> None:
        cal = calibration_jsonl().replace('"label": "fail"}', '"label": "fail", "l\\u0061bel": "pass"}', 1)
        head = scenario.git.commit({CALIBRATION: cal}, "label twice, escaped")
        _rejected(scenario, head, code=2)  # a set that does not load is bad input

    def test_an_item_id_given_as_a_number(self, scenario: Scenario) -> None:
        cal = calibration_jsonl().replace('"id": "R1"', '"id": 1')
        head = scenario.git.commit({CALIBRATION: cal}, "R1 -> 1")
        _rejected(scenario, head, code=2)  # a set that does not load is bad input

    def test_a_blank_line_and_a_comment_line(self, scenario: Scenario) -> None:
        cal = calibration_jsonl().replace(_item("R1", "fail"), "\n// R1 removed\n", 1)
        head = scenario.git.commit({CALIBRATION: cal, **DELETE_A}, "R1 commented out; delete A")
        _rejected(scenario, head, code=2)  # a set that does not load is bad input


# -- rubric YAML: documents and streams ---------------------------------------------------------

class TestRubricStream:
    def test_a_second_yaml_document_after_the_lenient_one(self, scenario: Scenario) -> None:
        text = rubric_yaml(["B", "C", "D"]) + "---\n" + rubric_yaml(["A", "B", "C", "D"])
        head = scenario.git.commit({RUBRIC: text}, "two documents")
        _rejected(scenario, head, code=2)

    def test_an_empty_rubric_file(self, scenario: Scenario) -> None:
        head = scenario.git.commit({RUBRIC: ""}, "emptied")
        _rejected(scenario, head, code=2)

    def test_a_rubric_in_json_syntax(self, scenario: Scenario) -> None:
        """JSON is YAML: the same document, gated as such."""
        import yaml

        head = scenario.git.commit({RUBRIC: json.dumps(yaml.safe_load(rubric_yaml(["B", "C", "D"])))}, "as JSON")
        _rejected(scenario, head)

    def test_a_rubric_in_utf16(self, scenario: Scenario) -> None:
        (scenario.git.path / RUBRIC).write_bytes(rubric_yaml(["A", "B", "C", "D"]).encode("utf-16"))
        scenario.git("add", RUBRIC)
        head = scenario.git.commit({}, "the rubric re-encoded as UTF-16")
        _rejected(scenario, head, code=2)


# -- the snapshots (after trust-snapshot's merge): ids across the proposed merge -----------------

class TestProposedSnapshotIds:
    """One rubric id per file, read on the PR's head as it merges onto the base tip."""

    def test_a_new_rubric_with_the_id_in_other_case(self, scenario: Scenario) -> None:
        head = scenario.git.commit({"rubrics/copy.yaml": rubric_yaml(["B", "C", "D"]).replace("id: demo", "id: DEMO")},
                                   "DEMO, without A")
        result = _gate(scenario, head)
        assert _conclusion(scenario, head) == "failure", result.stdout
        assert result.code == 1 and "rubric ids must be unique" in result.stdout, result.stdout

    def test_a_new_rubric_with_the_id_main_gave_a_rubric_since(self, scenario: Scenario) -> None:
        _on_main(scenario, {"rubrics/tip.yaml": _other(["B", "C"], "shared")}, "main adds `shared`")
        head = scenario.git.commit({"rubrics/mine.yaml": _other(["B"], "shared")}, "the PR adds `shared` too")
        result = _gate(scenario, head)
        assert _conclusion(scenario, head) == "failure", result.stdout
        assert result.code == 1 and "rubric ids must be unique" in result.stdout, result.stdout

    def test_a_third_file_for_an_id_two_files_already_share(self, scenario: Scenario) -> None:
        main = _on_main(scenario, {"rubrics/twin.yaml": rubric_yaml(["A", "B", "C", "D"])}, "demo twice (grandfathered)")
        scenario.git("reset", "-q", "--hard", main)
        head = scenario.git.commit({"rubrics/third.yaml": rubric_yaml(["B", "C", "D"])}, "a third demo")
        result = _gate(scenario, head)
        assert _conclusion(scenario, head) == "failure", result.stdout
        assert result.code == 1 and "rubric ids must be unique" in result.stdout, result.stdout

    def test_an_id_main_retired_since_is_free_again(self, scenario: Scenario) -> None:
        main = _on_main(scenario, {"rubrics/old.yaml": _other(["B"], "old")}, "old")
        scenario.git("reset", "-q", "--hard", main)
        _on_main(scenario, {"rubrics/old.yaml": None}, "main retires old")
        head = scenario.git.commit({"rubrics/new.yaml": _other(["B", "C"], "old")}, "reuse the id old")
        result = _gate(scenario, head)
        assert _conclusion(scenario, head) == "success"
        assert result.code == 0, result.stdout + result.stderr

    def test_the_calibration_set_renamed_and_the_rubric_repointed(self, scenario: Scenario) -> None:
        scenario.git("mv", CALIBRATION, "calibration/demo2.jsonl")
        text = rubric_yaml(["A", "B", "C", "D"]).replace(CALIBRATION, "calibration/demo2.jsonl")
        head = scenario.git.commit({RUBRIC: text}, "move the labels")
        _rejected(scenario, head)


# -- the head's last result, repeated by an event that changes nothing ---------------------------

class TestStandingResult:
    """A label or title event repeats the head's last `rubric-gate` result instead of gating
    again; whatever it reads as "the last result" is a pass nobody gated, unless only the gate
    can have written it."""

    def test_a_passing_check_run_another_workflow_posted(self, scenario: Scenario) -> None:
        from tests.fakes.github import GITHUB_ACTIONS_APP

        head = scenario.git.commit(DELETE_A, "delete A; a workflow that posts a check run")
        _rejected(scenario, head)  # the gate's own run
        rid = scenario.fake.new_id()
        scenario.fake.check_runs[rid] = {
            "id": rid, "name": "rubric-gate", "head_sha": head, "status": "completed", "conclusion": "success",
            "app": GITHUB_ACTIONS_APP, "external_id": f"base:{scenario.base_sha}",
            "output": {"title": "rubric-gate: pass", "summary": "", "annotations": []}}
        edited = _gate(scenario, head, action="edited", payload={"changes": {"title": {"from": "x"}}})
        assert edited.code == 1, edited.stdout

    def test_a_passing_status_another_workflow_posted_where_check_runs_are_refused(self, scenario: Scenario) -> None:
        scenario.fake.checks_forbidden = True
        head = scenario.git.commit(DELETE_A, "delete A; a workflow that posts a status")
        first = _gate(scenario, head)
        assert first.code == 1 and scenario.fake.statuses[-1]["state"] == "failure", first.stdout
        scenario.fake.statuses.append({"sha": head, "id": scenario.fake.new_id(), "state": "success",
                                       "context": "rubric-gate",
                                       "description": f"rubric-gate: pass · base {scenario.base_sha}",
                                       "creator": {"login": "github-actions[bot]", "type": "Bot"}})
        edited = _gate(scenario, head, action="edited", payload={"changes": {"title": {"from": "x"}}})
        assert edited.code == 1, edited.stdout

    def test_a_forged_status_does_not_stand_for_a_head_whose_run_was_cancelled(self, scenario: Scenario) -> None:
        """A writer posts a `rubric-gate` commit status ("pass", with the base tip in its
        description) on the new head, whose own run the next label event cancels. That label
        event repeats "the head's last result": the writer's status, not the gate's. Closed by
        action-flow: a standing status must be this token's."""
        head = scenario.git.commit(DELETE_A, "delete A")
        scenario.fake.statuses.append({"sha": head, "id": scenario.fake.new_id(), "state": "success",
                                       "context": "rubric-gate",
                                       "description": f"rubric-gate: pass · base {scenario.base_sha}",
                                       "creator": {"login": "mallory", "type": "User"}})
        scenario.fake.label_events.append({"event": "labeled", "actor": {"login": "mallory"},
                                           "label": {"name": "docs"}})
        result = _gate(scenario, head, labels=("docs",))
        assert result.code == 1, result.stdout

    def test_a_writers_newer_status_does_not_stand_where_check_runs_are_refused(self, scenario: Scenario) -> None:
        scenario.fake.checks_forbidden = True
        head = scenario.git.commit(DELETE_A, "delete A")
        first = _gate(scenario, head)
        assert first.code == 1 and scenario.fake.statuses[-1]["state"] == "failure", first.stdout
        scenario.fake.statuses.append({"sha": head, "id": scenario.fake.new_id(), "state": "success",
                                       "context": "rubric-gate",
                                       "description": f"rubric-gate: pass · base {scenario.base_sha}",
                                       "creator": {"login": "maintainer", "type": "User"}})
        edited = _gate(scenario, head, action="edited", payload={"changes": {"title": {"from": "x"}}})
        assert edited.code == 1, edited.stdout

    def test_an_in_progress_check_run_of_a_cancelled_run_does_not_stand(self, scenario: Scenario) -> None:
        head = scenario.git.commit(DELETE_A, "delete A")
        from tests.fakes.github import GITHUB_ACTIONS_APP

        rid = scenario.fake.new_id()
        scenario.fake.check_runs[rid] = {"id": rid, "name": "rubric-gate", "head_sha": head, "status": "in_progress",
                                         "conclusion": None, "app": GITHUB_ACTIONS_APP,
                                         "external_id": f"base:{scenario.base_sha}",
                                         "output": {"title": "rubric-gate: pass", "summary": "", "annotations": []}}
        result = _gate(scenario, head, action="edited", payload={"changes": {"title": {"from": "x"}}})
        assert result.code == 1, result.stdout


    def test_an_overridden_pass_stands_only_while_a_writer_holds_the_label(self, scenario: Scenario) -> None:
        """The writer overrides, then removes the label; the author (who may label, not override)
        puts it back. Both label runs are cancelled by the author's title edit right after: the
        head's last result is the writer's overridden pass, and the label is on again."""
        head = scenario.git.commit(DELETE_A, "delete A")
        _label(scenario, "labeled")
        assert _gate(scenario, head, labels=(OVERRIDE,)).code == 0  # the writer's override
        _label(scenario, "unlabeled")
        _label(scenario, "labeled", who="mallory")  # both runs cancelled by the next event
        edited = _gate(scenario, head, action="edited", labels=(OVERRIDE,),
                       payload={"changes": {"title": {"from": "x"}}})
        assert edited.code == 1 and _conclusion(scenario, head) == "failure", edited.stdout

    def test_an_override_record_another_workflow_posted_on_a_new_head(self, scenario: Scenario) -> None:
        """Closed by override: no check-run record grants an override; a run other than the
        label's own reads the head it was applied on from GitHub's workflow runs."""
        from tests.fakes.github import GITHUB_ACTIONS_APP

        first = scenario.git.commit({"README.md": "x\n", RUBRIC: rubric_yaml(["A", "B", "C", "E"])}, "delete D")
        _label(scenario, "labeled")
        assert _gate(scenario, first, labels=(OVERRIDE,)).code == 0  # the writer's override, on this head
        second = scenario.git.commit(DELETE_A, "then delete A too")
        _rejected(scenario, second, labels=(OVERRIDE,), action="synchronize")  # a new head: not overridden
        rid = scenario.fake.new_id()
        scenario.fake.check_runs[rid] = {
            "id": rid, "name": "rubric-gate", "head_sha": second, "status": "completed", "conclusion": "failure",
            "app": GITHUB_ACTIONS_APP, "external_id": f"base:{scenario.base_sha} pr:7 override",
            "output": {"title": "rubric-gate: fail", "summary": "", "annotations": []}}
        reopened = _gate(scenario, second, labels=(OVERRIDE,), action="reopened")
        assert reopened.code == 1, reopened.stdout

# -- what the log and the HTML report show --------------------------------------------------------

class TestLogAndReport:
    @pytest.mark.parametrize("name", ["rubrics/\x1b]8;;https://evil.example\x07x\x1b]8;;\x07.yaml",
                                      "rubrics/\x1b[2J\x1b[31mred.yaml", "rubrics/\x9b31mcsi.yaml"],
                             ids=["osc8", "clear-screen", "c1-csi"])
    def test_an_escape_in_a_broken_rubrics_name_does_not_reach_the_log(self, scenario: Scenario, name: str) -> None:
        head = scenario.git.commit({name: "id: [unclosed\n", **DELETE_A}, "a loud, broken rubric")
        result = _gate(scenario, head)
        assert result.code == 2 and _conclusion(scenario, head) == "failure", result.stdout + result.stderr
        log = result.stdout + result.stderr
        assert "\x1b" not in log and "\x07" not in log and "\x9b" not in log, repr(log[-600:])

    def test_an_escape_in_an_input_error_does_not_reach_stderr(self, scenario: Scenario) -> None:
        text = rubric_yaml(["A", "B", "C", "D"]).replace(CALIBRATION, "calibration/\x1b]0;pwned\x07.jsonl")
        head = scenario.git.commit({RUBRIC: text}, "repoint to a loud missing path")
        result = _gate(scenario, head)
        assert _conclusion(scenario, head) == "failure", result.stdout
        assert result.code == 2 and "is not allowed" in result.stdout, result.stdout + result.stderr  # YAML refuses it
        assert "\x1b" not in result.stdout + result.stderr, repr((result.stdout + result.stderr)[-600:])

    def test_markup_in_a_check_text_and_an_item_id_is_text_in_the_html_report(self, scenario: Scenario) -> None:
        from pathlib import Path

        from tests.support import gfm

        loud = "<img src=x onerror=alert(1)>"
        labels = {**LABELS, loud: "pass"}
        main = _on_main(scenario, {CALIBRATION: calibration_jsonl(labels),
                                   VERDICTS: verdicts_jsonl(TEXTS, FAILS, labels)}, "a loud item id")
        scenario.git("reset", "-q", "--hard", main)
        extra = {"X": "Is it <script>alert(1)</script> free?"}
        lines = "".join(_verdict(extra["X"], i, "no" if i == loud else "yes") for i in labels)
        head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "X"], extra=extra),
                                    VERDICTS: verdicts_jsonl(TEXTS, FAILS, labels) + lines},
                                   "add X, which fails the loud item")
        result = _gate(scenario, head)
        assert _conclusion(scenario, head) == "failure", result.stdout
        assert result.code == 1, result.stdout + result.stderr
        html = (Path(result.workspace) / ".rubric-gate" / "report.html").read_text()
        root = gfm.parse_html(html)
        assert not [e for e in root.iter("img") if e.attrs.get("onerror")], html[:2000]
        assert not [e for e in root.iter("script") if "alert(1)" in e.text()]
        assert "alert(1)" in root.text()  # shown, as text


class TestCommentCheckIds:
    """Check ids are restricted to letters, digits, `_`, `.` and `-`: still enough for a `www.`
    autolink, an autolink reference or a commit id."""

    @pytest.mark.parametrize("check_id", ["www.evil.example", "GH-1", "a5c3785ed8d6a35868bc169f07e40e889087fd2e",
                                          "JIRA-123", "evil.example.com"])
    def test_an_added_check_id_is_inert(self, scenario: Scenario, check_id: str) -> None:
        text = rubric_yaml(["A", "B", "C", "D", "X"], extra=EXTRA).replace("id: X", f"id: {check_id}")
        lines = "".join(_verdict(EXTRA["X"], i, "no" if i == "R4" else "yes") for i in LABELS)
        head = scenario.git.commit({RUBRIC: text, VERDICTS: verdicts_jsonl(TEXTS) + lines}, "add a loud id")
        result = _gate(scenario, head)
        assert _conclusion(scenario, head) == "failure", result.stdout
        assert result.code == 1, result.stdout + result.stderr
        from pathlib import Path

        from tests.support import gfm

        body = (Path(result.workspace) / result.outputs["comment"]).read_text()
        root = gfm.parse(body)
        run_link = "https://github.test/acme/rubrics/actions/runs/42"
        live = gfm.live_spans(root, allowed_links=(run_link,), own=(scenario.base_sha[:7], head[:7]))
        assert not [s for s in live if check_id in s[1] or s[1] in check_id], live
        assert check_id in "".join(ch for ch in root.text() if unicodedata.category(ch) != "Cf"), body


# -- history: which commit is the merge base ------------------------------------------------------

class TestCrissCrossHistory:
    def test_a_head_that_drops_a_main_change_through_an_ours_merge(self, scenario: Scenario) -> None:
        """main: O1 (A retired) -> m1 (README); feat: O1 -> f1 (A back); the tip merges feat. The
        PR starts at m1 and merges f1 keeping m1's tree (`-s ours`), then changes the README: the
        merge bases of the tip and the head are m1 and f1."""
        o1 = _on_main(scenario, DELETE_A, "O1: A retired for now")
        scenario.git("checkout", "-q", "-b", "feat", o1)
        f1 = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D"])}, "f1: A back")
        scenario.git("checkout", "-q", "main")
        m1 = scenario.git.commit({"README.md": "m1\n"}, "m1")
        scenario.git("merge", "-q", "--no-ff", "-m", "Merge feat", "feat")
        tip = scenario.git("rev-parse", "HEAD")
        scenario.base_sha = scenario.fake.base_sha = tip
        scenario.git("checkout", "-q", "-B", "pr", m1)
        scenario.git("merge", "-q", "-s", "ours", "-m", "merge main's f1 in, keeping ours", f1)
        head = scenario.git.commit({"README.md": "a harmless change\n"}, "a harmless change")
        merged = scenario.git("merge-tree", "--write-tree", tip, head).split()[0]
        assert len(scenario.git("merge-base", "--all", tip, head).split()) == 2
        assert "id: A\n" not in scenario.git("show", f"{merged}:{RUBRIC}")  # what would land: A deleted
        result = _gate(scenario, head)
        # Closed: more than one merge base is a blocking finding (`action.commits.changed.git_merge_problems`).
        assert "2 merge bases" in result.stdout, result.stdout
        assert result.code in (1, 2) and _conclusion(scenario, head) == "failure", result.stdout + result.stderr


class TestYamlAliasesAcrossTheMerge:
    def test_an_anchor_the_pr_reuses_breaks_the_rubric_main_merges(self, scenario: Scenario) -> None:
        from rubric_gate.errors import InputError
        from rubric_gate.rubric import parse_rubric_text

        base_text = rubric_yaml(["A", "B", "C", "D"])
        tb = f"  text: {TEXTS['B']}\n"
        main_text = base_text.replace(tb, f"  text: &tb {TEXTS['B']}\n") + "- id: Z\n  text: *tb\n  origin: label\n"
        _on_main(scenario, {RUBRIC: main_text}, "main: Z, frozen, B's text by alias")
        lenient = "Is the design written in English?"
        pr_text = base_text.replace("- id: D\n", f"- id: Y\n  text: &tb {lenient}\n- id: D\n")
        lines = "".join(_verdict(lenient, i, "yes") for i in LABELS)
        head = scenario.git.commit({RUBRIC: pr_text, VERDICTS: verdicts_jsonl(TEXTS) + lines}, "add Y")
        tree = scenario.git("merge-tree", "--write-tree", scenario.base_sha, head).split()[0]  # a clean merge
        with pytest.raises(InputError, match="duplicate anchor"):
            parse_rubric_text(scenario.git("show", f"{tree}:{RUBRIC}") + "\n", RUBRIC)
        result = _gate(scenario, head)
        # Closed: the rubric git's merge writes is loaded, and one that does not load is a blocking finding.
        assert "into a rubric that does not load" in result.stdout, result.stdout
        assert result.code in (1, 2) and _conclusion(scenario, head) == "failure", result.stdout + result.stderr


# -- items the base branch added since the PR branched ------------------------------------------

class TestItemsMainAddedSince:
    """A PR is reviewed against its merge base, which does not have the items main labeled since;
    once merged, what it records for them is the record of the tip's items. Closed by comparing
    answers as the lookups read them: where main changed the verdict file too, the tip's record
    with the merged one (a PR that does more than append is asked to rebase); a line carrying an
    item's new content hash is stale on the merge base's item, so its answer there is lost."""

    def _main_adds_r6(self, scenario: Scenario) -> None:
        labels = {**LABELS, "R6": "fail"}
        fails = {**FAILS, "R6": {"B"}}  # B's one unique catch
        _on_main(scenario, {CALIBRATION: calibration_jsonl(labels), VERDICTS: verdicts_jsonl(TEXTS, fails, labels)},
                 "main labels R6, which only B catches")

    @staticmethod
    def _judge(prompt: str) -> str:
        from tests.action.test_hostile_round3 import _truthful_judge

        if "review R6" in prompt:
            return "no" if TEXTS["B"] in prompt else "yes"
        return _truthful_judge(prompt)

    def _two_prs(self, scenario: Scenario, record: str | None, **inputs: str):
        from tests.action.test_hostile_round3 import _merge_into_main

        first = scenario.git.commit({VERDICTS: record} if record else {"README.md": "x\n"}, "PR 1: an answer for R6")
        one = _gate(scenario, first, **inputs)
        _merge_into_main(scenario, "pr")  # raises on a conflict: git merges it cleanly
        scenario.git("checkout", "-q", "-B", "pr2", "main")
        second = scenario.git.commit({RUBRIC: rubric_yaml(["A", "C", "D"])}, "PR 2: delete B")
        return one, _gate(scenario, second, **inputs)

    def test_without_the_answer_deleting_b_is_rejected(self, scenario: Scenario) -> None:
        self._main_adds_r6(scenario)
        one, two = self._two_prs(scenario, None, **_judged(scenario, self._judge))
        assert (one.code, two.code) == (0, 1), one.stdout + two.stdout

    def test_a_keyed_answer_for_an_item_main_labeled_since(self, scenario: Scenario) -> None:
        self._main_adds_r6(scenario)
        inputs = _judged(scenario, self._judge)
        line = _keyed("B", "R6", "yes")
        one, two = self._two_prs(scenario, line + (scenario.git.path / VERDICTS).read_text(), **inputs)
        assert one.code == 1 or two.code == 1, one.stdout + two.stdout

    def test_a_keyless_answer_after_the_line_main_wrote(self, scenario: Scenario) -> None:
        self._main_adds_r6(scenario)
        record = (scenario.git.path / VERDICTS).read_text()
        after = json.dumps({"item": "R1", "check_text": TEXTS["C"], "answer": "yes"}) + "\n"
        one, two = self._two_prs(scenario, record.replace(after, after + _verdict("B", "R6", "yes")))
        assert one.code == 1 or two.code == 1, one.stdout + two.stdout

    def test_an_answer_for_the_content_main_rewrote_an_item_to(self, scenario: Scenario) -> None:
        """main rewrote R1's output since (overridden on main). PR 1 appends (B, R1) "no" carrying the
        new content's hash: on the merge base's R1 it is stale (another content), on the tip's R1 it
        is the answer. PR 2 deletes A, whose catch of R1 B now shares."""
        from rubric_gate.calibration.model import item_content_hash

        cal = calibration_jsonl().replace('"review R1"', '"review R1, rewritten"')
        _on_main(scenario, {CALIBRATION: cal}, "main rewrites R1 (overridden)")
        line = _verdict("B", "R1", "no", item_hash=item_content_hash("design R1", "review R1, rewritten"))
        from tests.action.test_hostile_round3 import _merge_into_main

        first = scenario.git.commit({VERDICTS: verdicts_jsonl(TEXTS) + line}, "PR 1: an answer for the new R1")
        one = _gate(scenario, first)
        _merge_into_main(scenario, "pr")
        scenario.git("checkout", "-q", "-B", "pr2", "main")
        two = _gate(scenario, scenario.git.commit(DELETE_A, "PR 2: delete A"))
        assert one.code == 1 or two.code == 1, one.stdout + two.stdout
