"""`rubric-gate` run in this process, as its console script runs it (its own error handling)."""

from __future__ import annotations

import pytest

from rubric_gate.cli.main import main


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """`rubric-gate ARGS` in the current directory: (exit code, stdout, stderr)."""
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err
