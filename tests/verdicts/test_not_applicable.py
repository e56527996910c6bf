"""`answer: "n/a"`: a first-class verdict that never fails an item and carries no blame or credit."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import krippendorff
import numpy as np
import pytest

from rubric_gate.calibration import CalibrationItem
from rubric_gate.judges.parse import parse_answer, parse_checklist
from rubric_gate.llm.errors import MalformedReply
from rubric_gate.reliability import nominal_alpha
from rubric_gate.verdicts import Verdict, VerdictStore, verdict_column
from rubric_gate.verdicts.table_data import NO, NOT_APPLICABLE, YES
from tests.fakes.llm import FakeLLM
from tests.judges.conftest import make_items, write_project
from tests.judges.test_cli import JUDGE, cli
from tests.support.project import TEXTS, Project

CITES = "Only when the output cites a source, the source is named in full."


def _items(*ids: str) -> list[CalibrationItem]:
    return [CalibrationItem(id=i, input="q", output=i, label="pass") for i in ids]


def test_store_reads_n_a_on_the_fast_and_the_exact_path(tmp_path: Path) -> None:
    path = tmp_path / "v.jsonl"
    lines = [
        {"item": "a", "check_text": "c", "answer": "yes"},
        {"item": "b", "check_text": "c", "answer": "no"},
        {"item": "c", "check_text": "c", "answer": "n/a"},
        {"item": "d", "check_text": "c", "answer": "n/a", "quote": None},  # a null: the exact (pydantic) path
    ]
    path.write_text("".join(json.dumps(v) + "\n" for v in lines))
    store = VerdictStore.load(path)
    codes, missing = store.answer_codes("c", _items("a", "b", "c", "d", "e"))
    assert codes[:4].tolist() == [YES, NO, NOT_APPLICABLE, NOT_APPLICABLE] and missing.tolist() == [0, 0, 0, 0, 1]
    column = verdict_column("c", _items("a", "b", "c", "d"), store)
    assert column.failed.tolist() == [False, True, False, False]  # n/a never fails
    assert column.not_applicable.tolist() == [False, False, True, True] and column.complete
    assert store.find("c", _items("c")[0]).answer == "n/a"
    assert Verdict(item="x", check_text="c", answer="n/a").not_applicable


def test_judge_replies_parse_n_a_and_nothing_looser() -> None:
    assert parse_answer('{"answer": "N/A", "quote": ""}').answer == "n/a"
    assert parse_checklist('{"answers": [{"id": "1", "answer": "n/a", "quote": ""}]}', ["1"])["1"].answer == "n/a"
    for loose in ("na", "not applicable", "n.a."):
        with pytest.raises(MalformedReply):
            parse_answer(json.dumps({"answer": loose, "quote": ""}))


def test_alpha_treats_n_a_as_missing() -> None:
    answers = np.array([[1, 0, 1, 1, 0], [1, 0, 0, 1, 1], [1, 1, 1, 1, 0]], dtype=bool)
    na = np.zeros_like(answers)
    na[1, 4] = na[2, 1] = True
    data = answers.astype(float)
    data[na] = np.nan
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    assert nominal_alpha(answers, na) == pytest.approx(expected)
    assert nominal_alpha(answers, na) != pytest.approx(nominal_alpha(answers))


def _na_project(project: Project) -> Project:
    """Check E answers n/a on every correct item (R4, R5) and on R1; no on nothing."""
    with (project.root / "calibration/demo.verdicts.jsonl").open("a") as f:
        for item in ("R1", "R4", "R5"):
            f.write(json.dumps({"item": item, "check_text": TEXTS["E"], "answer": "n/a"}) + "\n")
    return project


def test_attribute_check_and_lint_with_n_a(project: Project) -> None:
    _na_project(project)
    head = (project.root / "rubrics/demo.yaml").read_text() + "  - id: E\n    text: The output satisfies requirement E.\n"
    project.write("rubrics/demo.yaml", head)
    data = json.loads(project.run("attribute", "rubrics/demo.yaml", "--format", "json").stdout)
    rows = {r["id"]: r for r in data["checks"]}
    assert rows["E"]["not_applicable"] == 3 and rows["E"]["coverage"] == 0.4
    assert rows["E"]["blame"] == 0 and rows["E"]["credit"] == 0 and rows["E"]["fails_correct"] == 0
    assert rows["A"]["not_applicable"] == 0 and rows["A"]["coverage"] == 1.0
    # The base rubric's rates, unchanged: n/a on R4 adds no fail (R4 was failed by D alone).
    assert data["rates"]["correct_passed"]["count"] == 1
    proc = project.run("check", "--base", "HEAD:rubrics/demo.yaml", "--head", "rubrics/demo.yaml", "--format", "json")
    assert proc.returncode == 0, proc.stdout
    report = json.loads(proc.stdout)
    assert report["changes"][0]["check"] == "E" and report["changes"][0]["decision"] == "accepted"
    lint = project.run("lint", "rubrics/demo.yaml")
    assert lint.returncode == 0 and "no recorded verdict" not in lint.stdout + lint.stderr


def test_lint_warns_about_a_check_that_applies_to_no_item(project: Project) -> None:
    with (project.root / "calibration/demo.verdicts.jsonl").open("a") as f:
        for item in ("R1", "R2", "R3", "R4", "R5"):
            f.write(json.dumps({"item": item, "check_text": TEXTS["E"], "answer": "n/a"}) + "\n")
    head = (project.root / "rubrics/demo.yaml").read_text() + "  - id: E\n    text: The output satisfies requirement E.\n"
    project.write("rubrics/demo.yaml", head)
    lint = project.run("lint", "rubrics/demo.yaml")
    assert "check 'E': answered n/a on all 5 items" in lint.stdout + lint.stderr


def test_the_verdict_index_keeps_n_a(project: Project, tmp_path: Path) -> None:
    _na_project(project)
    env_run = [sys.executable, "-m", "rubric_gate", "attribute", "rubrics/demo.yaml", "--format", "json"]
    head = (project.root / "rubrics/demo.yaml").read_text() + "  - id: E\n    text: The output satisfies requirement E.\n"
    project.write("rubrics/demo.yaml", head)
    time.sleep(1.1)  # past the index's racy window: the second run replays from the index
    outs = [subprocess.run(env_run, cwd=project.root, capture_output=True, text=True, check=True).stdout
            for _ in range(2)]  # the second run reads the index the first one wrote
    assert outs[0] == outs[1]
    assert {r["id"]: r["not_applicable"] for r in json.loads(outs[1])["checks"]}["E"] == 3


def test_live_judge_answers_n_a_when_the_check_says_when_it_applies(fake: FakeLLM, tmp_path: Path) -> None:
    from rubric_gate.rubric import Check, Rubric

    rubric = Rubric(id="fruit", version=1, task="List fruit.", calibration="cal.jsonl", verdicts="verdicts.jsonl",
                    checks=[Check(id="k0", text="Only when the output mentions pear, it mentions apple")])
    write_project(tmp_path, rubric, make_items())
    proc = cli(tmp_path, "judge", "--rubric", "rubric.yaml", "--verdicts", "verdicts.jsonl", "--root", ".",
               "--judge", JUDGE)
    assert proc.returncode == 0, proc.stderr
    answers = {v["item"]: v["answer"] for v in map(json.loads, (tmp_path / "verdicts.jsonl").read_text().splitlines())}
    # Items r2, r3, r6, r7 mention pear (bit 1); the others do not, so the check does not apply.
    assert {i for i, a in answers.items() if a == "n/a"} == {"r0", "r1", "r4", "r5"}
    assert answers["r3"] == "yes" and answers["r2"] == "no"
    data = json.loads(cli(tmp_path, "attribute", "rubric.yaml", "--root", ".", "--format", "json").stdout)
    assert data["checks"][0]["not_applicable"] == 4 and data["checks"][0]["coverage"] == 0.5
