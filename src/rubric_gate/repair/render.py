"""Repairs as Markdown (sticky comment), terminal text, and a GitHub review-comment body with a
```suggestion block the author can commit in one click.

Model and PR text is data: Markdown goes through `neutralize`; a suggestion block's fence is
longer than any backtick run inside it, so the replacement cannot close it early.
"""

from __future__ import annotations

import re

from rich.console import Console
from rich.text import Text

from rubric_gate.audit.render import excerpt, plain
from rubric_gate.repair.model import RepairReport, RepairSuggestion
from rubric_gate.report import neutralize
from rubric_gate.report.markdown import code_span
from rubric_gate.results import CheckRow

REVIEW_MARKER = "<!-- rubric-gate:repair "


def review_marker(path: str | None, check_id: str) -> str:
    """Hidden key of a suggestion's review comment: one per (file, check), found again on the next push."""
    safe = re.sub(r"[^A-Za-z0-9_./:-]", "_", f"{path or ''}:{check_id}").replace("--", "-_")
    return f"{REVIEW_MARKER}{safe} -->"


def _scores(row: CheckRow) -> str:
    return (f"credit {row.credit:.2f}, blame {row.blame:.2f}, catches {row.fails_flawed} flawed "
            f"({row.unique_catches} unique), fails {row.fails_correct} correct")


def _fence(text: str) -> str:
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def suggestion_comment_body(suggestion: RepairSuggestion) -> str:
    """Body of the review comment on the check's lines: what changed, its scores, the suggestion."""
    fence = _fence(suggestion.yaml)
    lines = [
        review_marker(suggestion.path, suggestion.check),
        f"**rubric-gate repair** for {code_span(suggestion.check, table=False)} "
        f"(operator `{suggestion.operator}`): {neutralize(suggestion.why, table=False)}",
        "",
    ]
    for row in suggestion.rows:
        lines.append(f"- {code_span(row.id, table=False)}: {_scores(row)}")
    if suggestion.no_longer_fails:
        lines.append(f"- no longer fails correct items {neutralize(', '.join(suggestion.no_longer_fails), table=False)}")
    lines += ["", "The gate accepts this rewrite on the calibration set.", "", f"{fence}suggestion",
              suggestion.yaml.rstrip("\n"), fence]
    return "\n".join(lines) + "\n"


def render_repairs_markdown(report: RepairReport, *, heading_level: int = 3) -> str:
    if not (report.suggestions or report.protected or report.unrepaired):
        return ""
    h = "#" * heading_level
    out = [f"{h} Suggested repairs", ""]
    if report.suggestions:
        out.append("Each rewrite below uses one operator of the fixed library and is accepted by the gate "
                   "when it replaces the PR's text.")
        out.append("")
    for s in report.suggestions:
        where = f" (lines {s.start_line}-{s.end_line})" if s.start_line else ""
        out.append(f"- {code_span(s.check, table=False)}{where}, `{s.operator}`: {neutralize(s.why, table=False)}")
        for row in s.rows:
            out.append(f"  - {code_span(row.id, table=False)}: \"{neutralize(excerpt(row.text, 300), table=False)}\" ({_scores(row)})")
    for p in report.protected:
        if p.unique_catches:
            caught = "; ".join(f"{code_span(i.id, table=False)} \"{neutralize(i.excerpt, table=False)}\"" for i in p.unique_catches)
            out.append(f"- deleting {code_span(p.check, table=False)} loses what only it catches: {caught}")
    for u in report.unrepaired:
        out.append(f"- {code_span(u.check, table=False)}: no repair offered ({neutralize(u.reason, table=False)})")
    for stats in report.usage:
        out += ["", neutralize(stats.summary, table=False)]
    return "\n".join(out).rstrip() + "\n"


def render_repairs_text(report: RepairReport, console: Console) -> None:
    def say(text: str) -> None:
        console.print(Text(plain(text)), soft_wrap=True, highlight=False)

    for s in report.suggestions:
        where = f" lines {s.start_line}-{s.end_line}" if s.start_line else ""
        say(f"repair {s.check}{where} ({s.operator}): {s.why}")
        for row in s.rows:
            say(f"    {row.id}: {row.text}  [{_scores(row)}]")
    for p in report.protected:
        for item in p.unique_catches:
            say(f"deleting {p.check} loses its unique catch {item.id}: {item.excerpt}")
    for u in report.unrepaired:
        say(f"no repair for {u.check}: {u.reason}")
    for stats in report.usage:
        say(stats.summary)
