"""`check --judge NEW --against-judge OLD`: a judge change gated by rule J, with two fake judges that
disagree on known pairs. Every figure the report prints is recomputed here from the planted flips."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakes.llm import FakeLLM
from tests.support import gfm
from tests.support.cli import rubric_gate

OLD, GOOD, BAD = "openai:old-judge", "openai:new-good", "openai:new-bad"
WORDS = {"A": "apple", "B": "pear", "C": "plum"}
# item -> (output, label). Correct items mention every fruit; each flawed item lacks some.
ITEMS = {
    "c1": ("apple pear plum, one", "pass"),
    "c2": ("apple pear plum, two", "pass"),
    "c3": ("apple pear plum, three", "pass"),
    "c4": ("apple pear plum, four", "pass"),
    "f1": ("pear plum", "fail"),  # A alone fails it: A's unique catch
    "f2": ("apple plum", "fail"),  # B's unique catch
    "f3": ("apple", "fail"),  # B and C
    "f4": ("plum", "fail"),  # A and B
}
# The new judges' planted disagreements with the old one: (check id, item).
GOOD_FLIPS = {("C", "f3"), ("A", "f4")}  # both no -> yes on flawed items another check still fails
BAD_FLIPS = {("A", "f1"), ("B", "c2")}  # loses A's unique catch of f1; B newly fails correct c2


def rubric_yaml(judge: str | None = None, extra: str = "") -> str:
    lines = ["id: fruit", "version: 1", "task: List the fruit in the basket.", "calibration: cal.jsonl",
             "verdicts: verdicts.jsonl", *([f"judge: {judge}"] if judge else []), "checks:"]
    for check, word in WORDS.items():
        lines += [f"  - id: {check}", f"    text: The output mentions {word}"]
    return "\n".join(lines) + "\n" + extra


def write_project(root: Path) -> None:
    (root / "cal.jsonl").write_text("".join(
        json.dumps({"id": i, "input": f"basket {i}", "output": out, "label": label}) + "\n"
        for i, (out, label) in ITEMS.items()))
    (root / "rubric.yaml").write_text(rubric_yaml())


def plant(fake: FakeLLM, model: str, flips: set[tuple[str, str]]) -> None:
    fake.flips[model.split(":", 1)[1]] = {(WORDS[c], ITEMS[i][0]) for c, i in flips}


def truth(check: str, item: str) -> bool:
    """The old judge's answer: True where it answers no (the fruit is missing)."""
    return WORDS[check] not in ITEMS[item][0]


def expected_check(check: str, flips: set[tuple[str, str]]) -> dict:
    """Agreement, Cohen's kappa and flips of one check, from the planted flips by hand."""
    old = [truth(check, i) for i in ITEMS]
    new = [truth(check, i) != ((check, i) in flips) for i in ITEMS]
    n = len(old)
    po = sum(a == b for a, b in zip(old, new, strict=True)) / n
    p_old, p_new = sum(old) / n, sum(new) / n
    pe = p_old * p_new + (1 - p_old) * (1 - p_new)
    kappa = None if pe == 1 else (po - pe) / (1 - pe)
    label = {i: ("correct" if ITEMS[i][1] == "pass" else "flawed") for i in ITEMS}
    cells = {"yes_to_no": {"correct": 0, "flawed": 0}, "no_to_yes": {"correct": 0, "flawed": 0}}
    for (c, i) in flips:
        if c == check:
            cells["no_to_yes" if truth(c, i) else "yes_to_no"][label[i]] += 1
    return {"agreement": round(po, 4), "kappa": None if kappa is None else round(kappa, 4), "flips": cells}


def check_judge_change(root: Path, new: str, *extra: str):
    return rubric_gate(root, "check", "--base", "rubric.yaml", "--head", "rubric.yaml", "--root", ".",
                       "--judge", new, "--against-judge", OLD, *extra)


