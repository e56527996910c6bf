"""`compare_judges` and rule J as pure functions of two judges' verdicts, against hand counts:
a paired drop in a rate, a catch that moves to another check (not lost), and the gate's other
decisions under each judge."""

from __future__ import annotations

import numpy as np
import pytest

from rubric_gate.calibration import CalibrationItem, CalibrationSet
from rubric_gate.comparison import compare_paired
from rubric_gate.gate import Violation, judge_rule
from rubric_gate.rejudge import compare_judges, lost_shared_catches, lost_unique_catches
from rubric_gate.rubric import Check, Rubric, RubricDocument
from rubric_gate.scoring import VerdictLookup
from rubric_gate.sources import SourceText
from rubric_gate.verdicts import Verdict, VerdictStore


def _set(labels: list[str]) -> CalibrationSet:
    return CalibrationSet([CalibrationItem(id=f"i{n}", input=n, output=f"out {n}", label=label)
                           for n, label in enumerate(labels)], "cal")


def _doc(*ids: str) -> RubricDocument:
    rubric = Rubric(id="r", version=1, task="t", calibration="c", verdicts="v",
                    checks=[Check(id=c, text=f"check {c}") for c in ids])
    return RubricDocument(rubric, SourceText("r.yaml", "", None))


def _lookup(items: CalibrationSet, doc: RubricDocument, failed: dict[str, list[bool]]) -> VerdictLookup:
    store = VerdictStore([Verdict(item=item, check_text=f"check {c}", answer="no" if no else "yes")
                          for c, column in failed.items() for item, no in zip(items.ids, column, strict=True)])
    return VerdictLookup(items, store, doc.rubric)


def test_a_significant_paired_drop_in_a_rate_is_rejected_though_no_catch_was_unique() -> None:
    items = _set(["pass"] * 20 + ["fail"] * 20)
    doc = _doc("a", "b")
    both = [False] * 20 + [True] * 20  # a and b both fail every flawed item: no catch is unique
    missed = [False] * 20 + [False] * 8 + [True] * 12  # the new judge lets 8 flawed items through on both
    old = _lookup(items, doc, {"a": both, "b": both})
    new = _lookup(items, doc, {"a": missed, "b": missed})
    change = compare_judges(doc, doc, old, new, old_judges=("p:old",), new_judges=("p:new",))
    flawed = change.comparisons[1]
    assert (flawed.rate, flawed.from_count, flawed.to_count, flawed.gained, flawed.lost) == ("flawed_caught", 20, 12, 0, 8)
    assert flawed.p_value == pytest.approx(2 * 0.5**8)  # exact McNemar: 8 discordant, all lost
    assert [c.lost_catches for c in change.checks] == [(), ()]
    assert [v.rule for v in change.violations] == ["J", "J"]
    assert "flawed caught 20/20 -> 12/20" in change.violations[1].reason
    # At a stricter level the drop is not significant; the 8 flawed items no check catches now
    # are lost all the same (both checks caught each of them under the old judge).
    stricter = compare_judges(doc, doc, old, new, old_judges=("p:old",), new_judges=("p:new",), alpha=0.005)
    assert [v.reason for v in stricter.violations] == [
        "the new judge no longer catches 8 flawed items the rubric caught with more than one check "
        "(i20, i21, i22, i23, i24, +3 more)"]


def test_a_flawed_item_no_check_catches_any_more_is_lost_though_its_catch_was_shared() -> None:
    """A judge answering yes to everything, on a rubric whose every catch is shared: no unique
    catch to lose, and 3 flawed items are too few for a significant drop."""
    items = _set(["pass", "fail", "fail", "fail"])
    doc = _doc("a", "b")
    old = _lookup(items, doc, {"a": [False, True, True, True], "b": [False, True, True, False]})
    new = _lookup(items, doc, {"a": [False] * 4, "b": [False] * 4})
    change = compare_judges(doc, doc, old, new, old_judges=("p:old",), new_judges=("p:yes",))
    assert [c.lost_catches for c in change.checks] == [("i3",), ()]  # a alone caught i3: its unique catch
    assert change.lost_shared == ("i1", "i2")
    assert change.comparisons[1].p_value == pytest.approx(0.25)  # not significant
    assert [v.reason for v in change.violations] == [
        "a: the new judge loses 1 unique catch (i3): the rubric no longer catches what only it caught",
        "the new judge no longer catches 2 flawed items the rubric caught with more than one check (i1, i2)"]
    assert lost_shared_catches(np.array([[1, 1], [1, 0]], bool), np.zeros((2, 2), bool), np.array([True, True]),
                               0).tolist() == [True, False]


