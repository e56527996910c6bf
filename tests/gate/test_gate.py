"""The gate, rule by rule, on small hand-built verdict tables."""

from __future__ import annotations

import numpy as np
import pytest

from rubric_gate.gate import GateOptions, diff_rubrics, run_gate
from rubric_gate.rubric import Check, Rubric

ITEMS = ("R1", "R2", "R3", "R4", "R5")
FLAWED = np.array([True, True, True, False, False])
# Failed-vectors by check text: the paper's Table 1 plus variants for edits.
COLUMNS = {
    "A": [1, 1, 0, 0, 0],
    "B": [0, 1, 1, 0, 0],
    "C": [0, 0, 1, 0, 0],
    "D": [0, 0, 1, 1, 0],
    "A reworded, same verdicts": [1, 1, 0, 0, 0],
    "A narrowed, misses R1": [0, 1, 0, 0, 0],
    "C stricter, fails R5": [0, 0, 1, 0, 1],
    "new: fails R4": [0, 0, 0, 1, 0],
    "new: catches R1 only": [1, 0, 0, 0, 0],
    "new: catches nothing": [0, 0, 0, 0, 0],
}


def column(text: str) -> np.ndarray:
    return np.array(COLUMNS[text], dtype=bool)


def check(check_id: str, text: str | None = None, **kwargs) -> Check:
    return Check(id=check_id, text=text or check_id, **kwargs)


def rubric(*checks: Check, k: int | None = None) -> Rubric:
    return Rubric(
        id="demo", version="1", task="t", calibration="c.jsonl", verdicts="v.jsonl",
        aggregation="all-pass" if k is None else {"max_failures": k}, checks=list(checks),
    )


BASE = rubric(check("A"), check("B"), check("C"), check("D"))


def gate(head: Rubric, base: Rubric = BASE, **options):
    return run_gate(base, head, ITEMS, FLAWED, column, GateOptions(**options))


def decisions(result) -> dict[str, tuple[str, bool]]:
    return {d.change.check_id: (d.change.kind, d.accepted) for d in result.decisions}


def test_no_change_passes() -> None:
    result = gate(BASE)
    assert result.passed and result.decisions == []


def test_deleting_a_check_with_a_unique_catch_is_rejected() -> None:
    result = gate(rubric(check("B"), check("C"), check("D")))
    assert decisions(result) == {"A": ("deleted", False)}
    assert "would lose a unique catch: it alone catches 1 flawed item (R1)" in result.decisions[0].reason
    assert not result.passed


def test_deleting_a_redundant_check_is_accepted() -> None:
    result = gate(rubric(check("A"), check("B"), check("D")))
    assert decisions(result) == {"C": ("deleted", True)}
    assert result.passed
    assert [c.id for c in result.gated.checks] == ["A", "B", "D"]


def test_recompute_after_each_deletion_keeps_one_of_two_redundant_checks() -> None:
    # B, C and D all hold R3; each is deletable alone, not all three. Deletions are decided by
    # decreasing blame then increasing credit: D (blame 1), C (credit 0.33), then B, which by
    # then catches R3 alone and stays.
    result = gate(rubric(check("A")))
    got = decisions(result)
    assert [d.change.check_id for d in result.decisions] == ["D", "C", "B"]
    assert got["D"] == ("deleted", True)
    assert got["C"] == ("deleted", True)
    assert got["B"] == ("deleted", False)
    assert "R3" in result.decisions[-1].reason
    assert [c.id for c in result.gated.checks] == ["A", "B"]


def test_adding_a_check_with_blame_is_rejected() -> None:
    result = gate(rubric(*BASE.checks, check("E", "new: fails R4")))
    assert decisions(result) == {"E": ("added", False)}
    assert "correct item (R4)" in result.decisions[0].reason
    assert [c.id for c in result.gated.checks] == ["A", "B", "C", "D"]


def test_adding_a_check_without_blame_is_accepted() -> None:
    result = gate(rubric(*BASE.checks, check("E", "new: catches nothing")))
    assert result.passed


def test_additions_go_first_so_a_replacement_can_take_over_a_unique_catch() -> None:
    base = rubric(check("A", origin="hand"), check("B"))
    head = rubric(check("E", "new: catches R1 only"), check("B"))
    result = gate(head, base)
    assert [(d.change.kind, d.accepted) for d in result.decisions] == [("added", True), ("deleted", True)]


def test_rewording_with_the_same_verdicts_is_accepted() -> None:
    result = gate(rubric(check("A", "A reworded, same verdicts"), check("B"), check("C"), check("D")))
    assert decisions(result) == {"A": ("modified", True)}


def test_rewording_that_loses_a_catch_is_rejected() -> None:
    result = gate(rubric(check("A", "A narrowed, misses R1"), check("B"), check("C"), check("D")))
    assert decisions(result) == {"A": ("modified", False)}
    assert "would lose catches of R1" in result.decisions[0].reason


def test_rewording_that_fails_a_correct_item_is_rejected() -> None:
    result = gate(rubric(check("A"), check("B"), check("C", "C stricter, fails R5"), check("D")))
    assert decisions(result) == {"C": ("modified", False)}
    assert "R5" in result.decisions[0].reason
    assert result.gated.check("C").text == "C"  # the base wording stays


