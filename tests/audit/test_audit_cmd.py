"""`rubric-gate audit` against the fake provider through the real SDKs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rubric_gate.audit import AuditStore
from rubric_gate.audit.parse import PROPERTIES, StructureAnswer
from rubric_gate.audit.run import PACKAGE, uninformative_structure
from rubric_gate.audit.templates import render, template_source
from rubric_gate.llm.replies import comparable
from tests.audit.conftest import write_rubric
from tests.fakes.audit_llm import FakeAuditLLM
from tests.fakes.llm import prompt_of
from tests.support.cli import run_cli

JUDGE = "anthropic:claude-haiku-4-5"
CHECKS = [
    ("apple", "The output mentions apple"),
    ("kiwi", "The output mentions kiwi"),  # the task never asks for kiwi: ungrounded
    ("vague", "The output is appropriate and mentions pear"),  # compound and vague
]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write_rubric(tmp_path / "rubric.yaml", CHECKS)
    return tmp_path


def audit_json(monkeypatch, project, capsys, *args: str) -> tuple[int, dict, str]:
    monkeypatch.chdir(project)
    code, out, err = run_cli(capsys, "audit", "--rubric", "rubric.yaml", "--root", ".",
                             "--format", "json", *args)
    return code, (json.loads(out) if out.strip() else {}), err


def test_audit_finds_structure_and_grounding_and_rerun_makes_no_call(
        fake: FakeAuditLLM, project: Path, monkeypatch, capsys) -> None:
    code, report, err = audit_json(monkeypatch, project, capsys, "--judge", JUDGE)
    assert code == 0, err
    assert fake.received == 6  # 3 checks x (structure, grounding)
    by_id = {a["check"]: a for a in report["audits"]}
    assert by_id["apple"]["passed"] and by_id["apple"]["grounded"] and by_id["apple"]["grounding_quote"] == "apple"
    assert not by_id["kiwi"]["grounded"] and by_id["kiwi"]["grounding_quote"] == "kiwi"
    vague = by_id["vague"]
    assert vague["structure"] == {"atomic": False, "consistent": True, "observable": True,
                                  "operational": False, "scoped": False}
    assert vague["grounded"] and vague["structure_reasons"]["atomic"] == "fake reason for atomic"
    assert by_id["apple"]["line"] == 7 and vague["line"] == 11
    assert "6 calls, 0 reused" in err and "~$" in err
    stored = project / "verdicts.audits.jsonl"
    assert len(stored.read_text().splitlines()) == 6

    code, again, err = audit_json(monkeypatch, project, capsys, "--judge", JUDGE)
    assert code == 0 and fake.received == 6, "a rerun must make no call"
    assert "0 calls, 6 reused" in err
    assert again["audits"] == report["audits"]


def test_audit_rule_exit_code_and_check_filter(fake: FakeAuditLLM, project: Path, monkeypatch, capsys) -> None:
    code, report, _ = audit_json(monkeypatch, project, capsys, "--judge", JUDGE, "--check", "apple", "--audit-rule")
    assert code == 0 and [a["check"] for a in report["audits"]] == ["apple"] and fake.received == 2
    code, _, _ = audit_json(monkeypatch, project, capsys, "--judge", JUDGE, "--check", "kiwi", "--audit-rule")
    assert code == 1
    code, _, err = audit_json(monkeypatch, project, capsys, "--judge", JUDGE, "--check", "nope")
    assert code == 2 and "rubric.yaml: unknown check id 'nope'" in err


def test_majority_over_three_judges(fake: FakeAuditLLM, project: Path, monkeypatch, capsys) -> None:
    judges = ["anthropic:claude-haiku-4-5", "openai:gpt-4o-mini", "anthropic:contrarian-1"]
    args = [arg for judge in judges for arg in ("--judge", judge)]
    code, report, err = audit_json(monkeypatch, project, capsys, *args)
    assert code == 0, err
    assert fake.received == 18
    by_id = {a["check"]: a for a in report["audits"]}
    # Two judges against one: the contrarian's flipped answers are outvoted everywhere.
    assert by_id["apple"]["passed"] and not by_id["kiwi"]["grounded"]
    assert by_id["vague"]["structure"]["atomic"] is False
    assert by_id["vague"]["votes"]["anthropic:contrarian-1"]["atomic"] is True
    assert by_id["apple"]["votes"]["anthropic:contrarian-1"]["grounded"] is False
    # Two contrarians against one: now they carry it.
    judges2 = ["anthropic:claude-haiku-4-5", "anthropic:contrarian-1", "openai:contrarian-2"]
    args2 = [arg for judge in judges2 for arg in ("--judge", judge)]
    code, report2, _ = audit_json(monkeypatch, project, capsys, *args2)
    assert code == 0 and fake.received == 18 + 6  # only the new judge is asked
    by_id2 = {a["check"]: a for a in report2["audits"]}
    assert by_id2["kiwi"]["grounded"] and not by_id2["apple"]["grounded"]


def test_replay_without_judge_uses_the_store_or_says_what_is_missing(
        fake: FakeAuditLLM, project: Path, monkeypatch, capsys) -> None:
    code, _, err = audit_json(monkeypatch, project, capsys)
    assert code == 2 and "no stored audit for checks apple, kiwi, vague" in err
    audit_json(monkeypatch, project, capsys, "--judge", JUDGE)
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    code, report, _ = audit_json(monkeypatch, project, capsys)
    assert code == 0 and fake.received == 6 and len(report["audits"]) == 3


def test_a_panel_judge_without_its_key_is_named_with_the_cause(
        fake: FakeAuditLLM, project: Path, monkeypatch, capsys) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    _, _, err = audit_json(monkeypatch, project, capsys, "--judge", JUDGE, "--judge", "openai:gpt-4o-mini")
    summary = next(line for line in err.splitlines() if line.startswith(f"audit {JUDGE}: "))
    assert "1 without a valid answer (1 judge not callable)" in summary and "()" not in summary
    assert "ANTHROPIC_API_KEY" in err  # the reason is named, not only counted


def test_malformed_or_unquoted_replies_are_never_guessed(fake: FakeAuditLLM, project: Path, monkeypatch, capsys) -> None:
    fake.rules = {"mentions kiwi": "nonjson"}
    code, report, err = audit_json(monkeypatch, project, capsys, "--judge", JUDGE)
    assert code == 2 and "1 check(s) not audited (kiwi): no valid answer, none guessed" in err and "none guessed" in err
    assert report["unanswered"] == ["kiwi"] and sorted(a["check"] for a in report["audits"]) == ["apple", "vague"]
    store = AuditStore.load(project / "verdicts.audits.jsonl")
    assert len(store) == 4  # apple and vague saved; kiwi has nothing
    fake.rules = {}
    fake.bad_grounding_quote = True  # a quote found in neither text is not an answer
    code, report, err = audit_json(monkeypatch, project, capsys, "--judge", JUDGE, "--check", "kiwi")
    assert code == 2 and "does not occur in the check" in err and report["audits"] == []


def test_the_grounding_format_offers_no_prose_to_copy_as_a_quote() -> None:
    """SmolLM2-135M answered every grounding ask with the format line's example for `quote` (a
    sentence): the format gives the shape only, and says in prose, outside the JSON, where to copy from."""
    prompt = render(PACKAGE, "grounding.j2", task="Summarise the report.", check="The output mentions kiwi")
    formats = [line for line in prompt.splitlines() if line.startswith("{") and '"quote"' in line]
    assert len(formats) == 1
    examples = re.findall(r'"(quote|reason)": "([^"]*)"', formats[0])
    assert [name for name, _ in examples] == ["quote", "reason"]
    assert all(not re.search(r"[a-z]", comparable(value)) for _, value in examples), examples


def test_a_rejected_quote_is_never_shown_back_to_the_model(fake: FakeAuditLLM, project: Path, monkeypatch,
                                                           capsys) -> None:
    """The re-ask says where to copy the quote from, not what was wrong with it: a model that copies
    its prompt would copy the rejected quote (or the reminder's own wording) back into the next one."""
    fake.bad_grounding_quote = True
    code, _, err = audit_json(monkeypatch, project, capsys, "--judge", JUDGE, "--check", "kiwi")
    asks = [prompt_of(b) for b in fake.bodies if "stays within what the task asks for" in prompt_of(b)]
    assert code == 2 and len(asks) == 3
    assert not any("not in either text" in ask for ask in asks)
    assert "its quote was not copied word for word from inside the <check> tags" in asks[1]
    assert "quote 'not in either text' does not occur in the check" in err  # the listing still shows it


def structure(reasons: list[str], holds: bool = True) -> StructureAnswer:
    return StructureAnswer(dict.fromkeys(PROPERTIES, holds), dict(zip(PROPERTIES, reasons, strict=True)))


def test_structure_reasons_that_say_nothing_name_the_judge() -> None:
    """SmolLM2-135M's structure audits: every property holds, each reason "..." or one sentence for
    all five; a judge whose reasons say something is not named."""
    instructions = template_source(PACKAGE, "structure.j2")
    dots = [structure(["..."] * 5), structure(["...", "this is a very important one", "this is a very important one",
                                               "...", "this is a very important one"])]
    assert uninformative_structure(dots, instructions) == (
        "10 of its 10 structure reasons say nothing (7 without a word, 3 one sentence repeated for several "
        "properties of a check); it found 10 of the 10 properties holding")
    real = structure(["one behaviour", "no contradiction", "seen in the output", "a clear yes or no", "only the CVE"])
    assert uninformative_structure([real, real], instructions) is None
    assert uninformative_structure([real, dots[0]], instructions) is not None  # half of them say nothing
    assert uninformative_structure([], instructions) is None


def test_audit_names_a_judge_whose_structure_reasons_say_nothing(fake: FakeAuditLLM, project: Path, monkeypatch,
                                                                  capsys) -> None:
    fake.structure_reason = "..."
    code, report, err = audit_json(monkeypatch, project, capsys, "--judge", JUDGE)
    notice = (f"{JUDGE}: its structure audits carry no information: 15 of its 15 structure reasons say nothing "
              "(15 without a word); it found 12 of the 15 properties holding.")
    assert code == 0 and report["notices"] == [notice] and f"notice: {notice}" in err
    assert "its answers carry no information" in report["usage"][0]["summary"]
    fake.structure_reason = None
    code, report, _ = audit_json(monkeypatch, project, capsys, "--judge", JUDGE, "--audits", "other.jsonl")
    assert code == 0 and report["notices"] == []


def test_markdown_and_text_keep_pr_text_inert(fake: FakeAuditLLM, tmp_path: Path, monkeypatch, capsys) -> None:
    write_rubric(tmp_path / "rubric.yaml", [("ping", "The output pings @octocat and <img src=x> kiwi")])
    monkeypatch.chdir(tmp_path)
    code, out, _ = run_cli(capsys, "audit", "--rubric", "rubric.yaml", "--judge", JUDGE,
                           "--format", "markdown")
    assert code == 0
    assert "@octocat" not in out and "<img" not in out and "| `ping` |" in out
    assert "not atomic" in out and "beyond the task" in out
    monkeypatch.chdir(tmp_path)
    code, out, _ = run_cli(capsys, "audit", "--rubric", "rubric.yaml", "--judge", JUDGE)
    assert code == 0 and "FINDINGS ping" in out and fake.received == 2


def test_adversarial_fool_rate_and_reuse(fake: FakeAuditLLM, project: Path, monkeypatch, capsys) -> None:
    from tests.audit.conftest import write_items

    write_items(project / "cal.jsonl", [("c1", "apple pear plum", "pass"), ("f1", "pear", "fail")])
    # apple: the attack output is just the keyword, the judge says yes, the verifier says it is hollow.
    # kiwi: the attack output also reads as genuine to the verifier: no fool.
    fake.attacks = {"The output mentions kiwi": "a genuine kiwi"}
    args = ("--judge", JUDGE, "--check", "apple", "--check", "kiwi", "--adversarial", "3",
            "--attacker", "openai:gpt-4o-mini", "--verifier", "anthropic:claude-haiku-4-5")
    code, report, err = audit_json(monkeypatch, project, capsys, *args)
    assert code == 0, err
    by_id = {a["check"]: a for a in report["audits"]}
    assert by_id["apple"]["vfr"] == 1.0 and len(by_id["apple"]["fools"]) == 3
    assert by_id["apple"]["fools"][0] == {"item": "c1", "output": "apple", "verifier_reason": "fake verifier"}
    assert by_id["kiwi"]["vfr"] == 0.0 and by_id["kiwi"]["fools"] == []
    # Attempts 1 and 3 on a check both attack c1 with the same output: one question for the judge
    # and the verifier (asked once, its stored answer used for both), so 4 of each, not 6.
    assert fake.kinds.count("attack") == 6 and fake.kinds.count("verdict") == 4 and fake.kinds.count("verify") == 4
    roles = {u["role"] for u in report["usage"]}
    assert roles == {"audit", "attacker", "judge", "verifier"}
    calls = fake.received
    code, again, err = audit_json(monkeypatch, project, capsys, *args)
    assert code == 0 and fake.received == calls and again["audits"] == report["audits"]
    code, _, err = audit_json(monkeypatch, project, capsys, "--judge", JUDGE, "--adversarial", "2")
    assert code == 2 and "--attacker" in err
