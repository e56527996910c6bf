"""The PR comment: a compact "how sure" line, unstable decisions marked, reliability columns
only when measured, paraphrases collapsed and inert, readable at 30 checks."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rubric_gate.calibration import CalibrationItem, CalibrationSet
from rubric_gate.ensemble import PanelLookup, run_panel_check
from rubric_gate.judges import PROMPT_VERSION
from rubric_gate.report import render_markdown
from rubric_gate.rubric import Check, Rubric, RubricDocument
from rubric_gate.sources import SourceText
from rubric_gate.verdicts import Verdict, VerdictStore, task_hash
from tests.ensemble.conftest import TRUTHFUL, write_base_head
from tests.fakes.llm import FakeLLM
from tests.paraphrase.test_paraphrases import write_twin
from tests.support.cli import run_cli


def markdown(capsys: pytest.CaptureFixture[str], *extra: str) -> str:
    code, out, err = run_cli(capsys, "check", "--base", "base.yaml", "--head", "rubric.yaml", "--root", ".",
                             "--format", "markdown", *extra)
    assert code in (0, 1), err
    return out


def header(text: str) -> str:
    return next(line for line in text.splitlines() if line.startswith("| Check | Origin |"))


def test_single_judge_comment_has_no_reliability_columns(fake: FakeLLM, project: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    write_base_head(project, ["apple"], ["apple", "pear"])
    text = markdown(capsys, "--judge", TRUTHFUL)
    assert header(text) == "| Check | Origin | Credit | Blame | Unique catches | Fails correct | Fails flawed | When decided |"
    how_sure = next(line for line in text.splitlines() if line.startswith("**How sure:**"))
    assert "kappa" in how_sure and "MCC" in how_sure and "balanced accuracy" in how_sure
    assert "samples" not in how_sure and "judges" not in how_sure
    assert "fewer than 30 of each" in text  # 4 correct and 4 flawed items


def test_unstable_rejection_is_marked(fake: FakeLLM, project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fake.sequences = {("pear", "apple and pear"): ["no", "yes", "no"]}
    write_base_head(project, ["apple"], ["apple", "pear"])
    text = markdown(capsys, "--judge", TRUTHFUL, "--samples", "3")
    assert "Flip rate" in header(text) and "Alpha" not in header(text) and "Paraphrase" not in header(text)
    assert "— ⚠ rests on unstable verdicts (samples disagree) on r3" in text
    change_row, figures_row = (line for line in text.splitlines() if line.startswith("| `pear`"))
    assert "| added | **rejected** ⚠ unstable |" in change_row and "| 12% |" in figures_row
    assert "3 samples per pair: flip rate up to 12% (pear)" in text
    assert "1 decision rests on unstable verdicts" in text


def test_paraphrases_are_collapsed_and_inert(fake: FakeLLM, project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fake.paraphrase_words = {"apple": ["apple", "@octocat<img src=x>"]}
    write_twin(project)
    text = markdown(capsys, "--judge", TRUTHFUL, "--paraphrases", "2")
    assert "<details><summary>Paraphrases of 1 changed check</summary>" in text
    assert "  - Reworded (2): the output names @\u200boctocat&lt;img src=x&gt;" in text
    assert "<img" not in text and "@octocat" not in text
    assert "Paraphrase kappa" in header(text) and "Paraphrase agr." not in header(text)


def test_comment_stays_readable_at_30_checks(tmp_path: Path) -> None:
    # 30 checks, 3 judges with 3 samples each, recorded directly (no calls needed).
    items = CalibrationSet(tuple(CalibrationItem(id=f"r{i}", input="q", output=f"answer {i}",
                                                 label="pass" if i % 2 else "fail") for i in range(12)), "cal")
    base_checks = [Check(id=f"check-{n:02d}", text=f"Check number {n} holds") for n in range(30)]
    head_checks = [*base_checks[1:], Check(id="new-check", text="A brand new check holds")]
    judges = ("anthropic:a", "openai:b", "openai:c")
    store = VerdictStore()
    verdicts = []
    for n, check in enumerate([*base_checks, *head_checks[-1:]]):
        for i, item in enumerate(items.items):
            for j, judge in enumerate(judges):
                for s in range(3):
                    no = (item.label == "fail" and (n + i) % 4 == 0) or (j == 1 and s == 2 and item.id == "r3")
                    verdicts.append(Verdict(item=item.id, check_text=check.text, answer="no" if no else "yes",
                                            judge=judge, prompt=PROMPT_VERSION, item_hash=item.content_hash,
                                            sample=s or None, task_hash=task_hash("t")))
    store.append(verdicts)
    rubric = Rubric(id="big", version=1, task="t", calibration="c.jsonl", verdicts="v.jsonl", checks=base_checks)
    base = RubricDocument(rubric, SourceText("base.yaml", "", None))
    head = RubricDocument(rubric.model_copy(update={"checks": head_checks, "version": "2"}), SourceText("head.yaml", "", None))
    panel = PanelLookup(items, store, head.rubric, prompt=PROMPT_VERSION, judges=judges, samples=3)
    text = render_markdown(run_panel_check(base, head, panel))
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    assert len(rows) == 2 + 31  # one per change (an addition, a deletion), then one per check (30 in head + 1)
    assert all(len(line) < 200 for line in rows)
    how_sure = [line for line in text.splitlines() if line.startswith("**How sure:**")]
    assert len(how_sure) == 1 and len(how_sure[0]) < 600
    assert re.search(r"\| Alpha \| Flip rate \| When decided \|", header(text))
