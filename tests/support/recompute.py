"""The comment's figures recomputed from the records it names, without rubric-gate's code.

Reads the rubric YAML, the calibration JSONL and the verdict JSONL as files (the last line for a
(check text, item) pair wins, as a reader of the file would take it) and computes what an all-pass
rubric's per-check Shapley figures and rates are by their definitions: an item a rubric fails is
failed by the checks answering "no" on it, each holding an equal share of it (credit on a flawed
item, blame on a correct one); a unique catch is a flawed item only that check fails.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import yaml


@dataclass(frozen=True)
class Figures:
    credit: dict[str, float]
    blame: dict[str, float]
    unique: dict[str, int]
    fails_correct: dict[str, int]
    fails_flawed: dict[str, int]
    correct_passed: tuple[int, int]  # (passed, correct items)
    flawed_caught: tuple[int, int]  # (caught, flawed items)


def answers(verdicts_jsonl: str) -> dict[tuple[str, str], str]:
    """(normalised check text, item id) -> the answer of the last line recorded for it."""
    out: dict[tuple[str, str], str] = {}
    for line in verdicts_jsonl.splitlines():
        if line.strip():
            v = json.loads(line)
            out[" ".join(v["check_text"].split()), v["item"]] = v["answer"]
    return out


def figures(rubric_yaml: str, calibration_jsonl: str, verdicts_jsonl: str,
            withheld: set[tuple[str, str]] = frozenset()) -> Figures:  # type: ignore[assignment]
    """The all-pass figures of the rubric on the calibration split. `withheld`: (text, item) pairs
    whose "no" on a flawed item is not counted as a catch (the gate's trusted reading)."""
    rubric = yaml.safe_load(rubric_yaml)
    assert rubric.get("aggregation", "all-pass") == "all-pass"
    items = [json.loads(line) for line in calibration_jsonl.splitlines() if line.strip()]
    items = [i for i in items if i.get("split", "calibration") == "calibration"]
    recorded = answers(verdicts_jsonl)
    checks = [(c["id"], " ".join(c["text"].split())) for c in rubric["checks"]]

    def fails(text: str, item: dict) -> bool:
        no = recorded[text, item["id"]] == "no"
        return no and not (item["label"] == "fail" and (text, item["id"]) in withheld)

    credit = {cid: 0.0 for cid, _ in checks}
    blame = {cid: 0.0 for cid, _ in checks}
    unique = {cid: 0 for cid, _ in checks}
    fails_correct = {cid: 0 for cid, _ in checks}
    fails_flawed = {cid: 0 for cid, _ in checks}
    passed = caught = 0
    for item in items:
        failing = [cid for cid, text in checks if fails(text, item)]
        flawed = item["label"] == "fail"
        for cid in failing:
            (credit if flawed else blame)[cid] += 1 / len(failing)
            (fails_flawed if flawed else fails_correct)[cid] += 1
        if flawed and len(failing) == 1:
            unique[failing[0]] += 1
        caught += flawed and bool(failing)
        passed += (not flawed) and not failing
    n_flawed = sum(i["label"] == "fail" for i in items)
    return Figures(credit, blame, unique, fails_correct, fails_flawed, (passed, len(items) - n_flawed),
                   (caught, n_flawed))
