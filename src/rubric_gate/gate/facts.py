"""What a decision rested on, for the report: the changed check's figures in the rubric the gate
judged it in, and what accepting the change would trade (pure: a rule context in, numbers out)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rubric_gate.gate.rules import RuleContext


@dataclass(frozen=True)
class DecidedFigures:
    """Credit, blame and unique catches of the changed check when it was decided: in the base
    plus the changes accepted before it, with the change applied (before it, for a deletion)."""

    credit: float
    blame: float
    unique_catches: int

    def to_dict(self) -> dict[str, float | int]:
        return {"credit": round(self.credit, 4), "blame": round(self.blame, 4), "unique_catches": self.unique_catches}


@dataclass(frozen=True)
class Trade:
    """Items whose rubric outcome accepting the change would flip, by label and direction."""

    correct_passed: tuple[str, ...]  # correct items it would newly pass (good)
    correct_failed: tuple[str, ...]  # correct items it would newly fail (bad)
    flawed_caught: tuple[str, ...]  # flawed items it would newly catch (good)
    flawed_missed: tuple[str, ...]  # flawed items it would stop catching (bad)

    def to_dict(self) -> dict[str, list[str]]:
        return {name: list(getattr(self, name)) for name in
                ("correct_passed", "correct_failed", "flawed_caught", "flawed_missed")}


def accepted_reason(kind: str, decided: DecidedFigures | None, max_failures: int) -> str:
    """Why an accepted change was accepted: the figure its kind's rule reads, where it was
    decided. The one wording of the reason, for the JSON, the text report and the comment."""
    if kind == "renamed":
        return "same text and provenance under a new id"
    if decided is None:
        return "no rule rejects it"
    if kind == "added":
        return "fails no correct item (blame 0.00)" if decided.blame == 0 else f"blame {decided.blame:.2f}"
    if kind == "deleted":
        catch = "pivotal catch" if max_failures else "unique catch"
        if decided.unique_catches == 0:
            shared = f"its credit {decided.credit:.2f} is shared" if decided.credit else "it catches nothing"
            return f"holds no {catch} ({shared})"
        return f"{decided.unique_catches} {catch}{'es' if decided.unique_catches != 1 else ''}"
    return f"credit {decided.credit:.2f}, blame {decided.blame:.2f}"


def decided_figures(ctx: RuleContext) -> DecidedFigures | None:
    change = ctx.change
    if change.kind in ("aggregation", "renamed"):
        return None
    ids = ctx.before_ids if change.kind == "deleted" else ctx.after_ids
    if change.check_id not in ids:
        return None
    column = ids.index(change.check_id)
    result = ctx.attribution_before if change.kind == "deleted" else ctx.attribution_after
    return DecidedFigures(float(result.credit[column]), float(result.blame[column]),
                          int(result.unique_catches[column]))


def trade(ctx: RuleContext) -> Trade:
    before, after = ctx.fails_before, ctx.fails_after
    flawed = ctx.flawed

    def ids(mask: np.ndarray) -> tuple[str, ...]:
        return tuple(ctx.item_ids[i] for i in np.flatnonzero(mask))

    return Trade(ids(~flawed & before & ~after), ids(~flawed & ~before & after),
                 ids(flawed & ~before & after), ids(flawed & before & ~after))
