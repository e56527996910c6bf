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
    "do_not_reward": "Add a do-not-reward clause naming a surface feature that must not earn a yes by itself "
                     "(length, formatting, confident or technical wording): \"Do not answer yes merely because ...\".",
    "non_compensation": "Add a non-compensation rule: doing well elsewhere does not make up for failing what the "
                        "check asks: \"..., however good the rest of the output is.\"",
}

# The structural budget every rewrite must keep (after PReMISE's App. C.1): a rewrite over it
# is dropped, whatever the gate would say. Anti-gaming clauses are do-not-reward and
# do-not-penalise clauses; an applicability gate is an "only when/if" condition.
MAX_WORDS = 150
MAX_ANTI_GAMING = 2
MAX_APPLICABILITY_GATES = 1

SPLIT = "split_atomic"
MAX_SPLIT = 3
