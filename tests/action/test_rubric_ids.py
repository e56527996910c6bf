"""Rubric ids are unique in a snapshot: a PR that makes two rubric files share an id gets a
blocking finding naming both files (a consumer that looks a rubric up by id could read the
lenient copy, which was scored but never gated). End to end through `rubric-gate action`
against the fake GitHub with a real git repository."""

from __future__ import annotations

import unicodedata

import pytest

from tests.action.harness import (
    CALIBRATION,
    LABELS,
    OTHER,
    OVERRIDE,
    RUBRIC,
    Scenario,
    apply_label,
    calibration_jsonl,
    commit_on_main,
    conclusion_of,
    not_green,
    other_rubric,
    rejected_run,
    rubric_yaml,
    run_gated,
    with_rubric_id,
    writer_override,
)

COPY = "rubrics/copy.yaml"


def _with_id(text: str, rubric_id: str) -> str:
    return text.replace("id: demo", f"id: {rubric_id}", 1)


def _id_findings(result) -> list[dict]:  # type: ignore[no-untyped-def]
    return [f for f in result.report()["standard"] if "rubric id" in f["message"]]


def _run(scenario: Scenario, head: str, **kwargs):  # type: ignore[no-untyped-def]
    result = scenario.run(head, **kwargs)
    assert "Traceback" not in result.stderr, result.stderr
    return result


def test_a_new_file_with_an_existing_rubrics_id_is_blocked_naming_both_files(scenario: Scenario) -> None:
    head = scenario.git.commit({COPY: rubric_yaml(["A"])}, "a lenient copy under the same id")
    result = _run(scenario, head)
    assert result.code == 1, result.stdout + result.stderr
    (finding,) = _id_findings(result)
    assert finding["blocking"] and "`demo`" in finding["message"]
    assert finding["file"] in (RUBRIC, COPY) and set(finding["used_by"]) == {RUBRIC, COPY}
    assert RUBRIC in finding["message"] and COPY in finding["message"]
    body = scenario.fake.marked_comments()[0]["body"]
    assert COPY in body and "rubric id" in body


@pytest.mark.parametrize("spelling", ["Demo", "\uff44\uff45\uff4d\uff4f", "de\u200bmo"], ids=["case", "fullwidth", "zero-width"])
def test_an_id_spelled_to_look_different_is_the_same_id(scenario: Scenario, spelling: str) -> None:
    head = scenario.git.commit({COPY: _with_id(rubric_yaml(["A"]), f'"{spelling}"')}, "a copy spelled otherwise")
    result = _run(scenario, head)
    assert result.code == 1 and len(_id_findings(result)) == 1, result.stdout + result.stderr


def test_an_edit_giving_a_second_rubric_the_first_ones_id_is_blocked(scenario: Scenario) -> None:
    commit_on_main(scenario, {OTHER: _with_id(rubric_yaml(["A", "B", "C", "D"]), "other")}, "a second rubric")
    scenario.git("merge", "-q", "main")
    head = scenario.git.commit({OTHER: rubric_yaml(["A", "B", "C", "D"])}, "other takes demo's id")
    result = _run(scenario, head)
    assert result.code == 1, result.stdout + result.stderr
    (finding,) = _id_findings(result)
    assert set(finding["used_by"]) == {RUBRIC, OTHER} and finding["blocking"]


def test_a_copy_the_base_branch_added_since_collides_as_the_pr_merges(scenario: Scenario) -> None:
    """Main added `other` with id `shared` after the PR branched; the PR adds `copy` with the
    same id. Neither side alone has two, the merge does."""
    commit_on_main(scenario, {OTHER: _with_id(rubric_yaml(["A", "B", "C", "D"]), "shared")}, "main adds shared")
    head = scenario.git.commit({COPY: _with_id(rubric_yaml(["A"]), "shared")}, "the PR adds shared too")
    result = _run(scenario, head)
    assert result.code == 1, result.stdout + result.stderr
    (finding,) = _id_findings(result)
    assert set(finding["used_by"]) == {OTHER, COPY}


def test_a_pure_rename_keeps_its_id_and_a_fresh_id_passes(scenario: Scenario) -> None:
    head = scenario.git.commit({RUBRIC: None, OTHER: rubric_yaml(["A", "B", "C", "D"]),
                                COPY: _with_id(rubric_yaml(["A", "B", "C", "D"]), "fresh")},
                               "rename demo; add a rubric with its own id")
    result = _run(scenario, head)
    assert _id_findings(result) == [], result.report()["standard"]
    assert result.code == 0, result.stdout + result.stderr


def test_ids_the_base_already_shares_are_not_this_prs_finding(scenario: Scenario) -> None:
    commit_on_main(scenario, {COPY: rubric_yaml(["A", "B", "C", "D"])}, "main already has two `demo`s")
    scenario.git("merge", "-q", "main")
    head = scenario.git.commit({"README.md": "docs\n"}, "unrelated")
    result = _run(scenario, head)
    assert _id_findings(result) == []


