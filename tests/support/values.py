"""Small values several test modules build: a rubric from its checks, a check report with measured
reliability, a repair suggestion, and every property a JSON Schema declares. (A test module
imports helpers from here or its package's harness, never from another test module.)"""

from __future__ import annotations

from rubric_gate.attribution import Rate, Rates
from rubric_gate.gate.facts import DecidedFigures
from rubric_gate.repair import RepairSuggestion
from rubric_gate.results import (
    ChangeReliability,
    ChangeRow,
    CheckReliability,
    CheckReport,
    CheckRow,
    JudgeAgreement,
    RubricSummary,
    SampleStability,
)
from rubric_gate.rubric import Rubric

MEASURED = CheckReliability(SampleStability(0.25, ("i1",)), JudgeAgreement(0.5, ("i2",)))


def rubric(checks: dict[str, str], **keys: str) -> Rubric:
    """A rubric with these checks (id -> text) and the other keys given or made up."""
    data = {"id": "r", "version": "1", "task": "t", "calibration": "c.jsonl", "verdicts": "v.jsonl", **keys,
            "checks": [{"id": cid, "text": text} for cid, text in checks.items()]}
    return Rubric.model_validate(data)


def check_report(*, max_failures: int = 1, split: str = "calibration") -> CheckReport:
    """An edit of one check rejected for its blame, with samples and judges measured."""
    rates = Rates(Rate(1, 2), Rate(1, 2), Rate(0, 0), None)
    rows = [CheckRow("kept", "Is it kept?", "hand", False, 1.0, 0.0, 1, 0, 1, reliability=MEASURED),
            CheckRow("edited", "Is it edited?", "label", True, 0.5, 0.25, 0, 1, 1, reliability=MEASURED)]
    summary = RubricSummary("r", "2", "r.yaml", max_failures, rows, rates, [], split=split)
    shaky = ChangeReliability(("i1",), ("i2",), {"judge-a": True, "judge-b": False})
    change = ChangeRow("edited", "modified", ("origin",), False, "would add blame 0.25", ("S",),
                       reliability=shaky, decided=DecidedFigures(0.5, 0.25, 1))
    return CheckReport(summary, summary, summary, [change], "id: r\n", 4, split=split)


def repair_suggestion(text: str = "The output mentions plum", start: int = 10, end: int = 11) -> RepairSuggestion:
    """A rewrite of the added check `fresh` at lines `start`-`end` of rubrics/r.yaml."""
    row = CheckRow("fresh", text, "hand", False, 1.0, 0.0, 1, 0, 1)
    return RepairSuggestion("fresh", "added", "drop_unstated", "why @someone", [row],
                            f"  - id: fresh\n    text: {text}\n", "rubrics/r.yaml", start, end)


def schema_properties(schema: dict) -> list[tuple[str, dict]]:
    """Every (name, spec) property of a JSON Schema and of its definitions."""
    found = [(name, spec) for name, spec in schema.get("properties", {}).items()]
    for definition in schema.get("$defs", {}).values():
        found += schema_properties(definition)
    return found
