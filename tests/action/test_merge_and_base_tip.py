"""The merge, not the branch: a PR is gated onto the base tip as it will merge (main moved since,
criss-cross histories, merge queues, racing PRs), and a merge that lands other than reviewed is
reported.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.action.harness import (
    CALIBRATION,
    DELETE_A,
    EXTRA,
    FAILS,
    LABELS,
    RUBRIC,
    TEXTS,
    VERDICTS,
    Result,
    Scenario,
    branch_from,
    calibration_jsonl,
    commit_on_main,
    conclusion_of,
    merge_group,
    merge_into_main,
    not_green,
    rubric_yaml,
    run_gated,
    verdict_line,
    verdicts_jsonl,
)

# -- a base the gate cannot read is a base that vouches for nothing ---------------------------

def test_two_no_op_prs_merging_into_a_broken_rubric_let_the_next_pr_delete_a_catch(scenario: Scenario) -> None:
    base_text = rubric_yaml(["A", "B", "C", "D"])
    top = base_text.replace("id: demo\n", "id: demo\naggregation: all-pass\n", 1)
    bottom = base_text + "aggregation: all-pass\n"
    a = branch_from(scenario, "a", "main", {RUBRIC: top}, "spell out the default aggregation (top)")
    assert run_gated(scenario, a).code == 0  # a no-op: the default, written out
    b = branch_from(scenario, "b", "main", {RUBRIC: bottom}, "spell out the default aggregation (bottom)")
    assert run_gated(scenario, b).code == 0
    main = merge_into_main(scenario, "a", "b")  # git merges the two hunks cleanly: `aggregation` twice
    c = branch_from(scenario, "c", main, {RUBRIC: rubric_yaml(["B", "C", "D"])}, "fix the duplicate key; delete A")
    result = run_gated(scenario, c)
    assert result.code == 1 and result.outputs["decision"] == "fail", result.stdout + result.stderr


def test_two_item_prs_merging_into_a_broken_calibration_set_let_the_next_pr_relabel(scenario: Scenario) -> None:
    cal = calibration_jsonl()
    first = json.dumps({"id": "R6", "input": "design R6", "output": "review R6", "label": "fail"}) + "\n"
    second = json.dumps({"id": "R6", "input": "design R6b", "output": "review R6b", "label": "fail"}) + "\n"
    a = branch_from(scenario, "a", "main", {CALIBRATION: first + cal}, "add R6 (top)")
    assert run_gated(scenario, a).code == 0  # adding labeled items is allowed
    b = branch_from(scenario, "b", "main", {CALIBRATION: cal + second}, "add R6 (bottom)")
    assert run_gated(scenario, b).code == 0
    main = merge_into_main(scenario, "a", "b")
    relabeled = calibration_jsonl({**LABELS, "R1": "pass"})
    c = branch_from(scenario, "c", main, {CALIBRATION: relabeled, RUBRIC: rubric_yaml(["B", "C", "D"])},
                "fix the duplicate; relabel R1 as pass; delete A")
    result = run_gated(scenario, c)
    assert result.code == 1 and result.outputs["decision"] == "fail", result.stdout + result.stderr


# -- facts about the PR are read when the run starts ----------------------------------------

def test_a_re_run_after_main_moved_gates_against_the_current_base(scenario: Scenario) -> None:
    extra = {"A3": "Is every stored byte encrypted?"}
    fails = {item: checks | ({"A3"} if "A" in checks else set()) for item, checks in FAILS.items()}
    base = commit_on_main(scenario, {RUBRIC: rubric_yaml(["A", "A3", "B", "C", "D"], extra=extra),
                               VERDICTS: verdicts_jsonl({**TEXTS, **extra}, fails)}, "A3 duplicates A")
    scenario.git("reset", "-q", "--hard", base)
    second = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D"], extra=extra)}, "PR 2: delete A3")
    event = scenario.event(second)  # the payload GitHub built when PR 2 was pushed: base = main then
    assert run_gated(scenario, second).code == 0  # A still catches R1
    commit_on_main(scenario, {RUBRIC: rubric_yaml(["A3", "B", "C", "D"], extra=extra)}, "PR 1 merged: delete A")
    # The re-run replays the same payload; the API knows the base moved.
    result = scenario.run(second, payload=json.loads(event.read_text()))
    assert result.code == 1, result.stdout + result.stderr


# -- the merge as it lands: an id main added since -------------------------------------------------

def test_a_check_id_main_added_since_with_other_text_is_not_merged_silently(scenario: Scenario) -> None:
    """Main added X at the end; the PR adds its own X at the top. Git merges both hunks cleanly
    into a rubric with X twice, which does not load; the gate's model of the merge keeps main's."""
    extra = {"X": "Is key rotation automated?", "Y": "Are backups encrypted?"}
    main_text = rubric_yaml(["A", "B", "C", "D", "X"], extra=extra)
    lines = "".join(verdict_line(extra["X"], i, "yes") for i in LABELS)
    commit_on_main(scenario, {RUBRIC: main_text, VERDICTS: verdicts_jsonl(TEXTS) + lines}, "main adds X")
    ours = rubric_yaml(["X=Y", "A", "B", "C", "D"], extra=extra)
    pr_lines = "".join(verdict_line(extra["Y"], i, "yes") for i in LABELS)
    head = scenario.git.commit({RUBRIC: ours, VERDICTS: pr_lines + verdicts_jsonl(TEXTS)}, "the PR adds its X")
    result = run_gated(scenario, head)
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


# -- merge groups: several PRs queued together ---------------------------------------------------

class TestMergeQueue:
    def test_two_queued_prs_each_deleting_one_of_a_redundant_pair(self, scenario: Scenario) -> None:
        fails = {item: checks | ({"A3"} if "A" in checks else set()) for item, checks in FAILS.items()}
        base = commit_on_main(scenario, {RUBRIC: rubric_yaml(["A", "A3", "B", "C", "D"], extra=EXTRA),
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
        result = scenario.run(group, event_name="merge_group", payload=merge_group(scenario, group))
        assert result.code == 1 and conclusion_of(scenario, group) == "failure", result.stdout + result.stderr

    def test_a_merge_group_whose_ref_names_no_pr(self, scenario: Scenario) -> None:
        head = scenario.git.commit(DELETE_A, "delete A")
        scenario.git("checkout", "-q", "-b", "gh-readonly-queue/main/x", scenario.base_sha)
        scenario.git("merge", "-q", "--no-ff", "-m", "Merge", head)
        group = scenario.git("rev-parse", "HEAD")
        payload = merge_group(scenario, group)
        payload["merge_group"]["head_ref"] = "refs/heads/gh-readonly-queue/main/odd"
        result = scenario.run(group, event_name="merge_group", payload=payload)
        assert result.code == 1 and conclusion_of(scenario, group) == "failure", result.stdout + result.stderr


    def _queue(self, scenario: Scenario, head: str):
        scenario.git("checkout", "-q", "-b", "gh-readonly-queue/main/pr-7", scenario.base_sha)
        scenario.git("merge", "-q", "--no-ff", "-m", "Merge pull request #7", head)
        group = scenario.git("rev-parse", "HEAD")
        return group, scenario.run(group, event_name="merge_group", payload=merge_group(scenario, group))

    def test_the_criss_cross_route_in_a_merge_queue(self, scenario: Scenario) -> None:
        """The queue gates the merge git made: A is gone from it."""
        o1 = commit_on_main(scenario, DELETE_A, "O1: A retired for now")
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
        assert result.code == 1 and conclusion_of(scenario, group) == "failure", result.stdout + result.stderr

    def test_the_duplicate_anchor_route_in_a_merge_queue(self, scenario: Scenario) -> None:
        base_text = rubric_yaml(["A", "B", "C", "D"])
        main_text = base_text.replace(f"  text: {TEXTS['B']}\n", f"  text: &tb {TEXTS['B']}\n") + \
            "- id: Z\n  text: *tb\n  origin: label\n"
        commit_on_main(scenario, {RUBRIC: main_text}, "main: Z, frozen, B's text by alias")
        lenient = "Is the design written in English?"
        lines = "".join(verdict_line(lenient, i, "yes") for i in LABELS)
        head = scenario.git.commit({RUBRIC: base_text.replace("- id: D\n", f"- id: Y\n  text: &tb {lenient}\n- id: D\n"),
                                    VERDICTS: verdicts_jsonl(TEXTS) + lines}, "add Y")
        group, result = self._queue(scenario, head)
        assert result.code == 2 and conclusion_of(scenario, group) == "failure", result.stdout + result.stderr


# -- history: which commit is the merge base ------------------------------------------------------

class TestCrissCrossHistory:
    def test_a_head_that_drops_a_main_change_through_an_ours_merge(self, scenario: Scenario) -> None:
        """main: O1 (A retired) -> m1 (README); feat: O1 -> f1 (A back); the tip merges feat. The
        PR starts at m1 and merges f1 keeping m1's tree (`-s ours`), then changes the README: the
        merge bases of the tip and the head are m1 and f1."""
        o1 = commit_on_main(scenario, DELETE_A, "O1: A retired for now")
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
        result = run_gated(scenario, head)
        # Closed: more than one merge base is a blocking finding (`action.commits.changed.git_merge_problems`).
        assert "2 merge bases" in result.stdout, result.stdout
        assert result.code in (1, 2) and conclusion_of(scenario, head) == "failure", result.stdout + result.stderr


class TestYamlAliasesAcrossTheMerge:
    def test_an_anchor_the_pr_reuses_breaks_the_rubric_main_merges(self, scenario: Scenario) -> None:
        from rubric_gate.errors import InputError
        from rubric_gate.rubric import parse_rubric_text

        base_text = rubric_yaml(["A", "B", "C", "D"])
        tb = f"  text: {TEXTS['B']}\n"
        main_text = base_text.replace(tb, f"  text: &tb {TEXTS['B']}\n") + "- id: Z\n  text: *tb\n  origin: label\n"
        commit_on_main(scenario, {RUBRIC: main_text}, "main: Z, frozen, B's text by alias")
        lenient = "Is the design written in English?"
        pr_text = base_text.replace("- id: D\n", f"- id: Y\n  text: &tb {lenient}\n- id: D\n")
        lines = "".join(verdict_line(lenient, i, "yes") for i in LABELS)
        head = scenario.git.commit({RUBRIC: pr_text, VERDICTS: verdicts_jsonl(TEXTS) + lines}, "add Y")
        tree = scenario.git("merge-tree", "--write-tree", scenario.base_sha, head).split()[0]  # a clean merge
        with pytest.raises(InputError, match="duplicate anchor"):
            parse_rubric_text(scenario.git("show", f"{tree}:{RUBRIC}") + "\n", RUBRIC)
        result = run_gated(scenario, head)
        # Closed: the rubric git's merge writes is loaded, and one that does not load is a blocking finding.
        assert "into a rubric that does not load" in result.stdout, result.stdout
        assert result.code in (1, 2) and conclusion_of(scenario, head) == "failure", result.stdout + result.stderr


# -- the merge model: a PR behind main, main changed the same files ---------------------------

def _shallow(scenario: Scenario) -> Path:
    import subprocess

    workspace = scenario.tmp / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", "--branch", "pr", scenario.git.path.as_uri(),
                    str(workspace)], check=True, capture_output=True)
    return workspace


def _criss_cross(scenario: Scenario) -> str:
    """A criss-cross history (the head and the tip have two merge bases; git's merge deletes A,
    which a diff from either merge base does not show); returns the head."""
    o1 = commit_on_main(scenario, DELETE_A, "O1: A retired for now")
    scenario.git("checkout", "-q", "-b", "feat", o1)
    f1 = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D"])}, "f1: A back")
    scenario.git("checkout", "-q", "main")
    m1 = scenario.git.commit({"README.md": "m1\n"}, "m1")
    scenario.git("merge", "-q", "--no-ff", "-m", "Merge feat", "feat")
    scenario.base_sha = scenario.fake.base_sha = scenario.git("rev-parse", "HEAD")
    scenario.git("checkout", "-q", "-B", "pr", m1)
    scenario.git("merge", "-q", "-s", "ours", "-m", "merge main's f1 in, keeping ours", f1)
    return scenario.git.commit({"README.md": "a harmless change\n"}, "a harmless change")


def _duplicate_anchor(scenario: Scenario) -> str:
    base_text = rubric_yaml(["A", "B", "C", "D"])
    main_text = base_text.replace(f"  text: {TEXTS['B']}\n", f"  text: &tb {TEXTS['B']}\n") + \
        "- id: Z\n  text: *tb\n  origin: label\n"
    commit_on_main(scenario, {RUBRIC: main_text}, "main: Z, frozen, B's text by alias")
    lenient = "Is the design written in English?"
    lines = "".join(verdict_line(lenient, i, "yes") for i in LABELS)
    return scenario.git.commit({RUBRIC: base_text.replace("- id: D\n", f"- id: Y\n  text: &tb {lenient}\n- id: D\n"),
                                VERDICTS: verdicts_jsonl(TEXTS) + lines}, "add Y")


class TestMergeModel:
    """Each scenario in a full checkout and in a shallow one (the REST reader)."""

    @pytest.fixture(params=["git", "rest"])
    def where(self, request: pytest.FixtureRequest) -> str:
        return request.param

    @staticmethod
    def _run(scenario: Scenario, head: str, where: str) -> Result:
        return not_green(scenario, head, **({"workspace": _shallow(scenario)} if where == "rest" else {}))

    def test_main_renamed_the_rubric_the_pr_deletes_a_check_in(self, scenario: Scenario, where: str) -> None:
        """git's merge follows main's rename: A is deleted from `rubrics/core.yaml` as it lands."""
        main = commit_on_main(scenario, {RUBRIC: None, "rubrics/core.yaml": rubric_yaml(["A", "B", "C", "D"])},
                        "rename demo.yaml -> core.yaml")
        del main
        head = scenario.git.commit(DELETE_A, "delete A (from before the rename)")
        self._run(scenario, head, where)

    def test_main_renamed_the_check_the_pr_deletes(self, scenario: Scenario, where: str) -> None:
        commit_on_main(scenario, {RUBRIC: rubric_yaml(["A1=A", "B", "C", "D"])}, "A -> A1 (a pure rename)")
        head = scenario.git.commit(DELETE_A, "delete A")
        self._run(scenario, head, where)

    def test_main_gave_the_deleted_check_a_unique_catch_and_moved_the_file(self, scenario: Scenario, where: str) -> None:
        """At the merge base D shares every catch (R3); main labeled R6, which D alone catches, and
        moved the rubric. Deleting D passes on the merge base only."""
        labels = {**LABELS, "R6": "fail"}
        commit_on_main(scenario, {CALIBRATION: calibration_jsonl(labels),
                            VERDICTS: verdicts_jsonl(TEXTS, {**FAILS, "R6": {"D"}}, labels),
                            RUBRIC: None, "rubrics/core.yaml": rubric_yaml(["A", "B", "C", "D"])},
                 "R6, caught by D alone; demo.yaml -> core.yaml")
        head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C"])}, "delete D")
        self._run(scenario, head, where)

    def test_main_moved_the_labels_the_pr_relabels(self, scenario: Scenario, where: str) -> None:
        moved = "calibration/core.jsonl"
        commit_on_main(scenario, {CALIBRATION: None, moved: calibration_jsonl(),
                            RUBRIC: rubric_yaml(["A", "B", "C", "D"]).replace(CALIBRATION, moved)},
                 "labels moved")
        head = scenario.git.commit({CALIBRATION: calibration_jsonl({**LABELS, "R1": "pass"}), **DELETE_A},
                                   "relabel R1 at the old path; delete A")
        self._run(scenario, head, where)

    def test_main_deleted_the_other_catcher_since(self, scenario: Scenario, where: str) -> None:
        """R2 is caught by A and B. main deleted A since the PR branched (an overridden PR); the
        PR deletes B, which is harmless at the merge base and B's catch of R2 is unique on the tip."""
        commit_on_main(scenario, DELETE_A, "delete A (overridden on main)")
        head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "C", "D"])}, "delete B")
        self._run(scenario, head, where)

    def test_a_check_id_added_on_both_sides(self, scenario: Scenario, where: str) -> None:
        commit_on_main(scenario, {RUBRIC: rubric_yaml(["A", "B", "C", "D", "X"], extra=EXTRA)}, "main adds X")
        extra = {"X": "Is the design written in English?"}
        lines = "".join(verdict_line(extra["X"], i, "yes") for i in LABELS)
        head = scenario.git.commit({RUBRIC: rubric_yaml(["X", "A", "B", "C", "D"], extra=extra),
                                    VERDICTS: verdicts_jsonl(TEXTS) + lines}, "the PR adds its own X, first")
        self._run(scenario, head, where)

    # Closed by `action.commits.merge_check` (GitHub's test merge commit is compared on a REST-read checkout).
    def test_the_criss_cross_route_in_a_shallow_checkout(self, scenario: Scenario) -> None:
        head = _criss_cross(scenario)
        not_green(scenario, head, workspace=_shallow(scenario))

    def test_the_duplicate_anchor_route_in_a_shallow_checkout(self, scenario: Scenario) -> None:
        head = _duplicate_anchor(scenario)
        not_green(scenario, head, workspace=_shallow(scenario))
