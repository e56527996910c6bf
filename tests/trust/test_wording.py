"""What reviewers read (`trust.wording`): every kind a reviewer reads has words, each names its count
and the facts it is about, and long lists end in how many more there are."""

from __future__ import annotations

import pytest

from rubric_gate.trust.differences import RULES, Kind
from rubric_gate.trust.wording import answers_message, first, label_phrase

LABEL_KINDS = [k for k in Kind if k.startswith("labels.")]
ANSWER_KINDS = [k for k in Kind if k.startswith("answer.")]


def test_first_shows_the_first_and_counts_the_rest() -> None:
    assert first(["a", "b"]) == "a, b"
    assert first([f"x{i}" for i in range(12)]) == "x0, x1, x2, x3, x4, x5, x6, x7, x8, x9 and 2 more"
    assert first([1, 2, 3], 2) == "1, 2 and 1 more"


@pytest.mark.parametrize("kind", LABEL_KINDS)
def test_each_label_kind_names_its_count_and_items(kind: Kind) -> None:
    found = {Kind.LABELS_RELABELED: [("R1", "fail", "pass")], Kind.LABELS_UNCLASSIFIED: [("R1", ("colour",))],
             Kind.LABELS_EDITED: ["R1"]}.get(kind, [("R1", "fail")])
    text = label_phrase(kind, found * 25)
    assert " 25" in text and "R1" in text and text.endswith(" and 5 more")


@pytest.mark.parametrize("kind", ANSWER_KINDS)
def test_answers_a_reviewer_must_weigh_are_worded_and_the_gates_are_recorded(kind: Kind) -> None:
    text = answers_message(kind, [f"A on R{i}" for i in range(12)])
    if RULES[kind].needs_override or kind in (Kind.ANSWER_REJUDGED, Kind.ANSWER_FOR_NO_CHECK):
        assert text is not None and "12" in text and "A on R0" in text and "and 2 more" in text
    else:  # the gate weighs them, or they go with a check whose deletion is gated
        assert text is None
