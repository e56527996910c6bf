"""A rubric under the globs that does not load on the trusted side vouches for nothing: fail closed.

Its `calibration` and `verdicts` keys cannot be read, so which files it uses is unknown. It is
named in every comment until it is fixed, and every file a PR changes outside the rubric globs
may be its calibration set or verdict file: changing one needs the override (before, a PR that
relabeled such a rubric's calibration set passed with no rubric file gated and no finding).
"""

from __future__ import annotations

import json

import pytest

from tests.action.harness import RUBRIC, Scenario, rubric_yaml, run_gated

# Refused by the one YAML reader (tags are): as a rubric written before the reader grew stricter.
OLD = """!rubric
id: old
version: 1
task: Grade a support reply.
calibration: calibration/old.jsonl
verdicts: calibration/old.verdicts.jsonl
checks:
  - id: polite
    text: Is the reply polite?
"""
ITEMS = [{"id": "o1", "input": "q", "output": "rude", "label": "fail"},
         {"id": "o2", "input": "q", "output": "kind", "label": "pass"}]


def _jsonl(rows: list[dict]) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


def _base_with_an_unloadable_rubric(scenario: Scenario) -> None:
    scenario.git("checkout", "-q", "main")
    verdicts = _jsonl([{"item": "o1", "check_text": "Is the reply polite?", "answer": "no"},
                       {"item": "o2", "check_text": "Is the reply polite?", "answer": "yes"}])
    sha = scenario.git.commit({"rubrics/old.yaml": OLD, "calibration/old.jsonl": _jsonl(ITEMS),
                               "calibration/old.verdicts.jsonl": verdicts}, "an old rubric")
    scenario.git("checkout", "-q", "-B", "pr", sha)
    scenario.base_sha = scenario.fake.base_sha = sha


def _findings(result) -> list[dict]:
    return result.report()["standard"]


@pytest.mark.parametrize("changed", ["calibration/old.jsonl", "calibration/old.verdicts.jsonl"])
def test_relabeling_or_rewriting_what_it_may_read_needs_the_override(scenario: Scenario, changed: str) -> None:
    _base_with_an_unloadable_rubric(scenario)
    flipped = ({"calibration/old.jsonl": _jsonl([{**ITEMS[0], "label": "pass"}, ITEMS[1]])} if "verdicts" not in changed
               else {changed: _jsonl([{"item": "o1", "check_text": "Is the reply polite?", "answer": "yes"}])})
    result = run_gated(scenario, scenario.git.commit(flipped, "relabel"))
    assert result.code == 1, result.stdout + result.summary
    blocking = [f for f in _findings(result) if f["blocking"]]
    assert [f["file"] for f in blocking] == [changed] and blocking[0]["used_by"] == ["rubrics/old.yaml"]
    assert "rubrics/old.yaml, which does not load on the base branch" in blocking[0]["message"]
    kinds = {d["kind"] for d in result.report()["differences"]}
    assert {"rubric.unreadable", "rubric.unreadable_reference"} <= kinds


def test_any_other_file_may_be_one_it_reads_and_a_rubric_only_pr_is_told(scenario: Scenario) -> None:
    _base_with_an_unloadable_rubric(scenario)
    other = run_gated(scenario, scenario.git.commit({"data/elsewhere.jsonl": _jsonl(ITEMS)}, "a new data file"))
    assert other.code == 1 and [f["file"] for f in _findings(other) if f["blocking"]] == ["data/elsewhere.jsonl"]
    scenario.git("reset", "-q", "--hard", scenario.base_sha)
    edit = run_gated(scenario, scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "E"])}, "add E"))
    # The edit of another rubric is gated as usual; the broken one is named, vouching for nothing.
    named = [f for f in _findings(edit) if f["file"] == "rubrics/old.yaml"]
    assert len(named) == 1 and not named[0]["blocking"] and "vouches for nothing" in named[0]["message"], edit.summary
    assert "rubrics/old.yaml" in edit.summary and "does not load on the base branch" in edit.summary.replace("\n", " ")


def test_its_fix_is_gated_as_a_rubric_whose_base_does_not_load(scenario: Scenario) -> None:
    _base_with_an_unloadable_rubric(scenario)
    fixed = run_gated(scenario, scenario.git.commit({"rubrics/old.yaml": OLD.removeprefix("!rubric\n")}, "fix it"))
    assert fixed.code == 1, fixed.summary  # a base the gate cannot read vouches for nothing: the override's
    assert "does not load at the base" in fixed.summary.replace("\n", " ")


def test_a_rubric_main_added_since_that_does_not_load_vouches_for_nothing_the_pr_changes(scenario: Scenario) -> None:
    """The PR branched before main added the unloadable rubric: at the merge base no rubric reads
    calibration/old.jsonl, but once merged the tip's rubric may. The tip is trusted too, so what
    the PR changes there needs the override."""
    base = scenario.base_sha
    scenario.git("checkout", "-q", "main")
    data = scenario.git.commit({"calibration/old.jsonl": _jsonl(ITEMS)}, "data first")
    scenario.git("checkout", "-q", "-B", "pr", data)
    head = scenario.git.commit({"calibration/old.jsonl": _jsonl([{**ITEMS[0], "label": "pass"}, ITEMS[1]])}, "relabel")
    scenario.git("checkout", "-q", "main")
    tip = scenario.git.commit({"rubrics/old.yaml": OLD}, "a rubric that reads it, which does not load")
    scenario.git("checkout", "-q", "pr")
    scenario.base_sha = scenario.fake.base_sha = tip
    assert scenario.git("merge-base", head, tip) == data != base
    result = run_gated(scenario, head)
    assert result.code == 1, result.stdout + result.summary
    assert "calibration/old.jsonl" in [f["file"] for f in _findings(result) if f["blocking"]], _findings(result)
