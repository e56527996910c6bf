"""`rubric-gate` run by the tests: in this process by default (its own `main`, error handling
and exit codes, without paying for a new interpreter and the SDK imports each time), or as a
subprocess, exactly as a user runs it, with RUBRIC_GATE_TEST_SUBPROCESS=1."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rubric_gate.cli.main import main


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """`rubric-gate ARGS` in the current directory: (exit code, stdout, stderr)."""
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def rubric_gate(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`rubric-gate ARGS` in `cwd`: in this process, or a subprocess with RUBRIC_GATE_TEST_SUBPROCESS=1."""
    if os.environ.get("RUBRIC_GATE_TEST_SUBPROCESS"):
        return subprocess.run([sys.executable, "-m", "rubric_gate", *args], cwd=cwd, capture_output=True,
                              text=True, check=False, timeout=120)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.chdir(cwd), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return subprocess.CompletedProcess(["rubric-gate", *args], code, out.getvalue(), err.getvalue())
