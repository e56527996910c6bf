"""One short line per rate, for the terminal report and the PR comment (plain text, no markup)."""

from __future__ import annotations

from rubric_gate.comparison.paired import PairedComparison

LABELS = {"correct_passed": "Correct passed", "flawed_caught": "Flawed caught"}


def _points(value: float) -> str:
    return f"{100 * value:+.1f}"


def _one(c: PairedComparison) -> str:
    if c.delta is None:
        return f"{c.target} n/a"
    if c.gained == c.lost == 0:
        return f"{c.target} {c.to_count}/{c.total} (no item differs)"  # no discordant item: nothing to test
    ci = "" if c.ci95 is None else f", 95% CI {_points(c.ci95[0])} to {_points(c.ci95[1])}"
    return (f"{c.target} {c.to_count}/{c.total} ({_points(c.delta)} pts{ci}; "
            f"{c.gained} gained, {c.lost} lost; p = {c.p_value:.2g})")


def comparison_lines(comparisons: list[PairedComparison]) -> list[str]:
    """'Correct passed, base 9/10 → head 7/10 (-20.0 pts, ...); gated ...' for each rate (named
    after the comparisons' source and targets: base and head, or old judge and new judge)."""
    lines = []
    for rate, label in LABELS.items():
        row = [c for c in comparisons if c.rate == rate]
        if not row or not row[0].total:
            continue
        lines.append(f"{label}, {row[0].source} {row[0].from_count}/{row[0].total} → " + "; ".join(_one(c) for c in row))
    return lines
