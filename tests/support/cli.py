"""`rubric-gate` run by the tests: in this process by default (its own `main`, error handling
and exit codes, without paying for a new interpreter and the SDK imports each time), or as a
subprocess, exactly as a user runs it, with RUBRIC_GATE_TEST_SUBPROCESS=1."""

from __future__ import annotations

import contextlib
import functools
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


ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_BASE = "rubrics/cloud-security-review.yaml"


@functools.cache
def example_check(head: str, *fmt: str, columns: str | None = None) -> subprocess.CompletedProcess[str]:
    """`rubric-gate check --base rubrics/cloud-security-review.yaml --head HEAD FMT...` on the bundled
    example, as a user runs it: a subprocess in the repository root, COLUMNS as given (else
    piped, no width) and no LINES. Run once per arguments for the session: its output depends
    only on committed files (`head` must be one, e.g. examples/drifting-revision.yaml)."""
    assert head.startswith("examples/"), head
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    if columns is not None:
        env["COLUMNS"] = columns
    return subprocess.run([sys.executable, "-m", "rubric_gate", "check", "--base", EXAMPLE_BASE, "--head", head, *fmt],
                          cwd=ROOT, env=env, capture_output=True, text=True, check=False, timeout=120)
