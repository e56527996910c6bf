"""Every difference between a rubric's trusted and proposed documents, each with its rule.

`gate`: the gate decides it (check edits, the aggregation). `allowed`: recorded, no override
(the id, the version). `override`: a change of what the gate stands on (the labels and verdicts it
reads, the task the judge reads, and the `judge` key: the judge that produces the evidence later
PRs are gated on; removing it downgrades them to replay, where a PR's own verdicts stand in for
its new checks). A key no
rule names is `unclassified`, which fails like `override`: a key added to the rubric format
later is never silently fine.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Any

from rubric_gate.rubric import Rubric

KEY_RULES: dict[str, str] = {
    "checks": "gate",
    "aggregation": "gate",
    "id": "override",  # consumers load a rubric by id: a new id is another rubric to them
    "version": "allowed",
    "judge": "override",
    "task": "override",
    "calibration": "override",
    "verdicts": "override",
}


@dataclass(frozen=True)
class KeyChange:
    key: str
    before: Any
    after: Any
    rule: str  # gate | allowed | override | unclassified

    @property
    def needs_override(self) -> bool:
        return self.rule in ("override", "unclassified")


def _comparable(key: str, value: Any) -> Any:
    if key in ("calibration", "verdicts") and isinstance(value, str):
        return posixpath.normpath(value)  # `./a//b` is `a/b`: the same file
    if key == "task" and isinstance(value, str):
        return " ".join(value.split())  # reflowing the text changes nothing the judge reads
    return value


def classify_rubric_changes(base: Rubric, head: Rubric, rules: dict[str, str] = KEY_RULES) -> list[KeyChange]:
    """The keys that differ between `base` and `head`, in the model's order, each classified."""
    out = []
    for key in Rubric.model_fields:
        before, after = getattr(base, key), getattr(head, key)
        if _comparable(key, before) != _comparable(key, after):
            out.append(KeyChange(key, before, after, rules.get(key, "unclassified")))
    return out
