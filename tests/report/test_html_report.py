"""`check --format html` and the Mermaid chart: self-contained, charted, and inert user text."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from rubric_gate.calibration import load_calibration
from rubric_gate.report import render_html, render_markdown, write_html_report
from rubric_gate.report.charts import (
    MERMAID_MAX_CHECKS,
    credit_blame_mermaid,
    mermaid_label,
    mermaid_labels,
)
from rubric_gate.results import CheckRow
from rubric_gate.rubric import parse_rubric_text
from rubric_gate.scoring import VerdictLookup, run_check
from rubric_gate.verdicts import VerdictStore
from tests.support.cli import run_cli
from tests.support.git_repo import CHECKS, Repo, rubric_text
from tests.support.values import check_report

HOSTILE_ID = "<script>alert(1)</script> @admin"
HOSTILE_TEXT = "<img src=x onerror=alert(1)> </svg><a href='https://evil.example'>x</a>"
VOID = {"meta", "line", "rect", "circle", "br", "img", "input", "link", "path"}


class _Document(HTMLParser):
    """Tags, attributes and text of a document; fails on unbalanced tags."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.svg_depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes <{self.stack[-1] if self.stack else None}>"
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse(html: str) -> _Document:
    document = _Document()
    document.feed(html)
    document.close()
    assert document.stack == []
    return document


def _report(repo: Repo, head_checks: dict[str, str], *, rubric_id: str = "demo"):
    base = parse_rubric_text(rubric_text(CHECKS), "rubrics/demo.yaml")
    head = parse_rubric_text(rubric_text(head_checks, rubric_id=rubric_id, version="2 <b>bold</b>"), "rubrics/demo.yaml")
    store = VerdictStore.load(repo.root / "calibration/demo.verdicts.jsonl")
    items = load_calibration(repo.root / "calibration/demo.jsonl")
    return run_check(base, head, VerdictLookup(items, store, head.rubric))


def test_html_is_one_self_contained_page_with_a_chart_per_version(repo: Repo) -> None:
    report = _report(repo, {"B": CHECKS["B"]})  # deletes A, which holds a unique catch
    html = render_html(report)
    document = parse(html)
    assert not any(tag in ("script", "link", "iframe", "object", "img") for tag, _ in document.tags)
    assert not any(name in ("src", "href") or name.startswith("on") for _, a in document.tags for name in a)
    assert "url(" not in html and "@import" not in html
    charts = [a for tag, a in document.tags if tag == "svg" and "attribution" in (a.get("class") or "")]
    assert [a["data-version"] for a in charts] == ["base", "head", "gated"]
    assert sum(tag == "svg" and "rates" in (a.get("class") or "") for tag, a in document.tags) == 1
    assert "prefers-color-scheme: dark" in html
    # Three bars per check per version: base and gated have A and B, head only B.
    bars = [a for tag, a in document.tags if tag == "rect"]
    assert len(bars) == 3 * (2 + 1 + 2) and all(float(a["width"]) >= 0 for a in bars)
    assert "FAIL" in "".join(document.text)


def test_hostile_text_is_escaped(repo: Repo) -> None:
    checks = {**CHECKS, "B": HOSTILE_TEXT}
    repo.write("calibration/demo.verdicts.jsonl", repo.verdicts(CHECKS) + repo.verdicts({"B": HOSTILE_TEXT}))
    report = _report(repo, checks, rubric_id=HOSTILE_ID)
    html = render_html(report)
    document = parse(html)
    assert not any(tag in ("script", "img", "a", "b") for tag, _ in document.tags)
    text = "".join(document.text)
    assert HOSTILE_ID in text and HOSTILE_TEXT in text and "2 <b>bold</b>" in text  # shown as text
    assert "&lt;script&gt;" in html


def test_several_rubrics_in_one_file_and_write_html_report(repo: Repo, tmp_path: Path) -> None:
    reports = [_report(repo, {"B": CHECKS["B"]}), _report(repo, CHECKS)]
    path = write_html_report(tmp_path / "report.html", reports)
    document = parse(path.read_text(encoding="utf-8"))
    assert sum(tag == "svg" and "attribution" in (a.get("class") or "") for tag, a in document.tags) == 6
    assert sum(tag == "section" for tag, _ in document.tags) == 2


