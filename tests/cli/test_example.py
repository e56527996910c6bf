"""The bundled example keeps telling its story: drift is rejected, the sound edit passes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import rubric_gate

ROOT = Path(__file__).resolve().parents[2]
BASE = "rubrics/cloud-security-review.yaml"


def check(head: str) -> tuple[int, dict]:
    proc = rubric_gate(ROOT, "check", "--base", BASE, "--head", head, "--format", "json")
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def test_drifting_revision_fails_on_every_change() -> None:
    code, report = check("examples/drifting-revision.yaml")
    assert code == 1 and report["decision"] == "fail"
    decisions = {(c["check"], c["change"]): c["decision"] for c in report["changes"]}
    # Three requirements the task never states added, the frozen coverage check reworded, the
    # only check failing r26, r30 and r32 deleted (the example's header): each rejected.
    assert decisions == {("cites-benchmark", "added"): "rejected", ("opens-with-summary", "added"): "rejected",
                         ("recommends-remediation", "added"): "rejected", ("reports-all", "modified"): "rejected",
                         ("severity-fits", "deleted"): "rejected"}
    # The drift collapses correct passed; the gated rubric keeps the base's rates.
    assert report["head"]["rates"]["correct_passed"]["count"] < report["base"]["rates"]["correct_passed"]["count"]
    assert report["gated"]["rates"] == report["base"]["rates"]


def test_sound_revision_passes() -> None:
    code, report = check("examples/sound-revision.yaml")
    assert code == 0 and report["decision"] == "pass"
    assert {(c["check"], c["change"]): c["decision"] for c in report["changes"]} == {
        ("names-resource", "modified"): "accepted", ("states-setting", "deleted"): "accepted",
        ("states-severity", "added"): "accepted"}
    base, head = report["base"]["rates"], report["head"]["rates"]
    # Two more correct reports pass, and every flaw the base caught is still caught.
    assert (base["correct_passed"]["count"], head["correct_passed"]["count"]) == (20, 22)
    assert (base["flawed_caught"]["count"], head["flawed_caught"]["count"]) == (23, 23)


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
