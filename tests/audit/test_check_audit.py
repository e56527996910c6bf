"""`check --audit` / `--audit-rule`: the PR's added and reworded checks audited, optionally gated."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.audit.conftest import run_cli, write_items, write_rubric
from tests.fakes.audit_llm import FakeAuditLLM

JUDGE = "anthropic:claude-haiku-4-5"
BASE = [("apple", "The output mentions apple"), ("pear", "The output mentions pear")]
ITEMS = [
    ("c1", "apple, pear, plum, kiwi.", "pass"),
    ("c2", "pear and apple and plum and kiwi", "pass"),
    ("f1", "pear plum kiwi", "fail"),
    ("f2", "apple plum kiwi", "fail"),
    ("f3", "apple pear kiwi", "fail"),  # misses plum: only the added plum check catches it
]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write_rubric(tmp_path / "base.yaml", BASE)
    write_rubric(tmp_path / "rubric.yaml", [*BASE, ("plum", "The output mentions plum"),
                                            ("kiwi", "The output mentions kiwi")])
    write_items(tmp_path / "cal.jsonl", ITEMS)
    return tmp_path


def check(monkeypatch, project, capsys, *args: str) -> tuple[int, dict, str]:
    code, out, err = run_cli(monkeypatch, project, capsys, "check", "--base", "base.yaml", "--head", "rubric.yaml",
                             "--root", ".", "--judge", JUDGE, "--format", "json", *args)
    return code, (json.loads(out) if out.strip() else {}), err


def test_check_audit_is_advisory_and_audits_only_added_checks(
        fake: FakeAuditLLM, project: Path, monkeypatch, capsys) -> None:
    code, report, err = check(monkeypatch, project, capsys, "--audit")
    assert code == 0, err
    assert [a["check"] for a in report["audit"]["audits"]] == ["plum", "kiwi"]
    kiwi = report["audit"]["audits"][1]
    assert not kiwi["grounded"] and kiwi["line"] == 13
    assert all(c["decision"] == "accepted" for c in report["changes"])
    assert fake.kinds.count("structure") == 2 and fake.kinds.count("grounding") == 2
    assert "audit anthropic:claude-haiku-4-5: 4 calls" in err


def test_audit_rule_rejects_an_ungrounded_addition(fake: FakeAuditLLM, project: Path, monkeypatch, capsys) -> None:
    code, report, err = check(monkeypatch, project, capsys, "--audit-rule")
    assert code == 1, err
    decisions = {c["check"]: c for c in report["changes"]}
    assert decisions["plum"]["decision"] == "accepted"
    kiwi = decisions["kiwi"]
    assert kiwi["decision"] == "rejected" and kiwi["rules"] == ["A"]
    assert "asks for more than the task states" in kiwi["reason"] and '"kiwi"' in kiwi["reason"]
    assert [c["id"] for c in report["gated"]["checks"]] == ["apple", "pear", "plum"]
    calls = fake.received
    code, again, _ = check(monkeypatch, project, capsys, "--audit-rule")
    assert code == 1 and fake.received == calls, "verdicts and audits are both reused"
    assert again["changes"] == report["changes"]


def test_audit_rule_markdown_and_reworded_check(fake: FakeAuditLLM, project: Path, monkeypatch, capsys) -> None:
    write_rubric(project / "rubric.yaml", [("apple", "The output is appropriate and mentions apple"), BASE[1]])
    code, out, err = run_cli(monkeypatch, project, capsys, "check", "--base", "base.yaml", "--head", "rubric.yaml",
                             "--root", ".", "--judge", JUDGE, "--audit-rule", "--format", "markdown")
    assert code == 1, err
    assert "### Check audit" in out and "not atomic" in out
    assert "(modified): audit: not atomic" in out


def test_repairs_under_the_audit_rule_must_pass_the_audit_too(
        fake: FakeAuditLLM, project: Path, monkeypatch, capsys) -> None:
    fake.repairs = {"The output mentions kiwi": [
        {"operator": "observable_rewrite", "checks": ["The output lists kiwi"], "why": "still ungrounded"},
        {"operator": "drop_unstated", "checks": ["The output names plum"], "why": "the task names plum"},
    ]}
    code, report, err = check(monkeypatch, project, capsys, "--audit-rule", "--suggest-repairs")
    assert code == 1, err
    suggestions = report["repairs"]["suggestions"]
    # "lists kiwi" fails no correct item, so only the audit rule keeps it out.
    assert [(s["check"], s["operator"]) for s in suggestions] == [("kiwi", "drop_unstated")]
    assert suggestions[0]["checks"][0]["text"] == "The output names plum"
    assert fake.kinds.count("grounding") == 4  # plum, kiwi, then the two candidates
