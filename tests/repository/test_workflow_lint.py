"""The workflows users run or copy: zizmor (offline, its pedantic persona, and its auditor persona
on what `init` writes) and actionlint report nothing, every action is pinned by the commit of a
node24 release, and the lint can fail."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from rubric_gate.scaffold import drift_workflow_template, workflow_template

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
PIN = re.compile(r"^(?P<action>[\w.-]+/[\w.-]+(?:/[\w./-]+)?)@(?P<sha>[0-9a-f]{40}) # v(?P<major>\d+)\.\d+\.\d+$")
# The first major of each action whose action.yml says `runs.using: node24` (read from each
# action's repository at its release tags); node20 leaves the runners in September 2026.
FIRST_NODE24_MAJOR = {
    "actions/checkout": 5, "actions/setup-python": 6, "actions/cache/restore": 5, "actions/cache/save": 5,
    "actions/upload-artifact": 6, "actions/download-artifact": 7, "actions/github-script": 8,
    "docker/setup-qemu-action": 4, "docker/setup-buildx-action": 4, "docker/login-action": 4,
    "docker/metadata-action": 6, "docker/build-push-action": 7,
    "pypa/gh-action-pypi-publish": 1,  # a Docker container action: no Node.js runtime to retire
}


def _tool(name: str) -> str:
    path = BIN / name
    found = str(path) if path.exists() else shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed (pip install -e '.[dev]')")
    return found


def _doc_workflows() -> dict[str, str]:
    """The complete workflows (a `jobs:` key) in the docs' yaml blocks, keyed by where they are."""
    found = {}
    for doc in (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))):
        for number, block in enumerate(re.findall(r"^```yaml\n(.*?)^```", doc.read_text(), re.M | re.S)):
            data = yaml.safe_load(block)
            if isinstance(data, dict) and "jobs" in data:
                found[f"{doc.name}-{number}.yml"] = block
    return found


@pytest.fixture
def copied_workflows(tmp_path: Path) -> Path:
    """What users get: init's workflow and the docs' copy-paste workflows, in a repository layout."""
    target = tmp_path / ".github" / "workflows"
    target.mkdir(parents=True)
    (target / "init-default.yml").write_text(workflow_template())
    (target / "init-pinned.yml").write_text(workflow_template("acme/rubric-gate@" + "a" * 40))
    (target / "init-drift.yml").write_text(drift_workflow_template())
    (target / "init-drift-pinned.yml").write_text(drift_workflow_template("acme/rubric-gate@" + "a" * 40))
    for name, text in _doc_workflows().items():
        (target / name).write_text(text)
    return target


def _zizmor(*paths: Path, persona: str = "pedantic") -> subprocess.CompletedProcess[str]:
    return subprocess.run([_tool("zizmor"), "--offline", "--no-progress", "--persona", persona, "--format", "plain",
                           *map(str, paths)], capture_output=True, text=True, check=False)


