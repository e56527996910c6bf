"""Rubric ids are unique in a snapshot: a PR that makes two rubric files share an id gets a
blocking finding naming both files (a consumer that looks a rubric up by id could read the
lenient copy, which was scored but never gated). End to end through `rubric-gate action`
against the fake GitHub with a real git repository."""

from __future__ import annotations

import pytest

from tests.action.harness import RUBRIC, Scenario, rubric_yaml
from tests.action.test_integrity import OVERRIDE, _on_main, _writer_override

COPY = "rubrics/copy.yaml"
OTHER = "rubrics/other.yaml"


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
    _on_main(scenario, {OTHER: _with_id(rubric_yaml(["A", "B", "C", "D"]), "other")}, "a second rubric")
    scenario.git("merge", "-q", "main")
    head = scenario.git.commit({OTHER: rubric_yaml(["A", "B", "C", "D"])}, "other takes demo's id")
    result = _run(scenario, head)
    assert result.code == 1, result.stdout + result.stderr
    (finding,) = _id_findings(result)
    assert set(finding["used_by"]) == {RUBRIC, OTHER} and finding["blocking"]


def test_a_copy_the_base_branch_added_since_collides_as_the_pr_merges(scenario: Scenario) -> None:
    """Main added `other` with id `shared` after the PR branched; the PR adds `copy` with the
    same id. Neither side alone has two, the merge does."""
    _on_main(scenario, {OTHER: _with_id(rubric_yaml(["A", "B", "C", "D"]), "shared")}, "main adds shared")
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
    _on_main(scenario, {COPY: rubric_yaml(["A", "B", "C", "D"])}, "main already has two `demo`s")
    scenario.git("merge", "-q", "main")
    head = scenario.git.commit({"README.md": "docs\n"}, "unrelated")
    result = _run(scenario, head)
    assert _id_findings(result) == []


def test_the_override_clears_a_shared_id(scenario: Scenario) -> None:
    head = scenario.git.commit({COPY: rubric_yaml(["A", "B", "C", "D"])}, "a copy under the same id")
    _writer_override(scenario)
    result = _run(scenario, head, labels=(OVERRIDE,))
    assert _id_findings(result) and result.code == 0, result.stdout + result.stderr
