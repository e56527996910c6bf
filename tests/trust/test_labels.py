"""Every field of a calibration item is classified; a field no rule names fails closed."""

from __future__ import annotations

import pytest

from rubric_gate.calibration.model import CalibrationItem
from rubric_gate.trust import diff_labels
from rubric_gate.trust.differences import RULES, item_field, rule_of


def _item(**fields: object) -> CalibrationItem:
    return CalibrationItem.model_validate({"id": "R1", "input": "in", "output": "out", "label": "fail", **fields})


def test_every_item_field_has_a_rule() -> None:
    # a field the format gains needs one here
    assert {n for n in RULES if n.startswith("item.")} == {item_field(f) for f in CalibrationItem.model_fields}


# Each field changed alone, from the item as `_item()` makes it.
CHANGED = {"id": "R9", "label": "pass", "input": "other", "output": "other", "split": "evaluation", "flaw": "omission",
           "meta": {"source": "x"}}


@pytest.mark.parametrize("name", list(CalibrationItem.model_fields))
def test_each_fields_rule_is_what_a_change_of_it_alone_does(name: str) -> None:
    diff = diff_labels([_item()], [_item(**{name: CHANGED[name]})])
    assert diff.blocking == rule_of(item_field(name)).needs_override
    assert diff.unclassified == []


def test_notes_are_recorded_and_the_standard_needs_the_override() -> None:
    assert not diff_labels([_item()], [_item(meta={"source": "x"}, flaw="omission")]).blocking
    assert diff_labels([_item()], [_item(meta={"source": "x"})]).edited == ["R1"]
    assert diff_labels([_item()], [_item(label="pass")]).blocking
    assert diff_labels([_item()], [_item(output="other")]).blocking
    assert diff_labels([_item()], [_item(split="evaluation")]).blocking
    assert not diff_labels([_item(split="evaluation")], [_item()]).blocking  # joins the gate's items: an addition


def test_a_field_no_rule_classifies_needs_the_override() -> None:
    rules = {k: v for k, v in RULES.items() if k != item_field("meta")}  # as if `meta` were new to the format
    diff = diff_labels([_item()], [_item(meta={"source": "x"})], rules=rules)
    assert diff.blocking and diff.unclassified == [("R1", ("meta",))]
    assert any("no rule of the gate classifies in 1" in part and "R1 (meta)" in part for part in diff.describe())
