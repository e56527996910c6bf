"""A promptfoo config read in place: its llm-rubric assertions are the checks, everything else
is named as not gated, and every problem names the file and line."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from rubric_gate.errors import InputError
from rubric_gate.rubric.load import (
    document_problems,
    load_rubric,
    parse_rubric_text,
    worktree_siblings,
)
from rubric_gate.rubric.promptfoo import looks_like_promptfoo, read_checklist
from rubric_gate.sources import SourceText, load_located_yaml

CONFIG = """\
description: Answer refund questions.
prompts: ["{{question}}"]
providers: [openai:gpt-4o-mini]
defaultTest:
  assert:
    - type: llm-rubric
      metric: polite
      value: The answer is polite.
    - type: llm-rubric
      value: The answer states the refund window.
    - type: javascript
      value: output.length < 100
    - type: not-llm-rubric
      value: The answer is rude.
tests:
  - vars: {question: hi}
    assert:
      - type: llm-rubric
        value: {criteria: an object}
      - type: llm-rubric
        value: file://rubrics/long.txt
      - type: assert-set
        assert:
          - type: llm-rubric
            value: Inside a set.
      - type: llm-rubric
        value: "  The answer   states the refund window. "
  - file://more-tests.yaml
scenarios:
  - config: [{vars: {a: 1}}]
    tests: [{assert: [{type: equals, value: x}]}]
"""

SETTINGS = """\
promptfoo:
  evals/config.yaml:
    id: refunds
    calibration: calibration/refunds.jsonl
    verdicts: calibration/refunds.verdicts.jsonl
"""


def checklist(text: str):
    return read_checklist(load_located_yaml(text, "config.yaml"), "config.yaml")


def repo_with(tmp_path: Path, config: str = CONFIG, settings: str | None = SETTINGS) -> Path:
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "config.yaml").write_text(config, encoding="utf-8")
    if settings is not None:
        (tmp_path / ".rubric-gate.yaml").write_text(settings, encoding="utf-8")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    return tmp_path / "evals" / "config.yaml"


def test_llm_rubric_assertions_are_the_checks_with_ids_from_metric_or_text() -> None:
    found = checklist(CONFIG)
    assert [(a.id, a.text, a.line) for a in found.assertions] == [
        ("polite", "The answer is polite.", 6),
        ("the-answer-states-the-refund-window", "The answer states the refund window.", 9),
    ]
    # the same text (whitespace aside) written again in a test is the same check
    assert found.assertions[1].others == (("tests", 0, "assert", 3),)


def test_everything_else_is_named_as_not_gated_with_its_line() -> None:
    described = [item.describe() for item in checklist(CONFIG).not_gated]
    assert described == [
        "javascript (line 11)",
        "not-llm-rubric (line 13)",
        "llm-rubric (line 18): its value is not inline text",
        "llm-rubric (line 20): its value is read from file://rubrics/long.txt",
        "assert-set (line 22): its assertions are combined by the set's own threshold, not all-must-pass",
        "tests (line 28): read from file://more-tests.yaml, which the gate does not open",
        "scenarios (line 30): 1 assertion in scenario 1, not read",
    ]


def test_ids_do_not_depend_on_the_order_of_assertions() -> None:
    shared = """\
defaultTest:
  assert:
    - {type: llm-rubric, metric: tone, value: The answer is warm.}
    - {type: llm-rubric, metric: tone, value: The answer is brief.}
    - {type: llm-rubric, value: Cites the policy.}
"""
    reordered = """\
defaultTest:
  assert:
    - {type: llm-rubric, value: Cites the policy.}
    - {type: llm-rubric, metric: tone, value: The answer is brief.}
    - {type: llm-rubric, metric: tone, value: The answer is warm.}
