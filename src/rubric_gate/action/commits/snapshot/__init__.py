"""Snapshots: one commit's view of every fact the gate depends on, read once and parsed once per
blob; the trusted side (merge base, base tip) and the proposed one (the PR as it will merge)."""

from rubric_gate.action.commits.snapshot.diff import diff_snapshots
from rubric_gate.action.commits.snapshot.memo import ParseMemo, default_memo
from rubric_gate.action.commits.snapshot.model import (
    ProposedSnapshot,
    Snapshot,
    Snapshots,
    load_snapshots,
)

__all__ = ["ParseMemo", "ProposedSnapshot", "Snapshot", "Snapshots", "default_memo", "diff_snapshots", "load_snapshots"]
