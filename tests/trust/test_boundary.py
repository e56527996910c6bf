"""The trust boundary's pure parts: a PR's check changes onto the base tip, untrusted evidence."""

from __future__ import annotations

from rubric_gate.rubric import Rubric
from rubric_gate.trust import (
    apply_check_changes,
    catches_withheld,
    usable_pr_verdicts,
)
from rubric_gate.verdicts import Verdict
from tests.support.values import rubric as _rubric


def test_the_prs_changes_land_on_the_tip_and_mains_stay() -> None:
    merge_base = _rubric({"A": "a", "A3": "a3", "B": "b"})
    head = _rubric({"A": "a", "B": "b edited", "N": "new"}, task="t2")  # deletes A3, edits B, adds N
    tip = _rubric({"A3": "a3", "B": "b", "M": "main's"})  # main deleted A, added M
    merged = apply_check_changes(merge_base, head, tip)
    assert [(c.id, c.text) for c in merged.checks] == [("B", "b edited"), ("M", "main's"), ("N", "new")]
    assert merged.task == "t2" and merged.calibration == "c.jsonl"


def test_an_edit_of_a_check_main_deleted_comes_back_with_the_merge() -> None:
    merged = apply_check_changes(_rubric({"A": "a", "B": "b"}), _rubric({"A": "a2", "B": "b"}), _rubric({"B": "b"}))
    assert [c.id for c in merged.checks] == ["B", "A"]


def test_pr_verdicts_for_the_base_checks_are_never_used_and_withheld_catches_are_yes() -> None:
    fills = [Verdict(item="R1", check_text="a", answer="yes"), Verdict(item="R1", check_text="x", answer="no")]
    usable, ignored = usable_pr_verdicts(fills, _rubric({"A": "a"}))
    assert [v.check_text for v in usable] == ["x"] and [v.check_text for v in ignored] == ["a"]
    assert [v.answer for v in catches_withheld(usable)] == ["yes"]


def test_every_rubric_key_difference_is_classified_and_unknown_ones_fail_closed() -> None:
    from rubric_gate.trust import classify_rubric_changes
    from rubric_gate.trust.differences import RULES, Rule, rubric_key, rule_of

    base = _rubric({"A": "a"})
    head = _rubric({"A": "a", "B": "b"}, task="t  ", calibration="./c.jsonl", verdicts="w.jsonl", version="2")
    rules = {d.key: d.rule for d in classify_rubric_changes(base, head)}
    assert rules == {"version": "allowed", "verdicts": "override", "checks": "gate"}  # task reflowed, same path
    # a key the format gains needs a rule here
    assert [k for k in Rubric.model_fields if rule_of(rubric_key(k)) is Rule.UNCLASSIFIED] == []
    unknown = classify_rubric_changes(base, head, rules={k: v for k, v in RULES.items() if k != rubric_key("verdicts")})
    assert [d.needs_override for d in unknown if d.key == "verdicts"] == [True]
