"""Reports: the gate's findings as JSON, Markdown (PR comment) or a terminal table."""

from rubric_gate.report.html import render_html, write_html_report
from rubric_gate.report.markdown import neutralize, render_attribution_markdown, render_markdown
from rubric_gate.report.model import ChangeRow, CheckReport, CheckRow, RubricSummary
from rubric_gate.report.text import render_attribution_text, render_check_text

__all__ = [
    "ChangeRow",
    "CheckReport",
    "CheckRow",
    "RubricSummary",
    "neutralize",
    "render_attribution_markdown",
    "render_attribution_text",
    "render_check_text",
    "render_html",
    "render_markdown",
    "write_html_report",
]
