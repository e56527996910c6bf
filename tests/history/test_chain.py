"""`history --chain gated`: the paper's replay (its Tables 2-3), each round's edits applied to what
the gate kept from the round before, on a hand-computed 3-round chain where the gated chain and
the committed one decide a round differently."""

from __future__ import annotations

import json
from pathlib import Path

from rubric_gate.history import apply_edits
from rubric_gate.rubric import Check, Rubric
from tests.support.project import Project

TEXT = "The output satisfies requirement {}."
# item -> (label, flaw, split, checks answering no)
ITEMS = {
    "R1": ("fail", None, "calibration", "A"),
    "R2": ("fail", None, "calibration", "AB"),
    "R3": ("fail", "unplanned", "calibration", "BCD"),
    "R4": ("pass", None, "calibration", "DE"),
    "R5": ("pass", None, "calibration", ""),
    "V1": ("fail", "unplanned", "evaluation", "C"),
    "V2": ("pass", None, "evaluation", "B"),
    "V3": ("fail", None, "evaluation", "A"),
}


def rubric(version: int, checks: str) -> str:
    lines = ["id: demo", f"version: {version}", "task: Summarize the incident.", "calibration: calibration/demo.jsonl",
             "verdicts: calibration/demo.verdicts.jsonl", "checks:"]
    for c in checks:
        lines += [f"  - id: {c}", f"    text: {TEXT.format(c)}"] + (["    origin: label"] if c == "A" else [])
    return "\n".join(lines) + "\n"


def chain_repo(root: Path) -> Project:
    project = Project(root)
    project.write("calibration/demo.jsonl", "".join(
        json.dumps({"id": i, "input": i, "output": f"report {i}", "label": label, "split": split,
                    **({"flaw": flaw} if flaw else {})}) + "\n" for i, (label, flaw, split, _) in ITEMS.items()))
    project.write("calibration/demo.verdicts.jsonl", "".join(
        json.dumps({"item": i, "check_text": TEXT.format(c), "answer": "no" if c in no else "yes"}) + "\n"
        for i, (_, _, _, no) in ITEMS.items() for c in "ABCDE"))
    project.git("init", "-q", "-b", "main")
    for version, checks, message in ((1, "ABCD", "start"), (2, "BCDE", "round 1: delete A, add E"),
                                     (3, "BCE", "round 2: delete D"), (4, "CE", "round 3: delete B")):
        project.write("rubrics/demo.yaml", rubric(version, checks))
        project.git("add", "-A")
        project.git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", message)
    return project


def cells(rates: dict) -> tuple:
    return tuple(None if rates[n]["rate"] is None else (rates[n]["count"], rates[n]["total"])
                 for n in ("correct_passed", "flawed_caught", "unplanned_caught"))


