"""The first hour's dead ends: each error says what is wrong, where, and what to do."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support.cli import rubric_gate

ROOT = Path(__file__).resolve().parents[2]
BASE = "rubrics/cloud-security-review.yaml"


def _cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return rubric_gate(cwd, *args)  # in this process (RUBRIC_GATE_TEST_SUBPROCESS=1: as a subprocess)


def _head(tmp_path: Path, old: str, new: str) -> Path:
    text = (ROOT / "examples/drifting-revision.yaml").read_text()
    assert old in text
    path = tmp_path / "head.yaml"
    path.write_text(text.replace(old, new))
    return path


def test_missing_verdicts_name_the_rubric_the_file_and_five_items(tmp_path: Path) -> None:
    head = _head(tmp_path, "checks:\n", "checks:\n  - id: never-judged\n    text: A check nobody judged.\n")
    proc = _cli("check", "--base", BASE, "--head", str(head))
    assert proc.returncode == 2 and proc.stdout == ""
    (line,) = proc.stderr.splitlines()
    assert str(head) in line and "examples/drifting-revision.verdicts.jsonl" in line
    assert "never-judged (46/46 items, e.g. r01, r02, r03, r04, r05 ...)" in line
    as_json = _cli("check", "--base", BASE, "--head", str(head), "--format", "json")
    assert as_json.returncode == 2
    error = json.loads(as_json.stdout)["error"]
    assert error["exit_code"] == 2 and error["kind"] == "MissingVerdictsError"
    assert error["examples"] == {"never-judged": ["r01", "r02", "r03", "r04", "r05"]}
    assert error["rubric_path"] == str(head)


def test_a_typo_in_the_verdicts_path_says_the_file_is_missing(tmp_path: Path) -> None:
    head = _head(tmp_path, "verdicts: examples/drifting-revision.verdicts.jsonl",
                 "verdicts: examples/drifting-revision.verdict.jsonl")
    proc = _cli("check", "--base", BASE, "--head", str(head))
    assert proc.returncode == 2
    assert "examples/drifting-revision.verdict.jsonl: file not found" in proc.stderr
    assert "no recorded verdict" not in proc.stderr


def test_a_bare_ref_hints_at_ref_colon_path() -> None:
    proc = _cli("check", "--base", "HEAD", "--head", "examples/drifting-revision.yaml")
    assert proc.returncode == 2
    assert "HEAD: file not found (it is a git ref: name the file in it as REF:PATH, e.g. HEAD:rubrics/" in proc.stderr


def test_schema_help_prints_help_and_writes_nothing(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "rubric_gate.schema", "--help"], cwd=tmp_path,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0 and proc.stdout.startswith("usage: python -m rubric_gate.schema")
    assert not list(tmp_path.iterdir())
    bad = subprocess.run([sys.executable, "-m", "rubric_gate.schema", "--out"], cwd=tmp_path,
                         capture_output=True, text=True, check=False)
    assert bad.returncode == 2 and not list(tmp_path.iterdir())


def test_lint_warns_about_a_cut_off_last_verdict_line(tmp_path: Path) -> None:
    verdicts = (ROOT / "examples/drifting-revision.verdicts.jsonl").read_text()
    (tmp_path / "v.jsonl").write_text(verdicts + '{"item": "r01", "check": "x", "fail')
    head = _head(tmp_path, "verdicts: examples/drifting-revision.verdicts.jsonl", f"verdicts: {tmp_path / 'v.jsonl'}")
    proc = _cli("lint", str(head))
    lines = verdicts.count("\n") + 1
    assert f"{tmp_path / 'v.jsonl'}:{lines}: warning: last line is cut off" in proc.stdout
    (tmp_path / "v.jsonl").write_text(verdicts)
    assert "cut off" not in _cli("lint", str(head)).stdout
