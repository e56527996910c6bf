"""Options and helpers shared by CLI commands."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click
from rich.console import Console

FORMATS = click.Choice(["text", "markdown", "json"])


def repo_root(start: Path | None = None) -> Path:
    """The git work tree containing `start` (rubric paths are relative to it), else `start`."""
    start = start or Path.cwd()
    proc = subprocess.run(
        ["git", "rev-parse", "--show-toplevel"], cwd=start, capture_output=True, text=True, check=False
    )
    return Path(proc.stdout.strip()) if proc.returncode == 0 and proc.stdout.strip() else start


def stdout_console() -> Console:
    return Console(file=sys.stdout, soft_wrap=False, width=max(120, Console().width))


def print_json(data: object) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
