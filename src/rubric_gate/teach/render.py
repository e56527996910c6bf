"""`teach` as terminal text: the missed groups, each proposal with the gate's decision, the snippet."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from rubric_gate.audit.render import excerpt, plain
from rubric_gate.teach.model import TeachReport

NO_PROPOSAL = "# rubric-gate teach: no proposal passed the gate\n"
DRY_RUN = "# rubric-gate teach: dry run, nothing was asked or judged\n"


def snippet(report: TeachReport) -> str:
    """The YAML to paste under `checks:` (a comment when nothing was kept)."""
    if report.dry_run:
        return DRY_RUN
    return report.yaml or NO_PROPOSAL


def render_teach_text(report: TeachReport, console: Console) -> None:
    def say(text: str) -> None:
        console.print(Text(plain(text)), soft_wrap=True, highlight=False)

    missed = sum(len(ids) for ids in report.missed.values())
    verb = "is flawed and passes" if missed == 1 else "are flawed and pass"
    if report.missed_known:
        say(f"{report.rubric_id}: {missed} of {report.items} items {verb} every check" + (":" if missed else ""))
    else:
        say(f"{report.rubric_id}: which of the {report.items} items are flawed and pass every check is known only "
            "once the rubric's verdicts are judged")
    for flaw, ids in report.missed.items():
        asked = "" if flaw in report.asked else "  (not asked: over --max)"
        say(f"  {flaw}: {', '.join(ids)}{asked}")
    for line in report.plan:
        say(f"dry run: {line}")
    for p in report.proposals:
        head = "kept" if p.accepted else "dropped"
        say("")
        say(f"{head} {p.id} (taught by {p.flaw}: {', '.join(p.taught_by)})")
        say(f"    {p.text}")
        say(f"    why: {excerpt(p.why)}")
        scores = f"catches {len(p.catches)} missed ({', '.join(p.catches) or 'none'}), " \
                 f"fails {len(p.fails_correct)} correct"
        if p.credit is not None:
            scores += f", credit {p.credit:.2f}, blame {p.blame:.2f}"
        say(f"    {scores}")
        if not p.accepted:
            say(f"    gate: {p.reason}")
    if not report.dry_run and report.proposals:
        say("")
        say("add under checks: (frozen: origin label)" if report.yaml else "nothing to add")
        if report.yaml:
            console.print(Text(report.yaml.rstrip("\n")), soft_wrap=True, highlight=False)
