"""What `rubric-gate preview` says on stderr: a rejected change in `check`'s word (REJECTED) with
exit 1, and `error:` only for bad input, with exit 2."""

from __future__ import annotations

from tests.action.harness import (
    CALIBRATION,
    LABELS,
    RUBRIC,
    Scenario,
    calibration_jsonl,
    rubric_yaml,
)
from tests.preview.test_preview import preview


def _lines(err: str) -> list[str]:
    return [line.removeprefix("rubric-gate preview: ") for line in err.splitlines()]


def test_a_rejected_relabel_is_said_as_check_says_a_rejection_and_exits_1(scenario: Scenario) -> None:
    scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C"]), CALIBRATION: calibration_jsonl({**LABELS, "R4": "fail"})},
                        "delete D, relabel R4")
    code, _, err = preview(scenario.git.path, "--base", "main")
    assert code == 1, err
    assert f"REJECTED {CALIBRATION}: relabeled 1: R4 (pass -> fail)" in _lines(err), err
    assert not any(line.startswith("error:") or "error:" in line for line in _lines(err)), err
    assert _lines(err)[-1].startswith("fail: the action would exit 1 (gate failed)")


def test_a_rejected_rubric_edit_prints_no_error_and_exits_1(scenario: Scenario) -> None:
    scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "E"])}, "add E, which fails the correct R5")
    code, out, err = preview(scenario.git.path, "--base", "main")
    assert code == 1, err
    assert "FAIL" in out and "error:" not in err, err
    assert _lines(err)[-1].startswith("fail: the action would exit 1 (gate failed)")


def test_bad_input_is_an_error_naming_the_file_and_exits_2(scenario: Scenario) -> None:
    scenario.git.commit({RUBRIC: "checks: [unclosed\n"}, "break the rubric's YAML")
    code, _, err = preview(scenario.git.path, "--base", "main")
    assert code == 2, err
    errors = [line for line in _lines(err) if line.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith(f"error: {RUBRIC}:"), err
    assert not any(line.startswith("REJECTED") for line in _lines(err)), err
    assert "the action would exit 2 (bad input)" in _lines(err)[-1], err