"""
    first = {a.text: a.id for a in checklist(shared).assertions}
    second = {a.text: a.id for a in checklist(reordered).assertions}
    assert first == second
    # two texts sharing a metric each keep an id of their own (a hash of the text)
    assert first["The answer is warm."] != first["The answer is brief."]
    assert all(first[t].startswith("tone-") for t in ("The answer is warm.", "The answer is brief."))
    assert first["Cites the policy."] == "cites-the-policy"


def test_a_metric_that_is_not_a_valid_id_is_made_one() -> None:
    found = checklist("tests:\n  - assert:\n      - {type: llm-rubric, metric: 'Helpful answer!', value: Helps.}\n")
    assert [a.id for a in found.assertions] == ["Helpful-answer"]


@pytest.mark.parametrize(("config", "line", "what"), [
    ("defaultTest:\n  assert: polite\n", 2, "defaultTest.assert must be a list of assertions"),
    ("defaultTest:\n  assert:\n    - polite\n", 3, "defaultTest.assert[0]: an assertion must be a mapping"),
    ("tests:\n  - assert:\n      - value: x\n", 3, "tests[0].assert[0]: an assertion needs a `type`"),
    ("tests:\n  - assert:\n      - type: llm-rubric\n        value: '  '\n", 4, "check text is empty"),
    ("defaultTest:\n  assert:\n    - type: llm-rubric\n      metric: 3\n      value: x\n", 4, "metric must be a string"),
])
def test_a_malformed_config_names_the_line(config: str, line: int, what: str) -> None:
    with pytest.raises(InputError) as caught:
        checklist(config)
    assert caught.value.line == line and what in caught.value.what


def test_the_one_readers_refusals_apply(tmp_path: Path) -> None:
    path = repo_with(tmp_path, CONFIG.replace("value: The answer is polite.", "value: !!binary aGk="))
    with pytest.raises(InputError) as caught:
        load_rubric(path)
    assert caught.value.line == 8 and "YAML tag '!!binary' is not allowed" in caught.value.what
    path.write_text(CONFIG.replace("  assert:\n", "  assert:\n    - {type: contains, value: x}\n  assert:\n", 1))
    with pytest.raises(InputError) as caught:
        load_rubric(path)
    assert "duplicate key 'assert'" in caught.value.what


def test_a_config_gated_through_its_settings(tmp_path: Path) -> None:
    path = repo_with(tmp_path)
    doc = load_rubric(path)
    assert doc.kind == "promptfoo"
    assert (doc.rubric.id, doc.rubric.task, doc.rubric.calibration) == ("refunds", "Answer refund questions.",
                                                                          "calibration/refunds.jsonl")
    # no version in the settings: the config's git blob id, as `git hash-object` prints it
    blob = subprocess.run(["git", "hash-object", str(path)], capture_output=True, text=True, check=True).stdout
    assert doc.rubric.version == blob[:7]
    assert doc.check_lines == {"polite": 6, "the-answer-states-the-refund-window": 9}
    assert doc.key_lines["task"] == 1 and doc.key_lines["calibration"] == 4


def test_frozen_checks_come_from_the_settings(tmp_path: Path) -> None:
    path = repo_with(tmp_path, settings=SETTINGS + "    frozen: [polite, gone]\n")
    located = load_located_yaml(path.read_text(), "evals/config.yaml")
    doc, errors, warnings = document_problems(
        located, SourceText("evals/config.yaml", path.read_text(), path),
        lambda: ("evals/config.yaml", worktree_siblings(tmp_path)))
    assert errors == [] and doc is not None
    assert [c.id for c in doc.rubric.checks if c.is_frozen] == ["polite"]
    assert any("frozen lists 'gone'" in w.what and w.line == 6 for w in warnings)


@pytest.mark.parametrize(("settings", "where", "what"), [
    (None, "evals/config.yaml:1", "no rubric-gate settings"),
    ("promptfoo:\n  other.yaml: {id: x, calibration: c, verdicts: v}\n", "evals/config.yaml:1",
     "does not name: add `evals/config.yaml`"),
    ("promptfoo:\n  evals/config.yaml:\n    id: x\n    calibraton: c\n    verdicts: v\n", ".rubric-gate.yaml:4",
     "unknown key 'calibraton' (did you mean 'calibration'?)"),
    ("promptfoo:\n  ./evals/config.yaml: {id: x, calibration: c, verdicts: v, judge: gpt4}\n", ".rubric-gate.yaml:2",
     "judge must look like PROVIDER:MODEL"),
])
def test_settings_problems_name_the_file_and_line(tmp_path: Path, settings: str | None, where: str, what: str) -> None:
    repo_with(tmp_path, settings=settings)
    with pytest.raises(InputError) as caught:
        load_rubric("evals/config.yaml", tmp_path)
    assert caught.value.message.startswith(where) and what in caught.value.message


def test_no_task_is_an_error_at_the_settings_entry(tmp_path: Path) -> None:
    path = repo_with(tmp_path, CONFIG.replace("description: Answer refund questions.\n", ""))
    with pytest.raises(InputError) as caught:
        load_rubric(path, tmp_path)
    assert caught.value.path == ".rubric-gate.yaml" and caught.value.line == 2
    assert "no task for the judge" in caught.value.what


def test_each_revision_reads_its_own_settings(tmp_path: Path) -> None:
    path = repo_with(tmp_path)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "add", "-A"], cwd=tmp_path, check=True)
    subprocess.run([*git, "commit", "-qm", "one"], cwd=tmp_path, check=True)
    (tmp_path / ".rubric-gate.yaml").write_text(SETTINGS.replace("id: refunds", "id: renamed"))
    assert load_rubric("HEAD:evals/config.yaml", tmp_path).rubric.id == "refunds"
    assert load_rubric(path, tmp_path).rubric.id == "renamed"
    staged = parse_rubric_text(path.read_text(), "x", repo_path="evals/config.yaml",
                               siblings=worktree_siblings(tmp_path))
    assert staged.rubric.id == "renamed"


def test_a_rubric_is_never_read_as_a_promptfoo_config() -> None:
    assert not looks_like_promptfoo({"id": "x", "checks": [], "tests": []})
    assert not looks_like_promptfoo({"id": "x", "task": "t"})
    assert looks_like_promptfoo({"prompts": ["p"], "providers": ["echo"]})


def test_an_alias_bomb_or_deep_nesting_in_a_config_is_refused_naming_the_file(tmp_path: Path) -> None:
    """The one YAML reader's limits hold for a promptfoo config (its scenarios are walked)."""
    bomb = ["x0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1]"] + [
        f"x{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 9)}]" for n in range(1, 10)]
    path = repo_with(tmp_path, CONFIG + "\n".join(bomb) + "\nmore: [{tests: [*a9]}]\n")
    with pytest.raises(InputError) as caught:
        load_rubric(path)
    assert "too large" in caught.value.what and caught.value.line
    path.write_text(CONFIG.replace("scenarios:", "deep: " + "[" * 5000 + "]" * 5000 + "\nscenarios:"))
    with pytest.raises(InputError) as caught:
        load_rubric(path)
    assert "nested too deeply" in caught.value.what


def test_a_judge_in_the_settings_with_a_control_character_names_its_line(tmp_path: Path) -> None:
    """The settings' judge is read through the rubric model: the same refusal as a rubric's key."""
    path = repo_with(tmp_path, settings=SETTINGS + '    judge: "openai:x\\e[2J\\n::error::forged"\n')
    with pytest.raises(InputError) as caught:
        load_rubric(path)
    assert caught.value.path == ".rubric-gate.yaml" and caught.value.line == 6
    assert "control character" in caught.value.what
