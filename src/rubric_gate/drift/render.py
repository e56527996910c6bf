"""A drift run as Markdown (the job summary and the issue the scheduled workflow opens) and as
terminal text. JSON is `DriftReport.to_dict`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rubric_gate.drift.model import DriftReport, RubricDrift
from rubric_gate.reliability import Estimate
from rubric_gate.report.markdown import code_span, neutralize

if TYPE_CHECKING:
    from rich.console import Console

LISTED = 20  # changed pairs listed in the Markdown (JSON lists more)


def _kappa(kappa: Estimate) -> str:
    if kappa.value is None:
        return "undefined (both answered one value throughout)"
    ci = "" if kappa.ci95 is None else f" (95% CI {kappa.ci95[0]:.2f} to {kappa.ci95[1]:.2f})"
    return f"{kappa.value:.2f}{ci}"


def summary_lines(r: RubricDrift) -> list[str]:
    """The figures as plain sentences, shared by both renderers."""
    rate = "n/a" if r.flip_rate is None else f"{100 * r.flip_rate:.1f}%"
    p = "n/a" if r.p_value is None else f"{r.p_value:.2g}"
    return [
        f"asked again: {r.asked} of {r.population} stored pairs (stratified by check and stored answer; seed {r.seed})",
        f"flips: {r.to_no} yes→no, {r.to_yes} no→yes; {r.not_applicable_changed} n/a changed (the gate reads "
        "yes and n/a alike)",
        f"stored pairs answering otherwise now (estimated): {rate} (drift above "
        f"{100 * r.thresholds.max_flip_rate:g}%)",
        f"kappa, stored vs now: {_kappa(r.kappa)}",
        f"exact McNemar p, do the flips lean one way: {p} (drift below {r.thresholds.alpha:g})",
    ]


def render_drift_markdown(report: DriftReport, *, heading_level: int = 3) -> str:
    h = "#" * heading_level
    out = []
    for r in report.rubrics:
        mark, word = ("❌", "DRIFTED") if r.drifted else ("✅", "steady")
        out += [f"{h} {mark} rubric-gate drift: {word} — {code_span(r.rubric, table=False)}, judge "
                f"{code_span(r.judge, table=False)}", ""]
        out += [f"- {neutralize(reason, table=False)}" for reason in r.reasons] + ([""] if r.reasons else [])
        out += [f"- {neutralize(line, table=False)}" for line in summary_lines(r)] + [""]
        if r.checks:
            out += ["| Check | Asked | Yes→no | No→yes | n/a changed |", "|---|--:|--:|--:|--:|"]
            out += [f"| {code_span(c.id)} | {c.asked} | {c.to_no} | {c.to_yes} | {c.not_applicable_changed} |"
                    for c in r.checks] + [""]
        if r.changed:
            out += [f"<details><summary>{len(r.changed)} changed pair{'s' if len(r.changed) != 1 else ''}</summary>", ""]
            out += [f"- {code_span(p.check, table=False)} on {code_span(p.item, table=False)} ({p.label}): "
                    f"{p.stored} → {p.now}" for p in r.changed[:LISTED]]
            if len(r.changed) > LISTED:
                out.append(f"- and {len(r.changed) - LISTED} more (all in --format json, up to 50)")
            out += ["", "</details>", ""]
        if r.judging:
            out += [f"Judge: {neutralize(r.judging.get('summary', ''), table=False)}", ""]
    for path, why in report.skipped:
        out += [f"Skipped {code_span(path, table=False)}: {neutralize(why, table=False)}", ""]
    return "\n".join(out).rstrip("\n") + "\n"


def render_drift_text(report: DriftReport, console: Console) -> None:
    from rubric_gate.report.terminal import strip_controls

    for r in report.rubrics:
        word = "DRIFTED" if r.drifted else "steady"
        console.print(f"rubric-gate drift: {word} — {strip_controls(r.rubric)}, judge {strip_controls(r.judge)}",
                      style="bold red" if r.drifted else "bold green", markup=False, highlight=False)
        for reason in r.reasons:
            console.print(f"  DRIFT {strip_controls(reason)}", markup=False, highlight=False)
        for line in summary_lines(r):
            console.print(f"  {strip_controls(line)}", markup=False, highlight=False)
        for c in r.checks:
            if c.to_no or c.to_yes or c.not_applicable_changed:
                console.print(f"  {strip_controls(c.id)}: {c.to_no} yes→no, {c.to_yes} no→yes, "
                              f"{c.not_applicable_changed} n/a changed of {c.asked} asked", markup=False,
                              highlight=False)
        if r.judging:
            console.print(f"  judge: {strip_controls(str(r.judging.get('summary', '')))}", markup=False,
                          highlight=False)
    for path, why in report.skipped:
        console.print(f"skipped {strip_controls(path)}: {strip_controls(why)}", markup=False, highlight=False)
