"""The bundled example keeps telling its story: drift is rejected, the sound edit passes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BASE = "rubrics/cloud-security-review.yaml"


def check(head: str) -> tuple[int, dict]:
    proc = subprocess.run(
        [sys.executable, "-m", "rubric_gate", "check", "--base", BASE, "--head", head, "--format", "json"],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def test_drifting_revision_fails_on_every_change() -> None:
    code, report = check("examples/drifting-revision.yaml")
    assert code == 1 and report["decision"] == "fail"
    decisions = {(c["check"], c["change"]): c["decision"] for c in report["changes"]}
    assert set(decisions.values()) == {"rejected"}
    assert ("reports-all", "modified") in decisions  # the frozen open coverage check
    assert any(kind == "deleted" for _, kind in decisions)
    assert all(kind != "added" or report["head"]["checks"] for _, kind in decisions)
    # The drift collapses correct passed; the gated rubric keeps the base's rates.
    assert report["head"]["rates"]["correct_passed"]["count"] < report["base"]["rates"]["correct_passed"]["count"]
    assert report["gated"]["rates"] == report["base"]["rates"]


def test_sound_revision_passes() -> None:
    code, report = check("examples/sound-revision.yaml")
    assert code == 0 and report["decision"] == "pass"
    assert report["changes"] and all(c["decision"] == "accepted" for c in report["changes"])
    base, head = report["base"]["rates"], report["head"]["rates"]
    assert head["correct_passed"]["count"] >= base["correct_passed"]["count"]
    assert head["flawed_caught"]["count"] == base["flawed_caught"]["count"]


@pytest.mark.parametrize("name", ["cloud-security-review"])
def test_every_pair_of_the_current_rubric_has_one_verdict(name: str) -> None:
    from rubric_gate.calibration import load_calibration
    from rubric_gate.rubric import load_rubric
    from rubric_gate.verdicts import VerdictStore

    rubric = load_rubric(ROOT / f"rubrics/{name}.yaml").rubric
    items = load_calibration(ROOT / rubric.calibration).items
    store = VerdictStore.load(ROOT / rubric.verdicts)
    assert len(store) == len(items) * len(rubric.checks)
    assert all(store.find(c.text, item) is not None for c in rubric.checks for item in items)
    assert sum(item.label == "fail" for item in items) >= 0.4 * len(items) >= 16
