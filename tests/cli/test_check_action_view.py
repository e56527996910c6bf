"""`check --base REF:PATH` gates the working tree trusting it, and says in one line whether
`preview` and the action would decide otherwise, and why: they weigh the verdicts the branch
records for new check text as the PR's own until a writer approves the PR's head."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from tests.support.project import BASE_YAML, FAILED_BY, TEXTS, Project

UNFROZEN = BASE_YAML.replace("    origin: label\n    source: [R1]\n", "")  # A alone catches R1
NEW = "The output satisfies requirement A, stated in full."


def _on_main(project: Project, text: str) -> None:
    project.write("rubrics/demo.yaml", text)
    project.git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "A is hand-written")


def _reword_a(project: Project, answers_like_a: bool = True) -> None:
    """Reword A in the working tree and record the new text's verdicts (by hand, as README says)."""
    project.write("rubrics/demo.yaml", UNFROZEN.replace(TEXTS["A"], NEW))
    lines = "".join(json.dumps({"item": i, "check_text": NEW, "answer": "no" if "A" in failed and answers_like_a
                                else "yes"}) + "\n" for i, failed in FAILED_BY.items())
    verdicts = project.root / "calibration/demo.verdicts.jsonl"
    verdicts.write_text(verdicts.read_text() + lines)


def _check(project: Project, *args: str):
    return project.run("check", "--base", "HEAD:rubrics/demo.yaml", "--head", "rubrics/demo.yaml", *args)


def test_check_passes_a_sound_rewording_and_says_the_action_holds_it_until_approved(project: Project) -> None:
    _on_main(project, UNFROZEN)
    _reword_a(project)
    proc = _check(project)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = [line for line in proc.stderr.splitlines() if "preview and the action" in line]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("rubric-gate: preview and the action decide FAIL here, not PASS, until someone with "
                               "write access approves the PR's head: the 5 verdicts the branch records for A")
    assert lines[0].endswith("(held: modified A)")
    data = json.loads(_check(project, "--format", "json").stdout)  # one object, the view in it
    assert data["decision"] == "pass" and data["action_view"]["decision"] == "fail" and data["action_view"]["differs"]


def test_check_and_the_action_agree_and_check_says_so(project: Project) -> None:
    _on_main(project, UNFROZEN)
    _reword_a(project, answers_like_a=False)  # the new text catches nothing: rejected on any evidence
    proc = _check(project)
    assert proc.returncode == 1
    assert "rubric-gate: preview and the action decide as check does here (FAIL), though the 5 verdicts" in proc.stderr
    project.git("checkout", "-q", "--", ".")
    project.write("rubrics/demo.yaml", UNFROZEN.replace("  - id: C\n    text: The output satisfies requirement C.\n", ""))
    proc = _check(project)
    assert proc.returncode == 0 and "decide as check does here: this edit rests on no verdict the branch records " \
                                   "since HEAD" in proc.stderr, proc.stderr


def test_check_on_two_files_says_nothing_of_the_action(project: Project) -> None:
    _reword_a(project)
    project.write("base.yaml", UNFROZEN)
    proc = project.run("check", "--base", "base.yaml", "--head", "rubrics/demo.yaml")
    assert "preview and the action" not in proc.stderr


def _commit_on_a_branch(project: Project) -> None:
    project.git("checkout", "-q", "-b", "edit")
    project.git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "the edit")


def _without_a() -> str:
    return UNFROZEN.replace("  - id: A\n    text: The output satisfies requirement A.\n", "")


def _relabel_r1(project: Project) -> None:
    calibration = project.root / "calibration/demo.jsonl"
    calibration.write_text(calibration.read_text().replace('"label": "fail"', '"label": "pass"', 1))


def _b_catches_r1(project: Project) -> None:
    verdicts = project.root / "calibration/demo.verdicts.jsonl"
    line = json.dumps({"item": "R1", "check_text": TEXTS["B"], "answer": "yes"})
    assert line in verdicts.read_text()
    verdicts.write_text(verdicts.read_text().replace(line, line.replace('"yes"', '"no"')))


@pytest.mark.parametrize(("change", "why"), [
    (_relabel_r1, "the branch relabels 1 labeled item (R1), which needs the override label"),
    (_b_catches_r1, "the branch changes 1 recorded answer of the base's record (B on R1), which needs the override"),
])
def test_check_never_says_the_action_agrees_when_the_branch_changes_the_record_it_gates_on(
        project: Project, change: Callable[[Project], None], why: str) -> None:
    """`check` reads the working tree's labels and record as the truth; the action gates on the
    base's, where changing them needs the override (no approval covers it). Deleting A (R1's only
    catch) passes `check` once R1 is relabeled "pass" or B's record claims R1 too: its line must
    say the action fails the edit, and why, and preview must indeed fail it."""
    _on_main(project, UNFROZEN)
    project.write("rubrics/demo.yaml", _without_a())
    change(project)
    proc = _check(project)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = [line for line in proc.stderr.splitlines() if "preview and the action" in line]
    assert len(lines) == 1 and "decide FAIL here, not PASS" in lines[0], proc.stderr
    assert why in lines[0], lines[0]
    _commit_on_a_branch(project)
    preview = project.run("preview", "--base", "main")
    assert preview.returncode == 1, preview.stdout + preview.stderr  # what check said preview decides


def test_the_line_about_the_action_fits_an_80_column_terminal_and_stays_whole_in_a_log(
        project: Project, monkeypatch) -> None:
    _on_main(project, UNFROZEN)
    _reword_a(project)
    whole = [line for line in _check(project).stderr.splitlines() if "preview and the action" in line]
    assert len(whole) == 1 and len(whole[0]) > 80  # a log (no terminal) keeps the line whole, for grep
    monkeypatch.setenv("COLUMNS", "80")
    stderr = _check(project).stderr.splitlines()
    start = next(i for i, line in enumerate(stderr) if "preview and the action" in line)
    end = next(i for i in range(start + 1, len(stderr) + 1) if i == len(stderr) or not stderr[i].startswith("  "))
    wrapped = stderr[start:end]
    assert len(wrapped) > 1 and max(len(line) for line in wrapped) <= 80
    assert " ".join(" ".join(wrapped).split()) == whole[0]  # wrapped at spaces, nothing cut
