"""`trust.landing_differences`: how the rubric a merge writes differs from the one reviewed."""

from __future__ import annotations

from rubric_gate.trust import apply_check_changes, landing_differences
from tests.support.values import rubric as _rubric


def test_the_same_checks_in_another_order_are_the_same_rubric() -> None:
    assert landing_differences(_rubric({"A": "a", "B": "b", "Y": "y"}), _rubric({"A": "a", "Y": "y", "B": "b"})) == []


def test_each_difference_is_named() -> None:
    reviewed = _rubric({"A": "a", "B": "b", "C": "c"})
    merged = _rubric({"B": "b2", "C": "c", "Z": "z"}, task="t2")
    assert landing_differences(reviewed, merged) == ["drops check `A`", "adds check `Z`", "changes check `B`",
                                                     "changes `task`"]


def test_the_model_of_a_merge_is_compared_as_git_would_write_it() -> None:
    """main added M at the end, the PR added N after A: the model appends N, git keeps it after A."""
    base, head, tip = _rubric({"A": "a", "B": "b"}), _rubric({"A": "a", "N": "n", "B": "b"}), \
        _rubric({"A": "a", "B": "b", "M": "m"})
    reviewed = apply_check_changes(base, head, tip)
    assert landing_differences(reviewed, _rubric({"A": "a", "N": "n", "B": "b", "M": "m"})) == []
    assert landing_differences(reviewed, _rubric({"A": "a", "N": "n", "B": "b"})) == ["drops check `M`"]
