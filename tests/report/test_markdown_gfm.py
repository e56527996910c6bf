"""The Markdown report and its user text as GitHub renders them (cmark-gfm), not as strings."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from rubric_gate.attribution import Rate, Rates
from rubric_gate.report import render_markdown
from rubric_gate.report.markdown import code_span, neutralize
from rubric_gate.results import ChangeRow, CheckReport, CheckRow, RubricSummary
from tests.support import gfm
from tests.support.cli import rubric_gate

ROOT = Path(__file__).resolve().parents[2]
BASE = "rubrics/cloud-security-review.yaml"

HOSTILE = [
    "@octocat", "GH-1", "JIRA-12", "org/repo#3", "#4", "a5c3785ed8d6a35868bc169f07e40e889087fd2e", "deadbee",
    "$\\color{green}PASS$", "$$x$$", "\u202etxt.exe", "\\[Approve\\](/org/settings)", "[PASS](https://x.io)",
    "![b](https://x.io/b.png)", "<img src=x>", "<details>", "https://evil.example", "www.evil.example",
    "mail me@evil.example", "`code` **bold**", "# heading", "- item", "1. item", "> quote", "a|b", "&amp;",
    "\\", "\\\\[x\\\\](y)", "<!-- x -->", "~~gone~~", "_em_",
]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return rubric_gate(ROOT, *args)


@pytest.mark.integration
def test_bundled_example_renders_one_item_per_rejected_change() -> None:
    head = ["check", "--base", BASE, "--head", "examples/drifting-revision.yaml"]
    markdown = _cli(*head, "--format", "markdown")
    report = json.loads(_cli(*head, "--format", "json").stdout)
    assert markdown.returncode == 1, markdown.stderr
    root = gfm.assert_report_structure(markdown.stdout, report)
    assert len([c for c in report["changes"] if c["decision"] == "rejected"]) == 5
    assert ("NOTE", report["notes"][0]) in gfm.alerts(root)
    # the reason's blame is the one the row shows when decided, not the head-as-proposed 3.75
    item = next(li.text() for li in root.iter("li") if li.text().startswith("recommends-remediation"))
    assert "blame 10.50" in item and "If accepted: catch 1 more flawed item" in item


@pytest.mark.parametrize("text", HOSTILE)
def test_neutralized_text_renders_as_typed_and_inert(text: str) -> None:
    root = gfm.parse(f"Note: {neutralize(text)}\n")
    assert gfm.live_spans(root) == []
    (paragraph,) = gfm.top_level(root)
    shown = paragraph.text().removeprefix("Note: ").replace("\u200b", "").replace(gfm.DOLLAR, "$")
    assert shown == text.replace("\u202e", "\ufffd").replace("`", "'")  # a backtick shows as a quote


@pytest.mark.parametrize("text", HOSTILE)
def test_code_spans_render_as_typed_in_tables_and_prose(text: str) -> None:
    root = gfm.parse(f"| a | b |\n|---|---|\n| {code_span(text)} | x |\n\nSee {code_span(text, table=False)}.\n")
    assert gfm.live_spans(root) == []
    (row,) = gfm.table_rows(gfm.tables(root)[0])
    shown = text.replace("\u202e", "\ufffd")
    assert [cell.replace(gfm.DOLLAR, "$") for cell in row] == [shown, "x"]
    codes = [c.text().replace(gfm.DOLLAR, "$") for c in root.find_all("code")]
    assert codes[-1].strip() == shown.strip()


def _rates() -> Rates:
    rate = Rate(1, 2)
    return Rates(rate, rate, Rate(0, 0), None)


def _summary(ids: list[str], version: str) -> RubricSummary:
    rows = [CheckRow(i, "text " + i, "hand", False, 1.0, 0.5, 0, 1, 1) for i in ids]
    return RubricSummary("r", version, "r.yaml", 0, rows, _rates(), [])


def test_hostile_user_text_everywhere_stays_inert() -> None:
    """Check ids, item ids in reasons, notes and versions all carry hostile text."""
    evil = " ".join(HOSTILE)
    ids = [f"c{n}" for n in range(3)]
    base, head = _summary(ids, "1 " + evil), _summary([*ids, "new"], "2 " + evil)
    changes = [ChangeRow(f"new{n}", "added", ("text",), False, f"would add blame 0.50: no on ({evil})", ("S",))
               for n in range(2)]
    report = CheckReport(base, head, base, changes, "id: r\n", 2, notes=[evil, "second " + evil])
    markdown = render_markdown(report)
    root = gfm.parse(markdown)
    assert gfm.live_spans(root) == []
    assert len([li for li in root.iter("li")]) == 2
    assert [kind for kind, _ in gfm.alerts(root)] == ["NOTE", "NOTE"]
