"""Point an existing workflow's rubric-gate step at the user's copy of the action (pure).

`init --action` rewrites the `uses:` line of each step that runs rubric-gate in the workflow it
wrote, and nothing else in the file; where it cannot tell that line, it refuses and names the
line to change instead (`UsesRefused`), so a hand-edited workflow is never guessed at.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rubric_gate.scaffold.plan import DEFAULT_ACTION, uses_line

_ENDINGS = "\r\n"
# A step runs rubric-gate when its `uses:` names a repository called rubric-gate (any owner and
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


def set_action(text: str, action: str) -> UsesUpdate:
    """`text` (a workflow) with every rubric-gate step's `uses:` line set to `action`; only those
    lines change, each keeping its indentation and line ending. Read line by line, as written (no
    YAML round trip, which would drop comments). Raises UsesRefused naming the line to change when
    the step runs the checkout's own action (`uses: ./`) or no `uses:` line names rubric-gate."""
    lines = text.splitlines(keepends=True)
    found = [(i, m) for i, line in enumerate(lines) if (m := _USES_LINE.match(line.rstrip(_ENDINGS)))]
    ours = [(i, m) for i, m in found if _RUBRIC_GATE.match(m["value"]) or _repository(m["value"]) == _repository(action)]
    if not ours:
        local = next(((i, m["value"]) for i, m in found if m["value"].startswith("./")), None)
        if local is not None:
            raise UsesRefused(f"`uses: {local[1]}` runs an action from this repository's own checkout: change it "
                              f"to `uses: {action}` yourself if you mean to", local[0] + 1)
        raise UsesRefused("no `uses:` line of this workflow names rubric-gate (OWNER/rubric-gate@REF): "
                          f"set `uses: {action}` in the step that runs it")
    out = list(lines)
    numbers: list[int] = []
    before: list[str] = []
    for index, match in ours:
        if match["value"] == action:
            continue
        line = lines[index]
        out[index] = f"{match['lead']}{uses_line(action)}{line[len(line.rstrip(_ENDINGS)):]}"
        numbers.append(index + 1)
        before.append(match["value"])
    return UsesUpdate("".join(out), tuple(numbers), tuple(before))


# The drift workflow installs rubric-gate from the action's repository and ref (`init --drift`).
_GIT_INSTALL = re.compile(r"git\+https://github\.com/(?P<value>[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+@[A-Za-z0-9._/-]+)")


def set_install(text: str, action: str) -> UsesUpdate:
    """`text` (the drift workflow) with each `git+https://github.com/OWNER/REPO@REF` of rubric-gate
    (or of the action's repository) pointing at `action`'s repository and ref; nothing else changes.
    Unchanged when no such line exists (a drift workflow that installs rubric-gate otherwise)."""
    repository, _, ref = action.partition("@")
    lines = text.splitlines(keepends=True)
    numbers: list[int] = []
    before: list[str] = []
    for index, line in enumerate(lines):
        for match in _GIT_INSTALL.finditer(line):
            value = match["value"]
            if value != action and (_RUBRIC_GATE.match(value) or _repository(value) == repository):
                lines[index] = lines[index].replace(match.group(0), f"git+https://github.com/{repository}@{ref}")
                numbers.append(index + 1)
                before.append(value)
    return UsesUpdate("".join(lines), tuple(numbers), tuple(before))


def names_placeholder(text: str) -> list[int]:
    """1-based numbers of the lines that still name the placeholder action (a `uses:`, or the
    drift workflow's install from git)."""
    return [i + 1 for i, line in enumerate(text.splitlines())
            if ((m := _USES_LINE.match(line)) and m["value"] == DEFAULT_ACTION)
            or any(g["value"] == DEFAULT_ACTION for g in _GIT_INSTALL.finditer(line))]
