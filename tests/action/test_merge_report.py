"""report.json lists every difference the run classified, with its kind, file and rule: the
allowed ones the comment does not show (a pure rename, a version bump, items added) and the
merge's findings too, so a reviewer's tooling reads each of them. It validates against
schema/report.schema.json, as an older report.json (no `differences`) still does."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from tests.action.harness import (
    CALIBRATION,
    LABELS,
    RUBRIC,
    VERDICTS,
    Scenario,
    calibration_jsonl,
    criss_cross,
    rubric_yaml,
    run_with_reader,
    verdict_line,
)

ROOT = Path(__file__).resolve().parents[2]
RENAMED = "rubrics/renamed.yaml"


def _validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(json.loads((ROOT / "schema" / "report.schema.json").read_text()))


def test_allowed_differences_are_in_the_report_with_kind_file_and_rule(scenario: Scenario) -> None:
    scenario.git("mv", RUBRIC, RENAMED)
    items = calibration_jsonl({**LABELS, "R6": "pass"})
    lines = "".join(verdict_line(check, "R6", "yes") for check in ("A", "B", "C", "D"))
    base_record = scenario.git("show", f"{scenario.base_sha}:{VERDICTS}") + "\n"
    head = scenario.git.commit({RENAMED: rubric_yaml(["A", "B", "C", "D"]).replace("version: 1", "version: 2"),
                                CALIBRATION: items, VERDICTS: base_record + lines},
                               "rename; version 2; R6 labeled with its verdicts")
    result = run_with_reader(scenario, head, "git")
    assert result.code == 0, result.stdout + result.stderr
    report = result.report()
    differences = {(d["kind"], d["file"]): d for d in report["differences"]}
    moved = differences["rubric.moved", RENAMED]
    assert moved["rule"] == "allowed" and moved["message"] is None and not moved["needs_override"], moved
    assert differences["rubric.version", RENAMED]["rule"] == "allowed"
    added = differences["labels.added", CALIBRATION]
    assert added["rule"] == "allowed" and added["used_by"] == [RUBRIC] and "R6" in added["message"], added
    assert not any(d["needs_override"] for d in report["differences"]), report["differences"]
    assert not list(_validator().iter_errors(report)), list(_validator().iter_errors(report))


def test_merge_findings_are_in_the_report_with_kind_file_and_rule(scenario: Scenario) -> None:
    head = criss_cross(scenario)
    report = run_with_reader(scenario, head, "rest").report()
    (finding,) = [f for f in report["standard"] if f.get("kind")]
    assert (finding["kind"], finding["file"], finding["rule"], finding["blocking"]) == \
        ("merge.differs", RUBRIC, "override", True), finding
    (listed,) = [d for d in report["differences"] if d["kind"].startswith("merge.")]
    assert listed == {"kind": "merge.differs", "file": RUBRIC, "used_by": [], "rule": "override",
                      "message": finding["message"], "count": 1, "needs_override": True}
    assert not list(_validator().iter_errors(report))


def test_the_schema_accepts_an_older_report_and_refuses_a_wrong_one(scenario: Scenario) -> None:
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    report = run_with_reader(scenario, head, "git").report()
    validator = _validator()
    assert not list(validator.iter_errors(report))
    older = {k: v for k, v in report.items() if k != "differences"}  # as written before `differences`
    assert not list(validator.iter_errors(older))
    assert list(validator.iter_errors({**report, "decision": "green"}))
    assert list(validator.iter_errors({**report, "differences": [{"kind": "labels.added", "file": "x"}]}))
    assert list(validator.iter_errors({**report, "standard": [{"file": "x", "used_by": [], "message": "m",
                                                               "blocking": True, "rule": "maybe"}]}))
