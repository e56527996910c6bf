"""The reliability parts of check and change rows: None when not measured, and the JSON keys
the reports have always had (a figure measured as undefined stays null, not absent)."""

from __future__ import annotations

import json

from rubric_gate.results import (
    ChangeReliability,
    CheckReliability,
    CheckRow,
    JudgeAgreement,
    ParaphraseStability,
    SampleStability,
)

ALL_MEASURED = CheckReliability(SampleStability(0.25, ("i1",)), JudgeAgreement(None, ("i2", "i3")),
                                ParaphraseStability(0.5, 0.1, ("reworded",)))


def test_check_reliability_json_keeps_the_flat_keys_in_order() -> None:
    assert list(ALL_MEASURED.to_dict().items()) == [
        ("flip_rate", 0.25), ("unstable_items", ["i1"]), ("alpha", None), ("tied_items", ["i2", "i3"]),
        ("paraphrase_agreement", 0.5), ("paraphrase_kappa", 0.1), ("paraphrase_phi", None),
        ("paraphrases", ["reworded"]),
    ]
    assert CheckReliability().to_dict() == {}
    assert CheckReliability(judges=JudgeAgreement(0.8, ())).to_dict() == {"alpha": 0.8, "tied_items": []}


def test_measured_figures_are_those_of_the_parts_measured() -> None:
    # the table's paraphrase figure is the chance-corrected one (rule U's), not raw agreement
    assert ALL_MEASURED.measured() == {"alpha": None, "flip_rate": 0.25, "paraphrase_kappa": 0.1}
    assert CheckReliability(samples=SampleStability(None, ())).measured() == {"flip_rate": None}
    assert CheckReliability().measured() == {}


def test_a_check_row_carries_its_reliability_before_its_text() -> None:
    row = CheckRow("a", "Is it?", "hand", False, 1.0, 0.0, 1, 0, 1, reliability=ALL_MEASURED)
    keys = list(row.to_dict())
    assert keys[-1] == "text" and keys[keys.index("coverage") + 1] == "flip_rate"
    assert "flip_rate" not in CheckRow("a", "Is it?", "hand", False, 1.0, 0.0, 1, 0, 1).to_dict()


def test_change_reliability_json_and_dissent() -> None:
    shaky = ChangeReliability(("i1",), ("i2",), {"judge-a": True, "judge-b": False})
    assert shaky.to_dict() == {"unstable": True, "unstable_items": ["i1"], "tied_items": ["i2"],
                               "by_judge": {"judge-a": "accepted", "judge-b": "rejected"}}
    assert shaky.dissenting_judges(accepted=True) == ["judge-b"]
    assert shaky.dissenting_judges(accepted=False) == ["judge-a"]
    samples_only = ChangeReliability(unstable_items=())
    assert samples_only.to_dict() == {"unstable": False, "unstable_items": []}
    assert not samples_only.unstable and samples_only.dissenting_judges(True) == []
    assert json.loads(json.dumps(shaky.to_dict())) == shaky.to_dict()  # plain JSON types only