def _actionlint(*paths: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([_tool("actionlint"), "-no-color", *map(str, paths)],
                          capture_output=True, text=True, check=False)


def test_docs_hold_the_copy_paste_and_comment_workflows() -> None:
    # docs/action.md's copy-paste and fork-PR comment workflows (README links to them: one copy)
    assert len([name for name in _doc_workflows() if name.startswith("action.md-")]) >= 2


def test_zizmor_finds_nothing_in_the_repository_workflows() -> None:
    proc = _zizmor(*WORKFLOWS)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "No findings to report" in proc.stdout


def test_zizmor_finds_nothing_in_what_users_copy(copied_workflows: Path) -> None:
    proc = _zizmor(copied_workflows)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "No findings to report" in proc.stdout


def test_zizmor_auditor_finds_nothing_in_what_init_writes(tmp_path: Path) -> None:
    """The auditor persona's `secrets-outside-env`: the judge's key is read in an environment."""
    target = tmp_path / ".github" / "workflows"
    target.mkdir(parents=True)
    (target / "rubric-gate.yml").write_text(workflow_template("acme/rubric-gate@" + "a" * 40))
    (target / "rubric-gate-comment.yml").write_text(
        (ROOT / "src/rubric_gate/scaffold/files/rubric-gate-comment.yml").read_text())
    (target / "rubric-gate-drift.yml").write_text(drift_workflow_template("acme/rubric-gate@" + "a" * 40))
    proc = _zizmor(target, persona="auditor")
    assert proc.returncode == 0 and "No findings to report" in proc.stdout, proc.stdout + proc.stderr
    assert yaml.safe_load(workflow_template())["jobs"]["gate"]["environment"] == "rubric-gate"
    assert yaml.safe_load(drift_workflow_template())["jobs"]["drift"]["environment"] == "rubric-gate"
    without = workflow_template().replace("    environment: rubric-gate\n", "")
    (target / "rubric-gate.yml").write_text(without)
    assert "secrets-outside-env" in _zizmor(target, persona="auditor").stdout  # the finding it closes


def test_actionlint_finds_nothing(copied_workflows: Path) -> None:
    proc = _actionlint(*WORKFLOWS, *sorted(copied_workflows.iterdir()))
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_both_tools_fail_the_patterns_we_removed(tmp_path: Path) -> None:
    """A node20 tag-pinned checkout that keeps its token, with a workflow-wide write permission."""
    target = tmp_path / ".github" / "workflows"
    target.mkdir(parents=True)
    (target / "old.yml").write_text(
        "name: old\non: [pull_request]\npermissions:\n  pull-requests: write\njobs:\n  a:\n"
        "    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n      - run: make test\n")
    zizmor = _zizmor(target)
    assert zizmor.returncode == 14  # zizmor exits 10 + the worst severity found: high
    assert {"unpinned-uses", "artipacked"} <= set(re.findall(r"\[([a-z-]+)\]", zizmor.stdout))
    actionlint = _actionlint(target / "old.yml")
    assert actionlint.returncode == 1 and "node20" in actionlint.stdout  # 1: problems found


def _uses(node: object) -> list[str]:
    if isinstance(node, dict):
        return [*([node["uses"]] if isinstance(node.get("uses"), str) else []),
                *(u for value in node.values() for u in _uses(value))]
    if isinstance(node, list):
        return [u for value in node for u in _uses(value)]
    return []


def _uses_lines(text: str) -> list[str]:
    """Each `uses:` value with its comment (YAML drops comments, so read the lines)."""
    return [m.group(1).strip() for m in re.finditer(r"(?m)^\s*(?:- )?uses:\s*(.*)$", text)]


def test_every_action_is_pinned_to_a_node24_release_the_same_way_everywhere() -> None:
    texts = [p.read_text() for p in WORKFLOWS] + list(_doc_workflows().values()) + [workflow_template(),
                                                                                    drift_workflow_template()]
    seen: dict[str, str] = {}
    for text in texts:
        assert _uses(yaml.safe_load(text)), text[:80]
        for value in _uses_lines(text):
            if value.startswith(("./", "OWNER/rubric-gate@", "docker://")):
                continue
            match = PIN.match(value)
            assert match, f"not pinned by commit with a '# vX.Y.Z' comment: {value}"
            assert int(match["major"]) >= FIRST_NODE24_MAJOR[match["action"]], value
            assert seen.setdefault(match["action"], value) == value, "one version of each action everywhere"
    assert set(seen) == set(FIRST_NODE24_MAJOR)


def test_the_drift_workflow_asks_for_least_privilege() -> None:
    """Read the repository, write issues: nothing else, and nothing workflow-wide."""
    data = yaml.safe_load(drift_workflow_template("acme/rubric-gate@v2"))
    assert data["permissions"] == {}
    (job,) = data["jobs"].values()
    assert job["permissions"] == {"contents": "read", "issues": "write"}
    assert set(data[True]) == {"schedule", "workflow_dispatch"}  # `on:` reads as True in YAML 1.1
    install = next(step["run"] for step in job["steps"] if step.get("name") == "Install rubric-gate")
    assert "git+https://github.com/acme/rubric-gate@v2" in install
