"""`check --suggest-repairs`: only rewrites the gate accepts are shown; deletions show what they
protect; frozen checks are never repaired; everything is stored and reused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rubric_gate.repair import check_spans
from tests.audit.conftest import write_items, write_rubric
from tests.fakes.audit_llm import FakeAuditLLM
from tests.support.cli import run_cli

JUDGE = "anthropic:claude-haiku-4-5"
ITEMS = [
    ("c1", "apple, pear, plum.", "pass"),
    ("c2", "pear and apple and plum and kiwi", "pass"),
    ("f1", "pear plum kiwi", "fail"),
    ("f2", "apple plum kiwi", "fail"),  # only the pear check catches it
    ("f3", "apple pear kiwi", "fail"),  # misses plum: nothing in base catches it
]
FRESH = "The output mentions kiwi"  # fails correct item c1: rejected
CANDIDATES = [
    {"operator": "drop_unstated", "checks": ["The output mentions plum"], "why": "plum is what the task names"},
    # Still fails both correct items: the gate rejects it, so it must not be shown.
    {"operator": "applicability_condition", "checks": ["Only when fruit is listed, the output mentions fig"],
     "why": "narrower"},
    {"operator": "split_atomic", "checks": ["The output names pear", "The output names plum"], "why": "one each"},
]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    base = [("apple", "The output mentions apple"), ("pear", "The output mentions pear")]
    write_rubric(tmp_path / "base.yaml", base, frozen={"apple"})
    # The PR rewords the frozen check, deletes pear and adds a check that fails a correct item.
    write_rubric(tmp_path / "rubric.yaml", [("apple", "The output mentions apple or fig"), ("fresh", FRESH)],
                 frozen={"apple"})
    write_items(tmp_path / "cal.jsonl", ITEMS)
    return tmp_path


def check(monkeypatch, project, capsys, *args: str) -> tuple[int, dict, str]:
    monkeypatch.chdir(project)
    code, out, err = run_cli(capsys, "check", "--base", "base.yaml", "--head", "rubric.yaml",
                             "--root", ".", "--judge", JUDGE, "--suggest-repairs", "--format", "json", *args)
    return code, (json.loads(out) if out.strip() else {}), err


def test_only_gate_accepted_repairs_are_shown(fake: FakeAuditLLM, project: Path, monkeypatch, capsys) -> None:
    fake.repairs = {FRESH: CANDIDATES}
    code, report, err = check(monkeypatch, project, capsys)
    assert code == 1, err
    repairs = report["repairs"]
    shown = [(s["check"], s["operator"]) for s in repairs["suggestions"]]
    assert shown == [("fresh", "drop_unstated"), ("fresh", "split_atomic")]
    assert all("fig" not in c["text"] for s in repairs["suggestions"] for c in s["checks"])
    plum = repairs["suggestions"][0]
    assert plum["checks"][0]["fails_correct"] == 0 and plum["checks"][0]["unique_catches"] == 1
    assert plum["no_longer_fails"] == ["c1"]
    span = check_spans((project / "rubric.yaml").read_text())["fresh"]
    assert (plum["start_line"], plum["end_line"]) == (span.start_line, span.end_line) == (10, 11)
    assert plum["yaml"] == "  - id: fresh\n    text: The output mentions plum\n"
    split = repairs["suggestions"][1]
    assert [c["id"] for c in split["checks"]] == ["fresh", "fresh-2"]
    # The rejected deletion shows what only it catches; the frozen rewording is never repaired.
    assert repairs["protected"] == [{"check": "pear", "line": 10,
                                     "unique_catches": [{"id": "f2", "excerpt": "apple plum kiwi"}]}]
    assert {"check": "apple", "reason": "frozen check: repairs never touch it"} in repairs["unrepaired"]
    assert fake.kinds.count("repair") == 1
    assert "repair anthropic:claude-haiku-4-5: 1 calls" in err

    calls = fake.received
    code, again, err = check(monkeypatch, project, capsys)
    assert code == 1 and fake.received == calls, "a rerun makes no call"
    assert again["repairs"]["suggestions"] == repairs["suggestions"]


def test_no_repair_when_every_candidate_still_fails_a_correct_item(
        fake: FakeAuditLLM, project: Path, monkeypatch, capsys) -> None:
    fake.repairs = {FRESH: [CANDIDATES[1]]}
    code, report, err = check(monkeypatch, project, capsys)
    assert code == 1, err
    assert report["repairs"]["suggestions"] == []
    assert {"check": "fresh", "reason": "none of the 1 proposed rewrite passes the gate"} in report["repairs"]["unrepaired"]


def test_operators_outside_the_library_are_never_used(fake: FakeAuditLLM, project: Path, monkeypatch, capsys) -> None:
    fake.repairs = {FRESH: [{"operator": "make_it_better", "checks": ["The output mentions plum"], "why": "x"}]}
    code, report, err = check(monkeypatch, project, capsys)
    assert code == 1 and "is not in the library" in err and "none guessed" in err
    assert "repairs" not in report  # nothing guessed into a repair


@pytest.mark.parametrize("fault", ["nonjson", "cutoff", "500"])
def test_a_failed_repair_is_a_notice_and_the_gate_decision_stands(fake: FakeAuditLLM, project: Path, monkeypatch,
                                                                  capsys, fault: str) -> None:
    """Repairs are advice: the decision was made before them, so a repair reply that never parses,
    is cut off or never comes is a notice, and the exit code is the gate's (1), never 2."""
    monkeypatch.setenv("RUBRIC_GATE_MAX_RETRIES", "1")
    fake.rules = {"Rewrite operators": fault}
    code, report, err = check(monkeypatch, project, capsys)
    assert code == 1, err
    assert report["decision"] == "fail" and report["changes"]  # the gate's report, whole
    notice = next(n for n in report["notices"] if n.startswith("Suggesting repairs did not finish"))
    assert "the gate's decision stands" in notice and "none guessed" in notice
    if fault == "cutoff":
        assert "cut off at 400 tokens" in notice and 'the last began "{\\"answer\\"' in notice
    assert f"rubric-gate: notice: {notice}" in err
    assert any(u["role"] == "repair" and u["calls"] + u["retries"] > 0 for u in report["advice_usage"])


