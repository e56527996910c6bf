"""Options and helpers shared by CLI commands."""

from __future__ import annotations

import errno
import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from rich.console import Console

FORMATS = click.Choice(["text", "markdown", "json"])


def repo_root(start: Path | None = None) -> Path:
    """The git work tree containing `start` (rubric paths are relative to it), else `start`."""
    import subprocess  # without --root only: every command imports this module

    start = start or Path.cwd()
    proc = subprocess.run(
        ["git", "rev-parse", "--show-toplevel"], cwd=start, capture_output=True, text=True, check=False
    )
    return Path(proc.stdout.strip()) if proc.returncode == 0 and proc.stdout.strip() else start


UNBOUNDED = 100_000  # "no width": tables at their natural width, prose never wrapped


def output_width() -> int | None:
    """The width to fit: `COLUMNS` if set, else the terminal's; None when stdout is no terminal
    (a pipe or file gets whole lines, for grep and diff, never wrapped at a guessed width)."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    try:
        if sys.stdout.isatty():
            return os.get_terminal_size(sys.stdout.fileno()).columns
    except (OSError, ValueError):
        pass
    return None


def stderr_width() -> int | None:
    """The terminal width stderr shows at, or None when it is no terminal (a log keeps whole lines)."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    try:
        if sys.stderr.isatty():
            return os.get_terminal_size(sys.stderr.fileno()).columns
    except (OSError, ValueError):
        pass
    return None


def wrap_message(text: str, width: int | None, indent: str = "  ") -> str:
    """Prose for stderr, wrapped at word boundaries with a hanging indent on a terminal (the
    terminal would cut it mid-word); whole on one line elsewhere. Paths and options never split."""
    if width is None or len(text) <= width:
        return text
    import textwrap

    return textwrap.fill(text, width=max(width - 1, 40), subsequent_indent=indent, break_long_words=False,
                         break_on_hyphens=False)


def stdout_console() -> Console:
    from rich.console import Console  # only text output needs rich

    class _StdoutConsole(Console):
        def on_broken_pipe(self) -> None:
            # rich would `exit(1)` here, replacing the command's exit code (the gate's decision).
            self.quiet = True
            raise BrokenPipeError(errno.EPIPE, "stdout closed")

    width = output_width()
    return _StdoutConsole(file=sys.stdout, soft_wrap=width is None, width=width or UNBOUNDED)


def silence_stdout() -> None:
    """Point stdout at /dev/null, so Python's flush at exit does not hit the closed pipe again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


@contextmanager
def report_output() -> Iterator[None]:
    """Write a report to stdout; a reader that stops early (`| head`) cuts the report short but
    never changes the exit code, which carries the gate's decision."""
    try:
        yield
        sys.stdout.flush()
    except BrokenPipeError:
        silence_stdout()


def print_json(data: object) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