def test_the_gated_chain_reproduces_the_hand_computed_rounds(tmp_path: Path) -> None:
    project = chain_repo(tmp_path)
    proc = project.run("history", "rubrics/demo.yaml", "--chain", "gated", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["chain"] == "gated" and data["splits"] == ["calibration", "evaluation"]
    rounds = data["revisions"]
    # What the gate kept after each round, by hand:
    # 1: deleting A (frozen, and R1's unique catch) and adding E (blame on R4) are both rejected;
    # 2: deleting D (no unique catch: R3 is B, C and D's) is accepted;
    # 3: deleting B is accepted: with A kept, R2 is A and B's, R3 B and C's, so B has no unique catch.
    assert [r["gated"]["checks"] for r in rounds] == [list("ABCD"), list("ABCD"), list("ABC"), list("AC")]
    assert [[(c["check"], c["change"], c["decision"]) for c in r["changes"]] for r in rounds] == [
        [], [("E", "added", "rejected"), ("A", "deleted", "rejected")], [("D", "deleted", "accepted")],
        [("B", "deleted", "accepted")]]
    # The paper's cells, calibration split: (passed, correct) / (caught, flawed) / (caught, unplanned).
    gated_cal = [cells(r["gated"]["rates"]["calibration"]) for r in rounds]
    assert gated_cal == [((1, 2), (3, 3), (1, 1)), ((1, 2), (3, 3), (1, 1)), ((2, 2), (3, 3), (1, 1)),
                         ((2, 2), (3, 3), (1, 1))]
    committed_cal = [cells(r["rates"]["calibration"]) for r in rounds]
    assert committed_cal == [((1, 2), (3, 3), (1, 1)), ((1, 2), (2, 3), (1, 1)), ((1, 2), (2, 3), (1, 1)),
                             ((1, 2), (1, 3), (1, 1))]
    # Evaluation split (held out: never decides): V2 is failed by B alone, V1 by C, V3 by A.
    gated_eval = [cells(r["gated"]["rates"]["evaluation"]) for r in rounds]
    assert gated_eval == [((0, 1), (2, 2), (1, 1)), ((0, 1), (2, 2), (1, 1)), ((0, 1), (2, 2), (1, 1)),
                          ((1, 1), (2, 2), (1, 1))]
    committed_eval = [cells(r["rates"]["evaluation"]) for r in rounds]
    assert committed_eval == [((0, 1), (2, 2), (1, 1)), ((0, 1), (1, 2), (1, 1)), ((0, 1), (1, 2), (1, 1)),
                              ((1, 1), (1, 2), (1, 1))]


def test_the_committed_chain_decides_round_3_otherwise(tmp_path: Path) -> None:
    """Against the committed round 2 ({B, C, E}: A already gone) B alone catches R2: rejected."""
    project = chain_repo(tmp_path)
    data = json.loads(project.run("history", "rubrics/demo.yaml", "--format", "json").stdout)
    assert data["chain"] == "committed" and "gated" not in data["revisions"][0]
    assert [(c["check"], c["decision"]) for c in data["revisions"][3]["changes"]] == [("B", "rejected")]


def test_the_chain_prints_the_papers_cells(tmp_path: Path) -> None:
    project = chain_repo(tmp_path)
    text = project.run("history", "rubrics/demo.yaml", "--chain", "gated").stdout
    assert "gated chain" in text and "100.0 / 100.0 / 100.0" in text and "50.0 / 100.0 / 100.0" in text
    html = project.run("history", "rubrics/demo.yaml", "--chain", "gated", "--format", "html").stdout
    assert "gated: correct / flawed / unplanned %" in html and "chain: gated" in html


def _r(*checks: Check, aggregation: object = "all-pass") -> Rubric:
    return Rubric(id="r", version=1, task="t", calibration="c", verdicts="v", checks=list(checks),
                  aggregation=aggregation)  # type: ignore[arg-type]


def test_apply_edits_keeps_what_the_gate_kept_and_applies_only_the_rounds_edits() -> None:
    a, b, b2, c, d = (Check(id="a", text="a"), Check(id="b", text="b"), Check(id="b", text="b reworded"),
                      Check(id="c", text="c"), Check(id="d", text="d"))
    kept = _r(a, b, c)  # the gate kept a (a deletion it rejected) and b's old wording
    previous = _r(b2, c)  # committed: a deleted, b reworded
    revision = _r(c, d, Check(id="e", text="b reworded"), aggregation={"max_failures": 1})  # b renamed e; d added
    proposed = apply_edits(previous, revision, kept)
    # b renamed to e keeps the wording the gate kept; a, which the round leaves alone, stays where it was.
    assert [(x.id, x.text) for x in proposed.checks] == [("a", "a"), ("c", "c"), ("d", "d"), ("e", "b")]
    assert proposed.max_failures == 1
    # An edit of a check the gate never kept proposes it again, as edited.
    assert [x.id for x in apply_edits(_r(a, d), _r(a, Check(id="d", text="d2")), _r(a)).checks] == ["a", "d"]
