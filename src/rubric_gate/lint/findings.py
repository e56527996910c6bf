"""A lint finding and how it prints: `file:line: severity: message`."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from rubric_gate.errors import EXIT_BAD_INPUT, EXIT_GATE_FAILED, EXIT_PASS, InputError

ERROR = "error"
WARNING = "warning"

# Control characters from a file (a key, an id) must not reach the terminal as escapes.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")


def _inert(text: str) -> str:
    text = text.replace("\r\n", " ").replace("\n", " ")
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


@dataclass(frozen=True)
class Finding:
    path: str
    line: int | None
    severity: str  # ERROR or WARNING
    message: str

    @classmethod
    def from_error(cls, error: InputError, severity: str = ERROR) -> Finding:
        return cls(error.path or "<input>", error.line, severity, error.what)

    def format(self) -> str:
        where = _inert(self.path) + (f":{self.line}" if self.line is not None else "")
        return f"{where}: {self.severity}: {_inert(self.message)}"


def exit_code(findings: Iterable[Finding], *, strict: bool = False) -> int:
    """2 with any error; 1 with warnings only when strict; else 0."""
    severities = {f.severity for f in findings}
    if ERROR in severities:
        return EXIT_BAD_INPUT
    if WARNING in severities and strict:
        return EXIT_GATE_FAILED
    return EXIT_PASS
