"""The full Markdown for the PR comment and job summary, around each rubric's report section."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rubric_gate import __version__
from rubric_gate.action.commits.merge_check import THE_MERGE, MergeFinding
from rubric_gate.action.gating.outcome import RubricOutcome
from rubric_gate.action.gating.standard import StandardFinding
from rubric_gate.report import neutralize, render_attribution_markdown, render_markdown
from rubric_gate.report.markdown import code_span
from rubric_gate.trust.approval import Approval

MARKER = "<!-- rubric-gate -->"
COMMENT_LIMIT = 65536  # GitHub's limit on an issue comment body, in characters


@dataclass
class RunSummary:
    decision: str
    outcomes: list[RubricOutcome]
    head_sha: str
    base_sha: str  # the merge base the PR was gated against
    notices: list[str] = field(default_factory=list)  # run-wide, e.g. "no comment posted"
    override: str | None = None
    run_url: str | None = None
    base_branch_sha: str | None = None  # the base branch's tip when the run started
    standard: list[StandardFinding] = field(default_factory=list)  # labels and verdicts
    override_label: str | None = None  # the action's `override_label`, named in what to do next


def vouch_text(summary: RunSummary) -> str:
    """What makes a PR's own recorded verdicts count, said where they are held (Markdown): and,
    where the run also fails on a finding no approval covers, that the approval alone won't do."""
    label = f"the {code_span(summary.override_label, table=False)} label" if summary.override_label else "the override label"
    approving = (f"A review approving this head ({code_span(summary.head_sha[:7], table=False)}) by someone with write "
                 "access makes them count")
    unverifiable = _unverifiable(summary)
    if unverifiable is not None:
        return (f"This run cannot verify an approval ({neutralize(unverifiable.text, table=False)}), so none can make "
                f"them count here; {label} still skips the gate altogether.")
    if _beyond_approval(summary):
        return (f"{approving}, but not the findings this comment lists outside the rubric sections (labels, "
                f"recorded answers, the merge): those need {label} either way.")
    return f"{approving}; {label} still skips the gate altogether."


def _beyond_approval(summary: RunSummary) -> bool:
    """Whether an approval cannot pass this run: it fails on a finding outside the rubric reports
    (a relabel, a changed recorded answer, the merge), which an approval never covers, or the run
    cannot verify an approval at all (a fork's read-only token)."""
    return any(f.blocking for f in summary.standard) or _unverifiable(summary) is not None


def _unverifiable(summary: RunSummary) -> Approval | None:
    return next((o.approval for o in summary.outcomes if o.approval is not None and not o.approval.verifiable), None)


def _section(outcome: RubricOutcome, *, override_shown: bool = False, vouch: str | None = None,
             beyond_approval: bool = False) -> str:
    path = code_span(outcome.file.path, table=False)
    failures = "".join(f"\n> [!CAUTION]\n> Fails: {neutralize(f, table=False)}.\n" for f in outcome.failures)
    notes = "".join(f"\n> [!NOTE]\n> {neutralize(n, table=False)}\n" for n in outcome.notices)
    if outcome.pending:
        return f"### ⏳ {path}: judging {outcome.pending_pairs} pair(s) in batch, re-run to collect\n{notes}"
    if outcome.error is not None:
        error = outcome.error.replace("```", "'''")
        return f"### ❌ {path}: could not be gated\n{notes}\n```\n{error}\n```\n"
    if outcome.report is not None:
        body = (render_markdown(outcome.report, heading_level=3, show_override=not override_shown,
                                approval_suffices=not beyond_approval, **({"vouch": vouch} if vouch else {}))
                + _audit_repair_sections(outcome))
        first, _, rest = body.partition("\n")
        # One "rubric-gate: FAIL" per comment (its top heading): a section names its rubric.
        first = re.sub(r"rubric-gate: (PASS|FAIL) — ", "", first, count=1)
        if not outcome.passed:  # the branch's report passed, but the file fails (e.g. merged onto the tip)
            first = first.replace("✅", "❌", 1)
        return f"{first}\n\nFile: {path}\n{failures}{notes}{rest}"
    mark = "✅" if outcome.passed else "❌"
    if outcome.summary is not None:
        table = render_attribution_markdown(outcome.summary, heading_level=4)
        return f"### {mark} {path}: new rubric\n{failures}{notes}\n{table}"
    return f"### {mark} {path}\n{failures}{notes}"


