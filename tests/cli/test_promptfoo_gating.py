"""A promptfoo config gated in place by `check`, `lint` and the pre-commit hooks exactly as the
native rubric built from the same checks: the same decisions and per-check table, lines in the
promptfoo file, the assertions it leaves alone named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import rubric_gate
from tests.support.gfm import alerts, parse
from tests.support.promptfoo_project import CONFIG_PATH, RUBRIC_PATH, PromptfooRepo, make_repo


@pytest.fixture
def repo(tmp_path: Path) -> PromptfooRepo:
    return make_repo(tmp_path)


def _without_files(data: object) -> object:
    if isinstance(data, dict):
        return {k: _without_files(v) for k, v in data.items() if k not in ("file", "notes")}
    if isinstance(data, list):
        return [_without_files(v) for v in data]
    return data


def test_check_rejects_the_edit_with_the_native_rubrics_table(repo: PromptfooRepo) -> None:
    promptfoo = rubric_gate(repo.root, "check", "--base", f"main:{CONFIG_PATH}", "--head", CONFIG_PATH,
                            "--format", "json")
    native = rubric_gate(repo.root, "check", "--base", f"main:{RUBRIC_PATH}", "--head", RUBRIC_PATH, "--format", "json")
    assert (promptfoo.returncode, native.returncode) == (1, 1)
    ours, theirs = json.loads(promptfoo.stdout), json.loads(native.stdout)
    assert [(c["check"], c["change"], c["decision"]) for c in ours["changes"]] == [
        ("uses-name", "added", "rejected"), ("cites-policy", "deleted", "rejected")]
    assert _without_files(ours) == _without_files(theirs)
    assert ours["head"]["file"] == CONFIG_PATH


def test_the_report_names_the_assertions_left_alone(repo: PromptfooRepo) -> None:
    result = rubric_gate(repo.root, "check", "--base", f"main:{CONFIG_PATH}", "--head", CONFIG_PATH,
                         "--format", "markdown")
    assert result.returncode == 1
    javascript = repo.line_of(CONFIG_PATH, "type: javascript")
    contains = repo.line_of(CONFIG_PATH, "type: contains")
    note = next(n for n in json.loads(rubric_gate(repo.root, "check", "--base", f"main:{CONFIG_PATH}", "--head",
                                                  CONFIG_PATH, "--format", "json").stdout)["notes"]
                if "promptfoo config" in n)
    assert note == (f"{CONFIG_PATH} is a promptfoo config: its 6 llm-rubric assertions are the checks; not gated: "
                    f"javascript (line {javascript}), contains (line {contains})")
    notes = [text for kind, text in alerts(parse(result.stdout)) if kind == "NOTE"]
    assert any(f"not gated: javascript (line {javascript}), contains (line {contains})" in text for text in notes)


def test_lint_findings_point_into_the_promptfoo_file(repo: PromptfooRepo) -> None:
    repo.write("calibration/support.verdicts.jsonl", "")  # no verdict recorded yet
    result = rubric_gate(repo.root, "lint", CONFIG_PATH)
    assert result.returncode == 0
    added = repo.line_of(CONFIG_PATH, "- type: llm-rubric", after="metric: polite")
    assert f"{CONFIG_PATH}:{added}: warning: check 'uses-name': no recorded verdict for 11 of 11 items" in result.stdout
    repo.write(".rubric-gate.yaml", (repo.root / ".rubric-gate.yaml").read_text().replace(
        "calibration/support.jsonl", "calibration/missing.jsonl"))
    result = rubric_gate(repo.root, "lint", CONFIG_PATH)
    assert result.returncode == 2
    assert ".rubric-gate.yaml:5: error: calibration 'calibration/missing.jsonl': file not found" in result.stdout


def test_bad_input_is_one_line_naming_the_promptfoo_file(repo: PromptfooRepo) -> None:
    text = (repo.root / CONFIG_PATH).read_text()
    repo.write(CONFIG_PATH, text.replace("    - type: javascript\n      value: output.length < 1200\n",
                                         "    - output.length < 1200\n"))
    result = rubric_gate(repo.root, "check", "--base", f"main:{CONFIG_PATH}", "--head", CONFIG_PATH)
    line = repo.line_of(CONFIG_PATH, "- output.length")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.strip().splitlines() == [
        f"rubric-gate: error: {CONFIG_PATH}:{line}: defaultTest.assert[5]: an assertion must be a mapping with a `type`"]


def test_the_pre_commit_check_gates_the_staged_config(repo: PromptfooRepo) -> None:
    result = rubric_gate(repo.root, "check-staged", "--base-ref", "main", CONFIG_PATH)
    assert result.returncode == 1
    assert "REJECTED deleted  cites-policy" in result.stdout and "REJECTED added    uses-name" in result.stdout


def test_staging_the_settings_gates_every_config_they_name(repo: PromptfooRepo) -> None:
    repo.git("checkout", "-q", "main", "--", CONFIG_PATH)  # the config as on main: only the settings change
    repo.write(".rubric-gate.yaml", (repo.root / ".rubric-gate.yaml").read_text().replace("id: support", "id: renamed"))
    repo.git("add", "-A")
    result = rubric_gate(repo.root, "check-staged", "--base-ref", "main", ".rubric-gate.yaml")
    assert result.returncode == 0
    assert f"== {CONFIG_PATH} against main" in result.stdout and "support' to 'renamed'" in result.stdout
    lint = rubric_gate(repo.root, "lint", ".rubric-gate.yaml")
    assert lint.returncode == 0 and "in 1 file" in lint.stderr and lint.stdout.startswith(f"{CONFIG_PATH}:")