def test_the_override_clears_a_shared_id(scenario: Scenario) -> None:
    head = scenario.git.commit({COPY: rubric_yaml(["A", "B", "C", "D"])}, "a copy under the same id")
    writer_override(scenario)
    result = _run(scenario, head, labels=(OVERRIDE,))
    assert _id_findings(result) and result.code == 0, result.stdout + result.stderr


# -- the snapshots: ids across the proposed merge (the head as it will land on the base tip) -----------------

class TestProposedSnapshotIds:
    """One rubric id per file, read on the PR's head as it merges onto the base tip."""

    def test_a_new_rubric_with_the_id_in_other_case(self, scenario: Scenario) -> None:
        head = scenario.git.commit({"rubrics/copy.yaml": rubric_yaml(["B", "C", "D"]).replace("id: demo", "id: DEMO")},
                                   "DEMO, without A")
        result = run_gated(scenario, head)
        assert conclusion_of(scenario, head) == "failure", result.stdout
        assert result.code == 1 and "rubric ids must be unique" in result.stdout, result.stdout

    def test_a_new_rubric_with_the_id_main_gave_a_rubric_since(self, scenario: Scenario) -> None:
        commit_on_main(scenario, {"rubrics/tip.yaml": other_rubric(["B", "C"], "shared")}, "main adds `shared`")
        head = scenario.git.commit({"rubrics/mine.yaml": other_rubric(["B"], "shared")}, "the PR adds `shared` too")
        result = run_gated(scenario, head)
        assert conclusion_of(scenario, head) == "failure", result.stdout
        assert result.code == 1 and "rubric ids must be unique" in result.stdout, result.stdout

    def test_a_third_file_for_an_id_two_files_already_share(self, scenario: Scenario) -> None:
        main = commit_on_main(scenario, {"rubrics/twin.yaml": rubric_yaml(["A", "B", "C", "D"])}, "demo twice (grandfathered)")
        scenario.git("reset", "-q", "--hard", main)
        head = scenario.git.commit({"rubrics/third.yaml": rubric_yaml(["B", "C", "D"])}, "a third demo")
        result = run_gated(scenario, head)
        assert conclusion_of(scenario, head) == "failure", result.stdout
        assert result.code == 1 and "rubric ids must be unique" in result.stdout, result.stdout

    def test_an_id_main_retired_since_is_free_again(self, scenario: Scenario) -> None:
        main = commit_on_main(scenario, {"rubrics/old.yaml": other_rubric(["B"], "old")}, "old")
        scenario.git("reset", "-q", "--hard", main)
        commit_on_main(scenario, {"rubrics/old.yaml": None}, "main retires old")
        head = scenario.git.commit({"rubrics/new.yaml": other_rubric(["B", "C"], "old")}, "reuse the id old")
        result = run_gated(scenario, head)
        assert conclusion_of(scenario, head) == "success"
        assert result.code == 0, result.stdout + result.stderr

    def test_the_calibration_set_renamed_and_the_rubric_repointed(self, scenario: Scenario) -> None:
        scenario.git("mv", CALIBRATION, "calibration/demo2.jsonl")
        text = rubric_yaml(["A", "B", "C", "D"]).replace(CALIBRATION, "calibration/demo2.jsonl")
        head = scenario.git.commit({RUBRIC: text}, "move the labels")
        rejected_run(scenario, head)


# -- rubric identity: deleted and re-added under another name in one PR -------------------------

class TestRubricIdentity:
    def test_re_added_under_a_new_id_with_a_copy_of_its_labels(self, scenario: Scenario) -> None:
        copy = "calibration/demo-v2.jsonl"
        text = rubric_yaml(["B", "C", "D"]).replace("id: demo", "id: demo-v2").replace(CALIBRATION, copy)
        head = scenario.git.commit({RUBRIC: None, CALIBRATION: None, copy: calibration_jsonl(),
                                    "rubrics/demo-v2.yaml": text}, "demo -> demo-v2, without A")
        rejected_run(scenario, head)

    def test_re_added_under_its_id_with_relabeled_copy_of_its_labels(self, scenario: Scenario) -> None:
        copy = "calibration/demo-v2.jsonl"
        text = rubric_yaml(["A", "B", "C", "D"]).replace(CALIBRATION, copy)
        head = scenario.git.commit({RUBRIC: None, copy: calibration_jsonl({**LABELS, "R1": "pass", "R2": "pass"}),
                                    "rubrics/z.yaml": text}, "demo re-added as z.yaml on relabeled copy")
        rejected_run(scenario, head)

    def test_a_rubric_swapped_with_another_rubrics_file(self, scenario: Scenario) -> None:
        """Two rubrics on one calibration set trade file names; demo loses A on the way."""
        other = rubric_yaml(["E"]).replace("id: demo", "id: other")
        main = commit_on_main(scenario, {OTHER: other}, "other.yaml")
        scenario.git("reset", "-q", "--hard", main)
        head = scenario.git.commit({RUBRIC: other, OTHER: rubric_yaml(["B", "C", "D"])}, "swap files; drop A")
        rejected_run(scenario, head)

    def test_a_deleted_rubric_whose_checks_move_to_a_new_rubric_on_the_same_labels(self, scenario: Scenario) -> None:
        text = rubric_yaml(["A", "B", "C", "D"]).replace("id: demo", "id: fresh").replace(
            "Review a cloud security design.", "Say whether the design is fine.")
        head = scenario.git.commit({RUBRIC: None, "rubrics/fresh.yaml": text}, "demo -> fresh, new task")
        not_green(scenario, head)


