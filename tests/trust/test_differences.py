"""Every kind of difference between the trusted and the proposed snapshot has a rule, and one
that has none needs the override (fail closed)."""

from __future__ import annotations

import pytest

from rubric_gate.action.gating.standard import findings_of
from rubric_gate.calibration.model import CalibrationItem
from rubric_gate.rubric import Rubric
from rubric_gate.trust.differences import (
    RULES,
    Difference,
    Kind,
    Rule,
    item_field,
    rubric_key,
    rule_of,
    verdict_field,
)
from rubric_gate.verdicts import Verdict

# Every name the table may hold: the kinds (rubric keys among them) and the models' fields.
NAMES = {*Kind, *(rubric_key(k) for k in Rubric.model_fields), *(item_field(f) for f in CalibrationItem.model_fields),
         *(verdict_field(f) for f in Verdict.model_fields)}


def test_every_kind_of_difference_has_a_rule() -> None:
    missing = [kind.value for kind in Kind if kind not in RULES]
    assert missing == [], f"difference kinds with no rule: {missing}"
    assert all(isinstance(rule, Rule) for rule in RULES.values())


def test_every_rubric_key_calibration_field_and_verdict_field_has_a_rule() -> None:
    assert [k for k in Rubric.model_fields if rule_of(rubric_key(k)) is Rule.UNCLASSIFIED] == []
    assert [f for f in CalibrationItem.model_fields if rule_of(item_field(f)) is Rule.UNCLASSIFIED] == []
    assert [f for f in Verdict.model_fields if rule_of(verdict_field(f)) is Rule.UNCLASSIFIED] == []


def test_the_table_names_nothing_else() -> None:
    """No rule for a key or field the formats no longer have (kinds: `test_classified_diff`)."""
    assert sorted(set(RULES) - NAMES) == []


def test_each_rubric_key_is_its_own_kind() -> None:
    assert {rubric_key(k) for k in Rubric.model_fields} <= set(Kind)


def test_a_kind_no_rule_names_is_unclassified_and_needs_the_override() -> None:
    assert rule_of("rubric.colour") == "unclassified"
    assert rule_of(Kind.ANSWER_CHANGED, {}) == "unclassified"
    difference = Difference("verdicts.something_new", "v.jsonl", ("r.yaml",))
    assert difference.rule == "unclassified" and difference.needs_override
    (finding,) = findings_of([difference])
    assert finding.blocking and "verdicts.something_new" in finding.message and "no rule" in finding.message


@pytest.mark.parametrize("kind", list(Kind))
def test_each_rule_decides_whether_a_difference_blocks(kind: Kind) -> None:
    difference = Difference(kind, "f", ("r.yaml",), "what it does")
    findings = findings_of([difference])
    assert [f.blocking for f in findings] == [RULES[kind] in (Rule.OVERRIDE, Rule.UNCLASSIFIED)]


def test_the_label_differences_of_one_file_are_one_finding_blocking_if_any_blocks() -> None:
    found = findings_of([Difference(Kind.LABELS_ADDED, "c.jsonl", ("r",), "added 1: R9 (pass)"),
                         Difference(Kind.LABELS_RELABELED, "c.jsonl", ("r",), "relabeled 1: R1 (fail -> pass)"),
                         Difference(Kind.LABELS_ADDED, "d.jsonl", ("s",), "added 2: X, Y")])
    assert [(f.path, f.message, f.blocking) for f in found] == [
        ("c.jsonl", "added 1: R9 (pass); relabeled 1: R1 (fail -> pass)", True), ("d.jsonl", "added 2: X, Y", False)]


def test_differences_the_gate_decides_are_recorded_not_shown() -> None:
    assert findings_of([Difference(Kind.ANSWER_FOR_NEW_CHECK, "v", ("r",)), Difference(Kind.RUBRIC_ADDED, "r", ("r",)),
                        Difference(rubric_key("checks"), "r", ("r",))]) == []
