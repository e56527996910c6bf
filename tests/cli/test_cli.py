"""`rubric-gate check` and `attribute` end to end, as a user runs them."""

from __future__ import annotations

import json

from tests.support.project import BASE_YAML, Project


def head_yaml(project: Project, text: str) -> str:
    project.write("rubrics/demo.yaml", text)
    return "rubrics/demo.yaml"


def test_attribute_json_reproduces_the_paper_example(project: Project) -> None:
    proc = project.run("attribute", "rubrics/demo.yaml", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    rows = {c["id"]: c for c in data["checks"]}
    assert [round(rows[c]["credit"], 2) for c in "ABCD"] == [1.5, 0.83, 0.33, 0.33]
    assert rows["D"]["blame"] == 1 and rows["A"]["unique_catches"] == 1
    assert data["rates"]["correct_passed"] == {"count": 1, "total": 2, "rate": 0.5, "ci95": [0.0945, 0.9055]}
    assert data["joint_catches"] == [{"checks": ["A", "B"], "catches": 1}]


def test_check_against_git_base_fails_on_a_drifting_edit(project: Project) -> None:
    drift = BASE_YAML.replace("  - id: A\n    text: The output satisfies requirement A.\n    origin: label\n    source: [R1]\n", "")
    drift += "  - id: E\n    text: The output satisfies requirement E.\n    origin: review\n"
    head_yaml(project, drift)
    proc = project.run("check", "--base", "HEAD:rubrics/demo.yaml", "--head", "rubrics/demo.yaml", "--format", "json")
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    assert report["decision"] == "fail"
    changes = {c["check"]: c for c in report["changes"]}
    assert changes["E"]["change"] == "added" and changes["E"]["decision"] == "rejected"
    assert changes["A"]["change"] == "deleted" and changes["A"]["decision"] == "rejected"
    assert {"P", "S"} <= set(changes["A"]["rules"])
    assert [c["id"] for c in report["base"]["checks"]] == ["A", "B", "C", "D"]
    assert {"credit", "blame", "unique_catches"} <= set(report["head"]["checks"][0])
    assert "rates" in report["base"] and "rates" in report["head"]
    assert "id: A" in report["gated_rubric"] and "id: E" not in report["gated_rubric"]


def test_check_passes_a_sound_edit_and_renders_markdown(project: Project) -> None:
    sound = BASE_YAML.replace("  - id: C\n    text: The output satisfies requirement C.\n", "")
    head_yaml(project, sound)
    proc = project.run("check", "--base", "HEAD:rubrics/demo.yaml", "--head", "rubrics/demo.yaml", "--format", "markdown")
    assert proc.returncode == 0, proc.stderr
    assert "rubric-gate: PASS" in proc.stdout
    assert "| `C` | deleted | accepted | holds no unique catch (its credit 0.33 is shared) |" in proc.stdout
    assert "| `C` | hand | 0.33 | 0.00 | 0 | 0 | 1 | 0.33 / 0.00 / 0 |" in proc.stdout
    text = project.run("check", "--base", "HEAD:rubrics/demo.yaml", "--head", "rubrics/demo.yaml")
    assert text.returncode == 0 and "PASS" in text.stdout


def test_check_never_writes_input_files(project: Project) -> None:
    before = {p: p.read_bytes() for p in project.root.rglob("*") if p.is_file() and ".git" not in p.parts}
    project.run("check", "--base", "HEAD:rubrics/demo.yaml", "--head", "rubrics/demo.yaml", "--format", "json")
    after = {p: p.read_bytes() for p in project.root.rglob("*") if p.is_file() and ".git" not in p.parts}
    assert before == after


def test_attribute_scores_one_split_at_a_time(project: Project) -> None:
    path = project.root / "calibration/demo.jsonl"
    lines = path.read_text().splitlines()
    lines[4] = lines[4].replace('"label": "pass"}', '"label": "pass", "split": "evaluation"}')
    path.write_text("\n".join(lines) + "\n")
    default = json.loads(project.run("attribute", "rubrics/demo.yaml", "--format", "json").stdout)
    held_out = json.loads(project.run("attribute", "rubrics/demo.yaml", "--split", "evaluation", "--format", "json").stdout)
    everything = json.loads(project.run("attribute", "rubrics/demo.yaml", "--split", "all", "--format", "json").stdout)
    assert default["rates"]["correct_passed"]["total"] == 1  # R5 is held out of the gate's items
    assert held_out["rates"]["correct_passed"] == {"count": 1, "total": 1, "rate": 1.0, "ci95": [0.2065, 1.0]}
    assert held_out["rates"]["flawed_caught"]["total"] == 0
    assert everything["rates"]["correct_passed"]["total"] == 2


def test_attribute_markdown_table(project: Project) -> None:
    proc = project.run("attribute", "rubrics/demo.yaml", "--format", "markdown")
    assert proc.returncode == 0
    assert "| `A` | label, frozen | 1.50 | 0.00 | 1 | 0 | 2 |" in proc.stdout
    assert "Correct outputs passed: 50.0% (1/2; 9-91%)" in proc.stdout


def test_an_accepted_change_has_one_reason_in_json_markdown_and_text(project: Project) -> None:
    """The reason is the gate's, in the same words wherever it is shown (not `accepted` in the JSON
    and a figure in the comment)."""
    sound = BASE_YAML.replace("  - id: C\n    text: The output satisfies requirement C.\n", "")
    head_yaml(project, sound)
    args = ("check", "--base", "HEAD:rubrics/demo.yaml", "--head", "rubrics/demo.yaml")
    change = json.loads(project.run(*args, "--format", "json").stdout)["changes"][0]
    assert (change["decision"], change["reason"]) == ("accepted", "holds no unique catch (its credit 0.33 is shared)")
    assert f"| `C` | deleted | accepted | {change['reason']} |" in project.run(*args, "--format", "markdown").stdout
    assert f"deleted  C: {change['reason']}" in project.run(*args).stdout
