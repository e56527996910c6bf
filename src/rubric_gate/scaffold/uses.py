"""Point an existing workflow's rubric-gate step at the user's copy of the action (pure).

`init --action` rewrites the `uses:` line of each step that runs rubric-gate in the workflow it
wrote, and nothing else in the file; where it cannot tell that line, it refuses and names the
line to change instead (`UsesRefused`), so a hand-edited workflow is never guessed at.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import yaml

from rubric_gate.scaffold.plan import DEFAULT_ACTION, uses_line

# A step runs rubric-gate when its `uses:` names a repository called rubric-gate (any owner, any
# ref, the placeholder included) or the repository of the action being set.
_RUBRIC_GATE = re.compile(r"^[^/@\s]+/rubric-gate(/[^@\s]*)?@\S+$")
_USES_LINE = re.compile(r"^(?P<lead>\s*(?:-\s+)?uses:\s*)(?P<quote>['\"]?)(?P<value>[^'\"\s#]+)(?P=quote)"
                        r"(?P<rest>\s*(?:#.*)?)$")


@dataclass(frozen=True)
class UsesUpdate:
    text: str  # the workflow with the rubric-gate steps' `uses:` set (the input when unchanged)
    lines: tuple[int, ...]  # 1-based numbers of the lines rewritten
    before: tuple[str, ...]  # what those lines named before

    @property
    def changed(self) -> bool:
        return bool(self.lines)


class UsesRefused(ValueError):
    """The rubric-gate step's `uses:` cannot be told or rewritten: `line` (1-based, or None when
    no step runs rubric-gate) is the line to change by hand."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message, self.line = message, line


def _repository(action: str) -> str:
    return "/".join(action.split("@", 1)[0].split("/")[:2])


def _gate_uses(text: str, action: str) -> list[str]:
    """The `uses:` values of the steps that run rubric-gate, as YAML reads them."""
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise UsesRefused(f"not valid YAML ({str(exc).splitlines()[0]})") from None
    jobs = document.get("jobs") if isinstance(document, dict) else None
    found = []
    for job in jobs.values() if isinstance(jobs, dict) else []:
        steps = job.get("steps") if isinstance(job, dict) else None
        for step in steps if isinstance(steps, list) else []:
            uses = step.get("uses") if isinstance(step, dict) else None
            if not isinstance(uses, str):
                continue
            value = uses.strip()
            if _RUBRIC_GATE.match(value) or _repository(value) == _repository(action) or \
                    (value.startswith("./") and isinstance(step, dict) and step.get("id") == "gate"):
                found.append(value)
    return found


def set_action(text: str, action: str) -> UsesUpdate:
    """`text` (a workflow) with every rubric-gate step's `uses:` line set to `action`; only those
    lines change, each keeping its indentation. Raises UsesRefused naming the line to change when
    the step cannot be told or its line cannot be rewritten (a flow mapping, `uses: ./`)."""
    values = _gate_uses(text, action)
    if not values:
        raise UsesRefused("no step of this workflow uses rubric-gate (OWNER/rubric-gate@REF): "
                          f"set `uses: {action}` in the step that runs it")
    lines = text.splitlines(keepends=True)
    numbers: list[int] = []
    before: list[str] = []
    out = list(lines)
    for value in dict.fromkeys(values):
        at = [i for i, line in enumerate(lines) if (m := _USES_LINE.match(line.rstrip("\r\n"))) and m["value"] == value]
        if not at:
            raise UsesRefused(f"the step that runs rubric-gate names `{value}` in a form init does not rewrite: "
                              f"set it to `uses: {action}`")
        for index in at:
            if value.startswith("./"):
                raise UsesRefused(f"`uses: {value}` runs the action from this repository's own checkout: "
                                  f"change it to `uses: {action}` yourself if you mean to", index + 1)
            if value == action:
                continue
            line = lines[index]
            ending = line[len(line.rstrip("\r\n")):]
            match = _USES_LINE.match(line.rstrip("\r\n"))
            assert match is not None
            out[index] = f"{match['lead']}{uses_line(action)}{ending}"
            numbers.append(index + 1)
            before.append(value)
    return UsesUpdate("".join(out), tuple(numbers), tuple(before))


def names_placeholder(text: str) -> list[int]:
    """1-based numbers of the lines whose `uses:` still names the placeholder action."""
    return [i + 1 for i, line in enumerate(text.splitlines())
            if (m := _USES_LINE.match(line)) and m["value"] == DEFAULT_ACTION]
