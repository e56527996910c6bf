"""Score rubrics on a calibration set and gate a base -> head edit: the library behind the CLI.

Pure logic lives in `attribution` and `gate`; this module joins it to loaded inputs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from rubric_gate.attribution import attribute, compute_rates, joint_catches, rubric_fails
from rubric_gate.calibration import CalibrationItem, CalibrationSet, load_calibration
from rubric_gate.comparison import compare_rubrics, significant_correct_drop
from rubric_gate.errors import InputError, MissingVerdictsError
from rubric_gate.gate import GateOptions, run_gate
from rubric_gate.reliability import label_agreement
from rubric_gate.results import ChangeRow, CheckReport, CheckRow, RubricSummary
from rubric_gate.rubric import Rubric, RubricDocument, rubric_to_yaml
from rubric_gate.rubric.promptfoo import grading_changes
from rubric_gate.verdicts import VerdictColumn, VerdictStore, task_hash, verdict_column


@dataclass
class VerdictLookup:
    """The verdicts for one calibration set as the judge answers them under one rubric's task,
    cached per check text.

    The task is part of every verdict's key, so it is derived here from `rubric` (the rubric
    whose edit is gated, or that is scored), never passed by hand: a verdict judged under
    another task never counts, whoever builds the lookup.
    """

    calibration: CalibrationSet
    store: VerdictStore
    rubric: Rubric  # whose `task` the judge reads beside each check
    judge: str | None = None  # with a live judge, only its own verdicts (same prompt) count
    prompt: str | None = None
    _columns: dict[str, VerdictColumn] = field(default_factory=dict)

    @property
    def task(self) -> str:
        """The `task_hash` every lookup is keyed by."""
        return task_hash(self.rubric.task)

    @property
    def items(self) -> tuple[CalibrationItem, ...]:
        """The items with their input and output (read on first use; a gate needs `item_ids`)."""
        return self.calibration.items

    @property
    def item_ids(self) -> tuple[str, ...]:
        return self.calibration.ids

    def column(self, text: str) -> VerdictColumn:
        cached = self._columns.get(text)
        if cached is None:
            cached = verdict_column(text, self.calibration.keys, self.store, judge=self.judge, prompt=self.prompt,
                                    task=self.task)
            self._columns[text] = cached
        return cached

    def gate(self, base: RubricDocument, head: RubricDocument, options: GateOptions,
             min_stability: float | None = None) -> tuple[CheckReport, GateOptions]:
        """`base` -> `head` gated on these answers, and the options the gate ran with. One
        judge's answers measure no stability: a minimum stability is a panel's to apply
        (`ensemble.PanelLookup.gate`)."""
        return run_check(base, head, self, options), options

    def failed_column(self, text: str) -> np.ndarray:
        column = self.column(text)
        if not column.complete:
            raise MissingVerdictsError({"<check>": int(column.missing.sum())}, len(self.calibration))
        return column.failed

    def require_verdicts(self, *docs: RubricDocument) -> None:
        """Raise naming every check (of any version given) that lacks verdicts."""
        missing: dict[str, int] = {}
        examples: dict[str, list[str]] = {}
        seen: set[str] = set()
        for doc in docs:
            for check in doc.rubric.checks:
                key = f"{check.id}\0{check.normalized_text}"
                if key in seen:
                    continue
                seen.add(key)
                absent = self.column(check.text).missing
                count = int(absent.sum())
                if count:
                    label = check.id if check.id not in missing else f"{check.id} (as edited in {doc.display})"
                    missing[label] = count
                    examples[label] = [self.item_ids[i] for i in np.flatnonzero(absent)[:5]]
        if missing:
            raise MissingVerdictsError(missing, len(self.calibration), docs[-1].display, examples=examples,
                                       verdicts=getattr(self.store, "display", None))

    def failed_matrix(self, rubric: Rubric) -> np.ndarray:
        if not rubric.checks:
            return np.zeros((len(self.calibration), 0), dtype=bool)
        return np.ascontiguousarray(np.array([self.failed_column(c.text) for c in rubric.checks], dtype=bool).T)

    def summarize(self, rubric: Rubric, display: str) -> RubricSummary:
        failed = self.failed_matrix(rubric)
        flawed = self.calibration.flawed
        k = rubric.max_failures
        result = attribute(failed, flawed, k)
        fails_correct, fails_flawed = (failed & ~flawed[:, None]).sum(axis=0), (failed & flawed[:, None]).sum(axis=0)
        rows = [
            CheckRow(
                id=check.id,
                text=check.text,
                origin=check.origin.value,
                frozen=check.is_frozen,
                credit=float(result.credit[j]),
                blame=float(result.blame[j]),
                unique_catches=int(result.unique_catches[j]),
                fails_correct=int(fails_correct[j]),
                fails_flawed=int(fails_flawed[j]),
                not_applicable=(na := self.column(check.text).not_applicable_count),
                coverage=(len(flawed) - na) / len(flawed) if len(flawed) else None,
            )
            for j, check in enumerate(rubric.checks)
        ]
        ids = rubric.check_ids
        pairs = [(ids[a], ids[b], n.catches) for n in joint_catches(failed, flawed, k) for a, b in [n.checks]]
        rates = compute_rates(failed, flawed, self.calibration.unplanned, k)
        agreement = label_agreement(rubric_fails(failed, k), flawed)
        meta = self.calibration.meta
        return RubricSummary(rubric.id, rubric.version, display, k, rows, rates, pairs, agreement,
                             item_meta=dict(meta) or None)


def attribute_rubric(doc: RubricDocument, lookup: VerdictLookup) -> RubricSummary:
    lookup.require_verdicts(doc)
    return lookup.summarize(doc.rubric, doc.display)


def run_check(
    base: RubricDocument,
    head: RubricDocument,
    lookup: VerdictLookup,
    options: GateOptions | None = None,
    *,
    decide: VerdictLookup | None = None,
) -> CheckReport:
    """Gate `base` -> `head` and report it on `lookup`'s verdicts. `decide` given: the gate's
    rules read it instead (the evidence the gate may rely on), while every figure the report
    shows (rates, per-check figures, each decision's figures and trade) is `lookup`'s."""
    lookup.require_verdicts(base, head)
    notes: list[str] = []
    if base.rubric.id != head.rubric.id:
        notes.append(f"rubric id changed from '{base.rubric.id}' to '{head.rubric.id}'")
    if base.rubric.aggregation != head.rubric.aggregation:
        notes.append(
            "aggregation changed: check edits were gated under the base aggregation, then the new "
            "aggregation as a change of its own"
        )
    if " ".join(base.rubric.task.split()) != " ".join(head.rubric.task.split()):
        notes.append("task text changed: recorded verdicts were judged against the old task wording")
    if head.kind == "promptfoo":
        notes.append(promptfoo_note(head))
    if base.grading is not None and head.grading is not None:
        notes.extend(f"promptfoo grades this edit otherwise than its verdicts say: it {change}"
                     for change in grading_changes(base.grading, head.grading))
    result = run_gate(
        base.rubric,
        head.rubric,
        lookup.item_ids,
        lookup.calibration.flawed,
        (decide or lookup).failed_column,
        options or GateOptions(),
        figures=lookup.failed_column if decide is not None else None,
    )
    head_summary = lookup.summarize(head.rubric, head.display)
    if head_summary.agreement is not None and head_summary.agreement.note:
        notes.append(head_summary.agreement.note)
    flawed = lookup.calibration.flawed
    comparisons = compare_rubrics(flawed, _rubric_fails(lookup, base.rubric),
                                  {"head": _rubric_fails(lookup, head.rubric),
                                   "gated": _rubric_fails(lookup, result.gated)})
    run_failures = []
    level = (options or GateOptions()).reject_correct_drop_at
    if level is not None and (why := significant_correct_drop(comparisons, level)):
        run_failures.append(f"--reject-correct-drop-at: {why}")
    changes = [
        ChangeRow(
            check=d.change.check_id,
            change=d.change.kind,
            edited=d.change.edited,
            accepted=d.accepted,
            reason=d.reason,
            rules=tuple(v.rule for v in d.violations),
            detail=d.change.detail,
            renamed_from=d.change.base.id if d.change.kind == "renamed" and d.change.base else None,
            decided=d.decided,
            trade=d.trade,
        )
        for d in result.decisions
    ]
    return CheckReport(
        base=lookup.summarize(base.rubric, base.display),
        head=head_summary,
        gated=lookup.summarize(result.gated, "gated"),
        changes=changes,
        gated_yaml=rubric_to_yaml(result.gated),
        items=len(lookup.calibration),
        notes=notes,
        comparisons=comparisons,
        run_failures=run_failures,
    )


def promptfoo_note(doc: RubricDocument) -> str:
    """What of a promptfoo config is gated, and what is left alone (every other assertion)."""
    count = len(doc.rubric.checks)
    gated = (f"{doc.repo_path or doc.display} is a promptfoo config: its {count} llm-rubric assertion"
             + (" is the check" if count == 1 else "s are the checks"))
    if not doc.not_gated:
        return gated + "; it holds nothing else the gate leaves alone"
    return gated + "; not gated: " + ", ".join(item.describe() for item in doc.not_gated)


def _rubric_fails(lookup: VerdictLookup, rubric: Rubric) -> np.ndarray:
    return rubric_fails(lookup.failed_matrix(rubric), rubric.max_failures)


# -- loading inputs the way the CLI and the action resolve them ---------------------------------


def resolve_path(root: Path, relative: str) -> Path:
    path = Path(relative)
    return path if path.is_absolute() else root / path


def load_calibration_for(
    head: RubricDocument, override: str | None, root: Path, split: str = "calibration"
) -> CalibrationSet:
    """One split of the rubric's labeled set: the gate decides on `calibration` (items without
    a split count as calibration items); `evaluation` items are held out; `all` takes both."""
    calibration = load_calibration(override) if override is not None else load_calibration(head.rubric.calibration, root)
    chosen = calibration if split == "all" else calibration.split(split)
    if not len(chosen):
        raise InputError(calibration.display, f"no items in the {split} split")
    return chosen


def load_verdicts_for(docs: list[RubricDocument], override: str | None, root: Path, *,
                      replay: bool = False) -> VerdictStore:
    """`--verdicts` if given, else the union of every rubric version's `verdicts` file.

    When only replaying (`replay`), the last (head) rubric's file must exist: a typo in its
    `verdicts:` path is "file not found", not "no recorded verdict" for every check. Without
    `replay` it may be missing: a live judge creates it."""
    if override is not None:
        return VerdictStore.load(override)
    if replay and docs:
        head = docs[-1]
        if not resolve_path(root, head.rubric.verdicts).exists():
            raise InputError(head.rubric.verdicts, f"file not found (the `verdicts:` path of {head.display}: fix the path, "
                                                   "record verdicts there, or pass --judge PROVIDER:MODEL)")
    store: VerdictStore | None = None
    seen: set[Path] = set()
    for doc in docs:
        path = resolve_path(root, doc.rubric.verdicts)
        if path in seen:
            continue
        seen.add(path)
        loaded = VerdictStore.load(doc.rubric.verdicts, root, missing_ok=True)
        # named after every file it holds, so an error about a missing verdict names them all
        store = loaded if store is None else store.merged(loaded, display=f"{store.display} and {loaded.display}")
    assert store is not None
    return store
