"""`rubric-gate drift`: the configured judge asked again on a stratified sample of its stored
verdicts. A planted drift (the fake judge now inverting known pairs) is reported exactly and exits
1; no drift stays quiet; the verdict store is never written."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from rubric_gate.drift import allocate, stratified_sample
from tests.fakes.llm import FakeLLM
from tests.support import gfm
from tests.support.cli import rubric_gate

JUDGE = "openai:steady-judge"
WORDS = ["apple", "pear", "plum"]
OUTPUTS = {f"r{i}": " and ".join(w for b, w in enumerate(WORDS) if i >> b & 1) or "nothing" for i in range(8)}


def write_project(root: Path, judge: str | None = JUDGE) -> None:
    lines = ["id: fruit", "version: 1", "task: List the fruit.", "calibration: cal.jsonl", "verdicts: verdicts.jsonl",
             *([f"judge: {judge}"] if judge else []), "checks:"]
    for n, word in enumerate(WORDS):
        lines += [f"  - id: k{n}", f"    text: The output mentions {word}"]
    (root / "rubric.yaml").write_text("\n".join(lines) + "\n")
    (root / "cal.jsonl").write_text("".join(
        json.dumps({"id": i, "input": f"basket {i}", "output": out, "label": "pass" if out.count("and") == 2 else "fail"})
        + "\n" for i, out in OUTPUTS.items()))


def judged(fake: FakeLLM, root: Path) -> bytes:
    write_project(root)
    proc = rubric_gate(root, "judge", "--rubric", "rubric.yaml", "--verdicts", "verdicts.jsonl", "--root", ".",
                       "--judge", JUDGE)
    assert proc.returncode == 0, proc.stderr
    return (root / "verdicts.jsonl").read_bytes()


def drift(root: Path, *args: str):
    return rubric_gate(root, "drift", "rubric.yaml", "--root", ".", "--seed", "7", *args)


def test_no_drift_stays_quiet(fake: FakeLLM, tmp_path: Path) -> None:
    stored = judged(fake, tmp_path)
    before = fake.received
    proc = drift(tmp_path, "--sample", "10", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    (rubric,) = data["rubrics"]
    assert data["drifted"] is False and rubric["drifted"] is False and rubric["reasons"] == []
    assert rubric["asked"] == 10 and rubric["population"] == 24 and fake.received - before == 10
    assert rubric["flips"] == {"yes_to_no": 0, "no_to_yes": 0} and rubric["flip_rate"] == 0.0
    assert rubric["kappa"]["value"] == 1.0 and rubric["p_value"] == 1.0
    assert rubric["judging"]["calls"] == 10
    assert (tmp_path / "verdicts.jsonl").read_bytes() == stored  # nothing written


def test_planted_drift_is_reported_exactly_and_exits_1(fake: FakeLLM, tmp_path: Path) -> None:
    stored = judged(fake, tmp_path)
    # The provider now answers no where the fruit is named, on six known pairs (yes -> no).
    planted = {("apple", OUTPUTS["r1"]), ("apple", OUTPUTS["r3"]), ("pear", OUTPUTS["r2"]), ("pear", OUTPUTS["r7"]),
               ("plum", OUTPUTS["r4"]), ("plum", OUTPUTS["r5"])}
    fake.flips["steady-judge"] = planted
    proc = drift(tmp_path, "--sample", "24", "--format", "json")  # the whole population: every pair asked
    assert proc.returncode == 1, proc.stderr
    (rubric,) = json.loads(proc.stdout)["rubrics"]
    assert rubric["asked"] == 24 and rubric["flips"] == {"yes_to_no": 6, "no_to_yes": 0}
    assert rubric["flip_rate"] == pytest.approx(6 / 24)
    assert rubric["p_value"] == pytest.approx(2 * 0.5**6)  # exact McNemar: 6 discordant, one way
    changed = {(WORDS[int(p["check"][1])], OUTPUTS[p["item"]]) for p in rubric["changed"]}
    assert changed == planted and all((p["stored"], p["now"]) == ("yes", "no") for p in rubric["changed"])
    # kappa by hand: stored no on 12 of 24 pairs, now on 18; agreement 18/24.
    po, pe = 18 / 24, (12 / 24) * (18 / 24) + (12 / 24) * (6 / 24)
    assert rubric["kappa"]["value"] == round((po - pe) / (1 - pe), 4)
    assert len(rubric["reasons"]) == 2 and "stricter" in rubric["reasons"][1]
    assert [c["yes_to_no"] for c in rubric["checks"]] == [2, 2, 2]
    assert (tmp_path / "verdicts.jsonl").read_bytes() == stored
    # The thresholds are the user's: the same drift under looser ones is quiet.
    loose = drift(tmp_path, "--sample", "24", "--max-flip-rate", "0.5", "--alpha", "0.01")
    assert loose.returncode == 0 and "steady" in loose.stdout


def test_the_markdown_report_renders_for_the_job_summary(fake: FakeLLM, tmp_path: Path) -> None:
    judged(fake, tmp_path)
    fake.flips["steady-judge"] = {("apple", OUTPUTS["r1"])}
    data = json.loads(drift(tmp_path, "--sample", "24", "--format", "json").stdout)
    markdown = drift(tmp_path, "--sample", "24", "--format", "markdown").stdout
    root = gfm.parse(markdown)
    assert gfm.live_spans(root) == []
    (table,) = gfm.tables(root)
    assert [row[:3] for row in gfm.table_rows(table)] == [[c["id"], str(c["asked"]), str(c["yes_to_no"])]
                                                          for c in data["rubrics"][0]["checks"]]
    assert "steady" in markdown  # 1 of 24 (4.2%) is under the 5% default, and one flip tests nothing


def test_a_rubric_without_a_judge_is_skipped_and_none_at_all_is_bad_input(fake: FakeLLM, tmp_path: Path) -> None:
    write_project(tmp_path, judge=None)
    proc = drift(tmp_path, "--format", "json")
    assert proc.returncode == 2 and "no rubric names a judge" in proc.stderr
    assert json.loads(proc.stdout)["decision"] is None
    none_stored = rubric_gate(tmp_path, "drift", "rubric.yaml", "--root", ".", "--judge", JUDGE)
    assert none_stored.returncode == 2 and "no verdict stored by openai:steady-judge" in none_stored.stderr
    assert fake.received == 0


def test_allocation_gives_every_stratum_one_then_its_share() -> None:
    assert allocate(np.array([10, 1, 0, 5]), 4).tolist() == [2, 1, 0, 1]
    assert allocate(np.array([10, 1, 0, 5]), 2).tolist() == [2, 0, 0, 0]  # too few for every stratum: by share
    assert allocate(np.array([10, 1, 0, 5]), 100).tolist() == [10, 1, 0, 5]  # never more than a stratum holds
    assert allocate(np.array([60, 30, 10]), 10).tolist() == [6, 3, 1]


def test_the_sample_is_seeded_and_its_weights_give_population_shares() -> None:
    strata = np.array([0] * 90 + [1] * 10)
    a, b = stratified_sample(strata, 20, seed=3), stratified_sample(strata, 20, seed=3)
    assert a.chosen.tolist() == b.chosen.tolist() and len(a.chosen) == 20
    assert sorted(np.bincount(a.strata).tolist()) == [2, 18]
    weights = np.array([a.weights[int(s)] for s in a.strata])
    assert weights.sum() == pytest.approx(1.0)  # each pair stands for its stratum's share
    assert stratified_sample(strata, 20, seed=4).chosen.tolist() != a.chosen.tolist()