def test_a_unique_catch_that_moves_to_another_check_is_not_lost() -> None:
    items = _set(["pass", "fail"])
    doc = _doc("a", "b")
    old = _lookup(items, doc, {"a": [False, True], "b": [False, False]})  # a alone catches i1
    new = _lookup(items, doc, {"a": [False, False], "b": [False, True]})  # b alone catches it now
    change = compare_judges(doc, doc, old, new, old_judges=("p:old",), new_judges=())
    assert change.passed and change.new_label == "recorded verdicts"
    assert [(c.id, c.old.unique_catches, c.new.unique_catches) for c in change.checks] == [("a", 1, 0), ("b", 0, 1)]
    assert not lost_unique_catches(np.array([[0, 0], [1, 0]], bool), np.array([[0, 0], [0, 1]], bool),
                                   np.array([False, True]), 0).any()


def test_under_max_failures_a_pivotal_catch_is_lost_when_the_rubric_stops_catching() -> None:
    old = np.array([[1, 1, 0], [1, 0, 0]], bool)  # item 0 failed by exactly 2 checks: pivotal for a and b
    new = np.array([[1, 0, 0], [1, 0, 0]], bool)
    lost = lost_unique_catches(old, new, np.array([True, True]), 1)
    assert lost.tolist() == [[True, True, False], [False, False, False]]


def test_judge_rule_reasons_one_per_finding() -> None:
    rates = [compare_paired(np.ones(10, bool), np.r_[np.zeros(9, bool), True], source="old judge",
                            target="new judge", rate="correct_passed")]
    found = judge_rule({"a": ("f1", "f2")}, {"b": 0.5}, rates, 0.05)
    assert found == [Violation("J", "a: the new judge loses 2 unique catches (f1, f2): the rubric no longer catches "
                                    "what only it caught"),
                     Violation("J", "b: the new judge adds blame 0.50 to a check that had none"),
                     Violation("J", "the new judge lowers correct passed 10/10 -> 1/10 (exact McNemar p = 0.0039 "
                                    "< 0.05)")]
    assert judge_rule({}, {}, rates, 0.001) == []


def test_the_gates_other_decisions_are_reported_under_each_judge() -> None:
    items = _set(["pass", "fail", "fail"])
    base, head = _doc("a", "b"), _doc("a")  # the edit deletes b
    old = _lookup(items, base, {"a": [False, True, False], "b": [False, False, True]})  # b alone catches i2
    new = _lookup(items, base, {"a": [False, True, True], "b": [False, False, True]})  # a catches i2 too
    change = compare_judges(base, head, old, new, old_judges=("p:old",), new_judges=("p:new",))
    assert [(d.check, d.change, d.old, d.new) for d in change.decisions] == [("b", "deleted", False, True)]
    assert not change.decisions_same and change.passed  # the new judge accepts it: reported, not a reason to reject


def test_an_edit_only_the_old_judge_accepts_rejects_the_judge_change() -> None:
    """The rubric lands graded by the new judge: an edit it rejects fails the change, whichever
    judge gated the edit itself."""
    items = _set(["pass", "fail", "fail"])
    base, head = _doc("a", "b"), _doc("a")  # the edit deletes b
    old = _lookup(items, base, {"a": [False, True, True], "b": [False, False, True]})  # i2 shared: deletable
    new = _lookup(items, base, {"a": [False, True, False], "b": [False, False, True]})  # b alone catches i2
    change = compare_judges(base, head, old, new, old_judges=("p:old",), new_judges=("p:new",))
    assert [(d.check, d.change, d.old, d.new) for d in change.decisions] == [("b", "deleted", True, False)]
    assert [v.reason for v in change.violations] == [
        "b (deleted): accepted with the old judge's verdicts but rejected with the new judge's, which the rubric "
        "is graded by once this merges"]
