"""`rubric-gate init` in a real git repository: scaffold, then lint; never overwrite."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from rubric_gate.scaffold import workflow_template
from rubric_gate.scaffold.plan import FILES_DIR
from rubric_gate.schema import render_schema
from tests.support.cli import run_cli
from tests.support.git_repo import init_repo

ROOT = Path(__file__).resolve().parents[2]
CREATED = ["rubrics/shop-qa.yaml", "rubrics/rubric.schema.json", "calibration/shop-qa.jsonl",
           ".github/workflows/rubric-gate.yml", ".github/workflows/rubric-gate-comment.yml"]


@pytest.fixture
def empty_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "shop-qa"
    init_repo(root)
    (root / "src").mkdir()
    monkeypatch.chdir(root / "src")  # init works from anywhere inside the work tree
    return root


def test_init_then_lint_reports_only_verdicts_to_record(empty_repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "init")
    assert code == 0
    assert [line.removeprefix("created ") for line in out.splitlines()[:len(CREATED)]] == CREATED
    steps = out.split("Next steps:")[1].strip().splitlines()
    assert [s.strip()[:3] for s in steps] == ["1. ", "2. ", "3. ", "4. "]
    assert "run rubric-gate preview --base main" in steps[3]  # how to see the gate before a push
    assert all((empty_repo / path).is_file() for path in CREATED)

    code, out, _ = run_cli(capsys, "lint", str(empty_repo / "rubrics/shop-qa.yaml"))
    findings = out.splitlines()
    assert code == 0 and len(findings) == 3
    assert all(": warning: check '" in f and "no recorded verdict for 4 of 4 items" in f for f in findings)
    assert run_cli(capsys, "lint", "--strict", str(empty_repo / "rubrics/shop-qa.yaml"))[0] == 1


def test_scaffolded_files_follow_the_schemas_and_show_every_field(empty_repo: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    run_cli(capsys, "init", "--name", "support.bot")
    rubric_text = (empty_repo / "rubrics/support.bot.yaml").read_text()
    assert rubric_text.startswith("# yaml-language-server: $schema=rubric.schema.json\n")
    assert (empty_repo / "rubrics/rubric.schema.json").read_text() == render_schema("rubric.schema.json")
    rubric = yaml.safe_load(rubric_text)
    assert not list(jsonschema.Draft202012Validator(json.loads(render_schema("rubric.schema.json"))).iter_errors(rubric))
    assert rubric["id"] == "support.bot" and rubric["calibration"] == "calibration/support.bot.jsonl"
    item_schema = json.loads(render_schema("calibration-item.schema.json"))
    items = [json.loads(line) for line in (empty_repo / "calibration/support.bot.jsonl").read_text().splitlines()]
    validator = jsonschema.Draft202012Validator(item_schema)
    assert all(not list(validator.iter_errors(item)) for item in items)
    assert set().union(*items) == set(item_schema["properties"])  # every field appears at least once
    assert {i["label"] for i in items} == {"pass", "fail"} and any(i.get("flaw") == "unplanned" for i in items)


def test_init_twice_overwrites_nothing(empty_repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_cli(capsys, "init")
    edited = empty_repo / "rubrics/shop-qa.yaml"
    edited.write_text(edited.read_text() + "# my edit\n")
    before = {path: (empty_repo / path).read_bytes() for path in CREATED}
    code, out, _ = run_cli(capsys, "init")
    assert code == 0
    assert [line for line in out.splitlines() if line.startswith(("created", "skipped"))] == [
        f"skipped {path} (already exists, left unchanged)" for path in CREATED]
    assert {path: (empty_repo / path).read_bytes() for path in CREATED} == before
    steps = out.split("Next steps:")[1]
    assert "Replace the example items" not in steps
    assert "Record a verdict for every (check, item) pair" in steps
    # The workflow still names the placeholder: pointing it at your copy is still to do.
    assert "rubric-gate init --action you/rubric-gate@<commit sha>" in steps


def test_init_writes_both_workflows_the_first_names(empty_repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_cli(capsys, "init")
    workflows = empty_repo / ".github/workflows"
    gate = (workflows / "rubric-gate.yml").read_text()
    assert "rubric-gate-comment.yml" in gate and (workflows / "rubric-gate-comment.yml").is_file()
    assert "bundled example" not in gate
    companion = ROOT / ".github/workflows/rubric-gate-comment.yml"
    assert (FILES_DIR / "rubric-gate-comment.yml").read_bytes() == companion.read_bytes(), (
        "cp .github/workflows/rubric-gate-comment.yml src/rubric_gate/scaffold/files/rubric-gate-comment.yml")
    assert (workflows / "rubric-gate-comment.yml").read_bytes() == companion.read_bytes()


def test_init_outside_git_and_bad_name_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    code, _, err = run_cli(capsys, "init")
    assert code == 2 and "not inside a git repository" in err and not list(tmp_path.iterdir())
    init_repo(tmp_path / "r")
    monkeypatch.chdir(tmp_path / "r")
    code, _, err = run_cli(capsys, "init", "--name", "../escape")
    assert code == 2 and "--name" in err and not (tmp_path / "escape.jsonl").exists()
    assert sorted(p.name for p in (tmp_path / "r").iterdir()) == [".git"]
    code, _, err = run_cli(capsys, "init", "--name", "x\n")  # a newline in a file name
    assert code == 2 and "--name" in err and "'x\\n'" in err and err.count("\n") == 1  # one line
    assert sorted(p.name for p in (tmp_path / "r").iterdir()) == [".git"]


def test_workflow_template_is_the_repository_workflow(tmp_path: Path) -> None:
    """One template: the package copy is the repository's own workflow, byte for byte (copy it
    over after editing .github/workflows/rubric-gate.yml); init only points `uses:` elsewhere."""
    repo_copy = ROOT / ".github/workflows/rubric-gate.yml"
    assert (FILES_DIR / "rubric-gate.yml").read_bytes() == repo_copy.read_bytes(), (
        "cp .github/workflows/rubric-gate.yml src/rubric_gate/scaffold/files/rubric-gate.yml")
    generated = workflow_template("acme/rubric-gate@v1")
    assert "uses: ./" not in generated and "uses: acme/rubric-gate@v1  # zizmor: ignore[unpinned-uses]" in generated
    assert workflow_template("x/y@v2").count("uses: x/y@v2") == 1
    pinned = "x/y@" + "0" * 40
    assert f"uses: {pinned}\n" in workflow_template(pinned)  # a commit pin needs no suppression
    # Apart from the action's `uses:` (and comments), the scaffolded workflow is the repository's.
    differing = [(a, b) for a, b in zip(repo_copy.read_text().splitlines(), generated.splitlines(), strict=True) if a != b]
    assert [b.split("#")[0].strip() for a, b in differing if not a.lstrip().startswith("#")] == [
        "uses: acme/rubric-gate@v1"]
    target = tmp_path / "rubric-gate.yml"
    target.write_text(generated)
    tool = shutil.which("check-jsonschema", path=str(Path(sys.executable).parent))
    if tool is None:
        pytest.skip("check-jsonschema is not installed")
    proc = subprocess.run([tool, "--builtin-schema", "vendor.github-workflows", str(target)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_next_steps_show_a_hand_written_verdict_line_that_counts(empty_repo: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    # The next steps show the format of a hand-written verdict line, not only "(or by hand)".
    code, out, _ = run_cli(capsys, "init")
    assert code == 0
    step = next(line for line in out.splitlines() if "Record a verdict" in line)
    example = json.loads(step[step.index("{"):step.index("}") + 1])
    rubric = yaml.safe_load((empty_repo / "rubrics/shop-qa.yaml").read_text())
    example["check_text"] = rubric["checks"][0]["text"]
    (empty_repo / rubric["verdicts"]).write_text(json.dumps(example) + "\n")
    code, out, _ = run_cli(capsys, "lint", str(empty_repo / "rubrics/shop-qa.yaml"))
    assert code == 0 and f"check '{rubric['checks'][0]['id']}': no recorded verdict for 3 of 4 items" in out


PINNED = "acme/rubric-gate@" + "0123456789abcdef" * 2 + "01234567"


def test_init_action_points_the_workflow_it_wrote_at_your_copy_changing_only_that_line(
        empty_repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_cli(capsys, "init")
    workflow = empty_repo / ".github/workflows/rubric-gate.yml"
    before = workflow.read_text().splitlines(keepends=True)
    others = {p: p.read_bytes() for p in empty_repo.rglob("*") if p.is_file() and ".git" not in p.parts and p != workflow}
    code, out, _ = run_cli(capsys, "init", "--action", PINNED)
    assert code == 0, out
    after = workflow.read_text().splitlines(keepends=True)
    changed = [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
    assert len(changed) == 1 and after[changed[0]] == f"        uses: {PINNED}\n"  # indentation kept, no suppression
    assert f"updated .github/workflows/rubric-gate.yml:{changed[0] + 1}: uses: {PINNED} (was OWNER/rubric-gate@v1)" in out
    assert {p: p.read_bytes() for p in others} == others  # nothing else was touched
    assert workflow.read_text() == workflow_template(PINNED)  # as a fresh init with --action writes it
    steps = out.split("Next steps:")[1]
    assert "placeholder" not in steps and "Commit and push, then require the rubric-gate check" in steps
    # Again: nothing to change, and it says so.
    code, out, _ = run_cli(capsys, "init", "--action", PINNED)
    assert code == 0 and f"skipped .github/workflows/rubric-gate.yml (already exists and uses {PINNED})" in out
    # A tag or branch is written with zizmor's note to pin it, on the same line.
    code, out, _ = run_cli(capsys, "init", "--action", "acme/rubric-gate@v2")
    assert code == 0 and f"(was {PINNED})" in out
    assert "        uses: acme/rubric-gate@v2  # zizmor: ignore[unpinned-uses]" in workflow.read_text()


def test_init_action_after_init_name_scaffolds_no_second_rubric(empty_repo: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    # README's order: `init --name qa`, then `init --action`. The directory is named shop-qa, so a
    # rubric named after it would land beside qa, with example items and no verdicts to gate on.
    run_cli(capsys, "init", "--name", "qa")
    before = {p: p.read_bytes() for p in empty_repo.rglob("*") if p.is_file() and ".git" not in p.parts}
    code, out, _ = run_cli(capsys, "init", "--action", PINNED)
    assert code == 0, out
    after = {p: p.read_bytes() for p in empty_repo.rglob("*") if p.is_file() and ".git" not in p.parts}
    assert sorted(after) == sorted(before) and not (empty_repo / "rubrics/shop-qa.yaml").exists()
    assert [p for p in after if after[p] != before[p]] == [empty_repo / ".github/workflows/rubric-gate.yml"]
    assert "created " not in out and "shop-qa" not in out
    steps = out.split("Next steps:")[1]
    assert "Record a verdict" not in steps and "Commit and push, then require the rubric-gate check" in steps
    # Asking for a rubric by name still scaffolds it.
    code, out, _ = run_cli(capsys, "init", "--name", "support", "--action", PINNED)
    assert code == 0 and "created rubrics/support.yaml" in out and "rubrics/support.yaml" in out.split("Next steps:")[1]


def test_init_fits_an_80_column_terminal_and_says_the_same_in_a_pipe(
        empty_repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    outputs = {}
    for columns in ("80", ""):
        shutil.rmtree(empty_repo / "rubrics", ignore_errors=True)
        shutil.rmtree(empty_repo / "calibration", ignore_errors=True)
        shutil.rmtree(empty_repo / ".github", ignore_errors=True)
        monkeypatch.setenv("COLUMNS", columns)
        first = run_cli(capsys, "init", "--name", "qa")
        second = run_cli(capsys, "init", "--action", PINNED)
        assert first[0] == second[0] == 0
        outputs[columns] = first[1] + second[1]
    wrapped, whole = outputs["80"], outputs[""]
    assert max(len(line) for line in wrapped.splitlines()) <= 80
    assert max(len(line) for line in whole.splitlines()) > 80  # a pipe keeps whole lines, for grep
    assert " ".join(wrapped.split()) == " ".join(whole.split())  # wrapped, not cut


def test_init_action_keeps_crlf_line_endings(empty_repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_cli(capsys, "init")
    workflow = empty_repo / ".github/workflows/rubric-gate.yml"
    workflow.write_bytes(workflow.read_bytes().replace(b"\n", b"\r\n"))
    assert run_cli(capsys, "init", "--action", PINNED)[0] == 0
    data = workflow.read_bytes()
    assert data.count(b"\r\n") == data.count(b"\n") and f"uses: {PINNED}\r\n".encode() in data


@pytest.mark.parametrize(("edit", "line_named"), [
    (lambda text: text.replace("uses: OWNER/rubric-gate@v1", "uses: ./"), True),  # runs the checkout's own action
    (lambda text: text.replace("uses: OWNER/rubric-gate@v1", "uses: >-\n          OWNER/rubric-gate@v1"),
     False),  # a folded scalar: YAML reads the value, no line holds it
    (lambda text: text.replace("OWNER/rubric-gate@v1", "acme/gatekeeper@v1"), False),  # not a rubric-gate step
])
def test_init_action_refuses_a_line_it_cannot_tell_naming_the_line_and_changing_nothing(
        empty_repo: Path, capsys: pytest.CaptureFixture[str], edit, line_named: bool) -> None:
    run_cli(capsys, "init")
    workflow = empty_repo / ".github/workflows/rubric-gate.yml"
    workflow.write_text(edit(workflow.read_text()))
    before = sorted((p, p.read_bytes()) for p in empty_repo.rglob("*") if p.is_file() and ".git" not in p.parts)
    code, _, err = run_cli(capsys, "init", "--name", "other", "--action", PINNED)
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert f"uses: {PINNED}" in err and "init changed nothing" in err
    line = next(i + 1 for i, text in enumerate(workflow.read_text().splitlines()) if "uses: ./" in text) \
        if line_named else None
    assert (f".github/workflows/rubric-gate.yml:{line}:" in err) if line_named else ".github/workflows/rubric-gate.yml:" in err
    # Refused before anything was written: not even the new rubric of --name other.
    assert sorted((p, p.read_bytes()) for p in empty_repo.rglob("*") if p.is_file() and ".git" not in p.parts) == before


@pytest.mark.parametrize("action", ["acme", "acme/rubric-gate", "acme/rubric-gate@", "acme/rubric gate@v1",
                                    "acme/rubric-gate@v1 # v1", "./",
                                    "acme/rubric-gate@v1\n"])  # a trailing newline would break the `uses:` line
def test_init_refuses_an_action_that_is_not_owner_repo_at_ref(empty_repo: Path, capsys: pytest.CaptureFixture[str],
                                                              action: str) -> None:
    code, _, err = run_cli(capsys, "init", "--action", action)
    assert code == 2 and "--action" in err and "OWNER/REPO@REF" in err
    assert not (empty_repo / ".github").exists()


def test_init_drift_writes_the_weekly_drift_workflow(empty_repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    drift = ".github/workflows/rubric-gate-drift.yml"
    code, out, _ = run_cli(capsys, "init", "--action", "acme/rubric-gate@v3", "--drift")
    assert code == 0 and f"created {drift}" in out
    workflow = yaml.safe_load((empty_repo / drift).read_text())
    steps = workflow["jobs"]["drift"]["steps"]
    assert "git+https://github.com/acme/rubric-gate@v3" in steps[2]["run"]
    assert "rubric-gate drift rubrics/**/*.y*ml --sample 200" in steps[3]["run"]
    assert workflow[True]["schedule"] == [{"cron": "23 5 * * 1"}]  # weekly
    assert "asks each rubric's `judge` again every week" in out
    shutil.rmtree(empty_repo / ".github")
    code, out, _ = run_cli(capsys, "init")  # without --drift: no drift workflow
    assert code == 0 and not (empty_repo / drift).exists() and "drift" not in out


def test_init_action_points_the_drift_workflow_it_wrote_at_your_copy_too(empty_repo: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    run_cli(capsys, "init", "--drift")
    drift = empty_repo / ".github/workflows/rubric-gate-drift.yml"
    before = drift.read_text().splitlines()
    code, out, _ = run_cli(capsys, "init", "--action", PINNED)
    assert code == 0, out
    after = drift.read_text().splitlines()
    changed = [(a, b) for a, b in zip(before, after, strict=True) if a != b]
    repository, _, ref = PINNED.partition("@")
    assert changed == [(before[i], before[i].replace("git+https://github.com/OWNER/rubric-gate@v1",
                                                     f"git+https://github.com/{repository}@{ref}"))
                       for i, line in enumerate(before) if "OWNER/rubric-gate@v1" in line]
    assert len(changed) == 1 and "updated .github/workflows/rubric-gate-drift.yml:" in out
