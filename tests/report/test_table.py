"""One per-check table in every format: the Markdown comment (as GitHub renders it), the HTML
report and the terminal show the same headers, cells and decision notes from one row builder."""

from __future__ import annotations

import io

from rich.console import Console

from rubric_gate.report import render_check_text, render_html, render_markdown
from rubric_gate.report.table import CHANGE_HEADERS, figures_headers, table_rows
from rubric_gate.results import CheckReport
from tests.support import gfm
from tests.support.values import check_report

PIVOTAL_HEADERS = ["Check", "Origin", "Credit", "Blame", "Pivotal catches",
                   "Fails correct", "Fails flawed", "Alpha", "Flip rate", "When decided"]


def _table(root: gfm.Element, first: str) -> tuple[list[str], list[list[str]]]:
    table = next(t for t in root.find_all("table") if gfm.table_header(t)[:2] == ["Check", first])
    return gfm.table_header(table), gfm.table_rows(table)


def _markdown_table(report: CheckReport, first: str = "Origin") -> tuple[list[str], list[list[str]]]:
    return _table(gfm.parse(render_markdown(report)), first)


def _html_table(report: CheckReport, first: str = "Origin") -> tuple[list[str], list[list[str]]]:
    return _table(gfm.parse_html(render_html(report)), first)


def test_markdown_and_html_show_the_same_headers_and_cells() -> None:
    report = check_report()
    assert figures_headers(report) == PIVOTAL_HEADERS
    md_header, md_rows = _markdown_table(report)
    html_header, html_rows = _html_table(report)
    assert md_header == PIVOTAL_HEADERS
    assert html_header == [*PIVOTAL_HEADERS, "Text"]
    assert md_rows == [
        ["kept", "hand", "1.00", "0.00", "1", "0", "1", "0.50", "25%", ""],
        ["edited", "label, frozen", "0.50", "0.25", "0", "1", "1", "0.50", "25%", "0.50 / 0.25 / 1"],
    ]
    assert [row[:-1] for row in html_rows] == md_rows
    assert [row[-1] for row in html_rows] == ["Is it kept?", "Is it edited?"]
    changes = [["edited", "modified (origin)", "rejected (1/2 judges) ⚠ unstable ⚠ tie", "would add blame 0.25"]]
    assert _markdown_table(report, "Change") == _html_table(report, "Change") == (list(CHANGE_HEADERS), changes)


def test_the_catches_label_follows_the_aggregation_everywhere() -> None:
    report = check_report(max_failures=0)
    (row_kept, row_edited) = table_rows(report)
    assert row_edited.decided == "0.50 / 0.25 / 1" and row_kept.decided == ""
    assert _markdown_table(report)[0][4] == _html_table(report)[0][4] == "Unique catches"
    out = io.StringIO()
    render_check_text(check_report(), Console(file=out, width=200))
    assert "Pivotal" in out.getvalue() and "Unique" not in out.getvalue()


def test_every_labeled_item_is_called_a_labeled_item() -> None:
    report = check_report(split="all")
    markdown, html = render_markdown(report), render_html(report)
    assert "on the 4 labeled items;" in markdown and "all items" not in markdown
    assert "4 labeled items" in html and "calibration items" not in html


def test_the_decision_sits_beside_the_change_where_a_comment_shows_it() -> None:
    # The decision sits beside the change it decides, in a table narrow enough for a GitHub
    # comment (~780 px): last of 11 columns it was past the right edge, and a reviewer had to
    # scroll to see what was rejected.
    report = check_report()
    for header, rows in (_markdown_table(report, "Change"), _html_table(report, "Change")):
        assert header == ["Check", "Change", "Decision", "Why"]
        assert [row[2].split(" ")[0] for row in rows] == ["rejected"]


def test_the_when_decided_cells_hold_only_the_figures_the_footnote_names() -> None:
    # The cells hold figures only ("0.50 / 0.25 / 1"): words in every changed row ("credit 2.00,
    # blame 0.00, unique 2") wrap to five lines in a table squeezed to the comment's width.
    report = check_report()
    header, rows = _markdown_table(report)
    assert header[-1] == "When decided" and rows[1][-1] == "0.50 / 0.25 / 1"
    assert all(len(word) <= len("0.50") for word in rows[1][-1].split())
    assert '"When decided" is the changed check\'s credit / blame / pivotal catches' in render_markdown(report)
