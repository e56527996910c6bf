"""Reports: the gate's findings (rubric_gate.results) as Markdown (PR comment), HTML or a terminal table.

Names load on first use (PEP 562): a `--format json` run imports neither jinja2 (HTML,
Markdown templates) nor rich (terminal tables).
"""

from __future__ import annotations

from rubric_gate.lazy import lazy_exports

_EXPORTS = {
    "render_html": "rubric_gate.report.html",
    "write_html_report": "rubric_gate.report.html",
    "neutralize": "rubric_gate.report.markdown",
    "render_attribution_markdown": "rubric_gate.report.markdown",
    "render_markdown": "rubric_gate.report.markdown",
    "render_attribution_text": "rubric_gate.report.text",
    "render_check_text": "rubric_gate.report.text",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports("rubric_gate.report", _EXPORTS, globals())
