"""Every difference between a rubric's trusted and proposed documents, each key with its rule
(`trust.differences.RULES`, as the kind `rubric.<key>`: the gate decides the checks and the
aggregation; the id, the task, the judge and the files the labels and verdicts are read from need
the override; the version is allowed). A key no rule names is unclassified, which fails like the
override: a key added to the rubric format later is never silently fine.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rubric_gate.rubric import Rubric
from rubric_gate.trust.differences import RULES, Rule, rubric_key, rule_of


@dataclass(frozen=True)
class KeyChange:
    key: str
    before: Any
    after: Any
    rule: Rule

    @property
    def kind(self) -> str:
        return rubric_key(self.key)

    @property
    def needs_override(self) -> bool:
        return self.rule.needs_override


def _comparable(key: str, value: Any) -> Any:
    if key in ("calibration", "verdicts") and isinstance(value, str):
        return posixpath.normpath(value)  # `./a//b` is `a/b`: the same file
    if key == "task" and isinstance(value, str):
        return " ".join(value.split())  # reflowing the text changes nothing the judge reads
    return value


def classify_rubric_changes(base: Rubric, head: Rubric, rules: Mapping[str, Rule] = RULES) -> list[KeyChange]:
    """The keys that differ between `base` and `head`, in the model's order, each classified."""
    out = []
    for key in Rubric.model_fields:
        before, after = getattr(base, key), getattr(head, key)
        if _comparable(key, before) != _comparable(key, after):
            out.append(KeyChange(key, before, after, rule_of(rubric_key(key), rules)))
    return out