def _audit_repair_sections(outcome: RubricOutcome) -> str:
    parts = []
    if outcome.audit_report is not None:
        from rubric_gate.audit import render_audit_markdown

        parts.append(render_audit_markdown(outcome.audit_report, heading_level=4))
    if outcome.repair_report is not None:
        from rubric_gate.repair import render_repairs_markdown

        parts.append(render_repairs_markdown(outcome.repair_report, heading_level=4))
    return "".join("\n" + p for p in parts if p)


def _standard_section(findings: list[StandardFinding], label: str) -> str:
    lines = ["### Labels and recorded verdicts", ""]
    for f in findings:
        mark = "❌" if f.blocking else "✔️"
        users = f" (used by {', '.join(code_span(u, table=False) for u in f.used_by)})" if f.used_by else ""
        lines.append(f"- {mark} {code_span(f.path, table=False)}{users}: {neutralize(f.message, table=False)}")
    if any(f.blocking for f in findings):
        lines += ["", "Labels are the standard every rubric is gated on, and recorded verdicts are its evidence: "
                  "relabeling, rewriting or removing labeled items, repointing a rubric's files, rewording the task "
                  f"the judge reads, or changing a recorded answer needs {label} from someone with write access "
                  "(or a commit that reverts it)."]
    return "\n".join(lines) + "\n"


MERGE_HEADING = "The merge: what would land is not what the gate reviewed; rebase the PR onto its base branch"


def _merge_section(findings: list[MergeFinding], label: str) -> str:
    """The merge findings (`action.commits.merge_check`): the merge git or GitHub writes is not the one
    the gate reviewed, or there is none to compare. Each says why and what to do."""
    lines = [f"### {MERGE_HEADING}", "",
             "The gate reviews this PR's changes as they merge onto the base branch's tip. The merge that would land "
             "differs from that, or could not be made, so it was never reviewed:", ""]
    for f in findings:
        where = "The merge" if f.path == THE_MERGE else code_span(f.path, table=False)
        lines.append(f"- {'❌' if f.blocking else '⚠️'} {where}: {neutralize(f.message, table=False)}")
    cover = (f"; {label} from someone with write access covers it as a reviewer's call"
             if any(f.blocking for f in findings) else "")
    lines += ["", "Rebase the PR onto its base branch (or merge the base branch into it) and push, so the gate reviews "
              f"the merge as it will land{cover}."]
    return "\n".join(lines) + "\n"


def _status(outcome: RubricOutcome) -> str:
    """One line per changed rubric file for the list at the top: its mark, path and what happened."""
    path = code_span(outcome.file.path, table=False)
    if outcome.pending:
        return f"⏳ {path}: judging in batch"
    if outcome.error is not None:
        return f"❌ {path}: could not be gated"
    report = outcome.report
    rejected = sum(not c.accepted for c in report.changes) if report is not None else 0
    if rejected and report is not None:
        what = f"{rejected} of {len(report.changes)} change{'s' if len(report.changes) != 1 else ''} rejected"
    elif outcome.failures:
        what = f"{len(outcome.failures)} failure{'s' if len(outcome.failures) != 1 else ''}"
    elif report is None:
        what = "new rubric" if outcome.summary is not None else "passed"
    else:
        what = "no check changed" if not report.changes else "passed"
    mark = "⚠️" if outcome.passed and (rejected or outcome.failures) else "✅" if outcome.passed else "❌"
    return f"{mark} {path}: {what}" + (" (overridden)" if mark == "⚠️" else "")


def _base_line(summary: RunSummary) -> str:
    base = summary.base_sha[:7]
    if summary.base_branch_sha and summary.base_branch_sha != summary.base_sha:
        return (f"Gated against {base}, where this PR branched from its base branch (now at "
                f"{summary.base_branch_sha[:7]}): changes made on the base branch since are not this PR's.")
    return f"Gated against {base}, the base branch's commit this PR branched from."


