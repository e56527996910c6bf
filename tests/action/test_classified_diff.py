"""The classified diff fails closed end to end: a difference whose kind has no rule, or a
verdict field no rule names, needs the override (`rubric-gate action`, fake GitHub, real git)."""

from __future__ import annotations

import json
from unittest import mock

from rubric_gate.trust.differences import DIFFERENCE_RULES, VERDICT_FIELD_RULES, Kind
from tests.action.harness import (
    CALIBRATION,
    LABELS,
    TEXTS,
    VERDICTS,
    Scenario,
    calibration_jsonl,
    verdicts_jsonl,
)


def _blocking(result) -> list[str]:  # type: ignore[no-untyped-def]
    return [f["message"] for f in result.report()["standard"] if f["blocking"]]


def test_an_allowed_difference_passes_and_the_same_one_without_a_rule_blocks(scenario: Scenario) -> None:
    head = scenario.git.commit({CALIBRATION: calibration_jsonl({**LABELS, "R6": "pass"})}, "add R6")
    allowed = scenario.run(head)
    assert allowed.code == 0 and _blocking(allowed) == [], allowed.stdout + allowed.stderr
    with mock.patch.dict(DIFFERENCE_RULES):
        del DIFFERENCE_RULES[Kind.LABELS_ADDED]  # a kind nobody gave a rule
        unruled = scenario.run(head)
    assert unruled.code == 1, unruled.stdout + unruled.stderr
    assert _blocking(unruled) == ["added 1: R6 (pass)"]


def test_a_verdict_field_no_rule_names_needs_the_override(scenario: Scenario) -> None:
    lines = verdicts_jsonl(TEXTS).splitlines(keepends=True)
    quoted = json.loads(lines[0])
    lines[0] = json.dumps({**quoted, "quote": "the design encrypts nothing"}) + "\n"
    head = scenario.git.commit({VERDICTS: "".join(lines)}, "a quote on one recorded verdict")
    noted = scenario.run(head)
    assert noted.code == 0 and _blocking(noted) == [], noted.stdout + noted.stderr  # `quote` is a note
    with mock.patch.dict(VERDICT_FIELD_RULES):
        del VERDICT_FIELD_RULES["quote"]  # as a field the format gains later would be
        unruled = scenario.run(head)
    assert unruled.code == 1, unruled.stdout + unruled.stderr
    (message,) = _blocking(unruled)
    assert "quote" in message and "no rule" in message
