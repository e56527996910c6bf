"""`check --audit / --audit-rule / --suggest-repairs`: their options, and the reports the gate
service's run brings back (the steps themselves run in `service.run_gate_request`)."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from rich.console import Console

from rubric_gate.rubric import RubricDocument


def audit_repair_options(command: Any) -> Any:
    """The options `check` gains for audits and repairs (kept here so check_cmd stays small)."""
    options = [
        click.option("--audit", "audit_flag", is_flag=True, help="Audit the added and reworded checks (advisory)."),
        click.option("--audit-rule", is_flag=True,
                     help="Reject an added or reworded check the audit flags (implies --audit)."),
        click.option("--audit-judge", "audit_judges", multiple=True,
                     help="PROVIDER:MODEL for audits (repeatable: the majority decides). Default: the judge."),
        click.option("--audits", type=click.Path(dir_okay=False, path_type=Path),
                     help="Audit store (JSONL). Default: beside the head rubric's verdicts, NAME.audits.jsonl."),
        click.option("--suggest-repairs", is_flag=True,
                     help="Propose rewrites of rejected checks and show those the gate accepts."),
        click.option("--repairs", "repair_count", type=click.IntRange(1, 10), default=3, show_default=True,
                     help="Rewrites asked for per rejected check."),
        click.option("--repair-model", help="PROVIDER:MODEL that proposes rewrites. Default: the judge."),
        click.option("--repair-objective", type=click.Choice(["gate", "vfr"]), default="gate", show_default=True,
                     help="vfr: also require a lower fool rate on the evaluation split with alpha (over the "
                          "--audit-judge panel) down at most --delta; keep the Pareto frontier."),
        click.option("--delta", type=click.FloatRange(0, 1), default=0.03, show_default=True,
                     help="With --repair-objective vfr: the largest alpha drop a rewrite may cost."),
        click.option("--attacker", help="With --repair-objective vfr: PROVIDER:MODEL writing gaming outputs."),
        click.option("--verifier", help="With --repair-objective vfr: PROVIDER:MODEL checking them, blind."),
        click.option("--attacks", type=click.IntRange(1, 100), default=5, show_default=True,
                     help="With --repair-objective vfr: attack outputs per check text."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


@dataclass
class AuditRepairSteps:
    """What the audit and repair steps add to a check report."""

    audit_flag: bool = False
    audit_rule: bool = False
    audit_judges: tuple[str, ...] = ()
    audits: Path | None = None
    suggest_repairs: bool = False
    repair_count: int = 3
    repair_model: str | None = None
    repair_objective: str = "gate"
    delta: float = 0.03
    attacker: str | None = None
    verifier: str | None = None
    attacks: int = 5
    audit_report: Any = None
    repair_report: Any = None
    _store: Any = field(default=None, repr=False)

    @property
    def active(self) -> bool:
        return self.audit_flag or self.audit_rule or self.suggest_repairs

    def judges(self, judge: str | None) -> list[str]:
        return list(self.audit_judges) or ([judge] if judge else [])

    def store(self, head: RubricDocument, root: Path) -> Any:
        if self._store is None:
            from rubric_gate.audit import AuditStore
            from rubric_gate.cli.audit_cmd import audit_store_path

            self._store = AuditStore.load(audit_store_path(self.audits, head.rubric.verdicts, root))
        return self._store

    def took(self, run: Any) -> None:
        """Keep what the gate service's run audited and repaired (a `service.GateRun`), for the report."""
        self.audit_report, self.repair_report = run.audit_report, run.repair_report
        for report in (self.audit_report, self.repair_report):
            for stats in getattr(report, "usage", None) or ():
                print(stats.summary, file=sys.stderr)

    def objective(self, head: RubricDocument, judge: str | None, root: Path) -> Any:
        """The vfr objective's settings, or None; its dev split is the rubric's `evaluation` items."""
        if self.repair_objective != "vfr" or not self.suggest_repairs:
            return None
        from rubric_gate.errors import JudgeError
        from rubric_gate.repair.vfr import VfrObjective
        from rubric_gate.scoring import load_calibration_for

        judges = tuple(dict.fromkeys(self.judges(judge)))
        if not (self.attacker and self.verifier) or len(judges) < 2:
            raise JudgeError("--repair-objective vfr needs --attacker P:M, --verifier P:M and two or more "
                             "--audit-judge P:M (for inter-judge alpha)")
        dev = load_calibration_for(head, None, root, split="evaluation")
        return VfrObjective(dev, self.attacker, self.verifier, judges, self.attacks, self.delta)

    def add_json(self, data: dict[str, Any]) -> None:
        if self.audit_report is not None:
            data["audit"] = self.audit_report.to_dict()
        if self.repair_report is not None:
            data["repairs"] = self.repair_report.to_dict()

    def markdown(self) -> str:
        if self.audit_report is None and self.repair_report is None:
            return ""  # nothing to add: the audit and repair modules stay unloaded
        from rubric_gate.audit import render_audit_markdown
        from rubric_gate.repair import render_repairs_markdown

        parts = []
        if self.audit_report is not None:
            parts.append(render_audit_markdown(self.audit_report))
        if self.repair_report is not None:
            parts.append(render_repairs_markdown(self.repair_report))
        return "".join("\n" + p for p in parts if p)

    def print_text(self, console: Console) -> None:
        if self.audit_report is None and self.repair_report is None:
            return
        from rubric_gate.audit import render_audit_text
        from rubric_gate.repair import render_repairs_text

        if self.audit_report is not None:
            render_audit_text(self.audit_report, console)
        if self.repair_report is not None:
            render_repairs_text(self.repair_report, console)
