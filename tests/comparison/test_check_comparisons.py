"""`check` reports base vs head and base vs gated, paired, in JSON, text and Markdown."""

from __future__ import annotations

import json
from pathlib import Path

from markdown_it import MarkdownIt

from tests.support.project import Project

RUBRIC = """\
id: drop
version: 1
task: Answer the question.
calibration: calibration/drop.jsonl
verdicts: calibration/drop.verdicts.jsonl
checks:
  - id: A
    text: Catches the flaw.
"""
STRICT = RUBRIC + "  - id: S\n    text: Demands a citation.\n"
ITEMS = [f"ok{n}" for n in range(8)] + ["bad0", "bad1"]


def _project(root: Path) -> Project:
    project = Project(root)
    project.write("rubrics/drop.yaml", RUBRIC)
    project.write("rubrics/strict.yaml", STRICT)
    project.write("calibration/drop.jsonl", "".join(
        json.dumps({"id": i, "input": "q", "output": i, "label": "fail" if i.startswith("bad") else "pass"}) + "\n"
        for i in ITEMS))
    verdicts = [{"item": i, "check_text": "Catches the flaw.", "answer": "no" if i.startswith("bad") else "yes"}
                for i in ITEMS]
    # The added check fails 6 of the 8 correct items (and both flawed ones).
    verdicts += [{"item": i, "check_text": "Demands a citation.", "answer": "yes" if i in ("ok6", "ok7") else "no"}
                 for i in ITEMS]
    project.write("calibration/drop.verdicts.jsonl", "".join(json.dumps(v) + "\n" for v in verdicts))
    return project


def test_json_comparisons_and_the_opt_in_drop_rule(tmp_path: Path) -> None:
    project = _project(tmp_path)
    args = ("check", "--base", "rubrics/drop.yaml", "--head", "rubrics/strict.yaml", "--format", "json")
    proc = project.run(*args)
    assert proc.returncode == 1, proc.stderr  # S has blame: rejected by rule S
    data = json.loads(proc.stdout)
    by_key = {(c["to"], c["rate"]): c for c in data["comparisons"]}
    assert set(by_key) == {("head", "correct_passed"), ("head", "flawed_caught"),
                           ("gated", "correct_passed"), ("gated", "flawed_caught")}
    head = by_key[("head", "correct_passed")]
    assert head["from_count"] == [8, 8] and head["to_count"] == [2, 8] and head["delta"] == -0.75
    assert head["discordant"] == [0, 6] and head["p_value"] == 0.03125
    assert head["ci95"][0] < -0.75 < head["ci95"][1] < 0
    gated = by_key[("gated", "correct_passed")]
    assert gated["delta"] == 0 and gated["discordant"] == [0, 0] and gated["p_value"] == 1.0
    assert data["run_failures"] == []

    # An S+P-free replay (rule R alone would also reject): the drop rule fails the run by itself.
    accepted = project.run(*args, "--gates", "P", "--reject-correct-drop-at", "0.05")
    assert accepted.returncode == 1, accepted.stderr
    failed = json.loads(accepted.stdout)
    assert all(c["decision"] == "accepted" for c in failed["changes"])
    assert failed["gate"] == "fail" and "McNemar p = 0.0312 < 0.05" in failed["run_failures"][0]
    lenient = project.run(*args, "--gates", "P", "--reject-correct-drop-at", "0.01")
    assert lenient.returncode == 0, lenient.stdout


def test_text_and_markdown_show_one_line_per_rate(tmp_path: Path) -> None:
    project = _project(tmp_path)
    args = ("check", "--base", "rubrics/drop.yaml", "--head", "rubrics/strict.yaml")
    text = project.run(*args).stdout
    lines = [line for line in text.splitlines() if line.startswith("paired: ")]
    assert len(lines) == 2
    assert lines[0].startswith("paired: Correct passed, base 8/8 → head 2/8 (-75.0 pts, 95% CI ")
    assert lines[0].endswith("0 gained, 6 lost; p = 0.031); gated 8/8 (no item differs)")
    assert lines[1] == "paired: Flawed caught, base 2/2 → head 2/2 (no item differs); gated 2/2 (no item differs)"
    markdown = project.run(*args, "--format", "markdown").stdout
    tokens = MarkdownIt("commonmark").enable("table").parse(markdown)
    items = [t.content for t in tokens if t.type == "inline" and t.content.startswith(("Correct passed, base", "Flawed caught, base"))]
    assert len(items) == 2 and "head 2/8" in items[0]