@pytest.mark.parametrize(
    ("head_a", "message"),
    [
        (None, "cannot be deleted"),
        (check("A", "A reworded, same verdicts", origin="label"), "cannot be reworded"),
        (check("A", origin="label", frozen=False), "cannot be unfrozen"),
        (check("A", origin="hand"), "cannot be unfrozen"),  # origin change drops the default freeze
    ],
)
def test_frozen_checks_cannot_be_deleted_reworded_or_unfrozen(head_a, message) -> None:
    base = rubric(check("A", origin="label"), check("B"), check("C"), check("D"))
    head = rubric(*([head_a] if head_a else []), check("B"), check("C"), check("D"))
    result = gate(head, base)
    assert not result.passed
    assert "frozen: derived from labels" in result.decisions[0].reason and message in result.decisions[0].reason
    assert result.gated.check("A") == base.check("A")


def test_freezing_a_check_is_accepted() -> None:
    result = gate(rubric(check("A", frozen=True), check("B"), check("C"), check("D")))
    assert decisions(result) == {"A": ("modified", True)}
    assert result.decisions[0].change.edited == ("frozen",)


def test_rates_rule_is_opt_in() -> None:
    head = rubric(check("B"), check("C"), check("D", "new: catches nothing"))
    default = gate(head)
    assert all("would lower a rate" not in d.reason for d in default.decisions)
    strict = gate(head, rates_rule=True)
    reasons = {d.change.check_id: d.reason for d in strict.decisions}
    assert "would lower a rate: flawed caught drops 3 -> 2 of 3" in reasons["A"]
    # Rewording D to catch nothing passes S (R3 stays caught by B and C) and R (no rate drops).
    assert decisions(strict)["D"] == ("modified", True)


def test_changes_are_ordered_additions_modifications_deletions() -> None:
    head = rubric(check("A", "A reworded, same verdicts"), check("C"), check("E", "new: catches nothing"))
    kinds = [(c.kind, c.check_id) for c in diff_rubrics(BASE, head)]
    assert kinds == [("added", "E"), ("modified", "A"), ("deleted", "B"), ("deleted", "D")]


def test_max_failures_gate_uses_pivotal_catches() -> None:
    base = rubric(check("A"), check("B"), check("C"), check("D"), k=1)
    # With one failure allowed only R2 (A, B) and R3 (B, C, D) are caught; R2 is pivotal for A.
    result = gate(rubric(check("B"), check("C"), check("D"), k=1), base)
    assert decisions(result) == {"A": ("deleted", False)}
    assert "(R2)" in result.decisions[0].reason
    assert "would lose a pivotal catch: 1 flawed item failed by exactly 2 checks, this one included (R2)" \
        in result.decisions[0].reason
    assert "unique" not in result.decisions[0].reason


def test_loosening_aggregation_that_lets_a_flaw_through_is_rejected() -> None:
    result = gate(rubric(*BASE.checks, k=1))
    assert decisions(result) == {"(aggregation)": ("aggregation", False)}
    assert "all-pass -> max_failures 1 stops catching R1" in result.decisions[0].reason
    assert result.gated.aggregation == "all-pass"


def test_tightening_aggregation_that_fails_a_correct_item_is_rejected() -> None:
    base = rubric(*BASE.checks, k=1)
    result = gate(rubric(*BASE.checks), base)
    assert "newly fails correct items R4" in result.decisions[0].reason


def test_aggregation_change_is_judged_on_the_checks_the_gate_kept() -> None:
    # Dropping D (accepted) first means the tightened rule no longer fails R4.
    base = rubric(check("A"), check("B"), check("C"), check("D"), k=1)
    head = rubric(check("A"), check("B"), check("C"))
    result = gate(head, base)
    assert decisions(result) == {"D": ("deleted", True), "(aggregation)": ("aggregation", True)}
    assert result.gated.max_failures == 0


def test_a_pure_rename_is_accepted_and_kept_by_the_gated_rubric() -> None:
    # B holds blame-free credit; D has blame (fails correct R4); A is frozen (label-derived).
    base = rubric(check("A", origin="label"), check("B"), check("C"), check("D"))
    head = rubric(check("A2", "A", origin="label"), check("B"), check("C"), check("D-renamed", "D"))
    result = gate(head, base)
    assert result.passed
    assert decisions(result) == {"A2": ("renamed", True), "D-renamed": ("renamed", True)}
    assert {d.change.detail for d in result.decisions} == {"A -> A2", "D -> D-renamed"}
    assert [c.id for c in result.gated.checks] == ["A2", "B", "C", "D-renamed"]


def test_a_rename_that_also_edits_the_check_is_an_addition_and_a_deletion() -> None:
    base = rubric(check("A", origin="label"), check("B"), check("C"), check("D"))
    head = rubric(check("A2", "A"), check("B"), check("C"), check("D"))  # origin changed too
    result = gate(head, base)
    assert decisions(result)["A2"] == ("added", True)
    assert decisions(result)["A"] == ("deleted", False)  # frozen
    assert [c.id for c in result.gated.checks] == ["A", "A2", "B", "C", "D"]


def test_two_identical_checks_renamed_pair_one_to_one() -> None:
    base = rubric(check("A"), check("B"), check("C"), check("D"), check("D2", "D"))
    head = rubric(check("A"), check("B"), check("C"), check("x", "D"), check("D2", "D"))
    result = gate(head, base)
    assert decisions(result) == {"x": ("renamed", True)}
