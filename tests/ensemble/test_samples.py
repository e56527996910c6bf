"""--samples: repeated asks stored by index, reused, majority-gated; flip rate and unstable
decisions against planted flips. Real SDKs against the fake server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rubric_gate.judges import judge_missing
from rubric_gate.verdicts import VerdictStore
from tests.ensemble.conftest import (
    CONTRARY,
    TRUTHFUL,
    check_json,
    fruit_rubric,
    run_cli,
    write_base_head,
)
from tests.fakes.llm import FakeLLM
from tests.judges.conftest import make_items

UNSTABLE = ("pear", "apple and pear")  # r3, a correct item: the pear check answers no, yes, no


def test_samples_are_stored_by_index_and_only_new_ones_are_asked(fake: FakeLLM, project: Path) -> None:
    rubric, items = fruit_rubric(["apple", "pear"]), make_items()
    store = VerdictStore.load(project / "verdicts.jsonl", missing_ok=True)
    assert judge_missing([rubric], items, store, TRUTHFUL).calls == 16  # an existing single-sample store
    stats = judge_missing([rubric], items, store, TRUTHFUL, samples=3)
    assert (stats.calls, stats.reused) == (32, 16)  # sample 0 is the verdict already recorded
    assert judge_missing([rubric], items, VerdictStore.load(project / "verdicts.jsonl"), TRUTHFUL, samples=3).calls == 0
    raised = judge_missing([rubric], items, VerdictStore.load(project / "verdicts.jsonl"), TRUTHFUL, samples=5)
    assert (raised.calls, raised.reused) == (32, 48)
    lines = (project / "verdicts.jsonl").read_text().splitlines()
    assert sum('"sample"' not in line for line in lines) == 16  # sample 0 written as before
    saved = VerdictStore.load(project / "verdicts.jsonl")
    assert sorted({v.sample or 0 for v in saved}) == [0, 1, 2, 3, 4]
    assert fake.received == 16 + 32 + 32


def test_even_samples_are_refused(fake: FakeLLM, project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_base_head(project, ["apple"], ["apple", "pear"])
    code, _, err = run_cli(capsys, "judge", "--rubric", "rubric.yaml", "--verdicts", "v.jsonl", "--judge", TRUTHFUL,
                           "--samples", "2")
    assert code == 2 and "odd" in err and fake.received == 0


def test_sampled_asks_enable_sampling_where_the_provider_allows(fake: FakeLLM, project: Path) -> None:
    rubric, items = fruit_rubric(["apple"]), make_items(2)
    for judge in (CONTRARY, TRUTHFUL):
        judge_missing([rubric], items, VerdictStore(), judge, samples=3)
    openai = [b for b in fake.bodies if b.get("model") == "judge-b"]
    temperatures = sorted(b["temperature"] for b in openai)
    assert temperatures == [0, 0, 0.7, 0.7, 0.7, 0.7]  # sample 0 greedy, samples 1-2 at 0.7
    anthropic = [b for b in fake.bodies if b.get("model") == "judge-a"]
    assert len(anthropic) == 6 and all("temperature" not in b for b in anthropic)  # the API rejects it


def test_flip_rate_and_unstable_decision_from_planted_flips(fake: FakeLLM, project: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    fake.sequences = {UNSTABLE: ["no", "yes", "no"]}
    # Adding "pear" is rejected: it answers no on correct items r1, r5 (no pear) and, by the
    # majority of its three samples, on r3, whose samples disagree.
    write_base_head(project, ["apple"], ["apple", "pear"])
    code, report = check_json(capsys, "--judge", TRUTHFUL, "--samples", "3")
    assert code == 1 and fake.received == 2 * 8 * 3
    change = report["changes"][0]
    assert change["decision"] == "rejected" and "3 correct items (r1, r3, r5)" in change["reason"]
    assert change["unstable"] is True and change["unstable_items"] == ["r3"]
    rows = {r["id"]: r for r in report["head"]["checks"]}
    assert rows["pear"]["flip_rate"] == pytest.approx(1 / 8) and rows["pear"]["unstable_items"] == ["r3"]
    assert rows["apple"]["flip_rate"] == 0 and "alpha" not in rows["apple"]  # one judge: alpha not measured
    assert report["reliability"]["unstable_changes"] == ["pear"]
    # A rerun reuses every sample.
    check_json(capsys, "--judge", TRUTHFUL, "--samples", "3")
    assert fake.received == 48


def test_single_sample_report_carries_no_sampling_fields(fake: FakeLLM, project: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    write_base_head(project, ["apple"], ["apple", "pear"])
    _, report = check_json(capsys, "--judge", TRUTHFUL)
    assert report["reliability"] is None
    assert "unstable" not in report["changes"][0] and "flip_rate" not in report["head"]["checks"][0]


def test_later_samples_never_shadow_sample_zero(tmp_path: Path) -> None:
    items = make_items(2)
    item = items.items[0]
    path = tmp_path / "v.jsonl"
    lines = [
        {"item": item.id, "check_text": "The output mentions apple", "answer": "yes", "judge": TRUTHFUL,
         "prompt": "p", "item_hash": item.content_hash},
        {"item": item.id, "check_text": "The output mentions apple", "answer": "no", "judge": TRUTHFUL,
         "prompt": "p", "item_hash": item.content_hash, "sample": 1},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    store = VerdictStore.load(path)
    assert store.find("The output mentions apple", item).answer == "yes"  # replay: sample 0
    assert store.find("The output mentions apple", item, judge=TRUTHFUL, prompt="p").answer == "yes"
    assert store.find("The output mentions apple", item, judge=TRUTHFUL, prompt="p", sample=1).answer == "no"
    assert store.find("The output mentions apple", item, judge=TRUTHFUL, prompt="p", sample=2) is None


@pytest.mark.parametrize(("value", "message"), [("true", "a valid integer"), ("-1", "greater than or equal to 0"),
                                                 ('"1"', "a valid integer")])
def test_bad_sample_index_is_a_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              value: str, message: str) -> None:
    write_base_head(tmp_path, ["apple"], ["apple"])
    bad = '{"item": "r1", "check_text": "The output mentions apple", "answer": "yes", "sample": ' + value + "}\n"
    (tmp_path / "verdicts.jsonl").write_text(bad)
    code, _, err = run_cli(capsys, "check", "--base", str(tmp_path / "base.yaml"), "--head", str(tmp_path / "rubric.yaml"),
                           "--root", str(tmp_path), "--verdicts", str(tmp_path / "verdicts.jsonl"))
    assert code == 2 and err.count("\n") == 1 and f"verdicts.jsonl:1: sample: Input should be {message}" in err
    assert (tmp_path / "verdicts.jsonl").read_text() == bad


def test_samples_without_any_judge_is_a_one_line_error(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_base_head(project, ["apple"], ["apple", "pear"])  # the rubric names no judge
    for extra in (["--samples", "3"], ["--min-stability", "0.9"]):
        code, _, err = run_cli(capsys, "check", "--base", "base.yaml", "--head", "rubric.yaml", "--root", ".", *extra)
        assert code == 2 and err.count("\n") == 1 and "need a judge" in err
