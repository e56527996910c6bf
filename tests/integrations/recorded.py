"""A judge that answers rubric-gate's per-check prompt from the recorded verdicts of
tests.support.promptfoo_project, reading the check and the output out of the prompt itself:
what a grader in another tool would answer if it agreed with the recorded verdicts."""

from __future__ import annotations

import json

from tests.support.promptfoo_project import ADDED, CHECKS, FAILED_BY

TEXT_TO_ID = {text: cid for cid, text in {**CHECKS, ADDED[0]: ADDED[1]}.items()}


def _between(text: str, start: str, end: str) -> str:
    return text.split(start, 1)[1].split(end, 1)[0]


def asked(prompt: str) -> tuple[str, str]:
    """(check id, item id) a per-check prompt asks about."""
    check = _between(prompt, "<check>\n", "\n</check>")
    output = _between(prompt, "<output>\n", "\n</output>")
    return TEXT_TO_ID[check], output.removeprefix("answer ")


def recorded_reply(prompt: str) -> str:
    check, item = asked(prompt)
    answer = "no" if check in FAILED_BY[item] else "yes"
    return json.dumps({"answer": answer, "quote": f"answer {item}"})


def expected_pass(item: str, checks: list[str], max_failures: int = 0) -> bool:
    return len(FAILED_BY[item] & set(checks)) <= max_failures
