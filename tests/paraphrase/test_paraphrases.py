"""check --paraphrases: rewordings generated once, stored, judged, compared with the original;
--min-stability rejects a check that answers differently under paraphrase."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rubric_gate.paraphrase import ParaphraseStore
from tests.ensemble.conftest import CONTRARY, TRUTHFUL, check_json, write_base_head
from tests.fakes.llm import FakeLLM
from tests.support.cli import run_cli

# Head adds "clearly-apple", a faithful twin of "apple" (no blame: accepted). Its second
# rewording names pear instead: pear and apple answer alike on r0, r3, r4, r7 only (4 of 8), so
# paraphrase agreement = (1 + 4/8 + 1) / 3.
EXPECTED_AGREEMENT = (1 + 4 / 8 + 1) / 3
# Apple and pear fail 4 of 8 items each and agree on half: no better than chance, kappa 0.
EXPECTED_KAPPA = (1 + 0 + 1) / 3


def write_twin(root: Path) -> None:
    write_base_head(root, ["apple"], ["apple"])
    head = (root / "rubric.yaml").read_text()
    head += "  - id: clearly-apple\n    text: The output clearly mentions apple\n"
    (root / "rubric.yaml").write_text(head)


@pytest.fixture
def rewording_fake(fake: FakeLLM) -> FakeLLM:
    fake.paraphrase_words = {"apple": ["apple", "pear", "apple"]}
    return fake


def test_paraphrase_agreement_and_reuse(rewording_fake: FakeLLM, project: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    write_twin(project)
    code, report = check_json(capsys, "--judge", TRUTHFUL, "--paraphrases", "3")
    assert code == 0
    # 2 check texts x 8 items, 3 paraphrase calls, 3 paraphrases x 8 items judged
    assert rewording_fake.received == 16 + 3 + 24
    row = next(r for r in report["head"]["checks"] if r["id"] == "clearly-apple")
    assert row["paraphrase_agreement"] == pytest.approx(EXPECTED_AGREEMENT)
    assert row["paraphrase_kappa"] == pytest.approx(EXPECTED_KAPPA)
    assert row["paraphrases"][1] == "Reworded (2): the output names pear"
    assert "paraphrase_agreement" not in report["head"]["checks"][0]  # unchanged checks are not reworded
    info = report["judging"]["paraphrases"]
    assert (info["generated"], info["reused"], info["model"]) == (3, 0, TRUTHFUL)
    stored = ParaphraseStore.load(project / "verdicts.paraphrases.jsonl")
    third = stored.get("The output clearly   mentions apple", TRUTHFUL, 2)  # keyed by normalised text
    assert third is not None and third.text == row["paraphrases"][2] == "Reworded (3): the output names apple"
    # A rerun generates and judges nothing.
    _, again = check_json(capsys, "--judge", TRUTHFUL, "--paraphrases", "3")
    assert rewording_fake.received == 43 and again["judging"]["paraphrases"]["reused"] == 3


def test_paraphraser_model_is_its_own_key(rewording_fake: FakeLLM, project: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    write_twin(project)
    check_json(capsys, "--judge", TRUTHFUL, "--paraphrases", "2", "--paraphraser", CONTRARY)
    lines = [json.loads(line) for line in (project / "verdicts.paraphrases.jsonl").read_text().splitlines()]
    assert {line["model"] for line in lines} == {CONTRARY} and sorted(line["index"] for line in lines) == [0, 1]
    paraphrase_calls = [b for b in rewording_fake.bodies if "<original>" in str(b["messages"])]
    assert len(paraphrase_calls) == 2 and all(b["model"] == "judge-b" for b in paraphrase_calls)


@pytest.mark.parametrize(("threshold", "decision"), [(0.8, "rejected"), (0.7, "rejected"), (0.6, "accepted")])
def test_min_stability_rejects_an_unstable_addition(rewording_fake: FakeLLM, project: Path,
                                                    capsys: pytest.CaptureFixture[str],
                                                    threshold: float, decision: str) -> None:
    write_twin(project)
    code, report = check_json(capsys, "--judge", TRUTHFUL, "--paraphrases", "3", "--min-stability", str(threshold))
    change = report["changes"][0]
    assert change["decision"] == decision and code == (1 if decision == "rejected" else 0)
    if decision == "rejected":
        # the kappa (0.67), not the raw agreement (0.83), decides
        assert change["rules"] == ["U"] and f"stability 0.67 is below --min-stability {threshold:.2f}" in change["reason"]


def test_min_stability_from_flip_rate(fake: FakeLLM, project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fake.sequences = {("apple", "apple and pear"): ["yes", "no", "yes"]}  # r3 flips: 1 - 1/8 stable
    write_twin(project)
    # Both checks end in "apple", so both consume the sequence: one call at a time keeps each
    # pair's three samples together (yes, no, yes for each), whatever the scheduler does.
    serial = ("--concurrency", "1")
    _, strict = check_json(capsys, "--judge", TRUTHFUL, "--samples", "3", "--min-stability", "0.9", *serial)
    assert strict["changes"][0]["decision"] == "rejected" and strict["changes"][0]["unstable"] is True
    _, lenient = check_json(capsys, "--judge", TRUTHFUL, "--samples", "3", "--min-stability", "0.85", *serial)
    assert lenient["changes"][0]["decision"] == "accepted"


def test_paraphrases_need_a_live_judge(fake: FakeLLM, project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_twin(project)
    code, _, err = run_cli(capsys, "check", "--base", "base.yaml", "--head", "rubric.yaml", "--root", ".",
                           "--paraphrases", "2", "--replay")
    assert code == 2 and "drop --replay" in err and fake.received == 0


def test_unparseable_paraphrases_are_never_guessed(fake: FakeLLM, project: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Without --min-stability the paraphrases are advice: their failure is a notice and the
    gate's decision (exit 0 here) stands; nothing is guessed into a paraphrase."""
    fake.rules = {"<original>": "nonjson"}
    write_twin(project)
    code, _, err = run_cli(capsys, "check", "--base", "base.yaml", "--head", "rubric.yaml", "--root", ".",
                           "--judge", TRUTHFUL, "--paraphrases", "2")
    notice = next(line for line in err.splitlines() if line.startswith("rubric-gate: notice: Paraphrases"))
    assert code == 0 and "2 paraphrase calls have no valid answer, none guessed (2 invalid): " in notice
    assert notice.count("no valid answer after 3 replies (not JSON: ") == 2
    assert not (project / "verdicts.paraphrases.jsonl").exists()


def test_unparseable_paraphrases_stop_a_gate_that_reads_them(fake: FakeLLM, project: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """With --min-stability the paraphrases decide (rule U): without them there is no decision (exit 2)."""
    fake.rules = {"<original>": "nonjson"}
    write_twin(project)
    code, _, err = run_cli(capsys, "check", "--base", "base.yaml", "--head", "rubric.yaml", "--root", ".",
                           "--judge", TRUTHFUL, "--paraphrases", "2", "--min-stability", "0.5")
    last = err.splitlines()[-1]
    assert code == 2 and last.startswith("rubric-gate: error: 2 paraphrase calls have no valid answer, none guessed")


def test_corrupt_paraphrase_file_names_file_and_line(fake: FakeLLM, project: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    write_twin(project)
    (project / "verdicts.paraphrases.jsonl").write_text('{"check_text": "x", "model": "m", "index": 0, "text": ""}\n')
    code, _, err = run_cli(capsys, "check", "--base", "base.yaml", "--head", "rubric.yaml", "--root", ".",
                           "--judge", TRUTHFUL, "--paraphrases", "2")
    assert code == 2 and "verdicts.paraphrases.jsonl:1: paraphrase text must be non-empty" in err