@pytest.mark.parametrize("new, flips", [(GOOD, GOOD_FLIPS), (BAD, BAD_FLIPS)])
def test_per_check_agreement_and_flips_are_exact(fake: FakeLLM, tmp_path: Path, new: str,
                                                  flips: set[tuple[str, str]]) -> None:
    write_project(tmp_path)
    plant(fake, new, flips)
    proc = check_judge_change(tmp_path, new, "--format", "json")
    assert proc.returncode in (0, 1), proc.stderr
    change = json.loads(proc.stdout)["judge_change"]
    assert change["old_judge"] == [OLD] and change["new_judge"] == [new] and change["items"] == len(ITEMS)
    for row in change["checks"]:
        want = expected_check(row["id"], flips)
        assert row["agreement"] == want["agreement"]
        assert row["kappa"]["value"] == want["kappa"], row["id"]
        assert {k: row["flips"][k] for k in ("yes_to_no", "no_to_yes")} == want["flips"], row["id"]
        listed = {(row["id"], i) for d in ("yes_to_no", "no_to_yes") for lab in ("correct", "flawed")
                  for i in row["flips"]["items"][d][lab]}
        assert listed == {f for f in flips if f[0] == row["id"]}


def test_a_judge_change_that_loses_a_unique_catch_or_adds_blame_is_rejected(fake: FakeLLM, tmp_path: Path) -> None:
    write_project(tmp_path)
    plant(fake, BAD, BAD_FLIPS)
    proc = check_judge_change(tmp_path, BAD, "--format", "json")
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    change = data["judge_change"]
    assert data["decision"] == "fail" and change["decision"] == "fail"
    rows = {r["id"]: r for r in change["checks"]}
    assert rows["A"]["lost_unique_catches"] == ["f1"]
    assert rows["A"]["old"]["unique_catches"] == 1 and rows["A"]["new"]["unique_catches"] == 0
    assert rows["B"]["blame_added"] and rows["B"]["old"]["blame"] == 0 and rows["B"]["new"]["blame"] == 1.0
    assert len(change["reasons"]) == 2
    assert "A: the new judge loses 1 unique catch (f1)" in change["reasons"][0]
    assert "B: the new judge adds blame 1.00" in change["reasons"][1]
    assert all(r.startswith("judge change openai:old-judge → openai:new-bad (rule J)") for r in data["run_failures"])
    # The rates, paired: correct passed 4/4 -> 3/4 (c2 lost), flawed caught 4/4 -> 3/4 (f1 lost).
    by_rate = {c["rate"]: c for c in change["comparisons"]}
    assert by_rate["correct_passed"]["from_count"] == [4, 4] and by_rate["correct_passed"]["to_count"] == [3, 4]
    assert by_rate["flawed_caught"]["discordant"] == [0, 1] and by_rate["flawed_caught"]["p_value"] == 1.0


def test_a_judge_change_that_keeps_every_catch_passes_with_the_table(fake: FakeLLM, tmp_path: Path) -> None:
    write_project(tmp_path)
    plant(fake, GOOD, GOOD_FLIPS)
    proc = check_judge_change(tmp_path, GOOD, "--format", "json")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    change = json.loads(proc.stdout)["judge_change"]
    assert change["decision"] == "pass" and change["reasons"] == []
    rows = {r["id"]: r for r in change["checks"]}
    # Under the new judge f3 is failed by B alone and f4 by B alone: B's unique catches 1 -> 3.
    assert [rows[c]["new"]["unique_catches"] for c in "ABC"] == [1, 3, 0]
    assert [rows[c]["old"]["credit"] for c in "ABC"] == [1.5, 2.0, 0.5]
    assert [rows[c]["new"]["credit"] for c in "ABC"] == [1.0, 3.0, 0.0]
    assert change["rates"]["old"]["flawed_caught"]["count"] == change["rates"]["new"]["flawed_caught"]["count"] == 4


def test_only_the_pairs_the_new_judge_lacks_are_asked(fake: FakeLLM, tmp_path: Path) -> None:
    write_project(tmp_path)
    plant(fake, GOOD, GOOD_FLIPS)
    assert rubric_gate(tmp_path, "judge", "--rubric", "rubric.yaml", "--verdicts", "verdicts.jsonl", "--root", ".",
                       "--judge", OLD).returncode == 0
    asked = fake.received
    assert asked == len(ITEMS) * len(WORDS)
    assert check_judge_change(tmp_path, GOOD).returncode == 0
    assert fake.received == 2 * asked  # the new judge's 24 pairs; the old judge's were stored
    assert check_judge_change(tmp_path, GOOD).returncode == 0
    assert fake.received == 2 * asked  # a rerun asks nothing