def render_body(summary: RunSummary) -> str:
    ok = summary.decision == "pass"
    changed = len(summary.outcomes)
    failed = sum(not o.passed and not o.pending for o in summary.outcomes)
    waiting = sum(o.pending for o in summary.outcomes)
    mark = "⏳" if summary.decision == "pending" else "✅" if ok else "❌"
    parts = [MARKER, f"## {mark} rubric-gate: {summary.decision.upper()}", ""]
    if changed == 0:
        parts.append("This PR changes no rubric file." + ("" if summary.standard else " Nothing to gate."))
    else:
        overridden = sum(o.passed and bool(o.override or (o.report and o.report.override)) for o in summary.outcomes)
        parts.append(f"{changed} rubric file{'s' if changed != 1 else ''} changed, "
                     f"{changed - failed - waiting - overridden} passed, {failed} failed"
                     + (f", {overridden} overridden" if overridden else "")
                     + (f", {waiting} waiting for batch verdicts." if waiting else "."))
    if changed > 1:  # which ones, before the sections
        parts += [""] + [f"- {_status(o)}" for o in summary.outcomes]
    parts += ["", _base_line(summary)]
    label = f"the {code_span(summary.override_label, table=False)} label" if summary.override_label else "the override label"
    merge = [f for f in summary.standard if isinstance(f, MergeFinding)]
    standard = [f for f in summary.standard if not isinstance(f, MergeFinding)]
    for section, findings in (("Labels and recorded verdicts", standard), ("The merge", merge)):
        blocking = sum(f.blocking for f in findings)
        if blocking:  # else "1 passed, 0 failed" under a FAIL heading reads as a contradiction
            parts += ["", f"{blocking} finding{'s' if blocking != 1 else ''} under \"{section}\" "
                          f"need{'s' if blocking == 1 else ''} {label}."]
    if summary.decision == "fail" and failed:
        fix = "**To merge:** fix what is marked ❌ below and push (the gate runs again on the new head)"
        if any(o.error is not None for o in summary.outcomes):  # never covered by an override
            parts += ["", f"{fix}: a rubric file that could not be gated needs a fix, {label} does not cover it."]
        elif any(o.report is not None and o.report.withheld is not None for o in summary.outcomes) \
                and not _beyond_approval(summary):
            parts += ["", f"{fix}, have someone with write access approve this head (their approval makes this PR's "
                          f"own recorded verdicts count: see \"Held until a writer approves\" below), or have them "
                          f"apply {label} to this head."]
        else:
            parts += ["", f"{fix}, or have someone with write access apply {label} to this head."]
    if summary.override:
        parts += ["", "> [!WARNING]", f"> The gate failed, but {neutralize(summary.override, table=False)}."]
    for notice in summary.notices:
        parts += ["", "> [!NOTE]", f"> {neutralize(notice, table=False)}"]
    if standard:
        parts += ["", _standard_section(standard, label).rstrip("\n")]
    for outcome in summary.outcomes:
        parts += ["", _section(outcome, override_shown=bool(summary.override), vouch=vouch_text(summary),
                               beyond_approval=_beyond_approval(summary)).rstrip("\n")]
    if merge:  # after the rubrics: the merge of all of them
        parts += ["", _merge_section(merge, label).rstrip("\n")]
    footer = f"<sub>rubric-gate {__version__} · base {summary.base_sha[:7]} (merge base) → head {summary.head_sha[:7]}"
    if summary.run_url:
        footer += f" · [workflow run]({summary.run_url})"
    parts += ["", footer + "</sub>", ""]
    return "\n".join(parts)


def fit(body: str, limit: int = COMMENT_LIMIT, where: str = "the job summary and the JSON report",
        *, unit: str = "characters") -> str:
    """Cut `body` to `limit` characters (or UTF-8 bytes) with an explicit note, keeping fences and details closed.

    Issue comments are limited in characters; a check run's output.summary in bytes
    ("summary exceeds a maximum bytesize of 65535").
    """
    def size(text: str) -> int:
        return len(text.encode("utf-8")) if unit == "bytes" else len(text)

    if size(body) <= limit:
        return body
    note = (f"\n\n> [!WARNING]\n> Truncated: this report is {size(body):,} {unit}, over GitHub's "
            f"{limit:,}-{unit.rstrip('s')} limit. The full report is in {where}.\n")
    budget = limit - size(note) - 40  # room for closing a fence and a details block (ASCII)
    if unit == "bytes":
        cut = body.encode("utf-8")[:budget].decode("utf-8", errors="ignore")
    else:
        cut = body[:budget]
    cut = cut[: cut.rfind("\n") + 1] if "\n" in cut else cut
    if cut.count("```") % 2:
        cut += "```\n"
    if cut.count("<details>") > cut.count("</details>"):
        cut += "\n</details>\n"
    return cut + note
