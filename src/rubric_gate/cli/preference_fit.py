"""`audit --preference-fit`: where its stores live, kept out of the audit command's module."""

from __future__ import annotations

from pathlib import Path

from rubric_gate.audit import AuditStore
from rubric_gate.pairs import PairSet
from rubric_gate.preference import PreferenceFit
from rubric_gate.rubric import Check, Rubric


def pair_verdicts_path(pairs_path: Path) -> Path:
    """Verdicts on the pairs' responses live beside the pairs (`discover` writes the same file)."""
    stem = pairs_path.name[: -len(".jsonl")] if pairs_path.name.endswith(".jsonl") else pairs_path.name
    return pairs_path.with_name(f"{stem}.verdicts.jsonl")


def run_preference_fit(rubric: Rubric, checks: list[Check], pairs: PairSet, pairs_path: Path, judge: str,
                       store: AuditStore, concurrency: int) -> PreferenceFit:
    from rubric_gate.preference import preference_fit
    from rubric_gate.verdicts import VerdictStore

    audited = rubric.model_copy(update={"checks": checks})
    verdicts = VerdictStore.load(pair_verdicts_path(pairs_path), missing_ok=True)
    return preference_fit(audited, pairs, judge=judge, answers=store, verdicts=verdicts, concurrency=concurrency)
