"""Audits as Markdown (PR comment), plain text (terminal) and GitHub annotations.

Check text and model reasons are data from a PR or a model: Markdown goes through
`neutralize`, terminal text through rich `Text` (never markup), annotations lose control bytes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.text import Text

from rubric_gate.audit.model import MISSING, AuditReport, CheckAudit
from rubric_gate.report import neutralize
from rubric_gate.report.markdown import code_span

EXCERPT_CHARS = 160
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u0080-\u009f\u202a-\u202e\u2066-\u2069]")


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def plain(text: Any) -> str:
    """No control characters or bidi overrides: safe in a terminal and an annotation."""
    return _CONTROL.sub("", str(text))


def _vfr(audit: CheckAudit) -> str:
    vfr = audit.vfr
    return "-" if vfr is None else f"{100 * vfr:.0f}% ({len(audit.fools)}/{audit.attempts})"


def _problems(audit: CheckAudit) -> str:
    names = [MISSING[n] for n in audit.failing] + ([] if audit.grounded else ["ungrounded"])
    return ", ".join(names) if names else "ok"


def _notices_markdown(report: AuditReport) -> str:
    return "".join(f"\n> [!NOTE]\n> {neutralize(n, table=False)}\n" for n in report.notices)


def render_audit_markdown(report: AuditReport, *, heading_level: int = 3, title: str = "Check audit") -> str:
    h = "#" * heading_level
    if not report.audits:
        if report.unanswered:
            return f"{h} {title}\n\nNo check could be audited.\n" + _notices_markdown(report)
        return f"{h} {title}\n\nNo added or reworded check to audit.\n"
    flagged = [a for a in report.audits if not a.passed]
    adversarial = any(a.attempts for a in report.audits)
    out = [f"{h} {title}", ""]
    out.append(f"{len(flagged)} of {len(report.audits)} audited check{'s' if len(report.audits) != 1 else ''} "
               f"{'have' if len(flagged) != 1 else 'has'} findings." if flagged else
               f"All {len(report.audits)} audited check{'s' if len(report.audits) != 1 else ''} are well built and grounded in the task.")
    out.append("")
    header = "| Check | Findings | Grounding |" + (" Fool rate |" if adversarial else "")
    out += [header, "|---|---|---|" + ("--:|" if adversarial else "")]
    for a in report.audits:
        grounding = ("grounded: " if a.grounded else "beyond the task: ") + f"\"{neutralize(excerpt(a.grounding_quote, 80))}\""
        row = f"| {code_span(a.check)} | {neutralize(_problems(a))} | {grounding} |"
        if adversarial:
            row += f" {_vfr(a)} |"
        out.append(row)
    details = [a for a in report.audits if a.findings() or a.fools]
    if details:
        out.append("")
        for a in details:
            for finding in a.findings():
                out.append(f"- {code_span(a.check, table=False)} {neutralize(finding, table=False)}")
            if a.fools:
                fool = a.fools[0]
                out.append(f"- {code_span(a.check, table=False)} fooled the judge, e.g. on {code_span(fool.item, table=False)}: "
                           f"\"{neutralize(excerpt(fool.output), table=False)}\" ({neutralize(fool.verifier_reason, table=False)})")
    judges = sorted({j for a in report.audits for j in a.judges})
    if judges:
        out += ["", f"Audited by {', '.join(code_span(j, table=False) for j in judges)}"
                + (" (majority)." if len(judges) > 1 else ".")]
    if report.usage:
        out.append("")
    for stats in report.usage:
        out.append(f"{neutralize(stats.summary, table=False)}  ")
    return "\n".join(out).rstrip() + "\n" + _notices_markdown(report)


def render_audit_text(report: AuditReport, console: Console) -> None:
    for notice in report.notices:
        console.print(Text(plain(f"notice: {notice}")), soft_wrap=True, highlight=False)
    if not report.audits:
        console.print("audit: no check could be audited" if report.unanswered else "audit: no check to audit")
        return
    for a in report.audits:
        mark = "ok      " if a.passed else "FINDINGS"
        vfr = f"  fool rate {_vfr(a)}" if a.attempts else ""
        console.print(Text(plain(f"{mark} {a.check}{vfr}")), soft_wrap=True, highlight=False)
        for finding in a.findings():
            console.print(Text(plain(f"    {finding}")), soft_wrap=True, highlight=False)
        if a.grounded:
            console.print(Text(plain(f"    grounded: \"{excerpt(a.grounding_quote)}\"")), soft_wrap=True, highlight=False)
        for fool in a.fools[:1]:
            console.print(Text(plain(f"    fool on {fool.item}: \"{excerpt(fool.output)}\" ({fool.verifier_reason})")),
                          soft_wrap=True, highlight=False)
    for stats in report.usage:
        console.print(Text(plain(stats.summary)), soft_wrap=True, highlight=False)


def audit_annotations(reports: Sequence[tuple[str, AuditReport]]) -> list[dict[str, Any]]:
    """Check-run annotations (level `notice`) on each flagged check's YAML line: [(repo path, report)]."""
    out: list[dict[str, Any]] = []
    for path, report in reports:
        for a in report.audits:
            if a.passed and not a.fools:
                continue
            lines = a.findings() + ([f"fool rate {_vfr(a)}"] if a.fools else [])
            out.append({
                "path": path,
                "start_line": a.line or 1,
                "end_line": a.line or 1,
                "annotation_level": "notice",
                "title": plain(f"rubric-gate audit: check '{a.check}' {_problems(a)}")[:255],
                "message": plain("\n".join(lines))[:60_000],
            })
    return out
