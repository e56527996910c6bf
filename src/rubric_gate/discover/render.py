"""The discovered rubric as YAML (with a header saying how it was found) and the run as text."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from rubric_gate.audit.render import plain
from rubric_gate.discover.model import DiscoverReport
from rubric_gate.rubric import Rubric, rubric_to_yaml


def _comment(text: str) -> str:
    return "# " + " ".join(plain(text).split())


def discovered_yaml(rubric: Rubric, report: DiscoverReport, pairs_display: str) -> str:
    header = [
        _comment(f"Discovered by rubric-gate discover from {pairs_display} ({report.pairs} pairs, "
                 f"{report.candidates} extracted candidates)."),
        _comment(f"Embeddings: {report.embeddings}. Checks ranked by the share of pairs the chosen response wins."),
        _comment("Origin generated: label a calibration set and open a PR, so the gate measures each check."),
    ]
    return "\n".join(header) + "\n" + rubric_to_yaml(rubric)


def render_discover_text(report: DiscoverReport, console: Console) -> None:
    def say(text: str) -> None:
        console.print(Text(plain(text)), soft_wrap=True, highlight=False)

    say(f"{report.pairs} pairs -> {report.candidates} candidates; pool by level: "
        f"{' -> '.join(str(n) for n in report.pool_sizes)}")
    say(f"embeddings: {report.embeddings}")
    say(f"{report.backed} criteria backed by {report.min_support}+ candidates; {report.ranked} scored on the pairs")
    for c in report.checks:
        share = "-" if c.share is None else f"{100 * c.share:.0f}%"
        say(f"  {c.id}: chosen wins {share} ({c.wins} won, {c.losses} lost, {c.ties} tied); "
            f"{c.support} candidates from {c.pairs} pairs")
        say(f"      {c.text}")
    for note in report.notes:
        say(f"note: {note}")
    if report.out:
        say(f"wrote {report.out}")
