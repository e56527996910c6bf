"""Step outputs (GITHUB_OUTPUT), the job summary (GITHUB_STEP_SUMMARY) and workflow commands."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from rubric_gate.report.terminal import strip_controls

SUMMARY_LIMIT = 1024 * 1024  # GitHub's job summary limit per step, in bytes


def write_outputs(path: Path | None, values: dict[str, str]) -> None:
    if path is None:
        return
    with path.open("a", encoding="utf-8") as handle:
        for name, value in values.items():
            if "\n" in value:
                delimiter = f"ghadelimiter_{secrets.token_hex(8)}"
                handle.write(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
            else:
                handle.write(f"{name}={value}\n")


def append_summary(path: Path | None, markdown: str) -> None:
    if path is None:
        return
    data = markdown.encode("utf-8")
    if len(data) > SUMMARY_LIMIT - 200:
        markdown = data[: SUMMARY_LIMIT - 200].decode("utf-8", errors="ignore") + "\n\n(Truncated: see the JSON report.)\n"
    with path.open("a", encoding="utf-8") as handle:
        handle.write(markdown + "\n")


def _escape(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


# Where workflow commands go instead of stdout (`rubric-gate preview` prints them as plain lines).
_sink: Callable[[str, str], None] | None = None


@contextmanager
def commands_to(sink: Callable[[str, str], None]) -> Iterator[None]:
    """Send workflow commands (but masks, which only a runner understands) to `sink(kind, message)`."""
    global _sink
    previous, _sink = _sink, sink
    try:
        yield
    finally:
        _sink = previous


def command(kind: str, message: str) -> None:
    """A workflow command (`notice`, `warning`, `error`, `add-mask`), printed to stdout.

    Messages name items and files from the PR: control characters are replaced so that an
    escape sequence in an item id cannot act on the log viewer (a mask must stay exact).
    """
    if _sink is not None:
        if kind != "add-mask":
            _sink(kind, strip_controls(message))
        return
    text = _escape(message)
    print(f"::{kind}::{text if kind == 'add-mask' else strip_controls(text)}", flush=True)
