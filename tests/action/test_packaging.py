"""action.yml, the workflows and the Dockerfile: schemas, lint, and the entrypoint as the container runs it."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from rubric_gate.action.config import DEFAULTS
from tests.action.harness import RUBRIC, Scenario, rubric_yaml

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def _tool(name: str) -> str:
    path = BIN / name
    found = str(path) if path.exists() else shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed")
    return found


def _builtin_schema(name: str, *files: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([_tool("check-jsonschema"), "--builtin-schema", name, *map(str, files)],
                          capture_output=True, text=True, check=False)


def test_builtin_schema_names_exist_offline() -> None:
    help_text = subprocess.run([_tool("check-jsonschema"), "--help"], capture_output=True, text=True,
                               check=True).stdout
    assert "vendor.github-actions" in help_text and "vendor.github-workflows" in help_text


def test_action_yml_matches_schema() -> None:
    proc = _builtin_schema("vendor.github-actions", ROOT / "action.yml")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_workflows_match_schema() -> None:
    workflows = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
    assert {w.name for w in workflows} >= {"ci.yml", "rubric-gate.yml"}
    proc = _builtin_schema("vendor.github-workflows", *workflows)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_schema_check_can_fail(tmp_path: Path) -> None:
    bad = tmp_path / "action.yml"
    bad.write_text("name: x\nruns:\n  using: docker\n")  # no description, no image
    assert _builtin_schema("vendor.github-actions", bad).returncode == 1  # 1: the file does not validate


def test_dockerfile_passes_hadolint() -> None:
    proc = subprocess.run([_tool("hadolint"), "--config", str(ROOT / ".hadolint.yaml"), str(ROOT / "Dockerfile")],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _dockerfile() -> str:
    return (ROOT / "Dockerfile").read_text()


def test_dockerfile_is_a_github_container_action() -> None:
    text = _dockerfile()
    instructions = [line.split()[0] for line in text.splitlines() if line and not line[0].isspace() and not line.startswith("#")]
    assert "USER" not in instructions and "WORKDIR" not in instructions  # GitHub runs as root in the workspace
    [base, *stages] = re.findall(r"^FROM\s+(\S+)", text, re.M)
    assert re.fullmatch(r"python:\d+\.\d+\.\d+-slim(-\w+)?", base), base
    assert set(stages) <= set(re.findall(r"^FROM\s+\S+\s+AS\s+(\S+)", text, re.M))  # every stage starts from it
    assert "safe.directory" in text
    assert "--require-hashes" in text and "requirements/image.txt" in text  # the lock (tests/tooling)


def _entrypoint() -> list[str]:
    match = re.search(r"^ENTRYPOINT\s+(\[.*\])\s*$", _dockerfile(), re.M)
    assert match, "ENTRYPOINT must be in exec form"
    return json.loads(match.group(1))


def _action() -> dict:
    return yaml.safe_load((ROOT / "action.yml").read_text())


def test_action_yml_inputs_and_defaults_agree_with_the_code() -> None:
    action = _action()
    assert action["runs"] == {"using": "docker", "image": "Dockerfile"}
    inputs = action["inputs"]
    assert set(inputs) == set(DEFAULTS)
    for name, spec in inputs.items():
        assert re.fullmatch(r"[a-z][a-z0-9_]*", name) and spec["description"]
        expected = "${{ github.token }}" if name == "github_token" else DEFAULTS[name]
        assert str(spec["default"]) == expected, name
    assert set(action["outputs"]) == {"decision", "report", "comment"}
    assert action["branding"]["icon"] and action["branding"]["color"]


def test_entrypoint_as_the_container_runs_it(scenario: Scenario) -> None:
    """The exec-form ENTRYPOINT, the workspace as working directory, only what GitHub sets.

    Inputs other than the token are absent (or empty, as GitHub passes an input without a
    value), so each must take its action.yml default: the default `rubrics` glob finds the file.
    """
    command = _entrypoint()
    assert command == ["rubric-gate", "action"]
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    result = scenario.run(head, command=command, env_extra={
        "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", "INPUT_JUDGE": "", "INPUT_FAIL_ON": "",
    })
    assert result.code == 1, result.stderr
    assert result.outputs["decision"] == "fail"
    assert result.report()["rubrics"][0]["file"] == RUBRIC
    assert len(scenario.fake.marked_comments()) == 1


def test_token_falls_back_to_github_token_variable(scenario: Scenario) -> None:
    head = scenario.git.commit({"README.md": "x\n"})
    result = scenario.run(head, token="", env_extra={"GITHUB_TOKEN": "write-token"})
    assert result.code == 0, result.stderr
    assert "::add-mask::write-token" in result.stdout
    assert scenario.fake.check_runs  # it authenticated with the fallback token


def test_non_pull_request_event_is_a_quick_skip(scenario: Scenario) -> None:
    result = scenario.run(scenario.base_sha, env_extra={"GITHUB_EVENT_NAME": "schedule"})
    assert result.code == 0 and result.outputs["decision"] == "skipped"  # no gate ran: not a pass
    assert not scenario.fake.requests


def test_a_push_without_a_judge_judges_nothing_and_says_so(scenario: Scenario) -> None:
    result = scenario.run(scenario.base_sha, env_extra={"GITHUB_EVENT_NAME": "push", "GITHUB_SHA": scenario.base_sha})
    assert result.code == 0, result.stderr
    assert "no judge configured" in result.summary
    assert not scenario.fake.requests


def test_bad_input_value_exits_2(scenario: Scenario) -> None:
    result = scenario.run(scenario.base_sha, fail_on="sometimes")
    assert result.code == 2
    assert "fail_on" in result.stderr


def _yaml_blocks_in_docs() -> list[str]:
    text = (ROOT / "docs" / "action.md").read_text()
    return re.findall(r"^```yaml\n(.*?)^```", text, re.M | re.S)


def _upload_steps(node: object) -> list[dict]:
    found = []
    if isinstance(node, dict):
        if str(node.get("uses", "")).startswith("actions/upload-artifact@"):
            found.append(node)
        for value in node.values():
            found += _upload_steps(value)
    elif isinstance(node, list):
        for value in node:
            found += _upload_steps(value)
    return found


def test_artifact_uploads_of_the_dot_directory_include_hidden_files() -> None:
    """upload-artifact v4.4+ skips hidden files and directories unless include-hidden-files is set,
    so uploading .rubric-gate/ without it uploads nothing (and the fork comment workflow has no artifact)."""
    documents = [yaml.safe_load(p.read_text()) for p in (ROOT / ".github" / "workflows").glob("*.yml")]
    documents += [yaml.safe_load(block) for block in _yaml_blocks_in_docs()]
    steps = [step for doc in documents for step in _upload_steps(doc)]
    assert len(steps) >= 3  # this repository's workflow and both examples in the docs
    for step in steps:
        paths = str(step["with"]["path"])
        if any(part.startswith(".") for line in paths.split() for part in line.split("/") if part not in (".", "..")):
            assert step["with"].get("include-hidden-files") is True, step
