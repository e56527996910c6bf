"""Exceptions the CLI maps to exit codes and one-line messages.

Library code raises these; only `rubric_gate.cli.errors` turns them into output.
"""

from __future__ import annotations

from pathlib import Path

EXIT_PASS = 0
EXIT_GATE_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_CRASH = 3  # a bug: never 1, which reads as "the gate failed"


class RubricGateError(Exception):
    """Base class: `message` is one line, ready to print."""

    exit_code: int = EXIT_BAD_INPUT

    @property
    def message(self) -> str:
        return str(self)


class InputError(RubricGateError):
    """A user-written file is malformed: says which file, which line and what is wrong."""

    def __init__(self, path: str | Path | None, what: str, line: int | None = None) -> None:
        self.path = str(path) if path is not None else None
        self.line = line
        self.what = what
        super().__init__(self.message)

    @property
    def message(self) -> str:
        where = self.path or "<input>"
        if self.line is not None:
            where = f"{where}:{self.line}"
        return f"{where}: {self.what}"


class MissingVerdictsError(RubricGateError):
    """Some (check, item) pairs have no verdict and no live judge was configured."""

    def __init__(self, missing: dict[str, int], total_items: int, rubric_path: str | None = None, *,
                 verdicts: str | None = None, examples: dict[str, list[str]] | None = None) -> None:
        self.missing = missing  # check id -> number of items without a verdict
        self.total_items = total_items
        self.rubric_path = rubric_path
        self.verdicts = verdicts  # the verdict file(s) looked in
        self.examples = examples or {}  # check id -> up to 5 item ids without a verdict
        parts = []
        for cid, n in missing.items():
            shown = self.examples.get(cid, [])[:5]
            items = f", e.g. {', '.join(shown)}{' ...' if n > len(shown) else ''}" if shown else ""
            parts.append(f"{cid} ({n}/{total_items} items{items})")
        where = f"{rubric_path}: " if rubric_path else ""
        looked = f" in {verdicts}" if verdicts else ""
        super().__init__(
            f"{where}no recorded verdict{looked} for check{'s' if len(missing) != 1 else ''} {'; '.join(parts)}; "
            "record verdicts or pass --judge PROVIDER:MODEL to judge them"
        )


class JudgeError(RubricGateError):
    """A live judge could not produce a valid verdict (never guessed into one)."""


class JudgeAuthError(JudgeError):
    """The provider rejected the credentials: stop at once."""


class UnreachableError(RubricGateError):
    """A service we talk to could not be reached: nothing was decided wrongly, the run did not
    finish. Exit 2 (the run could not complete), never 1 ("gate failed") nor 3 (a bug)."""

    def __init__(self, service: str, url: str, reason: str) -> None:
        self.service, self.url, self.reason = service, url, reason
        super().__init__(f"{service}: cannot reach {url} ({reason}); the run stopped before it finished "
                         "(nothing more was posted): re-run the job once it is reachable")
