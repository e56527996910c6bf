"""The gate's outcome does not depend on where checks sit in the base or head file."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rubric_gate.gate import GateOptions, run_gate
from rubric_gate.rubric import Check, Rubric


def _rubric(checks: list[Check], k: int) -> Rubric:
    return Rubric(id="r", version="1", task="t", calibration="c.jsonl", verdicts="v.jsonl",
                  aggregation="all-pass" if k == 0 else {"max_failures": k}, checks=checks)


@st.composite
def edits(draw: st.DrawFn) -> tuple:
    """A random verdict table and a random base -> head edit (additions, deletions, rewordings)."""
    n_items = draw(st.integers(2, 8))
    flawed = np.array(draw(st.lists(st.booleans(), min_size=n_items, max_size=n_items)))
    n_texts = draw(st.integers(2, 7))
    columns = {f"text {t}": np.array(draw(st.lists(st.booleans(), min_size=n_items, max_size=n_items)))
               for t in range(n_texts)}
    texts = list(columns)
    base_ids = draw(st.lists(st.sampled_from("ABCDEFG"), min_size=1, max_size=5, unique=True))
    base = []
    for check_id in base_ids:
        frozen = draw(st.booleans()) and draw(st.booleans())  # one in four
        base.append(Check(id=check_id, text=draw(st.sampled_from(texts)), frozen=frozen))
    head = []
    for check in base:
        fate = draw(st.sampled_from(["keep", "keep", "delete", "reword"]))
        if fate == "keep":
            head.append(check)
        elif fate == "reword":
            head.append(check.model_copy(update={"text": draw(st.sampled_from(texts))}))
    for new_id in draw(st.lists(st.sampled_from("UVWXYZ"), max_size=4, unique=True)):
        head.append(Check(id=new_id, text=draw(st.sampled_from(texts))))
    if not head:
        head.append(Check(id="Z", text=texts[0]))
    return flawed, columns, base, head


def _outcome(base: list[Check], head: list[Check], flawed, columns, k: int, options: GateOptions,
             k_head: int | None = None):
    result = run_gate(_rubric(base, k), _rubric(head, k if k_head is None else k_head), [f"i{n}" for n in range(len(flawed))], flawed,
                      lambda text: columns[text], options)
    decided = {(d.change.kind, d.change.check_id): d.accepted for d in result.decisions}
    kept = {(c.id, c.text) for c in result.gated.checks}
    return decided, kept


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edit=edits(), k=st.sampled_from([0, 1]), k_head=st.sampled_from([None, 0, 1]), rates=st.booleans(),
       data=st.data())
def test_every_order_of_base_and_head_gives_the_same_gated_rubric(edit, k, k_head, rates, data) -> None:
    flawed, columns, base, head = edit
    options = GateOptions(rates_rule=rates)
    expected = _outcome(base, head, flawed, columns, k, options, k_head)
    for _ in range(4):
        base_order = data.draw(st.permutations(base))
        head_order = data.draw(st.permutations(head))
        assert _outcome(base_order, head_order, flawed, columns, k, options, k_head) == expected


def test_the_issue_case_deleting_two_redundant_checks_keeps_the_one_without_blame() -> None:
    # A and B both catch item 0 (flawed); A also fails item 1 (correct). Deleting both keeps B
    # whichever order the base lists them in: A (blame 1) is decided first and goes.
    flawed = np.array([True, False])
    columns = {"a": np.array([True, True]), "b": np.array([True, False]), "c": np.array([False, False])}
    head = [Check(id="C", text="c")]
    for base in ([Check(id="A", text="a"), Check(id="B", text="b")],
                 [Check(id="B", text="b"), Check(id="A", text="a")]):
        decided, kept = _outcome([*base, Check(id="C", text="c")], head, flawed, columns, 0, GateOptions())
        assert decided == {("deleted", "A"): True, ("deleted", "B"): False}
        assert kept == {("B", "b"), ("C", "c")}


def test_at_max_failures_one_the_useful_addition_is_decided_first() -> None:
    # Item 0 (flawed) is caught only if two checks fail it. Useful U and useless V both fail it;
    # V also fails correct item 1 together with the base check. U is decided first whatever the
    # head order: it is accepted, and V (blame) rejected.
    flawed = np.array([True, False])
    columns = {"base": np.array([True, True]), "u": np.array([True, False]), "v": np.array([True, True])}
    base = [Check(id="B", text="base")]
    for added in ([Check(id="U", text="u"), Check(id="V", text="v")],
                  [Check(id="V", text="v"), Check(id="U", text="u")]):
        decided, _ = _outcome(base, [*base, *added], flawed, columns, 1, GateOptions())
        assert decided == {("added", "U"): True, ("added", "V"): False}