def test_a_failed_repair_prints_the_decision_as_text(fake: FakeAuditLLM, project: Path, monkeypatch, capsys) -> None:
    fake.rules = {"Rewrite operators": "nonjson"}
    monkeypatch.chdir(project)
    code, out, err = run_cli(capsys, "check", "--base", "base.yaml", "--head", "rubric.yaml", "--root", ".",
                             "--judge", JUDGE, "--suggest-repairs")
    assert code == 1 and "REJECTED" in out and "Suggesting repairs did not finish" in err


def test_markdown_lists_repairs_and_protected_items(fake: FakeAuditLLM, project: Path, monkeypatch, capsys) -> None:
    fake.repairs = {FRESH: CANDIDATES}
    monkeypatch.chdir(project)
    code, out, _ = run_cli(capsys, "check", "--base", "base.yaml", "--head", "rubric.yaml",
                         "--root", ".", "--judge", JUDGE, "--suggest-repairs", "--format", "markdown")
    assert code == 1
    assert "### Suggested repairs" in out and "`drop_unstated`" in out and "fig" not in out.split("Suggested repairs")[1]
    assert "deleting `pear` loses what only it catches: `f2` \"apple plum kiwi\"" in out


def test_a_rewrite_copied_from_the_prompt_is_no_repair(fake: FakeAuditLLM, project: Path, monkeypatch, capsys) -> None:
    """A small model copied the format example ("the rewritten check text") as its rewrite, which a
    judge that answers yes to anything then let through the gate: it is not an answer."""
    fake.repairs = {FRESH: [{"operator": "drop_unstated", "checks": ["The rewritten check text"], "why": "x"}]}
    code, report, err = check(monkeypatch, project, capsys)
    assert code == 1 and "repairs" not in report
    assert "copies the prompt's own words" in err
