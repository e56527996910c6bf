"""Rubrics: the checklist a judge answers, loaded from versioned YAML."""

from rubric_gate.rubric.dump import rubric_to_yaml
from rubric_gate.rubric.load import RubricDocument, load_rubric, parse_rubric_text, rubric_problems
from rubric_gate.rubric.model import Check, MaxFailures, Origin, Rubric, normalize_text

__all__ = [
    "Check",
    "MaxFailures",
    "Origin",
    "Rubric",
    "RubricDocument",
    "load_rubric",
    "normalize_text",
    "parse_rubric_text",
    "rubric_problems",
    "rubric_to_yaml",
]
