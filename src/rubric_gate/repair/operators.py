"""The fixed library of repair operators (after PReMISE's): a repair may use only these.

Letting a model "improve" a check freely is how a rubric drifts toward the model's taste;
naming the operator keeps each rewrite a small, reviewable move of a known kind.
"""

from __future__ import annotations

OPERATORS: dict[str, str] = {
    "drop_unstated": "Drop the part of the check that the task does not state; keep the rest as written.",
    "applicability_condition": "Add an applicability condition, so the check only applies when the output "
                               "(or input) has a stated feature: \"Only when the output ..., it ...\". The "
                               "judge answers n/a where the condition does not hold (never a fail).",
    "do_not_penalise": "Add a do-not-penalise clause naming what the correct outputs it failed legitimately did: "
                       "\"Do not answer no merely because ...\".",
    "split_atomic": "Split a compound check into two or three atomic checks, each asking about one behaviour.",
    "observable_rewrite": "Rewrite an abstract demand (a quality such as 'clear' or 'appropriate') as something "
                          "a judge can see in the output.",
    "false_positive_anchor": "Anchor the check with one short example of what does NOT count as meeting it.",
}

SPLIT = "split_atomic"
MAX_SPLIT = 3
