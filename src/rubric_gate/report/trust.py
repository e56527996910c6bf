"""The compact "how sure" line: intervals' meaning, agreement with the labels, and (when
measured) judges, samples and paraphrases, as plain text shared by Markdown and terminal output."""

from __future__ import annotations

from rubric_gate.reliability import Estimate, LabelAgreement
from rubric_gate.results import CheckReport


def _signed(value: float) -> str:
    return f"{value:.2f}"


def estimate_text(estimate: Estimate, *, percent: bool = False) -> str:
    if estimate.value is None:
        return "n/a"
    if percent:
        text = f"{100 * estimate.value:.0f}%"
        ci = estimate.ci95
        return text + (f" ({100 * ci[0]:.0f}-{100 * ci[1]:.0f}%)" if ci else " (interval undefined)")
    ci = estimate.ci95
    # No interval with a value: the bootstrap was degenerate (every resample the same), which
    # says nothing about how sure the value is, so it is shown as undefined, not as "1.00 to 1.00".
    return _signed(estimate.value) + (f" ({_signed(ci[0])} to {_signed(ci[1])})" if ci else " (interval undefined)")


def agreement_text(agreement: LabelAgreement) -> str:
    return (
        f"agreement with the labels (95% intervals): kappa {estimate_text(agreement.cohen_kappa)}, "
        f"MCC {estimate_text(agreement.mcc)}, "
        f"balanced accuracy {estimate_text(agreement.balanced_accuracy, percent=True)}"
    )


def how_sure(report: CheckReport) -> list[str]:
    """Short clauses, most important first; joined with "; " under the rates."""
    parts = []
    if report.gated.agreement is not None:
        parts.append("gated rubric's " + agreement_text(report.gated.agreement))
    if report.reliability is not None:
        parts.extend(report.reliability.how_sure())
    return parts
