"""`rubric-gate teach` on the bundled example against a fake provider: only proposals the gate
accepts are printed, frozen as origin label; a rejected proposal is dropped; a rerun makes no call."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.discover.conftest import EXAMPLE, hand_truth, items
from tests.fakes.discover_llm import FakeDiscoverLLM
from tests.support.cli import run_cli

JUDGE = "anthropic:claude-haiku-4-5"
SEVERITY = ("No finding is rated a higher severity than the exposure the environment description shows "
            "supports, such as Critical for a setting that opens nothing to the internet.")
STRICT = "Every finding includes a recommendation for fixing it."


def outputs(root: Path, predicate) -> set[str]:
    return {i["output"] for i in items(root) if predicate(i)}


def teach(monkeypatch, root, capsys, *args: str, rubric: str = EXAMPLE) -> tuple[int, dict, str]:
    monkeypatch.chdir(root)
    code, out, err = run_cli(capsys, "teach", rubric, "--judge", JUDGE, "--root", ".",
                             "--format", "json", *args)
    return code, (json.loads(out) if out.strip() else {}), err


@pytest.fixture
def judged(fake: FakeDiscoverLLM, example: Path) -> FakeDiscoverLLM:
    fake.truth = hand_truth(example)
    # A judge that sees exaggeration exactly where the labels put it, and a check that fails
    # correct reports (many skip recommendations, which the task calls optional).
    fake.truth[SEVERITY] = outputs(example, lambda i: i.get("flaw") == "exaggerated")
    fake.truth[STRICT] = outputs(example, lambda i: "Recommendation" not in i["output"])
    return fake


def test_teach_on_the_bundled_example_keeps_a_check_the_gate_accepts(judged, example, monkeypatch, capsys) -> None:
    judged.teach = {"exaggerated": SEVERITY}
    code, report, err = teach(monkeypatch, example, capsys)
    assert code == 0, err
    assert report["missed"] == {"exaggerated": ["r43"]}
    [proposal] = report["proposals"]
    assert proposal["accepted"] and proposal["catches"] == ["r43"] and proposal["fails_correct"] == []
    assert proposal["blame"] == 0 and proposal["credit"] > 0
    [check] = yaml.safe_load(report["yaml"])
    assert check == {"id": "taught-exaggerated", "text": SEVERITY, "origin": "label",
                     "source": "rubric-gate teach on v3: taught by exaggerated items r43"}
    assert judged.kinds.count("teach") == 1
    assert "teach anthropic:claude-haiku-4-5: 1 calls" in err

    # The snippet pasted into the rubric passes the gate as a PR, with the same judge.
    head = example / "head.yaml"
    head.write_text((example / EXAMPLE).read_text() + report["yaml"])
    monkeypatch.chdir(example)
    code, out, err = run_cli(capsys, "check", "--base", EXAMPLE, "--head", "head.yaml",
                             "--root", ".", "--judge", JUDGE, "--format", "json")
    assert code == 0, err
    change = json.loads(out)["changes"]
    assert [(c["check"], c["change"], c["decision"]) for c in change] == [("taught-exaggerated", "added", "accepted")]

    calls = judged.received
    code, again, _ = teach(monkeypatch, example, capsys)
    assert code == 0 and judged.received == calls, "a rerun makes no call"
    assert again["yaml"] == report["yaml"]


def test_a_proposal_with_blame_is_dropped(judged, example, monkeypatch, capsys) -> None:
    # v1 of the example: the hand checks only, before the label-taught ones.
    v1 = yaml.safe_load((example / EXAMPLE).read_text())
    reports_all = next(c for c in v1["checks"] if c["id"] == "reports-all")
    v1["checks"] = [c for c in v1["checks"] if c["origin"] == "hand"]
    (example / "v1.yaml").write_text(yaml.safe_dump(v1, sort_keys=False))
    judged.teach = {"unplanned": reports_all["text"], "exaggerated": STRICT}
    code, report, err = teach(monkeypatch, example, capsys, rubric="v1.yaml")
    assert code == 0, err
    assert report["missed"] == {"unplanned": ["r19", "r27", "r31", "r35"], "exaggerated": ["r43"]}
    kept, dropped = report["proposals"]
    assert kept["accepted"] and kept["catches"] == ["r19", "r27", "r31", "r35"]
    assert not dropped["accepted"] and dropped["fails_correct"]
    assert "blame" in dropped["reason"] and f"answers no on {len(dropped['fails_correct'])} correct items" \
        in dropped["reason"]
    assert [c["id"] for c in yaml.safe_load(report["yaml"])] == ["taught-unplanned"]

    # The dropped proposal's verdicts are stored like any others (a rerun reuses them).
    lines = (example / "calibration/cloud-security-review.verdicts.jsonl").read_text().splitlines()
    assert sum(1 for line in lines if json.loads(line)["check_text"] == STRICT) == 46

    monkeypatch.chdir(example)
    code, out, _ = run_cli(capsys, "teach", "v1.yaml", "--judge", JUDGE, "--root", ".",
                           "--format", "yaml")
    assert code == 0 and yaml.safe_load(out)[0]["id"] == "taught-unplanned"
    monkeypatch.chdir(example)
    code, out, _ = run_cli(capsys, "teach", "v1.yaml", "--judge", JUDGE, "--root", ".")
    assert "dropped taught-exaggerated" in out and "kept taught-unplanned" in out


def test_a_repeated_catch_is_dropped_by_teachs_own_rule(judged, example, monkeypatch, capsys) -> None:
    v1 = yaml.safe_load((example / EXAMPLE).read_text())
    v1["checks"] = [c for c in v1["checks"] if c["origin"] == "hand"]
    (example / "v1.yaml").write_text(yaml.safe_dump(v1, sort_keys=False))
    # Both groups get the same text: the second adds no catch the first did not make.
    judged.truth[SEVERITY] |= outputs(example, lambda i: i.get("flaw") == "unplanned")
    judged.teach = {"unplanned": SEVERITY, "exaggerated": SEVERITY}
    code, report, err = teach(monkeypatch, example, capsys, rubric="v1.yaml")
    assert code == 0, err
    # Equal credit and blame: the gate decides additions in id order, so the smaller id is kept.
    first, second = sorted(report["proposals"], key=lambda p: p["id"])
    assert first["accepted"] and not second["accepted"]
    assert second["reason"] == "would catch no flawed item the rubric lets pass, so it teaches nothing new"


def test_dry_run_makes_no_call_and_max_limits_groups(judged, example, monkeypatch, capsys) -> None:
    code, report, err = teach(monkeypatch, example, capsys, "--dry-run")
    assert code == 0, err
    assert judged.received == 0 and report["dry_run"] and report["proposals"] == []
    assert "would make 368 calls" in report["plan"][0]
    assert not (example / "calibration/cloud-security-review.verdicts.audits.jsonl").exists()


def test_dry_run_after_judging_plans_the_teach_calls(judged, example, monkeypatch, capsys) -> None:
    monkeypatch.chdir(example)
    code, _, err = run_cli(capsys, "judge", "--rubric", EXAMPLE, "--judge", JUDGE, "--verdicts",
                           "calibration/cloud-security-review.verdicts.jsonl", "--root", ".")
    assert code == 0, err
    calls = judged.received
    code, report, err = teach(monkeypatch, example, capsys, "--dry-run")
    assert code == 0, err
    assert judged.received == calls
    assert report["plan"][0].startswith("teach anthropic:claude-haiku-4-5: would make 1 calls (0 answers reused)")
    assert "up to 46 verdict calls" in report["plan"][1]


def test_no_judge_and_max_calls_are_errors(fake, example, monkeypatch, capsys) -> None:
    monkeypatch.chdir(example)
    code, _, err = run_cli(capsys, "teach", EXAMPLE, "--root", ".")
    assert code == 2 and "pass --judge" in err
    code, _, err = teach(monkeypatch, example, capsys, "--max-calls", "10")
    assert code == 2 and "above --max-calls 10" in err and fake.received == 0


def test_a_dry_run_before_any_verdict_says_nothing_about_missed_items(judged, example, monkeypatch, capsys) -> None:
    code, report, _ = teach(monkeypatch, example, capsys, "--dry-run")
    assert code == 0 and report["missed"] is None  # not "0 missed": nothing is known yet
    monkeypatch.chdir(example)
    code, out, _ = run_cli(capsys, "teach", EXAMPLE, "--judge", JUDGE, "--dry-run", "--root", ".")
    assert code == 0 and "0 of 46 items are flawed" not in out
    assert "known only once the rubric's verdicts are judged" in out and "dry run: judge" in out
