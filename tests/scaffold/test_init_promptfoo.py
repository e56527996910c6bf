"""`init --from promptfoo PATH`: settings naming the config, a calibration template from its
tests, the workflow gating it in place; never a file overwritten."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import yaml

from tests.support.cli import rubric_gate
from tests.support.promptfoo_project import BASE_CONFIG, CONFIG_PATH


def _repo(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "evals").mkdir()
    (tmp_path / CONFIG_PATH).write_text(BASE_CONFIG, encoding="utf-8")
    return tmp_path


def test_init_sets_up_gating_for_an_existing_config(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    result = rubric_gate(root, "init", "--from", "promptfoo", CONFIG_PATH, "--name", "support")
    assert result.returncode == 0, result.stderr
    assert "6 llm-rubric assertions gated as checks" in result.stdout
    assert "not gated: javascript (line 23), contains (line 31)" in result.stdout
    settings = yaml.safe_load((root / ".rubric-gate.yaml").read_text())
    assert settings == {"promptfoo": {CONFIG_PATH: {"id": "support", "calibration": "calibration/support.jsonl",
                                                    "verdicts": "calibration/support.verdicts.jsonl"}}}
    items = [json.loads(line) for line in (root / "calibration/support.jsonl").read_text().splitlines()]
    assert [(i["id"], i["output"]) for i in items] == [
        ("refund-after-20-days", ""),
        ("refund-after-40-days", "Sorry Ana, section 4 allows refunds within 30 days only.")]
    assert items[0]["input"] == {"question": "I bought shoes 20 days ago, can I still return them?",
                                 "policy": "Section 4: refunds within 30 days of purchase."}
    workflow = yaml.safe_load((root / ".github/workflows/rubric-gate.yml").read_text())
    step = next(s for job in workflow["jobs"].values() for s in job["steps"] if s.get("with", {}).get("rubrics"))
    assert step["with"]["rubrics"] == CONFIG_PATH
    # right after init the config is a gated rubric: lint finds only the verdicts and the items
    # still to record (each item is labeled pass until someone records its output and label)
    lint = rubric_gate(root, "lint", CONFIG_PATH)
    assert lint.returncode == 0
    lines = lint.stdout.splitlines()
    assert all("no recorded verdict" in line or "has no metric" in line or "still has a `todo`" in line
               for line in lines)
    assert [line.split(": warning:")[0] for line in lines if "still has a `todo`" in line] == [
        "calibration/support.jsonl:1", "calibration/support.jsonl:2"]
    # Once recorded (the todo deleted, as it asks), the item is no longer named.
    recorded = [{**item, "output": "Yes, within 30 days (section 4).", "meta": {}} if n == 0 else item
                for n, item in enumerate(items)]
    (root / "calibration/support.jsonl").write_text("".join(json.dumps(i) + "\n" for i in recorded))
    lines = rubric_gate(root, "lint", CONFIG_PATH).stdout.splitlines()
    assert [line.split(": warning:")[0] for line in lines if "still has a `todo`" in line] == [
        "calibration/support.jsonl:2"]


def test_init_never_overwrites_the_settings(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    (root / ".rubric-gate.yaml").write_text("promptfoo: {}\n")
    result = rubric_gate(root, "init", "--from", "promptfoo", CONFIG_PATH)
    assert result.returncode == 0
    assert "skipped .rubric-gate.yaml (already exists, left unchanged)" in result.stdout
    assert f"add this entry under its `promptfoo:` section:\n  {CONFIG_PATH}:\n    id: evals" in result.stdout
    assert (root / ".rubric-gate.yaml").read_text() == "promptfoo: {}\n"


def test_init_from_something_else_is_bad_input(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    (root / "rubrics").mkdir()
    (root / "rubrics/x.yaml").write_text("id: x\nchecks: []\n")
    result = rubric_gate(root, "init", "--from", "promptfoo", "rubrics/x.yaml")
    assert result.returncode == 2 and "not a promptfoo config" in result.stderr
    result = rubric_gate(root, "init", "--from", "langsmith", CONFIG_PATH)
    assert result.returncode == 2 and "the one known is `promptfoo PATH`" in result.stderr


def test_init_action_after_init_from_promptfoo_only_points_the_workflow(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    assert rubric_gate(root, "init", "--from", "promptfoo", CONFIG_PATH).returncode == 0
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and ".git" not in p.parts}
    pinned = "acme/rubric-gate@" + "0123456789abcdef" * 2 + "01234567"
    result = rubric_gate(root, "init", "--action", pinned)  # as the next steps say
    assert result.returncode == 0, result.stderr
    after = {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and ".git" not in p.parts}
    assert sorted(after) == sorted(before) and not (root / "rubrics").exists()  # no rubric beside the config
    assert [p for p in after if after[p] != before[p]] == [root / ".github/workflows/rubric-gate.yml"]
    assert f"uses: {pinned}" in (root / ".github/workflows/rubric-gate.yml").read_text()
