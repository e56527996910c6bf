"""HTML report: one self-contained file (no JavaScript, no network) with inline SVG charts."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined

from rubric_gate import __version__
from rubric_gate.report.charts import METRICS, attribution_chart, rates_chart, shared_scale
from rubric_gate.report.markdown import gated_label, percent, trade_text, withheld_text
from rubric_gate.report.table import (
    CHANGE_HEADERS,
    catches_header,
    change_lines,
    figures_headers,
    origin_cell,
    table_rows,
)
from rubric_gate.report.terminal import strip_controls
from rubric_gate.results import CheckReport


def code_parts(text: object) -> list[tuple[str, bool]]:
    """Our own prose writes names in `backticks` (Markdown first): (text, is_code) pieces, so the
    template shows them as code, not as backticks; autoescape keeps every piece text."""
    pieces = re.split(r"`([^`\n]+)`", str(text))
    return [(piece, i % 2 == 1) for i, piece in enumerate(pieces) if piece]


def _environment() -> Environment:
    # Autoescape on: every rubric id, check text, reason and note is data, never markup.
    env = Environment(
        loader=PackageLoader("rubric_gate.report", "templates"),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=True,
    )
    env.filters["pct"] = percent
    env.filters["shown"] = strip_controls  # bidirectional controls in the gated YAML, replaced
    env.filters["f1"] = lambda value: f"{value:.1f}"
    env.filters["parts"] = code_parts
    env.filters["origin"] = origin_cell
    return env


def _section(report: CheckReport, failures: Sequence[str] = ()) -> dict[str, Any]:
    versions = [("base", report.base), ("head", report.head), ("gated", report.gated)]
    titles = {"base": f"base, version {report.base.version}",
              "head": f"head as proposed, version {report.head.version}",
              "gated": f"gated: {gated_label(report)}"}
    scale = shared_scale([s for _, s in versions])
    catches = catches_header(report.head.max_failures).lower()
    return {
        "report": report,
        "charts": [attribution_chart(s, name, titles[name], scale) for name, s in versions],
        "rates": rates_chart(versions),
        "headers": [*figures_headers(report), "Text"],
        "change_headers": CHANGE_HEADERS,
        "changes": change_lines(report),
        "rows": table_rows(report),
        "catches": catches,
        "metrics": [(metric, catches if metric == "unique" else label) for metric, label in METRICS],
        "rejected": [(c, trade_text(c)) for c in report.changes if not c.accepted],
        "held": {(h.check, h.change): h for h in (report.withheld.held if report.withheld else ())},
        "withheld": withheld_text(report.withheld) if report.withheld is not None else "",
        "gated_label": gated_label(report),
        "failures": list(failures),
        "passed": report.decision == "pass" and not failures,
        **_judge_change(report),
    }


def _judge_change(report: CheckReport) -> dict[str, Any]:
    """The judge change's table (rule J), when the judge changed: the Markdown section's cells."""
    jc = report.judge_change
    if jc is None:
        return {"jc": None}
    from rubric_gate.comparison import comparison_lines
    from rubric_gate.report import judge_change as parts

    return {"jc": jc, "jc_headers": [*parts.CHECK_HEADERS, parts.catches_header(jc)],
            "jc_rows": [(row, parts.check_cells(row)) for row in jc.checks],
            "jc_comparisons": comparison_lines(jc.comparisons), "jc_decisions": parts.decisions_sentence(jc)}


def render_html(reports: CheckReport | Sequence[CheckReport], *, title: str = "rubric-gate report",
                decision: str | None = None, failures: Sequence[Sequence[str]] = (),
                run_failures: Sequence[str] = ()) -> str:
    """One HTML document for one or several gated rubrics (the action gates every rubric a PR touches).

    The action's run can fail where every report passes: `decision` is then the run's,
    `failures` (one list per report) what fails each rubric file beyond its report (e.g. merged
    onto the base tip), `run_failures` what fails the run outside any rubric (a relabeled item).
    """
    reports = [reports] if isinstance(reports, CheckReport) else list(reports)
    per_report = [list(f) for f in failures] + [[] for _ in range(len(reports) - len(failures))]
    sections = [_section(r, f) for r, f in zip(reports, per_report, strict=True)]
    if decision is None:
        decision = "pass" if all(s["passed"] for s in sections) and not run_failures else "fail"
    template = _environment().get_template("report.html.j2")
    return template.render(title=title, decision=decision, sections=sections, run_failures=list(run_failures),
                           version=__version__)


def write_html_report(path: str | Path, reports: CheckReport | Sequence[CheckReport], *,
                      title: str = "rubric-gate report", **run: Any) -> Path:
    """Write `render_html(reports, **run)` to `path` (e.g. OUTPUT_DIR/report.html) and return the path."""
    target = Path(path)
    target.write_text(render_html(reports, title=title, **run), encoding="utf-8")
    return target
