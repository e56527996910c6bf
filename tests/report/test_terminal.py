"""The text report fits the terminal it is shown in, and is never wrapped when piped."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support.cli import example_check

ROOT = Path(__file__).resolve().parents[2]
ARGS = ["check", "--base", "rubrics/cloud-security-review.yaml", "--head", "examples/drifting-revision.yaml"]


def _run(columns: str | None) -> str:
    proc = example_check(ARGS[4], columns=columns)  # each width run once for the session
    assert proc.returncode == 1, proc.stderr
    return proc.stdout


def test_at_80_columns_no_line_is_longer_and_nothing_is_cut() -> None:
    out = _run("80")
    assert max(len(line) for line in out.splitlines()) <= 80
    assert "…" not in out  # folded, never truncated
    for header in ("Check", "Unique", "catches", "Fails", "correct", "flawed", "Decision"):
        assert header in out
    assert "rubric-gate: FAIL — cloud-security-review, version 3 → 4" in out


def test_piped_output_keeps_each_line_whole() -> None:
    out = _run(None)
    reason = ("  REJECTED added    recommends-remediation: would add blame 10.50: it answers no on 11 correct "
              "items (r02, r08, r12, r13, r15, +6 more)")
    assert reason in out.splitlines()
    row = next(line for line in out.splitlines() if line.startswith("recommends-remediation"))
    assert row.split() == ["recommends-remediation", "review", "no", "5.44", "3.75", "0", "11", "22",
                           "REJECTED", "added"]
    assert out.count("FAIL") == 1


def test_accepted_changes_say_accepted_once() -> None:
    out = _run(None)
    sound = example_check("examples/sound-revision.yaml")
    assert sound.returncode == 0, sound.stderr
    accepted = [line for line in sound.stdout.splitlines() if line.strip().startswith("accepted")]
    assert accepted and all(line.count("accepted") == 1 for line in accepted)
    assert "REJECTED" in out


def _run_in_pty(columns: int, *args: str, cwd: Path = ROOT) -> str:
    """The command on a pseudo-terminal `columns` wide (no COLUMNS variable: the terminal's size)."""
    import fcntl
    import pty
    import struct
    import termios

    primary, secondary = pty.openpty()
    fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    proc = subprocess.Popen([sys.executable, "-m", "rubric_gate", *args], cwd=cwd, env=env, stdout=secondary,
                            stderr=subprocess.DEVNULL)
    os.close(secondary)
    chunks = []
    while True:
        try:
            chunk = os.read(primary, 65536)
        except OSError:  # the other end closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    proc.wait(timeout=60)
    os.close(primary)
    import re

    text = b"".join(chunks).decode("utf-8").replace("\r\n", "\n")
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def test_in_an_80_column_terminal_ids_stay_whole_and_rates_stay_in_their_columns() -> None:
    out = _run_in_pty(80, *ARGS)
    lines = out.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= 80
    # Every check id (the longest is 22 characters) on one line: no id folds.
    for check in ("covers-public-exposure", "recommends-remediation", "no-invented-findings", "severity-fits"):
        assert any(line.startswith(check + " ") for line in lines), check
    # The Frozen column gave way to a line under the table.
    assert "frozen: right-resource, reports-all (cannot be deleted, reworded or unfrozen)" in lines
    # Each rate row holds all three rubrics' figures, each interval under its figure.
    row = next(i for i, line in enumerate(lines) if line.startswith("correct passed"))
    assert lines[row].split()[2:] == ["90.9%", "(20/22)", "0.0%", "(0/22)", "90.9%", "(20/22)"]
    assert lines[row + 1].split() == ["CI", "72-97%", "CI", "0-15%", "CI", "72-97%"]
    # A rubric's name breaks before its parenthesis, not inside it ("base (version" over "3)").
    header = next(line for line in lines if line.startswith("Rate "))
    assert header.split()[1:] == ["(version", "3)", "(version", "4)", "rejected)"], header
    assert not any(line.rstrip().endswith("(version") for line in lines)
    # Nothing the terminal wraps restarts at column 0: a continuation is indented under its text.
    starts = ("rubric-gate:", "  ", "note:", "to pass:", "frozen:", "per check", "Check", "Rate", "─", "paired:", "how sure:",
              "correct passed", "flawed caught", "unplanned caught", "predicted", "passed", *(c for c in (
                  "names-resource", "states-setting", "no-invented-findings", "covers-", "right-resource",
                  "reports-all", "recommends-remediation", "cites-benchmark", "opens-with-summary", "severity-fits")))
    assert [line for line in lines if line.strip() and not line.startswith(starts)] == []


def test_piped_rates_keep_each_figure_with_its_interval_on_one_line() -> None:
    row = next(line for line in _run(None).splitlines() if line.startswith("correct passed"))
    assert row.split() == ["correct", "passed", "90.9%", "(20/22;", "72-97%)", "0.0%", "(0/22;", "0-15%)",
                           "90.9%", "(20/22;", "72-97%)"]


def test_attribute_at_80_columns_wraps_under_its_own_text() -> None:
    out = _run_in_pty(80, "attribute", "rubrics/cloud-security-review.yaml")
    lines = [line for line in out.splitlines() if line.strip()]
    assert max(len(line.rstrip()) for line in lines) <= 80
    continued = [line for line in lines if line.startswith(" ")]
    assert continued and all(line.startswith(("      ", "                ", "           ")) for line in continued)
    assert "correct passed: 90.9% (20/22; 72-97%)" in lines


def _support_repo(root: Path) -> None:
    """A small support-reply rubric: 8 correct and 8 flawed items, so a rate reads
    "100.0% (8/8; 68-100%)" (21 characters: three fit 80 columns only beside short names)."""
    import json

    checks = {"answers-question": "The reply answers the question the customer asked.",
              "policy-correct": "Every policy statement in the reply matches the policy excerpt.",
              "polite-tone": "The reply is polite and does not blame the customer.",
              "apologises-first": "The reply opens with an apology for the inconvenience."}
    fails = {"t01": {"apologises-first"}, "t03": {"polite-tone"}, "t09": {"policy-correct"},
             "t10": {"answers-question"}, "t11": {"policy-correct"}, "t12": {"answers-question"},
             "t13": {"polite-tone"}, "t14": {"policy-correct"}, "t15": {"answers-question"},
             "t16": {"policy-correct"}}
    items = [f"t{i:02d}" for i in range(1, 17)]
    (root / "cal.jsonl").write_text("".join(json.dumps({"id": i, "input": i, "output": i,
                                                        "label": "pass" if n < 8 else "fail"}) + "\n"
                                            for n, i in enumerate(items)))
    (root / "verdicts.jsonl").write_text("".join(
        json.dumps({"item": i, "check_text": text, "answer": "no" if cid in fails.get(i, ()) else "yes"}) + "\n"
        for cid, text in checks.items() for i in items))
    for name, ids in (("base", ["answers-question", "policy-correct", "polite-tone"]),
                      ("head", ["answers-question", "policy-correct", "apologises-first"])):
        lines = [f"id: support-reply\nversion: {1 if name == 'base' else 2}\ntask: Reply to a ticket.\n"
                 "calibration: cal.jsonl\nverdicts: verdicts.jsonl\nchecks:\n"]
        lines += [f"  - id: {cid}\n    text: \"{checks[cid]}\"\n" for cid in ids]
        (root / f"{name}.yaml").write_text("".join(lines))


def test_at_80_columns_wide_rates_keep_their_columns(tmp_path: Path) -> None:
    # Three 21-character rates beside the rate names must fit 80 columns: a terminal cuts off
    # whatever runs past it (here the gated column).
    _support_repo(tmp_path)
    out = _run_in_pty(80, "check", "--base", "base.yaml", "--head", "head.yaml", cwd=tmp_path)
    lines = out.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= 80
    row = next(line for line in lines if line.startswith("flawed caught"))
    assert row.split()[2:] == ["100.0%", "(8/8;", "68-100%)", "87.5%", "(7/8;", "53-98%)", "100.0%", "(8/8;",
                               "68-100%)"], out


def test_at_60_columns_the_decision_stays_and_the_dropped_columns_are_named() -> None:
    # A narrow terminal drops the optional columns, never the decision: a table that kept every
    # column at 60 would lose its last two, "Fails flawed" and the decision, to the cut.
    out = _run_in_pty(60, *ARGS)
    lines = out.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= 60
    table = lines[next(i for i, line in enumerate(lines) if line.startswith("Check")) + 2:]
    for check, rejected in (("reports-all", True), ("severity-fits", True), ("names-resource", False)):
        row = next(line for line in table if line.startswith(check + " ")).split()  # the id whole
        assert len(row) >= 4 and row[4:5] == (["REJECTED"] if rejected else []), row  # credit, blame, unique
    assert "Credit" in out and "Blame" in out and "Decision" in out
    assert _hanging_line(lines, "not shown: ").startswith(
        "not shown: Origin, Fails correct, Fails flawed (every column shows from 81 columns")
    assert _hanging_line(lines, "frozen: ") == "frozen: right-resource, reports-all (cannot be deleted, reworded or unfrozen)"


def _hanging_line(lines: list[str], prefix: str) -> str:
    """The line starting with `prefix`, with the lines the terminal wrapped it onto (indented under its text)."""
    at = next(i for i, line in enumerate(lines) if line.startswith(prefix))
    rest = []
    for line in lines[at + 1:]:
        if not line.startswith(" " * len(prefix)) or not line.strip():
            break
        rest.append(line.strip())
    return " ".join([lines[at].rstrip(), *rest])
