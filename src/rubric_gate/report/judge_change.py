"""A judge change (rule J) in the reports, as plain text pieces both renderers share: the
verdict line, the per-check cells (the two judges' agreement and flips, credit, blame and unique
catches under each) and what the gate decided on the PR's other edits under each judge. The
Markdown section is `templates/judge_change.md.j2`, the terminal one `text.render_judge_change_text`;
JSON is `JudgeChange.to_dict`."""

from __future__ import annotations

from rubric_gate.reliability import Estimate
from rubric_gate.results import CheckAgreement, JudgeChange

CHECK_HEADERS = ("Check", "Agreement", "Kappa (95% CI)", "Yes→no (correct / flawed)", "No→yes (correct / flawed)",
                 "Credit old → new", "Blame old → new")
TEXT_HEADERS = ("kappa", "95% CI", "y→n c/f", "n→y c/f", "credit", "blame")


def kappa_text(kappa: Estimate) -> str:
    if kappa.value is None:
        return "undefined"
    ci = "" if kappa.ci95 is None else f" ({kappa.ci95[0]:.2f} to {kappa.ci95[1]:.2f})"
    return f"{kappa.value:.2f}{ci}"


def catches_header(change: JudgeChange, markdown: bool = True) -> str:
    word = "Pivotal" if change.max_failures else "Unique"
    return f"{word} old → new" if markdown else word.lower()


def check_cells(row: CheckAgreement) -> list[str]:
    """The per-check figures as plain text, one per column after the id."""
    f = row.flips
    blame = f"{row.old.blame:.2f} → {row.new.blame:.2f}" + (" (added)" if row.blame_added else "")
    unique = f"{row.old.unique_catches} → {row.new.unique_catches}"
    if row.lost_catches:
        unique += f" ({len(row.lost_catches)} lost)"
    return ["n/a" if row.agreement is None else f"{100 * row.agreement:.0f}%", kappa_text(row.kappa),
            f"{len(f.to_no_correct)} / {len(f.to_no_flawed)}", f"{len(f.to_yes_correct)} / {len(f.to_yes_flawed)}",
            f"{row.old.credit:.2f} → {row.new.credit:.2f}", blame, unique]


def terminal_cells(row: CheckAgreement) -> list[str]:
    """`check_cells` for an 80-column terminal: kappa's interval in a column of its own, no raw
    agreement (the Markdown and JSON have it), no spaces inside a figure (the reasons under the
    verdict say which catch was lost or blame added)."""
    f, k = row.flips, row.kappa
    return ["n/a" if k.value is None else f"{k.value:.2f}",
            "" if k.ci95 is None else f"{k.ci95[0]:.2f} to {k.ci95[1]:.2f}",
            f"{len(f.to_no_correct)}/{len(f.to_no_flawed)}", f"{len(f.to_yes_correct)}/{len(f.to_yes_flawed)}",
            f"{row.old.credit:.2f}→{row.new.credit:.2f}", f"{row.old.blame:.2f}→{row.new.blame:.2f}",
            f"{row.old.unique_catches}→{row.new.unique_catches}"]


def rate_rows(change: JudgeChange) -> list[tuple[str, object, object]]:
    rows: list[tuple[str, object, object]] = [
        ("Correct outputs passed", change.old_rates.correct_passed, change.new_rates.correct_passed),
        ("Flawed outputs caught", change.old_rates.flawed_caught, change.new_rates.flawed_caught)]
    if change.old_rates.unplanned_caught.total:
        rows.append(("Unplanned flaws caught", change.old_rates.unplanned_caught, change.new_rates.unplanned_caught))
    return rows


def decisions_sentence(change: JudgeChange) -> str:
    if not change.decisions:
        return "The rubric itself is unchanged: no other edit to decide."
    n = len(change.decisions)
    if change.decisions_same:
        return f"The gate decides the {n} other edit{'s' if n != 1 else ''} the same under both judges."
    differ = sum(d.old != d.new for d in change.decisions)
    return f"The gate decides {differ} of the {n} other edit{'s' if n != 1 else ''} differently under the two judges."


READING = ("Agreement and kappa are over what the gate reads (a no fails the item; yes and n/a do not); flips "
           "count the items whose answer changed, by the item's label; credit, blame and catches are each "
           "judge's Shapley shares on the same items.")
