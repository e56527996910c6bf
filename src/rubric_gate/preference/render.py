"""The preference-fit section of the audit: a few lines of text, or a short Markdown table."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from rubric_gate.audit.render import plain
from rubric_gate.preference.model import PreferenceFit
from rubric_gate.report import neutralize


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def summary_lines(fit: PreferenceFit) -> list[str]:
    gain = 100 * (fit.pref_acc - fit.pref_acc_without)
    return [
        f"pref_acc {_pct(fit.pref_acc)} with the rubric, {_pct(fit.pref_acc_without)} without ({gain:+.1f} points)",
        f"applicability {_pct(fit.applicability)} of checks per prompt; effective dimensionality "
        f"{_num(fit.effective_dimensionality)} of {fit.k} checks; mean |r| {_num(fit.mean_abs_correlation)}",
        f"Bradley-Terry: cv_accuracy {_pct(fit.cv_accuracy)} ({fit.cv_folds} folds), "
        f"weight_entropy {_num(fit.weight_entropy)}",
    ]


def render_preference_text(fit: PreferenceFit, console: Console) -> None:
    def say(text: str) -> None:
        console.print(Text(plain(text)), soft_wrap=True, highlight=False)

    say("")
    say(f"preference fit on {fit.pairs_file} ({fit.pairs} pairs, judge {fit.judge})")
    for line in summary_lines(fit):
        say(f"  {line}")
    for c in fit.checks:
        say(f"  {c.check}: applies {_pct(c.applicability)}, chosen wins {_pct(c.chosen_win_share)} / loses "
            f"{_pct(c.chosen_loss_share)}, weight {_num(c.weight)}")


def render_preference_markdown(fit: PreferenceFit) -> str:
    lines = ["", f"### Preference fit ({fit.pairs} pairs)", ""]
    lines += [f"- {neutralize(line, table=False)}" for line in summary_lines(fit)]
    lines += ["", "| check | applies | chosen wins | chosen loses | weight |", "| --- | --- | --- | --- | --- |"]
    for c in fit.checks:
        lines.append(f"| `{neutralize(c.check)}` | {_pct(c.applicability)} | {_pct(c.chosen_win_share)} | "
                     f"{_pct(c.chosen_loss_share)} | {_num(c.weight)} |")
    return "\n".join(lines) + "\n"
