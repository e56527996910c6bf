"""The text report fits the terminal it is shown in, and is never wrapped when piped."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ARGS = ["check", "--base", "rubrics/cloud-security-review.yaml", "--head", "examples/drifting-revision.yaml"]


def _run(columns: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    if columns is not None:
        env["COLUMNS"] = columns
    proc = subprocess.run([sys.executable, "-m", "rubric_gate", *ARGS], cwd=ROOT, env=env,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 1, proc.stderr
    return proc.stdout


def test_at_80_columns_no_line_is_longer_and_nothing_is_cut() -> None:
    out = _run("80")
    assert max(len(line) for line in out.splitlines()) <= 80
    assert "…" not in out  # folded, never truncated
    for header in ("Check", "Unique", "catches", "Fails", "correct", "flawed", "Decision"):
        assert header in out
    assert "rubric-gate: FAIL — cloud-security-review, version 3 → 4" in out


def test_piped_output_keeps_each_line_whole() -> None:
    out = _run(None)
    reason = ("  REJECTED added    recommends-remediation: would add blame 10.50: it answers no on 11 correct "
              "items (r02, r08, r12, r13, r15, +6 more)")
    assert reason in out.splitlines()
    row = next(line for line in out.splitlines() if line.startswith("recommends-remediation"))
    assert row.split() == ["recommends-remediation", "review", "no", "5.44", "3.75", "0", "11", "22",
                           "REJECTED", "added"]
    assert out.count("FAIL") == 1


def test_accepted_changes_say_accepted_once() -> None:
    out = _run(None)
    sound = subprocess.run([sys.executable, "-m", "rubric_gate", "check", "--base", ARGS[2], "--head",
                            "examples/sound-revision.yaml"], cwd=ROOT, capture_output=True, text=True, check=False)
    assert sound.returncode == 0, sound.stderr
    accepted = [line for line in sound.stdout.splitlines() if line.strip().startswith("accepted")]
    assert accepted and all(line.count("accepted") == 1 for line in accepted)
    assert "REJECTED" in out
