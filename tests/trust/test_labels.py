"""Every field of a calibration item is classified; a field no rule names fails closed."""

from __future__ import annotations

from rubric_gate.calibration.model import CalibrationItem
from rubric_gate.trust import diff_labels
from rubric_gate.trust.labels import ITEM_FIELD_RULES


def _item(**fields: object) -> CalibrationItem:
    return CalibrationItem.model_validate({"id": "R1", "input": "in", "output": "out", "label": "fail", **fields})


def test_every_item_field_has_a_rule() -> None:
    assert set(ITEM_FIELD_RULES) == set(CalibrationItem.model_fields)  # a field the format gains needs one here


def test_notes_are_recorded_and_the_standard_needs_the_override() -> None:
    assert not diff_labels([_item()], [_item(meta={"source": "x"}, flaw="omission")]).blocking
    assert diff_labels([_item()], [_item(meta={"source": "x"})]).edited == ["R1"]
    assert diff_labels([_item()], [_item(label="pass")]).blocking
    assert diff_labels([_item()], [_item(output="other")]).blocking
    assert diff_labels([_item()], [_item(split="evaluation")]).blocking
    assert not diff_labels([_item(split="evaluation")], [_item()]).blocking  # joins the gate's items: an addition


def test_a_field_no_rule_classifies_needs_the_override() -> None:
    rules = {k: v for k, v in ITEM_FIELD_RULES.items() if k != "meta"}  # as if `meta` were new to the format
    diff = diff_labels([_item()], [_item(meta={"source": "x"})], rules=rules)
    assert diff.blocking and diff.unclassified == [("R1", ("meta",))]
    assert any("no rule of the gate classifies in 1" in part and "R1 (meta)" in part for part in diff.describe())
