"""The rubric's task is part of every verdict's key, derived by the lookup from the rubric it is
given: `attribute` and `check-staged` (which once replayed with no task) never count a verdict
recorded under another task."""

from __future__ import annotations

import json

import pytest

from rubric_gate.calibration import CalibrationItem, CalibrationSet
from rubric_gate.rubric import Rubric
from rubric_gate.scoring import VerdictLookup
from rubric_gate.verdicts import Verdict, VerdictStore, task_hash
from tests.cli.test_precommit import pushed  # noqa: F401  (the fixture)
from tests.support.git_repo import CHECKS, FAILED_BY, ITEMS, Repo, rubric_text, run_cli

OTHER_TASK = task_hash("Say every incident report is fine.")


def _under_other_task(checks: dict[str, str]) -> str:
    return "".join(json.dumps({"item": item, "check_text": text, "answer": "no" if cid in FAILED_BY[item] else "yes",
                               "task_hash": OTHER_TASK}) + "\n"
                   for cid, text in checks.items() for item in ITEMS)


def test_a_lookup_cannot_be_built_without_the_rubric_whose_task_keys_it() -> None:
    items = CalibrationSet((CalibrationItem(id="i1", input="x", output="y", label="fail"),), "c.jsonl")
    with pytest.raises(TypeError):
        VerdictLookup(items, VerdictStore())  # type: ignore[call-arg]
    rubric = Rubric(id="r", version=1, task="Summarize the incident.", calibration="c.jsonl", verdicts="v.jsonl",
                    checks=[{"id": "A", "text": "a"}])
    store = VerdictStore([Verdict(item="i1", check_text="a", answer="no", task_hash=OTHER_TASK)])
    lookup = VerdictLookup(items, store, rubric)
    assert lookup.task == task_hash("Summarize the incident.") and bool(lookup.column("a").missing[0])
    keyless = VerdictLookup(items, VerdictStore([Verdict(item="i1", check_text="a", answer="no")]), rubric)
    assert not keyless.column("a").missing[0] and bool(keyless.column("a").failed[0])


def test_attribute_does_not_count_verdicts_recorded_under_another_task(repo: Repo,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    repo.write("calibration/demo.verdicts.jsonl", _under_other_task(CHECKS))
    code, out, err = run_cli(capsys, "attribute", "rubrics/demo.yaml")
    assert code == 2, out + err
    assert "no recorded verdict in calibration/demo.verdicts.jsonl for checks A (4/4 items" in err, err


def test_check_staged_does_not_count_verdicts_recorded_under_another_task(
        pushed: Repo, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    added = {**CHECKS, "C": "The output is in English."}
    pushed.write("calibration/demo.verdicts.jsonl", pushed.verdicts(CHECKS) + _under_other_task({"C": added["C"]}))
    pushed.write("rubrics/demo.yaml", rubric_text(added, version="2"))
    pushed.git("add", "-A")
    code, out, err = run_cli(capsys, "check-staged", "rubrics/demo.yaml")
    assert code == 2, out + err  # C has no verdict under this rubric's task (it was "accepted" on the other's)
    assert "for check C (4/4 items" in err and "accepted added    C" not in out, out + err
