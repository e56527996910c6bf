"""`rubric-gate lint`: every finding as file:line, exit codes 0 / 1 (--strict) / 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import run_cli
from tests.support.git_repo import CHECKS, Repo, rubric_text

ROOT = Path(__file__).resolve().parents[2]


def test_clean_rubric_has_no_findings_and_says_what_was_checked(repo: Repo,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "lint", "--strict", "rubrics/demo.yaml")
    # stdout stays empty (one line per finding, for editors); stderr says it ran and what it covered
    assert (code, out, err) == (0, "", "rubric-gate lint: 1 rubric file clean (schema, checks, calibration set, "
                                       "verdict coverage)\n")


def test_bundled_rubric_and_examples_lint_clean_together(capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # The examples only record verdicts for the checks they change: linted with the rubric they
    # revise (same calibration set), each counts the other's verdicts, as `check` merges them.
    monkeypatch.chdir(ROOT)
    files = ["rubrics/cloud-security-review.yaml", "examples/sound-revision.yaml", "examples/drifting-revision.yaml"]
    code, out, _ = run_cli(capsys, "lint", "--strict", *files)
    assert (code, out) == (0, "")
    code, out, _ = run_cli(capsys, "lint", "examples/sound-revision.yaml")
    assert code == 0 and "warning: check 'no-invented-findings': no recorded verdict for 46 of 46 items" in out


BROKEN = """\
id: demo
version: 1
calibration: calibration/demo.jsonl
verdicts: calibration/demo.verdicts.jsonl
colour: red
checks:
  - id: A
    text: first
    origin: handmade
  - id: A
    text: second
  - id: B
    text: third
    orign: hand
"""


def test_every_schema_and_model_error_is_listed_with_its_line(repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    repo.write("rubrics/broken.yaml", BROKEN)
    code, out, err = run_cli(capsys, "lint", "rubrics/broken.yaml")
    assert code == 2
    assert out.splitlines() == [
        "rubrics/broken.yaml:1: error: missing required key 'task'",
        "rubrics/broken.yaml:5: error: unknown key 'colour' (known keys: id, version, task, calibration, verdicts, "
        "judge, aggregation, checks)",
        "rubrics/broken.yaml:9: error: checks.0.origin: Input should be 'hand', 'generated', 'review' or 'label'",
        "rubrics/broken.yaml:10: error: duplicate check id 'A' (first at line 7)",
        "rubrics/broken.yaml:14: error: unknown key 'orign' (did you mean 'origin'?)",
    ]
    assert "5 errors, 0 warnings in 1 file" in err


def test_calibration_problems_coverage_and_duplicates(repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    lines = (repo.root / "calibration/demo.jsonl").read_text().splitlines()
    lines += [
        json.dumps({"id": "i5", "input": "env i1", "output": "report i1", "label": "fail"}),  # same content as i1
        "{not json",
        json.dumps({"id": "i3", "input": "x", "output": "y", "label": "pass"}),
        json.dumps({"id": "i6", "input": "x", "output": "y", "label": "maybe"}),
    ]
    repo.write("calibration/demo.jsonl", "\n".join(lines) + "\n")
    repo.write("rubrics/demo.yaml", rubric_text({**CHECKS, "C": "A new check nobody judged yet."}))
    code, out, _ = run_cli(capsys, "lint", "rubrics/demo.yaml")
    assert code == 2
    assert out.splitlines() == [
        "calibration/demo.jsonl:5: warning: item 'i5' has the same input and output as item 'i1' (line 1): "
        "the judge sees one item twice",
        "calibration/demo.jsonl:6: error: malformed JSON (Expecting property name enclosed in double quotes at column 2)",
        "calibration/demo.jsonl:7: error: duplicate item id 'i3' (first at line 3)",
        "calibration/demo.jsonl:8: error: label must be 'pass' or 'fail', got 'maybe'",
        "rubrics/demo.yaml:7: warning: check 'A': no recorded verdict for 1 of 5 items (i5)",
        "rubrics/demo.yaml:9: warning: check 'B': no recorded verdict for 1 of 5 items (i5)",
        "rubrics/demo.yaml:11: warning: check 'C': no recorded verdict for 5 of 5 items (i1, i2, i3, i4, i5)",
    ]


def test_warnings_fail_only_with_strict(repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    repo.write("rubrics/demo.yaml", rubric_text({**CHECKS, "C": "Unjudged."}))
    assert run_cli(capsys, "lint", "rubrics/demo.yaml")[0] == 0
    assert run_cli(capsys, "lint", "--strict", "rubrics/demo.yaml")[0] == 1


def test_missing_calibration_and_bad_verdicts_are_errors(repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    text = rubric_text(CHECKS).replace("calibration/demo.jsonl", "calibration/gone.jsonl")
    repo.write("rubrics/demo.yaml", text)
    repo.write("calibration/demo.verdicts.jsonl", "[1]\n")
    code, out, _ = run_cli(capsys, "lint", "rubrics/demo.yaml")
    assert code == 2
    assert out.splitlines() == [
        "rubrics/demo.yaml:4: error: calibration 'calibration/gone.jsonl': file not found",
        "calibration/demo.verdicts.jsonl:1: error: each line must be a JSON object",
    ]


def test_yaml_syntax_error_and_missing_file_do_not_stop_other_files(repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    repo.write("rubrics/syntax.yaml", "id: [unclosed\n")
    code, out, _ = run_cli(capsys, "lint", "rubrics/syntax.yaml", "rubrics/nope.yaml", "rubrics/demo.yaml")
    assert code == 2
    assert [line.split(": ")[0] for line in out.splitlines()] == ["rubrics/syntax.yaml:2", "rubrics/nope.yaml"]


def test_control_characters_in_findings_are_shown_inert(repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    repo.write("rubrics/demo.yaml", rubric_text(CHECKS) + '"evil\\e[31m": 1\n')
    code, out, _ = run_cli(capsys, "lint", "rubrics/demo.yaml")
    assert code == 2 and "\x1b" not in out and "evil\\x1b[31m" in out


@pytest.mark.parametrize(("line", "hint"), [
    ("task: Summarize the recipe for a cook: ingredients first", "(a value with ': ' in it, e.g. 'task: Summarize: "
                                                                  "...', must be quoted)"),
    ("checks:\n\t- id: a", "(indent with spaces, not tabs)"),
])
def test_the_commonest_yaml_slips_say_what_to_do(repo: Repo, capsys: pytest.CaptureFixture[str], line: str,
                                                 hint: str) -> None:
    # A YAML slip is told with its fix, not only PyYAML's wording (an unquoted "task: ...: ..." is
    # "mapping values are not allowed here").
    repo.write("rubrics/slip.yaml", f"id: slip\nversion: 1\n{line}\n")
    for command in (("lint", "rubrics/slip.yaml"), ("attribute", "rubrics/slip.yaml")):
        code, out, err = run_cli(capsys, *command)
        assert code == 2
        where = 3 + line.count("\n")
        assert f"rubrics/slip.yaml:{where}:" in out + err and "YAML syntax error" in out + err, out + err
        assert hint in out + err
