"""What a newcomer reads in the first run: every label agrees with the figure or file under it."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from unittest import mock

import yaml

from tests.support.cli import example_check, rubric_gate

ROOT = Path(__file__).resolve().parents[2]
BASE = "rubrics/cloud-security-review.yaml"
DECIDED_NOTE = "a reason's figures are the check's in the rubric the gate decided it in"


def _check(head: str, *fmt: str) -> subprocess.CompletedProcess[str]:
    """`check` of a head the test wrote, piped (no COLUMNS or LINES): in this process, as
    tests/support/cli.py runs the CLI; the committed examples go through `example_check`."""
    with mock.patch.dict(os.environ):
        for name in ("COLUMNS", "LINES"):
            os.environ.pop(name, None)
        return rubric_gate(ROOT, "check", "--base", BASE, "--head", head, *fmt)


def test_the_gated_rubric_label_names_the_version_its_yaml_shows() -> None:
    # Every change of the drifting revision is rejected: the gated rubric keeps the base's checks
    # but is the head's file (version 4), so a label "base unchanged, version 3" over it was false.
    proc = example_check("examples/drifting-revision.yaml", "--format", "markdown")
    assert proc.returncode == 1, proc.stderr
    summary = re.search(r"<summary>Gated rubric \(([^)]*)\)</summary>\s*```yaml\n(.*?)```", proc.stdout, re.S)
    assert summary, proc.stdout
    label, body = summary.groups()
    version = str(yaml.safe_load(body)["version"])
    assert f"version {version}" in label and "every change rejected" in label
    assert "base unchanged" not in proc.stdout
    assert f"| Gated ({label}) |" in proc.stdout  # the rates column says the same


def test_the_text_report_says_why_a_reason_cites_other_figures_than_its_row() -> None:
    out = example_check("examples/drifting-revision.yaml").stdout
    assert "would add blame 10.50" in out  # decided with the base's checks, while the row shows 3.75
    row = next(line for line in out.splitlines() if line.startswith("recommends-remediation"))
    assert row.split()[4] == "3.75"
    assert DECIDED_NOTE in out


def test_no_decided_note_when_every_reason_matches_its_row(tmp_path: Path) -> None:
    # One deletion alone: decided on the base, which is the row a deleted check shows.
    base = yaml.safe_load((ROOT / BASE).read_text(encoding="utf-8"))
    base["checks"] = [c for c in base["checks"] if c["id"] != "severity-fits"]
    base["version"] = "3b"
    head = tmp_path / "head.yaml"
    head.write_text(yaml.safe_dump(base, sort_keys=False), encoding="utf-8")
    proc = _check(str(head))
    assert proc.returncode == 1, proc.stderr
    assert "REJECTED deleted  severity-fits" in proc.stdout
    assert DECIDED_NOTE not in proc.stdout


def test_at_80_columns_check_ids_stay_whole_before_the_decision_folds() -> None:
    proc = example_check("examples/drifting-revision.yaml", columns="80")
    lines = proc.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    row = next(line for line in lines if line.startswith("no-invented-findings"))  # 20 characters
    assert row.split()[:2] == ["no-invented-findings", "hand"]
    assert any(line.rstrip().endswith("REJECTED") for line in lines)  # the decision folded instead


def test_a_single_accepted_change_reads_as_one(tmp_path: Path) -> None:
    base = yaml.safe_load((ROOT / BASE).read_text(encoding="utf-8"))
    base["checks"] = [{**c, "id": "renamed-" + c["id"]} if c["id"] == "severity-fits" else c for c in base["checks"]]
    head = tmp_path / "head.yaml"
    head.write_text(yaml.safe_dump(base, sort_keys=False), encoding="utf-8")
    for fmt in ("markdown", "html"):
        proc = _check(str(head), "--format", fmt)
        assert proc.returncode == 0, proc.stderr
        assert "The one change was accepted." in proc.stdout and "All 1 change" not in proc.stdout


def test_at_80_columns_a_wrapped_reason_continues_under_its_text() -> None:
    proc = example_check("examples/drifting-revision.yaml", columns="80")
    lines = proc.stdout.splitlines()
    end = next(i for i, line in enumerate(lines) if line.startswith(("to pass:", "note:", "per check")))
    reasons = lines[1:end]
    assert len(reasons) > 10  # five rejections and their trades, wrapped
    assert all(line.startswith("  ") for line in reasons), reasons  # never back at column 0
    note = next(i for i, line in enumerate(lines) if line.startswith("note: only"))
    assert lines[note + 1].startswith(" " * 6 + "each the rates")  # a wrapped note continues under its text


def test_a_failed_check_says_how_to_pass_and_where_the_gated_rubric_is() -> None:
    # The terminal report does not stop at the rejections: it says how to pass and where the gated
    # rubric to start from is (the other formats print it).
    failed = example_check("examples/drifting-revision.yaml", columns="80")
    lines = failed.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("to pass: "))
    assert lines[at + 1].startswith(" " * len("to pass: ")) and "--format markdown, json or html" in " ".join(
        line.strip() for line in lines[at:at + 4])
    assert at < next(i for i, line in enumerate(lines) if line.startswith("per check"))
    passed = example_check("examples/sound-revision.yaml", columns="80")
    assert passed.returncode == 0 and "to pass:" not in passed.stdout
