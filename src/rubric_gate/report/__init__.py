"""Reports: the gate's findings (rubric_gate.results) as Markdown (PR comment), HTML or a terminal table.

Names load on first use (PEP 562): a `--format json` run imports neither jinja2 (HTML,
Markdown templates) nor rich (terminal tables).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rubric_gate.lazy import lazy_exports

if TYPE_CHECKING:  # the same names for the type checker (a test keeps the two equal)
    from rubric_gate.report.html import render_html as render_html
    from rubric_gate.report.html import write_html_report as write_html_report
    from rubric_gate.report.markdown import neutralize as neutralize
    from rubric_gate.report.markdown import (
        render_attribution_markdown as render_attribution_markdown,
    )
    from rubric_gate.report.markdown import (
        render_judge_change_markdown as render_judge_change_markdown,
    )
    from rubric_gate.report.markdown import render_markdown as render_markdown
    from rubric_gate.report.text import render_attribution_text as render_attribution_text
    from rubric_gate.report.text import render_check_text as render_check_text

_EXPORTS = {
    "render_html": "rubric_gate.report.html",
    "write_html_report": "rubric_gate.report.html",
    "neutralize": "rubric_gate.report.markdown",
    "render_attribution_markdown": "rubric_gate.report.markdown",
    "render_judge_change_markdown": "rubric_gate.report.markdown",
    "render_markdown": "rubric_gate.report.markdown",
    "render_attribution_text": "rubric_gate.report.text",
    "render_check_text": "rubric_gate.report.text",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports("rubric_gate.report", _EXPORTS, globals())