def test_a_change_of_the_rubric_judge_key_is_gated_as_a_judge_change(fake: FakeLLM, tmp_path: Path) -> None:
    write_project(tmp_path)
    plant(fake, BAD, BAD_FLIPS)
    (tmp_path / "base.yaml").write_text(rubric_yaml(OLD))
    (tmp_path / "rubric.yaml").write_text(rubric_yaml(BAD))
    proc = rubric_gate(tmp_path, "check", "--base", "base.yaml", "--head", "rubric.yaml", "--root", ".",
                       "--format", "json")
    assert proc.returncode == 1, proc.stderr
    change = json.loads(proc.stdout)["judge_change"]
    assert change["old_judge"] == [OLD] and change["new_judge"] == [BAD] and change["decision"] == "fail"


def test_the_other_edits_are_decided_under_both_judges(fake: FakeLLM, tmp_path: Path) -> None:
    write_project(tmp_path)
    plant(fake, GOOD, GOOD_FLIPS)
    (tmp_path / "base.yaml").write_text(rubric_yaml())
    # The head deletes C: with the old judge C shares f3 with B (no unique catch: accepted); with
    # the new judge C fails nothing (accepted too). Deleting B loses f2 under both (rejected).
    (tmp_path / "rubric.yaml").write_text(rubric_yaml().replace(
        "  - id: C\n    text: The output mentions plum\n", ""))
    proc = rubric_gate(tmp_path, "check", "--base", "base.yaml", "--head", "rubric.yaml", "--root", ".",
                       "--judge", GOOD, "--against-judge", OLD, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    change = json.loads(proc.stdout)["judge_change"]
    assert change["decisions"] == [{"check": "C", "change": "deleted", "old": "accepted", "new": "accepted",
                                    "same": True}]
    assert change["decisions_same"] is True


def test_the_markdown_section_renders_the_json_figures(fake: FakeLLM, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    write_project(tmp_path)
    plant(fake, BAD, BAD_FLIPS)
    data = json.loads(check_judge_change(tmp_path, BAD, "--format", "json").stdout)
    markdown = check_judge_change(tmp_path, BAD, "--format", "markdown").stdout
    root = gfm.assert_report_structure(markdown, data)
    table = next(t for t in gfm.tables(root) if gfm.table_header(t)[0:2] == ["Check", "Agreement"])
    rows = {r[0]: r for r in gfm.table_rows(table)}
    for row in data["judge_change"]["checks"]:
        cells = rows[row["id"]]
        assert cells[1] == f"{100 * row['agreement']:.0f}%"
        flips = row["flips"]
        assert cells[3] == f"{flips['yes_to_no']['correct']} / {flips['yes_to_no']['flawed']}"
        assert cells[4] == f"{flips['no_to_yes']['correct']} / {flips['no_to_yes']['flawed']}"
        assert cells[6].startswith(f"{row['old']['blame']:.2f} → {row['new']['blame']:.2f}")
    reasons = [li.text() for li in root.iter("li") if "the new judge" in li.text()]
    assert len(reasons) == 2
    monkeypatch.setenv("COLUMNS", "80")
    text = check_judge_change(tmp_path, BAD).stdout
    assert "judge change (rule J): FAIL" in text and max(len(line) for line in text.splitlines()) <= 80


def test_against_the_same_judge_or_with_replay_is_a_usage_error(fake: FakeLLM, tmp_path: Path) -> None:
    write_project(tmp_path)
    same = rubric_gate(tmp_path, "check", "--base", "rubric.yaml", "--head", "rubric.yaml", "--root", ".",
                       "--judge", OLD, "--against-judge", OLD)
    assert same.returncode == 2 and "same" in same.stderr
    replay = rubric_gate(tmp_path, "check", "--base", "rubric.yaml", "--head", "rubric.yaml", "--root", ".",
                         "--replay", "--against-judge", OLD)
    assert replay.returncode == 2 and "--replay" in replay.stderr
    assert fake.received == 0


def test_against_the_recorded_verdicts_reads_them_as_they_were_before_the_new_judge_wrote(
        fake: FakeLLM, tmp_path: Path) -> None:
    """Hand-recorded verdicts are the old side; the new judge appends its own verdicts to the same
    store, and those must not be read back as the recorded ones (the flips stay the planted ones)."""
    write_project(tmp_path)
    plant(fake, GOOD, GOOD_FLIPS)
    (tmp_path / "verdicts.jsonl").write_text("".join(
        json.dumps({"item": i, "check_text": f"The output mentions {WORDS[c]}", "answer": "no" if truth(c, i) else "yes"})
        + "\n" for c in WORDS for i in ITEMS))
    proc = rubric_gate(tmp_path, "check", "--base", "rubric.yaml", "--head", "rubric.yaml", "--root", ".",
                       "--judge", GOOD, "--against-judge", "recorded", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    change = json.loads(proc.stdout)["judge_change"]
    assert change["old_judge"] is None and change["new_judge"] == [GOOD]
    for row in change["checks"]:
        want = expected_check(row["id"], GOOD_FLIPS)
        assert {k: row["flips"][k] for k in ("yes_to_no", "no_to_yes")} == want["flips"], row["id"]
    assert fake.received == len(ITEMS) * len(WORDS)  # the new judge asked every pair: they are in the store now
    again = json.loads(rubric_gate(tmp_path, "check", "--base", "rubric.yaml", "--head", "rubric.yaml", "--root",
                                   ".", "--judge", GOOD, "--format", "json").stdout)
    assert "judge_change" not in again  # no judge change named: none gated


def test_the_service_gates_the_edit_with_one_judge_and_compares_two_others(fake: FakeLLM, tmp_path: Path) -> None:
    """As the action does: the edit is gated by the base's judge (the PR does not choose it), the
    judge change compared between the base's and the head's, each side asking only its pairs."""
    from rubric_gate.calibration import load_calibration
    from rubric_gate.rubric import load_rubric
    from rubric_gate.service import CallBudget, GateRequest, run_gate_request
    from rubric_gate.verdicts import VerdictStore

    write_project(tmp_path)
    plant(fake, BAD, BAD_FLIPS)
    (tmp_path / "rubric.yaml").write_text(rubric_yaml(OLD))
    (tmp_path / "head.yaml").write_text(rubric_yaml(BAD).replace("  - id: C\n    text: The output mentions plum\n", ""))
    base, head = load_rubric(tmp_path / "rubric.yaml"), load_rubric(tmp_path / "head.yaml")
    store = VerdictStore(path=tmp_path / "verdicts.jsonl")
    request = GateRequest(judges=(OLD,), judge_change=((OLD,), (BAD,)))
    run = run_gate_request(base, head, load_calibration(tmp_path / "cal.jsonl"), store, request, CallBudget(100),
                           audit_store=lambda: None)
    report = run.report
    assert report is not None and report.judge_change is not None
    assert report.judging is not None and report.judging["judge"] == OLD  # the edit was gated by the old judge
    assert [(c.check, c.accepted) for c in report.changes] == [("C", True)]
    assert report.judge_change.new_judges == (BAD,) and not report.judge_change.passed
    assert report.judge_change.judging is not None and report.judge_change.judging["judge"] == BAD
    assert fake.received == 2 * len(ITEMS) * len(WORDS)  # each judge once per pair, no more


def test_the_html_report_carries_the_same_table(fake: FakeLLM, tmp_path: Path) -> None:
    write_project(tmp_path)
    plant(fake, BAD, BAD_FLIPS)
    data = json.loads(check_judge_change(tmp_path, BAD, "--format", "json").stdout)["judge_change"]
    root = gfm.parse_html(check_judge_change(tmp_path, BAD, "--format", "html").stdout)
    table = next(t for t in root.iter("table") if "Agreement" in [th.text() for th in t.iter("th")])
    rows = {r[0]: r for r in gfm.table_rows(table)}
    assert set(rows) == {row["id"] for row in data["checks"]}
    assert rows["A"][7] == "1 → 0 (1 lost)" and rows["B"][6] == "0.00 → 1.00 (added)"
    assert "Judge change (rule J): FAIL" in "".join(h.text() for h in root.iter("h3"))