# -- rubric ids: what a consumer looks a rubric up by ------------------------------------------

class TestRubricIds:
    """A second file with an existing rubric's id is refused (`TestProposedSnapshotIds`). A consumer that loads a rubric
    by its `id` reads whichever file now carries it."""

    def _lenient_on_main(self, scenario: Scenario) -> str:
        lenient = rubric_yaml(["B"]).replace("id: demo", "id: demo-draft")
        main = commit_on_main(scenario, {"rubrics/draft.yaml": lenient}, "a lenient draft with its own id")
        scenario.git("reset", "-q", "--hard", main)
        return lenient

    def test_two_rubrics_swap_their_ids(self, scenario: Scenario) -> None:
        lenient = self._lenient_on_main(scenario)
        head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D"]).replace("id: demo", "id: demo-draft"),
                                    "rubrics/draft.yaml": lenient.replace("id: demo-draft", "id: demo")},
                                   "swap the ids")
        rejected_run(scenario, head)

    def test_the_strict_rubric_renames_its_id_and_the_draft_takes_it(self, scenario: Scenario) -> None:
        lenient = self._lenient_on_main(scenario)
        head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D"]).replace("id: demo", "id: demo-v1"),
                                    "rubrics/draft.yaml": lenient.replace("id: demo-draft", "id: demo")},
                                   "demo -> demo-v1; the draft is demo now")
        rejected_run(scenario, head)

    def test_a_rubric_id_changed_alone(self, scenario: Scenario) -> None:
        """Not a route by itself (nothing else claims `demo`), but the consumer's lookup breaks:
        the gate should at least not call it unchanged."""
        head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D"]).replace("id: demo", "id: demo-v2")},
                                   "rename the id")
        result = run_gated(scenario, head)
        assert "demo-v2" in result.summary, result.summary[:2000]


# -- 4. rubric id changes need the override -----------------------------------------------------

class TestIdChanges:
    @pytest.mark.parametrize("new_id", ["Demo", "DEMO", "demo ", "\uff44\uff45\uff4d\uff4f"])
    def test_a_look_alike_id(self, scenario: Scenario, new_id: str) -> None:
        head = scenario.git.commit({RUBRIC: with_rubric_id(new_id)}, "id look-alike")
        rejected_run(scenario, head)

    def test_an_nfd_id_change(self, scenario: Scenario) -> None:
        scenario.git("checkout", "-q", "main")
        base = scenario.git.commit({RUBRIC: with_rubric_id("caf\u00e9")}, "id café (NFC)")
        scenario.git("checkout", "-q", "pr")
        scenario.git("merge", "-q", "--ff-only", "main")
        scenario.base_sha = scenario.fake.base_sha = base
        head = scenario.git.commit({RUBRIC: with_rubric_id(unicodedata.normalize("NFD", "caf\u00e9"))}, "id café (NFD)")
        rejected_run(scenario, head)  # consumers look ids up by their bytes

    def test_an_id_moved_with_a_rename(self, scenario: Scenario) -> None:
        scenario.git("mv", RUBRIC, "rubrics/demo2.yaml")
        head = scenario.git.commit({"rubrics/demo2.yaml": with_rubric_id("demo2")}, "rename and re-id")
        rejected_run(scenario, head)

    def test_delete_and_re_add_under_another_path_and_id(self, scenario: Scenario) -> None:
        head = scenario.git.commit({RUBRIC: None, "rubrics/fresh.yaml": with_rubric_id("fresh")}, "re-add as fresh")
        rejected_run(scenario, head)

    def test_an_id_change_with_the_override_passes(self, scenario: Scenario) -> None:
        head = scenario.git.commit({RUBRIC: with_rubric_id("demo-v2")}, "re-id")
        apply_label(scenario, "labeled")
        assert run_gated(scenario, head, labels=(OVERRIDE,)).code == 0

    def test_an_id_change_without_the_override_fails(self, scenario: Scenario) -> None:
        head = scenario.git.commit({RUBRIC: with_rubric_id("demo-v2")}, "re-id")
        rejected_run(scenario, head)


class TestIdCollisions:
    def test_an_added_rubric_taking_an_existing_id(self, scenario: Scenario) -> None:
        """A second file with id `demo` and A left out: whoever loads `demo` by id may get it."""
        head = scenario.git.commit({"rubrics/demo-lite.yaml": rubric_yaml(["B", "C", "D"])}, "add a lighter demo")
        not_green(scenario, head)

    def test_a_rename_and_a_new_file_under_the_old_path_with_the_old_id(self, scenario: Scenario) -> None:
        """demo.yaml moves to kept.yaml (id kept: `demo`); a new demo.yaml without A takes id `demo` too."""
        scenario.git("mv", RUBRIC, "rubrics/kept.yaml")
        head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "move; a new demo without A")
        not_green(scenario, head)
