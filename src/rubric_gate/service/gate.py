"""Gate one edit on a verdict lookup: the decision step `check` and the action share.

Which verdicts decide (one judge's or a panel's majority), the stability rule, and the trust rule
for untrusted verdicts live here once, so the command line and the required check cannot drift.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from rubric_gate.gate import GateOptions, run_gate
from rubric_gate.gate.rules import RuleContext, Violation
from rubric_gate.results import ChangeRow, CheckReport, HeldChange, Withheld
from rubric_gate.rubric import RubricDocument, normalize_text
from rubric_gate.scoring import VerdictLookup, run_check
from rubric_gate.verdicts import VerdictColumn, VerdictStore

if TYPE_CHECKING:
    from rubric_gate.trust import Untrusted


def gate_edit(base: RubricDocument, head: RubricDocument, lookup: VerdictLookup, options: GateOptions, *,
              min_stability: float | None = None, untrusted: Untrusted | None = None,
              notes: list[str] | None = None) -> tuple[CheckReport, GateOptions]:
    """Gate `base` -> `head` on what `lookup` answers (one judge's or the record's answers, or a
    panel's majority: `VerdictLookup.gate`). `untrusted`: verdicts nobody vouches for (replay
    only: a judged run re-judges them), which may reject a change, never excuse one. Returns the
    report and the options the gate ran with."""
    report, options = lookup.gate(base, head, options, min_stability)
    if untrusted is not None and untrusted.verdicts:
        report = _on_trusted_evidence(report, base, head, lookup, untrusted, options, notes if notes is not None else [])
    return report, options


def _on_trusted_evidence(records: CheckReport, base: RubricDocument, head: RubricDocument, reading: VerdictLookup,
                         untrusted: Untrusted, options: GateOptions, notes: list[str]) -> CheckReport:
    """Decide again on trusted evidence: the untrusted verdicts' "no" answers on flawed items
    withheld (a PR's own catch is no catch; its "no" on a correct item stays blame), and every
    change `records` (the verdicts as recorded) rejects stays rejected. Where that rejects a change
    the records accept, the report decides on trusted evidence, shows every figure as the records
    give it, and says in `withheld` which changes are held and what the records would decide.
    `reading`: the first gating's lookup (the untrusted verdicts as recorded, over the trusted ones)."""
    if not any(v.answer == "no" for v in untrusted.verdicts):
        return records  # nothing to withhold
    # (the action's PR runs only: `check` trusts its store, and loads no trust code)
    from rubric_gate.trust import catches_withheld

    withheld = VerdictLookup(untrusted.calibration, VerdictStore(catches_withheld(untrusted.verdicts)), head.rubric)
    lookup = WithheldLookup(untrusted.calibration, untrusted.trusted, head.rubric, reading=reading, withheld=withheld)
    rejected = {(c.check, c.change): c for c in records.changes if not c.accepted}
    strict = replace(options, extra_rules=(*options.extra_rules, _rejected_on(rejected)))
    accepted = {(c.check, c.change): c for c in records.changes if c.accepted}
    # The decisions first (the whole report only when they differ: most edits have no catch to withhold).
    decided = run_gate(base.rubric, head.rubric, lookup.item_ids, lookup.calibration.flawed, lookup.failed_column,
                       strict, figures=reading.failed_column)
    if not any(not d.accepted and (d.change.check_id, d.change.kind) in accepted for d in decided.decisions):
        return records
    trusted = run_check(base, head, reading, strict, decide=lookup)
    held = tuple(HeldChange(c.check, c.change, c.reason, accepted[(c.check, c.change)].reason)
                 for c in trusted.changes if not c.accepted and (c.check, c.change) in accepted)
    answered = [c for c in head.rubric.checks if c.normalized_text in lookup.withheld_texts()]
    trusted.withheld = Withheld(
        verdicts=len(untrusted.verdicts), catches=lookup.withheld_catches(dict.fromkeys(c.text for c in answered)),
        file=head.rubric.verdicts, checks=tuple(dict.fromkeys(c.id for c in answered)), held=held,
        records_decision="pass" if records.gate_passed else "fail")
    return trusted


def _rejected_on(rejected: dict[tuple[str, str], ChangeRow]) -> Callable[[RuleContext], Violation | None]:
    """A rule: what the PR's records reject stays rejected (its own verdicts may reject a change,
    and withholding their catches must not excuse one they reject, e.g. by their blame)."""
    def rule(ctx: RuleContext) -> Violation | None:
        row = rejected.get((ctx.change.check_id, ctx.change.kind))
        return None if row is None else Violation(row.rules[0] if row.rules else "S", row.reason)
    return rule


@dataclass
class WithheldLookup(VerdictLookup):
    """`reading`'s answers, and on the flawed items `withheld` (the untrusted verdicts with their
    "no" turned "yes") answers, that answer: a PR's own "no" is no catch, while on a correct item
    it stays the blame it is (the reading `trusted.merged(withheld.store)` gives on flawed items),
    without copying the trusted store's columns, rebuilding its indexes or reading any column
    `reading` has read already."""

    reading: VerdictLookup | None = None
    withheld: VerdictLookup | None = None
    _texts: set[str] | None = None

    def column(self, text: str) -> VerdictColumn:
        cached = self._columns.get(text)
        if cached is None:
            assert self.reading is not None and self.withheld is not None
            own = self.reading.column(text)
            if normalize_text(text) not in self.withheld_texts():
                return own  # no untrusted answer for this text: the first reading's column
            theirs = self.withheld.column(text)
            given = ~theirs.missing & self.calibration.flawed
            not_applicable = None
            if own.not_applicable is not None or theirs.not_applicable is not None:
                none = np.zeros(len(given), dtype=bool)
                mine_na = none if own.not_applicable is None else own.not_applicable
                theirs_na = none if theirs.not_applicable is None else theirs.not_applicable
                not_applicable = np.where(given, theirs_na, mine_na)
            cached = self._columns[text] = VerdictColumn(text, np.where(given, theirs.failed, own.failed),
                                                         own.missing & theirs.missing, not_applicable)
        return cached

    def withheld_texts(self) -> set[str]:
        """The check texts (normalised) some untrusted verdict answers."""
        if self._texts is None:
            assert self.withheld is not None
            self._texts = set(self.withheld.store.texts())
        return self._texts

    def withheld_catches(self, texts: Iterable[str]) -> int:
        """How many (check, flawed item) catches of `texts` the records claim and this reading withholds."""
        assert self.reading is not None
        return sum(int((self.reading.column(text).failed & ~self.column(text).failed).sum()) for text in texts)
