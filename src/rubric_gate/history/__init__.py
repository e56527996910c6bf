"""A rubric's history: every git revision scored and gated, the drift picture for one's own repository."""

from rubric_gate.history.git_log import Revision, rubric_revisions
from rubric_gate.history.replay import CHAINS, History, RevisionReport, apply_edits, replay_history

__all__ = ["CHAINS", "History", "Revision", "RevisionReport", "apply_edits", "replay_history", "rubric_revisions"]