def test_check_format_html_cli(repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    repo.write("head.yaml", rubric_text({"B": CHECKS["B"]}, version="2"))
    code, out, _ = run_cli(capsys, "check", "--base", "rubrics/demo.yaml", "--head", "head.yaml", "--format", "html")
    assert code == 1 and out.startswith("<!DOCTYPE html>")
    parse(out)


def _rows(ids: list[str]) -> list[CheckRow]:
    return [CheckRow(i, "t", "hand", False, 1.0 + n, 0.5, 0, 0, 0) for n, i in enumerate(ids)]


def test_mermaid_chart_in_markdown_only_up_to_40_checks(repo: Repo) -> None:
    markdown = render_markdown(_report(repo, CHECKS))
    block = re.search(r"<details><summary>Chart: credit vs blame per check \(head as proposed\)</summary>\n\n```mermaid\n(.*?)```\n\n</details>",
                      markdown, re.S)
    assert block and 'x-axis ["A", "B"]' in block.group(1)
    widest = credit_blame_mermaid(_rows([f"c{n}" for n in range(MERMAID_MAX_CHECKS)]))
    labels = ", ".join(f'"c{n}"' for n in range(MERMAID_MAX_CHECKS))
    assert widest is not None and f"x-axis [{labels}]" in widest
    assert credit_blame_mermaid(_rows([f"c{n}" for n in range(MERMAID_MAX_CHECKS + 1)])) is None


def test_mermaid_labels_stay_distinct_when_cut() -> None:
    ids = [f"covers-the-very-long-shared-prefix-{n}" for n in range(12)] + ["a b", "a_b", "a_b"]
    labels = mermaid_labels(ids)
    assert len(set(labels)) == len(labels) == len(ids)
    assert all(len(label) <= 28 for label in labels)


@pytest.mark.parametrize("hostile", [
    'a"] \n  click A href "javascript:alert(1)"',
    "%%{init: {'theme': 'dark'}}%%",
    "[link](https://evil.example) @admin #12 <b>",
    "```\nbreak out",
])
def test_mermaid_labels_cannot_inject(hostile: str) -> None:
    label = mermaid_label(hostile)
    assert re.fullmatch(r"[A-Za-z0-9_.-]{1,28}", label)
    chart = credit_blame_mermaid(_rows([hostile, "ok"]))
    assert chart is not None
    lines = chart.splitlines()
    assert len(lines) == 6 and lines[0] == "xychart-beta horizontal"
    assert re.fullmatch(r'    x-axis \["[A-Za-z0-9_.-]+", "ok"\]', lines[2])


def test_a_renamed_check_is_one_row_and_the_decision_one_headline(repo: Repo) -> None:
    report = _report(repo, {"A-renamed": CHECKS["A"]})  # rename A, delete B
    assert {c.change for c in report.changes} >= {"renamed"}
    document = parse(render_html(report))
    text = "".join(document.text)
    assert text.count("FAIL") + text.count("PASS") == 1  # the page's headline only
    cells = [t.strip() for t in document.text]
    # a row in each table (the changes, the figures); charts of head and gated (base shows A)
    assert cells.count("A-renamed") == 2 + 3 - 1
    rows = [a for tag, a in document.tags if tag == "tr"]
    assert len(rows) == 2 * (1 + 2)  # per table: header, A-renamed, deleted B (A is not listed a second time)


def test_charts_and_tables_shrink_to_a_narrow_window(repo: Repo) -> None:
    html = render_html(_report(repo, {"B": CHECKS["B"]}))
    assert "svg.chart { max-width: 100%; height: auto; }" in html
    assert '<div class="table-wrap">' in html and "overflow-x: auto" in html
    # On a 390 px screen the check text keeps its width (not a word a line, rows hundreds of px
    # tall) and charts their label size (not 5-7 px): both scroll sideways instead.
    assert '<td class="text">' in html and "td.text { min-width: 24em; }" in html
    assert "@media (max-width: 600px) { figure { overflow-x: auto; } svg.chart { max-width: none; } }" in html
    assert "@media (min-width: 601px) { td > code { white-space: nowrap; } }" in html


def test_names_in_backticks_show_as_code_and_stay_text() -> None:
    # Notes are written for Markdown: in the HTML their backticks become code, never literal backticks.
    report = check_report()
    report.notes.append("This PR adds 2 verdict(s) to `calibration/<b>x</b>.jsonl` (`trust_pr_verdicts`)")
    html = render_html(report)
    note = next(line for line in html.splitlines() if "This PR adds" in line)
    assert note == ('<p class="muted">Note: This PR adds 2 verdict(s) to <code>calibration/&lt;b&gt;x&lt;/b&gt;.jsonl'
                    '</code> (<code>trust_pr_verdicts</code>)</p>')


def test_rejections_are_followed_by_how_to_pass_as_in_the_markdown() -> None:
    from tests.support import gfm

    report = check_report()
    for root in (gfm.parse(render_markdown(report)), gfm.parse_html(render_html(report))):
        (fix,) = [p.text() for p in root.iter("p") if p.text().startswith("To pass:")]
        assert "gated rubric at the end" in fix
    report.override = "the label was applied"
    assert "To pass:" not in render_html(report) and "To pass:" not in render_markdown(report)
